"""The task registry: versioned task-set ids, their declared facts, and loading them.

A built-in task set is read from a *data directory* (``--data-dir`` or the ``FLANEUR_DATA``
variable) that holds the public datasets in their release layout (see
``/work/shared/data/README.md`` for the layout used by the built-in sets). Its city is built
from the same directory once and cached as a city pack (see :mod:`flaneur.tasks.cities`).
Generated sets (``helsinki-needs-v1``) and sets whose files and city are given by absolute
path need no data directory.

Task sets come from four places: the built-in list below, :func:`register_task` (Python),
TOML registry files (``--registry FILE``, ``$FLANEUR_TASKS``) and the ``flaneur.tasks``
entry points (see :mod:`flaneur.tasks.user_registry`). Any task file can also be used
directly, without registering it (see :mod:`flaneur.tasks.resolve`).
"""

from __future__ import annotations

import os
from pathlib import Path

from flaneur.errors import DataError, FlaneurError
from flaneur.tasks.catalogue import (
    BUILTIN_TASKS,
    DATA_ENV,
    TASKS,
    TaskItems,
    navigation_episodes,
    register_city_source,
    register_task,
)
from flaneur.tasks.cities import (
    CITY_CACHE_VERSION,
    CITY_SOURCES,
    CitySource,
    city_cache_key,
    load_city_spec,
    load_task_city,
)
from flaneur.tasks.episode import iter_json_lines
from flaneur.tasks.formats import load_task_file
from flaneur.tasks.generators import GENERATORS, cached_generated_set
from flaneur.tasks.loaders import check_episodes, iter_json_array
from flaneur.tasks.resolve import resolve_task
from flaneur.tasks.spec import TaskBuilder, TaskSpec
from flaneur.tasks.user_registry import discover_task_sets
from flaneur.world.city import City
from flaneur.world.sources.cityseeker import cityseeker_questions_path


def list_tasks() -> list[TaskSpec]:
    """All registered task sets, sorted by id (discovering ``$FLANEUR_TASKS`` and entry
    points on first use)."""

    discover_task_sets()
    return [TASKS.get(key) for key in sorted(TASKS.names())]


def get_task(task_id: str) -> TaskSpec:
    """The task set ``task_id``; :class:`FlaneurError` naming the known ids otherwise."""

    discover_task_sets()
    spec = TASKS.get(task_id, None)
    if spec is None:
        raise FlaneurError(
            f"unknown task {task_id!r}; registered tasks: {', '.join(sorted(TASKS.names()))}"
        )
    return spec


def resolve_data_dir(data_dir: str | Path | None, *, task: str | None = None) -> Path:
    """The data directory: ``data_dir`` if given, else ``$FLANEUR_DATA``.

    Raises
    ------
    FlaneurError
        If neither is set, or the directory does not exist (naming the task, if given).
    """
    for_task = f" for task {task!r}" if task else ""
    raw = data_dir if data_dir is not None else os.environ.get(DATA_ENV)
    if not raw:
        raise FlaneurError(
            f"no data directory{for_task}: pass --data-dir DIR or set {DATA_ENV}=DIR "
            "(the folder holding touchdown/, map2seq/ and cityseeker/)"
        )
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise DataError(f"data directory{for_task} does not exist", path=path)
    return path


def task_files(spec: TaskSpec, data_dir: Path | None) -> list[Path]:
    """Absolute paths of the episode files and data-directory city files of a task set."""
    rel = list(spec.files)
    if spec.build is None and spec.city in CITY_SOURCES:
        rel += list(CITY_SOURCES[spec.city].files)
    if data_dir is None:
        return [Path(r) for r in rel if Path(r).is_absolute()]
    return [cityseeker_questions_path(data_dir / r) for r in rel]  # question.json is accepted


def missing_files(spec: TaskSpec, data_dir: Path | None) -> list[Path]:
    """Files of ``spec`` that do not exist (relative ones looked up in ``data_dir``)."""
    return [p for p in task_files(spec, data_dir) if not p.is_file()]


def _require_files(spec: TaskSpec, data_dir: Path | None) -> None:
    missing = missing_files(spec, data_dir)
    if missing:
        raise DataError(
            f"task {spec.id!r} needs {len(missing)} missing file(s): "
            + ", ".join(str(p) for p in missing)
        )


def spec_city(spec: TaskSpec, data_dir: Path | None, *, rebuild: bool = False) -> City:
    """The city of a file-based task set: a data-directory source or a city spec."""
    if spec.city in CITY_SOURCES:
        if data_dir is None:
            raise FlaneurError(f"task {spec.id!r} needs a data directory for its city")
        return load_task_city(spec.city, data_dir, rebuild=rebuild)
    return load_city_spec(spec.city, rebuild=rebuild)


def load_episodes(spec: TaskSpec, data_dir: Path | None, city: City) -> TaskItems:
    """Read the episodes (or items) of a file-based task set into ``city`` (no node check)."""

    episodes: list = []
    for rel in spec.files:
        path = Path(rel) if data_dir is None else data_dir / rel
        episodes += load_task_file(path, spec.loader, city, category=spec.category)
    return episodes


def load_spec(
    spec: TaskSpec,
    data_dir: str | Path | None = None,
    *,
    rebuild_city: bool = False,
    protocol: str = "flaneur",
) -> tuple[City, TaskItems]:
    """Load a task set: its city and its episodes (checked against the city) or items; a
    generated set under ``protocol="paper"`` with its generator's paper options
    (:meth:`~flaneur.tasks.generators.Generator.paper_options`).

    The data directory (``data_dir``, else ``$FLANEUR_DATA``) is required only by sets that
    read it (:attr:`TaskSpec.needs_data_dir`); generated sets receive it as given (possibly
    ``None``).
    """
    build = spec.builder()
    if spec.generator:
        city = load_city_spec(spec.city, rebuild=rebuild_city)
        options = dict(spec.options)
        if protocol == "paper":
            options = GENERATORS.get(spec.generator).paper_options(city, options)
        episodes = cached_generated_set(
            spec.generator,
            city,
            city_spec=spec.city,
            set_id=spec.id,
            seed=spec.seed,
            size=spec.size,
            options=options,
        )
    elif build is not None:
        folder = None
        if data_dir is not None or os.environ.get(DATA_ENV):
            folder = resolve_data_dir(data_dir, task=spec.id)
        city, episodes = build(folder)
    else:
        folder = resolve_data_dir(data_dir, task=spec.id) if spec.needs_data_dir else None
        _require_files(spec, folder)
        city = spec_city(spec, folder, rebuild=rebuild_city)
        episodes = load_episodes(spec, folder, city)
    if spec.kind == "navigation":
        check_episodes(navigation_episodes(episodes), city)
    elif not episodes:
        raise DataError(f"task {spec.id!r} holds no items")
    return city, episodes


def load_task(
    task: str | TaskSpec,
    data_dir: str | Path | None = None,
    *,
    fmt: str | None = None,
    city: str | None = None,
    rebuild_city: bool = False,
) -> tuple[City, TaskItems]:
    """Load a task set — a registered id or a task file — with its city, checked.

    Parameters
    ----------
    task
        A registered id (see :func:`list_tasks`), a path to a task file (flaneur episodes,
        map2seq / Touchdown JSON lines, CitySeeker ``question(s).json``), or a spec.
    data_dir
        The data directory; default ``$FLANEUR_DATA``. Needed only by sets that read it.
    fmt
        Format of a task file (default: detected).
    city
        City of a task file (pack folder, built-in name, ``touchdown:DIR``,
        ``cityseeker:DIR``, ``.osm.pbf``); default: implied by where the file lies.
    rebuild_city
        Rebuild the cached city pack.

    Raises
    ------
    FlaneurError
        Unknown task, no data directory, or missing files (naming them and the task).
    DataError
        Malformed task files (naming file and line) or node ids missing from the city.
    """

    spec = task if isinstance(task, TaskSpec) else resolve_task(task, fmt=fmt, city=city)
    return load_spec(spec, data_dir, rebuild_city=rebuild_city)


def count_episodes(spec: TaskSpec, data_dir: Path | None) -> int | None:
    """Number of episodes of a file-based set, or ``None`` if its files or city are missing."""
    if spec.build is not None or spec.generator or (spec.needs_data_dir and data_dir is None):
        return None
    if missing_files(spec, data_dir if spec.needs_data_dir else None):
        return None

    total = 0
    for rel in spec.files:
        path = data_dir / rel if spec.needs_data_dir and data_dir is not None else Path(rel)
        if spec.loader == "cityseeker":
            total += sum(1 for _ in iter_json_array(path.read_text(encoding="utf-8")))
        elif spec.loader == "items":
            total += sum(1 for _ in iter_json_lines(path)) - 1  # the header
        else:
            total += sum(1 for _ in iter_json_lines(path))
    return total


__all__ = [
    "BUILTIN_TASKS",
    "CITY_CACHE_VERSION",
    "CITY_SOURCES",
    "DATA_ENV",
    "TASKS",
    "CitySource",
    "TaskBuilder",
    "TaskItems",
    "TaskSpec",
    "city_cache_key",
    "count_episodes",
    "get_task",
    "list_tasks",
    "load_episodes",
    "load_spec",
    "load_task",
    "load_task_city",
    "missing_files",
    "navigation_episodes",
    "register_city_source",
    "register_task",
    "resolve_data_dir",
    "task_files",
]

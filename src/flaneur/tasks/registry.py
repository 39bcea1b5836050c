"""The task registry: versioned task-set ids, where their files are, and how to load them.

A task set is read from a *data directory* (``--data-dir`` or the ``FLANEUR_DATA``
variable) that holds the public datasets in their release layout (see
``/work/shared/data/README.md`` for the layout used by the built-in sets). The city of a
task set is built from the same directory once and cached as a city pack under
``$FLANEUR_CACHE_DIR/cities/<key>-<hash>`` (default ``~/.cache/flaneur``), the hash covering
the size and modification time of the source files, so later loads read the pack.

Generated task sets register themselves with :func:`register_task`, giving a ``build``
callable that returns ``(city, episodes)``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from flaneur.errors import DataError, FlaneurError
from flaneur.paths import cache_dir
from flaneur.tasks.episode import Episode
from flaneur.tasks.loaders import (
    check_episodes,
    load_cityseeker_questions,
    load_vln_jsonl,
)
from flaneur.world.city import PACK_VERSION, City

DATA_ENV = "FLANEUR_DATA"
"""Environment variable naming the data directory."""

CITY_CACHE_VERSION = 1
"""Bumped when the way task cities are built changes, so cached packs are rebuilt."""

TaskBuilder = Callable[[Path | None], tuple[City, list[Episode]]]


@dataclass(frozen=True)
class CitySource:
    """How to build a task city from a data directory.

    Attributes
    ----------
    key
        Short name used for the cache folder (``touchdown-manhattan``).
    files
        Source files relative to the data directory (their size and mtime key the cache).
    build
        ``build(data_dir) -> City``.
    """

    key: str
    files: tuple[str, ...]
    build: Callable[[Path], City]


@dataclass(frozen=True)
class TaskSpec:
    """One registered task set.

    Attributes
    ----------
    id
        Versioned id, e.g. ``map2seq-unseen-dev-v1``.
    description
        One line for ``flaneur tasks ls``.
    city
        Key of the city builder in :data:`CITY_SOURCES` (ignored when ``build`` is given).
    files
        Episode files relative to the data directory.
    split
        Dataset split (``dev``, ``test``, ``all``).
    loader
        ``"map2seq"``, ``"touchdown"`` or ``"cityseeker"`` (ignored when ``build`` is given).
    category
        Category written into the episodes (Touchdown / map2seq loaders).
    build
        Optional hook for generated sets: ``build(data_dir) -> (city, episodes)``.
    """

    id: str
    description: str
    city: str = ""
    files: tuple[str, ...] = ()
    split: str = "dev"
    loader: str = ""
    category: str = ""
    build: TaskBuilder | None = field(default=None, compare=False)


def _touchdown_city(data_dir: Path) -> City:
    from flaneur.world.sources.touchdown import city_from_touchdown

    return city_from_touchdown(
        data_dir / "touchdown/graph", unseen_polygon=data_dir / "map2seq/unseen/bbox.txt"
    )


def _cityseeker_city(data_dir: Path) -> City:
    from flaneur.world.sources.cityseeker import city_from_cityseeker

    return city_from_cityseeker(data_dir / "cityseeker/shanghai2")


CITY_SOURCES: dict[str, CitySource] = {
    "touchdown-manhattan": CitySource(
        "touchdown-manhattan",
        ("touchdown/graph/nodes.txt", "touchdown/graph/links.txt", "map2seq/unseen/bbox.txt"),
        _touchdown_city,
    ),
    "cityseeker-shanghai2": CitySource(
        "cityseeker-shanghai2",
        ("cityseeker/shanghai2/connections.json", "cityseeker/shanghai2/questions.json"),
        _cityseeker_city,
    ),
}

def _helsinki_needs_v1(data_dir: Path | None) -> tuple[City, list[Episode]]:
    from flaneur.tasks.builtin_sets import helsinki_needs_v1

    return helsinki_needs_v1(data_dir)


BUILTIN_TASKS: list[TaskSpec] = [
    TaskSpec(
        id="map2seq-unseen-dev-v1",
        description="map2seq route instructions, unseen Manhattan area, dev split (VELMA)",
        city="touchdown-manhattan", files=("map2seq/unseen/dev.json",), split="dev",
        loader="map2seq", category="map2seq-unseen",
    ),
    TaskSpec(
        id="map2seq-seen-dev-v1",
        description="map2seq route instructions, seen Manhattan area, dev split (VELMA)",
        city="touchdown-manhattan", files=("map2seq/seen/dev.json",), split="dev",
        loader="map2seq", category="map2seq-seen",
    ),
    TaskSpec(
        id="touchdown-unseen-dev-v1",
        description="Touchdown navigation instructions, unseen Manhattan area, dev split (VELMA)",
        city="touchdown-manhattan", files=("touchdown/unseen/dev.json",), split="dev",
        loader="touchdown", category="touchdown-unseen",
    ),
    TaskSpec(
        id="cityseeker-shanghai2-v1",
        description="CitySeeker implicit-need tasks in Shanghai (shanghai2), all 127 questions",
        city="cityseeker-shanghai2", files=("cityseeker/shanghai2/questions.json",),
        split="all", loader="cityseeker",
    ),
    TaskSpec(
        id="helsinki-needs-v1",
        description="CitySeeker-style need tasks generated on built-in Helsinki (offline, seed 0)",
        city="helsinki", split="all", build=_helsinki_needs_v1,
    ),
]  # fmt: skip
"""The built-in task sets (all v1)."""

_REGISTRY: dict[str, TaskSpec] = {spec.id: spec for spec in BUILTIN_TASKS}
_CITY_MEMO: dict[str, City] = {}


def register_task(spec: TaskSpec, *, replace: bool = False) -> TaskSpec:
    """Add a task set to the registry (``replace=True`` to overwrite an id)."""
    if spec.id in _REGISTRY and not replace:
        raise FlaneurError(f"task {spec.id!r} is already registered")
    if spec.build is None and (spec.city not in CITY_SOURCES or not spec.files):
        raise FlaneurError(
            f"task {spec.id!r} needs a build callable, or a city in {sorted(CITY_SOURCES)} "
            "and episode files"
        )
    _REGISTRY[spec.id] = spec
    return spec


def register_city_source(source: CitySource, *, replace: bool = False) -> CitySource:
    """Add a way to build a task city from the data directory (for file-based task sets)."""
    if source.key in CITY_SOURCES and not replace:
        raise FlaneurError(f"city source {source.key!r} is already registered")
    CITY_SOURCES[source.key] = source
    return source


def list_tasks() -> list[TaskSpec]:
    """All registered task sets, sorted by id."""
    return [_REGISTRY[key] for key in sorted(_REGISTRY)]


def get_task(task_id: str) -> TaskSpec:
    """The task set ``task_id``; :class:`FlaneurError` naming the known ids otherwise."""
    try:
        return _REGISTRY[task_id]
    except KeyError:
        raise FlaneurError(
            f"unknown task {task_id!r}; registered tasks: {', '.join(sorted(_REGISTRY))}"
        ) from None


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


def task_files(spec: TaskSpec, data_dir: Path) -> list[Path]:
    """Absolute paths of the episode files and city source files of a task set."""
    rel = list(spec.files)
    if spec.build is None and spec.city in CITY_SOURCES:
        rel += list(CITY_SOURCES[spec.city].files)
    return [data_dir / r for r in rel]


def missing_files(spec: TaskSpec, data_dir: Path) -> list[Path]:
    """Files of ``spec`` absent from ``data_dir``."""
    return [p for p in task_files(spec, data_dir) if not p.is_file()]


def _require_files(spec: TaskSpec, data_dir: Path) -> None:
    missing = missing_files(spec, data_dir)
    if missing:
        raise DataError(
            f"task {spec.id!r} needs {len(missing)} missing file(s): "
            + ", ".join(str(p) for p in missing)
        )


def city_cache_key(source: CitySource, data_dir: Path) -> str:
    """``<key>-<hash>``; the hash covers the data folder and the files' size and mtime."""
    parts = [source.key, str(CITY_CACHE_VERSION), str(PACK_VERSION), str(data_dir.resolve())]
    for rel in source.files:
        stat = (data_dir / rel).stat()
        parts.append(f"{rel}:{stat.st_size}:{int(stat.st_mtime)}")
    return f"{source.key}-{hashlib.sha1('|'.join(parts).encode()).hexdigest()[:12]}"


def load_task_city(key: str, data_dir: Path, *, rebuild: bool = False) -> City:
    """The city ``key`` built from ``data_dir``, via the pack cache and an in-process memo."""
    source = CITY_SOURCES[key]
    cache_key = city_cache_key(source, data_dir)
    if not rebuild and cache_key in _CITY_MEMO:
        return _CITY_MEMO[cache_key]
    pack = cache_dir("cities") / cache_key
    if (pack / "city.json").is_file() and not rebuild:
        city = City.load(pack)
    else:
        city = source.build(data_dir)
        tmp = pack.with_name(f"{pack.name}.tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        city.save(tmp)
        shutil.rmtree(pack, ignore_errors=True)
        try:
            tmp.rename(pack)
        except OSError:  # another process finished first; its pack is equivalent
            shutil.rmtree(tmp, ignore_errors=True)
    _CITY_MEMO[cache_key] = city
    return city


def load_episodes(spec: TaskSpec, data_dir: Path, city: City | None = None) -> list[Episode]:
    """Read the episodes of a file-based task set (no city check)."""
    episodes: list[Episode] = []
    for rel in spec.files:
        path = data_dir / rel
        if spec.loader in ("map2seq", "touchdown"):
            id_field = "id" if spec.loader == "map2seq" else "route_id"
            episodes += load_vln_jsonl(path, category=spec.category, id_field=id_field)
        elif spec.loader == "cityseeker":
            graph = city.graph if city is not None else None
            name = city.name if city is not None else None
            episodes += load_cityseeker_questions(path, city=name, graph=graph)
        else:
            raise FlaneurError(f"task {spec.id!r} has unknown loader {spec.loader!r}")
    return episodes


def load_task(
    task_id: str, data_dir: str | Path | None = None, *, rebuild_city: bool = False
) -> tuple[City, list[Episode]]:
    """Load a registered task set: its city and its episodes, checked against the city.

    Parameters
    ----------
    task_id
        A registered id (see :func:`list_tasks`).
    data_dir
        The data directory; default ``$FLANEUR_DATA``. Generated sets with a ``build``
        hook receive it as given (possibly ``None``).
    rebuild_city
        Rebuild the cached city pack.

    Raises
    ------
    FlaneurError
        Unknown task, no data directory, or missing files (naming them and the task).
    DataError
        Malformed task files (naming file and line) or node ids missing from the city.
    """
    spec = get_task(task_id)
    if spec.build is not None:
        folder = None
        if data_dir is not None or os.environ.get(DATA_ENV):
            folder = resolve_data_dir(data_dir, task=task_id)
        city, episodes = spec.build(folder)
        check_episodes(episodes, city)
        return city, episodes
    folder = resolve_data_dir(data_dir, task=task_id)
    _require_files(spec, folder)
    city = load_task_city(spec.city, folder, rebuild=rebuild_city)
    episodes = load_episodes(spec, folder, city)
    check_episodes(episodes, city)
    return city, episodes


def count_episodes(spec: TaskSpec, data_dir: Path | None) -> int | None:
    """Number of episodes of a file-based set, or ``None`` if its files are missing."""
    if spec.build is not None or data_dir is None or missing_files(spec, data_dir):
        return None
    return len(load_episodes(spec, data_dir))

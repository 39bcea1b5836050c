"""User task sets registered persistently: TOML registry files and ``flaneur.tasks`` entry points.

A registry file declares one task set with top-level keys, or several as ``[[task]]`` tables::

    [[task]]
    id = "my-routes-v1"                  # required; letters, digits, _ . : -
    files = ["routes/dev.jsonl"]         # required; relative to this file's folder
    format = "map2seq"                   # optional: detected from the first file
    city = "touchdown:../data"           # optional when the file's place implies it
    scheme = "turns"                     # optional: the format's default
    success_metric = "tc"                # optional: the format's default
    description = "my held-out routes"   # optional
    split = "dev"                        # optional
    category = "my-routes"               # optional (map2seq / Touchdown episodes)

flaneur reads registry files given with ``--registry FILE``, listed in ``$FLANEUR_TASKS``
(paths separated by ``os.pathsep``; a folder stands for its ``*.toml`` files), and those named
by Python entry points in the group ``flaneur.tasks``. An entry point loads to a
:class:`~flaneur.tasks.spec.TaskSpec`, a list of them, a path of a registry file, or a
callable without arguments returning one of these.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from flaneur.errors import DataError, FlaneurError
from flaneur.tasks.catalogue import TASKS, register_task
from flaneur.tasks.cities import absolute_city_spec, infer_city
from flaneur.tasks.episode import read_episodes
from flaneur.tasks.formats import FORMATS, detect_format, episode_facts
from flaneur.tasks.spec import ID_PATTERN, SCHEME_NAMES, SUCCESS_METRICS, TaskSpec

REGISTRY_ENV = "FLANEUR_TASKS"
"""Environment variable listing registry files (or folders of them)."""

ENTRY_POINT_GROUP = "flaneur.tasks"
"""Python entry-point group through which installed packages add task sets."""

KNOWN_FIELDS = (
    "id",
    "files",
    "format",
    "city",
    "scheme",
    "success_metric",
    "description",
    "split",
    "category",
)

_discovered = False
_discovery_error: FlaneurError | None = None


def _text(table: dict[str, Any], key: str, where: str, path: Path, required: bool = False) -> str:
    value = table.get(key)
    if value is None:
        if required:
            raise DataError(f"{where}{key}: missing (a string is required)", path=path)
        return ""
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{where}{key}: expected a non-empty string, got {value!r}", path=path)
    return value.strip()


def _choice(table: dict, key: str, where: str, path: Path, choices: Iterable[str]) -> str:
    value = _text(table, key, where, path)
    if value and value not in choices:
        raise DataError(f"{where}{key}: {value!r} is not one of {', '.join(choices)}", path=path)
    return value


def _files(table: dict[str, Any], where: str, path: Path) -> tuple[Path, ...]:
    raw = table.get("files")
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(f, str) and f for f in raw):
        raise DataError(f"{where}files: expected a non-empty list of paths, got {raw!r}", path=path)
    base = path.parent
    return tuple((base / Path(f).expanduser()).resolve() for f in raw)


def spec_from_table(table: Any, path: Path, where: str = "", origin: str = "") -> TaskSpec:
    """Validate one task table of a registry file and turn it into a :class:`TaskSpec`.

    Raises
    ------
    DataError
        Naming the file and the field (``task[1].scheme: 'walk' is not one of ...``).
    """

    if not isinstance(table, dict):
        raise DataError(f"{where.rstrip('.') or 'task'}: expected a table", path=path)
    unknown = sorted(set(table) - set(KNOWN_FIELDS))
    if unknown:
        raise DataError(
            f"{where}{unknown[0]}: unknown field (known: {', '.join(KNOWN_FIELDS)})", path=path
        )
    task_id = _text(table, "id", where, path, required=True)
    if not ID_PATTERN.match(task_id):
        raise DataError(
            f"{where}id: {task_id!r} may hold only letters, digits and _ . : - "
            "(and starts with a letter or digit)",
            path=path,
        )
    files = _files(table, where, path)
    fmt = _choice(table, "format", where, path, FORMATS)
    scheme = _choice(table, "scheme", where, path, SCHEME_NAMES)
    success = _choice(table, "success_metric", where, path, SUCCESS_METRICS)
    city = absolute_city_spec(_text(table, "city", where, path), path.parent)
    facts = _file_facts(files[0], fmt, city, f"{where}", path)
    return TaskSpec(
        id=task_id,
        description=_text(table, "description", where, path) or facts["description"],
        city=city or facts["city"],
        files=tuple(str(f) for f in files),
        split=_text(table, "split", where, path) or "all",
        loader=facts["format"],
        category=_text(table, "category", where, path),
        scheme=scheme or facts["scheme"],
        success_metric=success or facts["success_metric"],
        origin=origin or str(path),
    )


def _file_facts(first: Path, fmt: str, city: str, where: str, path: Path) -> dict[str, str]:
    """What a set's first file declares where the table leaves it out (format, city, facts).

    The file is read only for what the table does not give, so that a set whose format and
    city are declared registers before its files exist.
    """

    exists = first.is_file()
    if not fmt:
        if not exists:
            raise DataError(
                f"{where}format: not given, and files[0] ({first}) does not exist to detect it",
                path=path,
            )
        try:
            fmt = detect_format(first)
        except DataError as err:
            raise DataError(f"{where}files[0]: {err}", path=path) from None
    declared = FORMATS[fmt]
    scheme, success, episodes_city = declared.scheme, declared.success_metric, None
    if scheme is None or success is None or (not city and fmt == "episodes"):
        if not exists:
            raise DataError(
                f"{where}scheme: not given, and files[0] ({first}) does not exist to tell it",
                path=path,
            )

        episodes = read_episodes(first)
        scheme, success = episode_facts(episodes)
        cities = {e.city for e in episodes}
        episodes_city = cities.pop() if len(cities) == 1 else None
    city = city or infer_city(first, fmt, episodes_city) or ""
    if not city:
        raise DataError(
            f"{where}city: not given, and where files[0] lies implies none (give a city pack "
            "folder, helsinki, touchdown:DIR, cityseeker:DIR or an .osm.pbf)",
            path=path,
        )
    return {
        "format": fmt,
        "city": city,
        "scheme": scheme,
        "success_metric": success,
        "description": f"{declared.description} {first.name}",
    }


def read_registry_file(path: str | Path, *, origin: str = "") -> list[TaskSpec]:
    """The task sets declared in a TOML registry file (validated; not yet registered)."""
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise DataError("task registry file not found", path=path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise DataError(f"invalid TOML ({err})", path=path) from None
    except UnicodeDecodeError:
        raise DataError("invalid TOML (not UTF-8 text)", path=path) from None
    if "task" in data:
        extra = sorted(set(data) - {"task"})
        if extra:
            raise DataError(f"{extra[0]}: top-level field beside [[task]] tables", path=path)
        tables = data["task"] if isinstance(data["task"], list) else [data["task"]]
        return [spec_from_table(t, path, f"task[{i}].", origin) for i, t in enumerate(tables)]
    if "id" in data:
        return [spec_from_table(data, path, "", origin)]
    raise DataError(
        "no task set: expected top-level 'id', 'files', ... or [[task]] tables", path=path
    )


def register_registry_file(path: str | Path, *, origin: str = "") -> list[TaskSpec]:
    """Read a registry file and register its task sets (again: replaced, same origin).

    Raises
    ------
    DataError
        Invalid file, or an id already registered from elsewhere (naming both origins).
    """

    specs = read_registry_file(path, origin=origin)
    for spec in specs:
        known = TASKS.get(spec.id, None)
        if known is not None and known.origin != spec.origin:
            raise DataError(
                f"id: task {spec.id!r} is already registered (from {known.origin})",
                path=Path(path).expanduser().resolve(),
            )
        register_task(spec, replace=True)
    return specs


def _env_files(value: str) -> list[Path]:
    files: list[Path] = []
    for raw in value.split(os.pathsep):
        if not raw.strip():
            continue
        entry = Path(raw.strip()).expanduser()
        if entry.is_dir():
            files += sorted(entry.glob("*.toml"))
        elif entry.is_file():
            files.append(entry)
        else:
            raise DataError(f"${REGISTRY_ENV} names a path that does not exist", path=entry)
    return files


def _register_entry_point_value(value: Any, origin: str) -> None:

    if callable(value) and not isinstance(value, TaskSpec):
        value = value()
    if isinstance(value, str | Path):
        register_registry_file(value, origin=origin)
        return
    specs = [value] if isinstance(value, TaskSpec) else list(value)
    for spec in specs:
        if not isinstance(spec, TaskSpec):
            raise FlaneurError(f"{origin}: expected TaskSpec objects, got {type(spec).__name__}")
        register_task(TaskSpec(**{**spec.__dict__, "origin": origin}), replace=True)


def discover_task_sets(*, force: bool = False) -> None:
    """Register the task sets of ``$FLANEUR_TASKS`` and of ``flaneur.tasks`` entry points.

    Runs once per process (``force=True`` runs again, e.g. after changing the variable).

    Raises
    ------
    FlaneurError
        A registry file that does not validate, or an entry point that fails to load,
        naming it.
    """
    global _discovered, _discovery_error
    if _discovered and not force:
        if _discovery_error is not None:
            raise _discovery_error
        return
    _discovered, _discovery_error = True, None
    try:
        _discover()
    except FlaneurError as err:  # kept: every later lookup reports it again, in one line
        _discovery_error = err
        raise


def _discover() -> None:

    for path in _env_files(os.environ.get(REGISTRY_ENV, "")):
        register_registry_file(path, origin=f"${REGISTRY_ENV}: {path}")
    for point in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point {point.name} ({point.value})"
        try:
            value = point.load()
        except Exception as err:  # an outside package's import error, shown in one line
            raise FlaneurError(f"{origin} failed to load: {type(err).__name__}: {err}") from None
        _register_entry_point_value(value, origin)

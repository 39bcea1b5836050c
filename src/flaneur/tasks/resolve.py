"""The one resolver behind every ``--tasks``: a registered id or a task file, to a ``TaskSpec``.

``flaneur run``, ``flaneur validate gold``, ``flaneur tasks check``, ``flaneur report``, the
Gymnasium ids and :func:`flaneur.tasks.load_task` all go through :func:`resolve_task`:

- a registered id (built-in, from a registry file, ``$FLANEUR_TASKS`` or an entry point) is
  looked up;
- otherwise an existing file is a task set of its own: its format is detected (or given with
  ``--format``), its city given with ``--city`` or implied by where the file lies (see
  :func:`flaneur.tasks.cities.infer_city`), and its scheme and success metric are the facts
  its format declares (see :mod:`flaneur.tasks.formats`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from flaneur.errors import DataError, FlaneurError
from flaneur.tasks.catalogue import TASKS
from flaneur.tasks.cities import absolute_city_spec, infer_city
from flaneur.tasks.episode import read_episodes
from flaneur.tasks.formats import FORMATS, check_format, detect_format, episode_facts
from flaneur.tasks.items import read_item_header
from flaneur.tasks.spec import TaskSpec
from flaneur.tasks.user_registry import discover_task_sets, register_registry_file


def file_spec(
    path: str | Path,
    *,
    fmt: str | None = None,
    city: str | None = None,
    task_id: str | None = None,
) -> TaskSpec:
    """A :class:`TaskSpec` for one task file.

    Parameters
    ----------
    path
        The task file.
    fmt
        Its format (default: detected from its first row).
    city
        A city spec (default: implied by where the file lies, see
        :func:`~flaneur.tasks.cities.infer_city`).
    task_id
        The id of the set (default: ``str(path)`` as given).

    Raises
    ------
    DataError
        A missing file, an undetectable or unknown format, or no city (naming the file).
    """

    shown = Path(path)
    path = shown.expanduser().resolve()
    if not path.is_file():
        raise DataError("task file not found", path=shown)
    fmt = check_format(fmt) if fmt else detect_format(path)
    declared = FORMATS[fmt]
    scheme, success = declared.scheme, declared.success_metric
    kind, episodes_city = "navigation", None
    if fmt == "items":
        kind, success, episodes_city = _item_facts(path)
    elif scheme is None or success is None:
        episodes = read_episodes(path)
        scheme, success = episode_facts(episodes)
        cities = {e.city for e in episodes}
        episodes_city = cities.pop() if len(cities) == 1 else None
    city = absolute_city_spec(city, Path.cwd()) if city else infer_city(path, fmt, episodes_city)
    if not city:
        raise DataError(
            f"no city for this {declared.description} file: pass --city PACK|SOURCE (a city "
            "pack folder, helsinki, touchdown:DIR, cityseeker:DIR or an .osm.pbf)",
            path=shown,
        )
    return TaskSpec(
        id=task_id or str(shown),
        description=f"{declared.description} {path.name}",
        kind=kind,
        city=city,
        files=(str(path),),
        split="all",
        loader=fmt,
        scheme=scheme or "",
        success_metric=success or "",
        paper_max_steps=declared.paper_max_steps,
        origin="file",
    )


def _item_facts(path: Path) -> tuple[str, str, str | None]:
    """``(kind, success metric, city)`` that an item file's header declares."""

    header = read_item_header(path)
    success = header.get("success_metric")
    if not isinstance(success, str) or not success:
        raise DataError("the header must declare its 'success_metric'", path=path, line=1)
    city = header.get("city")
    return str(header["kind"]), success, city if isinstance(city, str) and city else None


def _looks_like_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or Path(ref).suffix.lower() in (".json", ".jsonl")


def resolve_task(ref: str, *, fmt: str | None = None, city: str | None = None) -> TaskSpec:
    """The task set ``ref`` names: a registered id, else a task file.

    ``fmt`` and ``city`` apply to task files only (a registered set declares its own).

    Raises
    ------
    FlaneurError
        Neither a registered id nor an existing file: the message lists the registered ids.
    DataError
        A task file whose format or city cannot be told (see :func:`file_spec`).
    """

    ref = ref.strip()
    discover_task_sets()  # registry files and entry points
    known = set(TASKS.names())
    if ref in known:
        return TASKS.get(ref)
    if Path(ref).expanduser().is_file():
        return file_spec(ref, fmt=fmt, city=city)
    if _looks_like_path(ref):
        raise DataError("task file not found (and not a registered task id)", path=ref)
    raise FlaneurError(
        f"unknown task {ref!r}: neither a registered id nor a file; registered tasks: "
        + ", ".join(sorted(known))
    )


def resolve_tasks(
    refs: str | Sequence[str], *, fmt: str | None = None, city: str | None = None
) -> list[TaskSpec]:
    """Resolve a comma-separated string (or a list) of task ids and files, in order."""
    items = refs.split(",") if isinstance(refs, str) else list(refs)
    specs = [resolve_task(r, fmt=fmt, city=city) for r in items if r.strip()]
    if not specs:
        raise FlaneurError("no task set given (--tasks ID|FILE[,ID|FILE...])")
    return specs


def register_registries(paths: Sequence[str | Path] | None) -> None:
    """Register the task sets of ``--registry`` files (none: nothing to do)."""

    for path in paths or ():
        register_registry_file(path, origin=str(Path(path).expanduser().resolve()))


def spec_of_run(task: str, summary: dict) -> TaskSpec:
    """The task set a run's rows name, for reports: a registered id, else the facts the run
    recorded (``summary["task_sets"]``: files and city by absolute path), else the run's
    ``--format`` / ``--city`` applied to ``task`` as a file."""

    discover_task_sets()
    if task in TASKS.names():
        return TASKS.get(task)
    facts = (summary.get("task_sets") or {}).get(task)
    if facts and facts.get("files") and facts.get("loader") not in ("", "generated"):
        return TaskSpec(
            id=task,
            description=f"task file {task}",
            city=str(facts["city"]),
            files=tuple(facts["files"]),
            split=str(facts.get("split") or "all"),
            loader=str(facts["loader"]),
            category=str(facts.get("category") or ""),
            kind=str(facts.get("kind") or "navigation"),
            scheme=str(facts.get("scheme") if "scheme" in facts else "turns"),
            success_metric=str(facts.get("success_metric") or "tc"),
            paper_max_steps=facts.get("paper_max_steps"),
            origin=str(facts.get("origin") or "file"),
        )
    config = summary.get("config") or {}
    return resolve_task(task, fmt=config.get("task_format"), city=config.get("city"))

"""Task-file formats: detect which one a file is in, and read it with the right loader.

=============  ============================================================  ========  =======
format         what the file is                                               scheme    success
=============  ============================================================  ========  =======
``episodes``   flaneur's episode JSONL (``id``, ``start_node``, ...)           see below see below
``map2seq``    map2seq JSON lines (``id``, ``navigation_text``, ``route_panoids``)  turns  tc
``touchdown``  Touchdown JSON lines (``route_id``, ``navigation_text``, ...)     turns     tc
``cityseeker`` CitySeeker ``question.json`` / ``questions.json`` (a JSON list)   headings  tcp
``items``      flaneur item JSONL: a header (``kind``, ``version``), then items  -        header
=============  ============================================================  ========  =======

An ``items`` file (:mod:`flaneur.tasks.items`) holds a task set of another kind than
navigation (V-IRL's benchmarks, the planner agents' scenarios); its header declares the kind
and the success metric.

An ``episodes`` file declares its facts by what its episodes are: when every episode's goal
is a place (``goal_place_ids``) or a place category (``goal_categories``), the set is a
place-finding set (``headings``, ``tcp``); otherwise it is a route set (``turns``, ``tc``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from flaneur.errors import DataError
from flaneur.tasks.cityseeker_questions import load_cityseeker_questions
from flaneur.tasks.episode import read_episodes
from flaneur.tasks.items import ITEM_HEADER_KEYS, read_items
from flaneur.tasks.loaders import VELMA_LOOP_ACTIONS, load_vln_jsonl

if TYPE_CHECKING:
    from flaneur.tasks.episode import Episode
    from flaneur.world.city import City


@dataclass(frozen=True)
class TaskFormat:
    """A task-file format and the facts a file in it declares.

    Attributes
    ----------
    name
        Format name (``--format``).
    scheme
        Default action scheme of its task sets (``None``: decided by the episodes).
    success_metric
        Success metric of its task sets (``None``: decided by the episodes).
    description
        One line for error messages and docs.
    paper_max_steps
        The step limit of the paper the format comes from, applied to every episode under
        ``--protocol paper`` (``None``: the episodes' own).
    """

    name: str
    scheme: str | None
    success_metric: str | None
    description: str
    paper_max_steps: int | None = None


FORMATS: dict[str, TaskFormat] = {
    "episodes": TaskFormat("episodes", None, None, "flaneur episode JSONL"),
    "map2seq": TaskFormat("map2seq", "turns", "tc", "map2seq JSON lines", VELMA_LOOP_ACTIONS),
    "touchdown": TaskFormat("touchdown", "turns", "tc", "Touchdown JSON lines", VELMA_LOOP_ACTIONS),
    "cityseeker": TaskFormat("cityseeker", "headings", "tcp", "CitySeeker question(s).json"),
    "items": TaskFormat("items", "", None, "flaneur item JSON lines"),
}
"""The task-file formats flaneur reads."""

_EPISODE_KEYS = {"id", "city", "instruction", "start_node", "start_heading"}
_VLN_KEYS = {"navigation_text", "route_panoids"}
_CITYSEEKER_KEYS = {"question", "from", "to", "complete_route"}


def check_format(name: str) -> str:
    """``name`` if it is a known format; a one-line error listing the formats otherwise."""
    if name not in FORMATS:
        raise DataError(f"unknown task format {name!r}; choose one of {', '.join(FORMATS)}")
    return name


def _first_value(path: Path) -> tuple[str, object]:
    """``("lines" | "list", first JSON value)`` of a JSON-lines file or a JSON list."""
    try:
        with path.open(encoding="utf-8") as handle:
            head = handle.read(1 << 16)
            start = head.lstrip()
            if not start:
                raise DataError("cannot tell the task format: the file is empty", path=path)
            if start[0] == "[":
                text = head + handle.read()
                decoder = json.JSONDecoder()
                body = text.lstrip()[1:].lstrip()
                if body.startswith("]"):
                    raise DataError(
                        "cannot tell the task format: the file is an empty JSON list", path=path
                    )
                value, _ = decoder.raw_decode(body)
                return "list", value
            first_line = next(line for line in head.splitlines() if line.strip())
            return "lines", json.loads(first_line)
    except (json.JSONDecodeError, StopIteration):
        raise DataError(
            "cannot tell the task format: the file starts with neither a JSON object per line "
            "nor a JSON list (pass --format episodes|map2seq|touchdown|cityseeker|items)",
            path=path,
        ) from None
    except UnicodeDecodeError:
        raise DataError("cannot tell the task format: not a UTF-8 text file", path=path) from None


def _keys(value: object, limit: int = 8) -> str:
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}"
    keys = sorted(value)
    more = f", ... ({len(keys)} in all)" if len(keys) > limit else ""
    return "an object with keys " + ", ".join(keys[:limit]) + more


def detect_format(path: str | Path) -> str:
    """The format of a task file, from its first row.

    Raises
    ------
    DataError
        Missing file, or a first row that fits no format: the message names the file and
        what it saw there (its keys), and says to pass ``--format``.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("task file not found", path=path)
    shape, value = _first_value(path)
    if isinstance(value, dict):
        keys = set(value)
        if shape == "list" and keys >= _CITYSEEKER_KEYS:
            return "cityseeker"
        if shape == "lines" and keys >= _VLN_KEYS:
            if "id" in keys:
                return "map2seq"
            if "route_id" in keys:
                return "touchdown"
        if shape == "lines" and keys >= _EPISODE_KEYS:
            return "episodes"
        if shape == "lines" and keys >= set(ITEM_HEADER_KEYS):
            return "items"
    where = "first element of the JSON list" if shape == "list" else "first line"
    raise DataError(
        f"cannot tell the task format: the {where} is {_keys(value)}; expected flaneur "
        f"episodes ({', '.join(sorted(_EPISODE_KEYS))}), map2seq/Touchdown rows (id or "
        f"route_id, {', '.join(sorted(_VLN_KEYS))}), a CitySeeker question list "
        f"({', '.join(sorted(_CITYSEEKER_KEYS))}) or an item file header (kind, version); "
        "pass --format to choose",
        path=path,
    )


def episode_facts(episodes: list[Episode]) -> tuple[str, str]:
    """``(scheme, success metric)`` that a list of flaneur episodes declares: the same
    ``scheme`` and ``success_metric`` in every episode's metadata (generated sets write
    them), else by its goals."""
    declared = {(e.metadata.get("scheme"), e.metadata.get("success_metric")) for e in episodes}
    if len(declared) == 1:
        scheme, success = declared.pop()
        if isinstance(scheme, str) and isinstance(success, str) and scheme and success:
            return scheme, success
    place_goals = bool(episodes) and all(e.goal_place_ids or e.goal_categories for e in episodes)
    return ("headings", "tcp") if place_goals else ("turns", "tc")


def load_task_file(path: str | Path, fmt: str, city: City, *, category: str = "") -> list:
    """Read a task file in format ``fmt`` into episodes of ``city`` (no node check), or the
    items of an item file.

    Parameters
    ----------
    path
        The file.
    fmt
        One of :data:`FORMATS`.
    city
        The city of the episodes (its name is written into VLN and CitySeeker episodes;
        CitySeeker route headings come from its graph; episodes start facing north).
    category
        Category of map2seq / Touchdown episodes (default: the format's name).
    """

    check_format(fmt)
    if fmt == "items":
        return read_items(path)[1]
    if fmt == "episodes":
        return read_episodes(path)
    if fmt in ("map2seq", "touchdown"):
        id_field = "id" if fmt == "map2seq" else "route_id"
        return load_vln_jsonl(path, category=category or fmt, city=city.name, id_field=id_field)
    return load_cityseeker_questions(path, city=city.name, graph=city.graph)

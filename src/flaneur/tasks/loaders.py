"""Read Touchdown, map2seq and CitySeeker task files into :class:`Episode` lists.

- Touchdown / map2seq: JSON lines with ``route_panoids`` (gold path, first = start, last =
  goal), ``start_heading`` (degrees) and ``navigation_text``; map2seq rows are named by ``id``,
  Touchdown rows by ``route_id``.
- CitySeeker: ``questions.json``, a JSON list of questions with ``from``, ``to``,
  ``complete_route`` and, for ordered two-goal questions (``question2``), ``stage1_route``
  whose ``to`` is the first goal.

Every error names the file and the line of the offending row. :func:`check_episodes` checks
node ids against a city.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from flaneur.errors import DataError
from flaneur.geo import bearing
from flaneur.tasks.episode import Episode, iter_json_lines, iter_unknown_nodes
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph
from flaneur.world.sources.cityseeker import cityseeker_questions_path
from flaneur.world.taxonomy import normalize_category, split_targets

VELMA_MAX_STEPS = 55
"""VELMA's step limit (``--max_steps 55``)."""

CITYSEEKER_MAX_STEPS = 35
"""CitySeeker's step limit (``main.py --step 35``)."""

@dataclass(frozen=True)
class CitySeekerCategory:
    """One CitySeeker question category.

    Attributes
    ----------
    name
        Short name (``metadata["category_name"]``), after the CitySeeker README's table.
    target
        What the question's ``folder`` holds: ``"place"`` (a place type), ``"places"`` (two
        place types in order), ``"brand"`` (chain names), ``"need"`` (a need in words) or
        ``"place+attribute"`` (a place type with a quality: ``"restaurant with outdoor
        seating"``, ``"romantic restaurant"``).
    success_metric
        The row metric that says whether an episode succeeded: ``"tcp"`` (stop within 50 m
        of the goal), the headline success rate of CitySeeker's tables, for every category.
    """

    name: str
    target: str
    success_metric: str = "tcp"


CITYSEEKER_CATEGORY_TABLE: dict[str, CitySeekerCategory] = {
    "question1": CitySeekerCategory("basic POI", "place"),
    "question2": CitySeekerCategory("ordered multi-goal", "places"),
    "question4": CitySeekerCategory("brand", "brand"),
    "question5": CitySeekerCategory("transit hub", "place"),
    "question6": CitySeekerCategory("latent POI", "place"),
    "question7": CitySeekerCategory("abstract need", "need"),
    "question8": CitySeekerCategory("inclusive infrastructure", "place+attribute"),
    "question9": CitySeekerCategory("semantic preference", "place+attribute"),
}
"""Every category of CitySeeker's public question files (eight cities; there is no
``question3``). An unknown category is read as a place type with its code as name."""

CITYSEEKER_CATEGORIES = {code: cat.name for code, cat in CITYSEEKER_CATEGORY_TABLE.items()}
"""CitySeeker's names for its question categories (code -> name)."""

START_HEADINGS = ("north", "route")
"""Start-heading rules of :func:`load_cityseeker_questions`."""


def vln_max_steps(route_nodes: int) -> int:
    """Step limit of a Touchdown/map2seq episode: ``max(55, 2 * len(route) + 10)``.

    VELMA stops agents after 55 steps. A gold action sequence in the ``turns`` scheme has one
    move per route edge plus at most one turn per node and the final stop, so it is shorter
    than ``2 * len(route) + 1``; the rule keeps VELMA's 55 and always leaves room for it.
    """
    return max(VELMA_MAX_STEPS, 2 * route_nodes + 10)


def _field(row: dict[str, Any], key: str, path: Path, line: int) -> Any:
    if key not in row:
        raise DataError(f"missing field {key!r}", path=path, line=line)
    return row[key]


def _check_unique(episodes: Sequence[Episode], lines: Sequence[int], path: Path) -> None:
    first: dict[str, int] = {}
    for episode, line in zip(episodes, lines, strict=True):
        if episode.id in first:
            raise DataError(
                f"episode id {episode.id!r} repeats the row on line {first[episode.id]}",
                path=path,
                line=line,
            )
        first[episode.id] = line


def load_vln_jsonl(
    path: str | Path,
    *,
    category: str,
    city: str = "manhattan",
    id_field: str | None = None,
) -> list[Episode]:
    """Read a Touchdown or map2seq JSON lines file.

    Parameters
    ----------
    path
        The file (e.g. ``map2seq/unseen/dev.json``).
    category
        Category of every episode, e.g. ``"map2seq-unseen"``.
    city
        City name written into the episodes.
    id_field
        Row field that names the episode: ``"id"`` (map2seq) or ``"route_id"``
        (Touchdown); by default ``id`` if the row has it, else ``route_id``.

    Returns
    -------
    list of Episode
        ``start_node = route_panoids[0]``, ``goal_nodes = (route_panoids[-1],)``,
        ``reference_path = route_panoids``, ``max_steps`` from :func:`vln_max_steps`,
        ``metadata["dataset"]``: ``"map2seq"`` (rows named by ``id``) or ``"touchdown"``
        (rows named by ``route_id``); the baselines follow VELMA's per-dataset rules.

    Raises
    ------
    DataError
        A missing file, a line that is not JSON, a missing or malformed field, or a
        repeated id, naming the file and line.
    """
    path = Path(path)
    episodes: list[Episode] = []
    lines: list[int] = []
    for line_no, row in iter_json_lines(path, what="task file"):
        if not isinstance(row, dict):
            raise DataError("expected a JSON object per line", path=path, line=line_no)
        episodes.append(_vln_episode(row, path, line_no, category, city, id_field))
        lines.append(line_no)
    _check_unique(episodes, lines, path)
    return episodes


def _vln_episode(
    row: dict[str, Any], path: Path, line: int, category: str, city: str, id_field: str | None
) -> Episode:
    key = id_field or ("id" if "id" in row else "route_id")
    row_id = _field(row, key, path, line)
    route = _field(row, "route_panoids", path, line)
    if not isinstance(route, list) or not route or not all(isinstance(p, str) for p in route):
        raise DataError("'route_panoids' must be a non-empty list of strings", path=path, line=line)
    text = _field(row, "navigation_text", path, line)
    if not isinstance(text, str):
        raise DataError("'navigation_text' must be a string", path=path, line=line)
    heading = _field(row, "start_heading", path, line)
    try:
        start_heading = float(heading) % 360.0
    except (TypeError, ValueError):
        raise DataError(
            f"'start_heading' must be a number, got {heading!r}", path=path, line=line
        ) from None
    metadata: dict[str, Any] = {
        "source_file": path.name, "source_line": line, key: row_id,
        "dataset": "map2seq" if key == "id" else "touchdown",
    }  # fmt: skip
    for extra in ("instructions_id", "end_heading"):
        if extra in row:
            metadata[extra] = row[extra]
    return Episode(
        id=str(row_id),
        city=city,
        instruction=text.strip(),
        start_node=route[0],
        start_heading=start_heading,
        goal_nodes=(route[-1],),
        reference_path=tuple(route),
        category=category,
        max_steps=vln_max_steps(len(route)),
        metadata=metadata,
    )


def iter_json_array(text: str) -> Iterator[tuple[Any, int]]:
    """Yield ``(element, line)`` for each element of a JSON array, ``line`` being 1-based.

    Raises :class:`json.JSONDecodeError` (with ``lineno``) on malformed input.
    """
    decoder = json.JSONDecoder()
    pos = _skip_space(text, 0)
    if not text.startswith("[", pos):
        raise json.JSONDecodeError("expected a JSON list", text, pos)
    pos = _skip_space(text, pos + 1)
    if text.startswith("]", pos):
        return
    while True:
        value, end = decoder.raw_decode(text, pos)
        yield value, text.count("\n", 0, pos) + 1
        pos = _skip_space(text, end)
        if text.startswith("]", pos):
            return
        if not text.startswith(",", pos):
            raise json.JSONDecodeError("expected ',' or ']'", text, pos)
        pos = _skip_space(text, pos + 1)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def load_cityseeker_questions(
    path: str | Path,
    *,
    city: str | None = None,
    graph: StreetGraph | None = None,
    start_heading: str = "north",
) -> list[Episode]:
    """Read a CitySeeker ``questions.json`` (or ``question.json``, the repository's name).

    Parameters
    ----------
    path
        The file (e.g. ``cityseeker/shanghai2/questions.json``) or its folder; when the named
        file is absent, the other accepted name in the same folder is read.
    city
        City name for the episodes; default: each row's ``city``, else the folder name.
    graph
        The city's street graph, if loaded: the route heading is then the heading of the
        graph edge from the start to the second route node (CitySeeker's ``edge_azimuth``);
        without it, the bearing between the two nodes' coordinates in the file.
    start_heading
        ``"north"`` (default): the agent starts facing north (0 degrees), as in CitySeeker's
        code, where the first step has no forward direction (relative directions are taken
        from azimuth 0) and the human-evaluation viewer opens facing north. ``"route"``:
        facing along the first edge of the reference route (which hands a forward-walking
        agent the first gold move). The other value is kept in ``metadata``
        (``route_heading`` is always stored).

    Returns
    -------
    list of Episode
        See ``docs/episodes.md`` for the field mapping (ids ``<city>-<question_idx>``).
    """
    if start_heading not in START_HEADINGS:
        raise ValueError(f"start_heading must be one of {', '.join(START_HEADINGS)}, "
                         f"got {start_heading!r}")  # fmt: skip
    path = cityseeker_questions_path(path)
    if not path.is_file():
        raise DataError(
            "task file not found (a CitySeeker city needs questions.json or question.json)",
            path=path,
        )
    text = path.read_text(encoding="utf-8")
    episodes: list[Episode] = []
    lines: list[int] = []
    try:
        for index, (row, line) in enumerate(iter_json_array(text)):
            episode = _cityseeker_episode(row, index, path, line, city, graph)
            if start_heading == "north":
                episode = replace(episode, start_heading=0.0)
            episodes.append(episode)
            lines.append(line)
    except json.JSONDecodeError as err:
        raise DataError(f"invalid JSON ({err.msg})", path=path, line=err.lineno) from None
    _check_unique(episodes, lines, path)
    return episodes


def with_start_heading(episodes: Sequence[Episode], rule: str) -> list[Episode]:
    """CitySeeker episodes with the start heading of ``rule`` (``"north"`` or ``"route"``).

    The episode option behind :func:`load_cityseeker_questions`'s ``start_heading``, for
    episodes already loaded; episodes without ``metadata["route_heading"]`` are unchanged.
    """
    if rule not in START_HEADINGS:
        raise ValueError(f"start heading rule must be one of {', '.join(START_HEADINGS)}, "
                         f"got {rule!r}")  # fmt: skip
    out = []
    for episode in episodes:
        route = episode.metadata.get("route_heading")
        if route is not None:
            episode = replace(episode, start_heading=0.0 if rule == "north" else float(route))
        out.append(episode)
    return out


def _place_and_attribute(folder: str) -> tuple[str, str | None, str | None]:
    """``(place type, its category or None, attribute or None)`` of a question8/9 target.

    ``"restaurant with outdoor seating"`` -> ``("restaurant", "restaurant", "with outdoor
    seating")``; ``"romantic restaurant"`` -> ``("restaurant", "restaurant", "romantic")``
    (the longest ending that is a known category); ``"office building with an accessible
    entrance"`` -> ``("office building", None, "with an accessible entrance")``.
    """
    base, attribute = folder.strip(), None
    if " with " in base:
        base, rest = base.split(" with ", 1)
        attribute = "with " + rest.strip()
    words = base.split()
    for k in range(len(words)):
        category = normalize_category(" ".join(words[k:]))
        if category is not None:
            before = " ".join(words[:k])
            if before:
                attribute = f"{before} {attribute}" if attribute else before
            return " ".join(words[k:]), category, attribute
    return base, None, attribute


def _route_ids(route: Any, key: str, where: str, path: Path, line: int) -> list[dict]:
    if not isinstance(route, list) or not route:
        raise DataError(f"{where}: {key!r} must be a non-empty list", path=path, line=line)
    if not all(isinstance(step, dict) and "filename" in step for step in route):
        raise DataError(f"{where}: every {key!r} entry needs a 'filename'", path=path, line=line)
    return route


def _first_heading(route: list[dict], graph: StreetGraph | None) -> float:
    if len(route) < 2:
        return 0.0
    a, b = str(route[0]["filename"]), str(route[1]["filename"])
    if graph is not None and a in graph and b in graph:
        edge = graph.edge_index(graph.index(a), graph.index(b))
        if edge >= 0:
            return float(graph.headings[edge]) % 360.0
    try:
        lat1, lng1 = float(route[0]["latitude"]), float(route[0]["longitude"])
        lat2, lng2 = float(route[1]["latitude"]), float(route[1]["longitude"])
    except (KeyError, TypeError, ValueError):
        return 0.0
    return float(bearing(lat1, lng1, lat2, lng2)) % 360.0


def _cityseeker_episode(
    row: Any, index: int, path: Path, line: int, city: str | None, graph: StreetGraph | None
) -> Episode:
    where = f"question #{index}"
    if not isinstance(row, dict):
        raise DataError(f"{where}: expected a JSON object", path=path, line=line)
    qidx = _field(row, "question_idx", path, line)
    name = city or str(row.get("city") or path.parent.name)
    start, goal = str(_field(row, "from", path, line)), str(_field(row, "to", path, line))
    route = _route_ids(
        _field(row, "complete_route", path, line), "complete_route", where, path, line
    )
    reference = tuple(str(step["filename"]) for step in route)
    if reference[0] != start or reference[-1] != goal:
        raise DataError(
            f"{where}: complete_route must run from 'from' ({start}) to 'to' ({goal})",
            path=path,
            line=line,
        )
    category = str(_field(row, "category", path, line))
    folder = str(_field(row, "folder", path, line))
    kind = CITYSEEKER_CATEGORY_TABLE.get(category, CitySeekerCategory(category, "place"))
    metadata: dict[str, Any] = {
        "source_file": path.name, "source_line": line, "question_idx": qidx,
        "idx": row.get("idx"), "category_name": kind.name, "target_kind": kind.target,
        "success_metric": kind.success_metric, "difficulty": row.get("difficulty"),
        "total_weight": row.get("total_weight"), "total_steps": row.get("total_steps"),
        "target": folder,
    }  # fmt: skip
    goals: tuple[str, ...] = (goal,)
    categories: tuple[str, ...] = ()
    if "stage1_route" in row:
        stage1 = row["stage1_route"]
        first = stage1.get("to") if isinstance(stage1, dict) else None
        if first is None or str(first) not in reference:
            raise DataError(
                f"{where}: stage1_route.to must be a node of complete_route", path=path, line=line
            )
        goals = (str(first), goal)
        names = split_targets(folder)
        cats = [normalize_category(n) for n in names]
        categories = tuple(c for c in cats if c) if all(cats) else ()
        stage2 = row.get("stage2_route") if isinstance(row.get("stage2_route"), dict) else {}
        metadata.update(ordered=True, targets=list(names),
                        services=[stage1.get("service"), stage2.get("service")])  # fmt: skip
    elif kind.target == "brand":
        metadata["brand"] = folder
        metadata["brands"] = list(split_targets(folder))
    elif kind.target == "need":
        metadata["need"] = folder
    elif kind.target == "place+attribute":
        place, cat, attribute = _place_and_attribute(folder)
        categories = (cat,) if cat else ()
        metadata.update(place_type=place, attribute=attribute)
    else:
        cat = normalize_category(folder)
        categories = (cat,) if cat else ()
        metadata["place_type"] = folder
    route_heading = _first_heading(route, graph)
    metadata["route_heading"] = route_heading
    return Episode(
        id=f"{name}-{qidx}",
        city=name,
        instruction=str(_field(row, "question", path, line)).strip(),
        start_node=start,
        start_heading=route_heading,
        goal_nodes=goals,
        goal_categories=categories,
        reference_path=reference,
        category=category,
        max_steps=CITYSEEKER_MAX_STEPS,
        metadata=metadata,
    )


def check_episodes(episodes: Sequence[Episode], city: City | StreetGraph, *, show: int = 5) -> None:
    """Check that every node id of every episode exists in the city.

    Parameters
    ----------
    episodes
        Episodes to check.
    city
        A :class:`City` or its :class:`StreetGraph`.
    show
        How many unknown ids to name in the message.

    Raises
    ------
    DataError
        Naming the first ``show`` unknown ids (with episode and field) and their count.
    """
    graph = city.graph if isinstance(city, City) else city
    unknown: list[str] = []
    ids: set[str] = set()
    for episode in episodes:
        for field, node_id in iter_unknown_nodes(episode, graph):
            if node_id not in ids:
                ids.add(node_id)
                unknown.append(f"{node_id!r} (episode {episode.id!r}, {field})")
    if unknown:
        name = city.name if isinstance(city, City) else "the graph"
        listed = "; ".join(unknown[:show])
        more = f"; and {len(unknown) - show} more" if len(unknown) > show else ""
        raise DataError(f"{len(unknown)} node id(s) not in {name}: {listed}{more}")


def reference_walk_problems(episodes: Sequence[Episode], graph: StreetGraph) -> list[str]:
    """Ids of episodes whose reference path is not a walk along graph edges."""
    bad = []
    for episode in episodes:
        if episode.reference_path and not graph.path_is_walk(graph.indices(episode.reference_path)):
            bad.append(episode.id)
    return bad

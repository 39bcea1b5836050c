"""Read CitySeeker question files (``questions.json`` / ``question.json``) into episodes.

A question file is a JSON list of questions with ``from``, ``to``, ``complete_route`` and,
for ordered two-goal questions (``question2``), ``stage1_route`` whose ``to`` is the first
goal. :data:`CITYSEEKER_CATEGORY_TABLE` names every category of the public files and the
metric that says whether an episode succeeded; episodes start facing north, as CitySeeker's
agents do (``start_heading="route"``: along the first edge of the reference route). Every
error names the file and the line of the offending question. ``docs/episodes.md`` lists the
field mapping.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from flaneur.errors import DataError
from flaneur.geo import bearing
from flaneur.tasks.episode import Episode
from flaneur.tasks.loaders import _check_unique, _field, iter_json_array
from flaneur.world.graph import StreetGraph
from flaneur.world.sources.cityseeker import cityseeker_questions_path
from flaneur.world.taxonomy import normalize_category, split_targets

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
        raise ValueError(
            f"start_heading must be one of {', '.join(START_HEADINGS)}, got {start_heading!r}"
        )
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
        raise ValueError(
            f"start heading rule must be one of {', '.join(START_HEADINGS)}, got {rule!r}"
        )
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
        "source_file": path.name,
        "source_line": line,
        "question_idx": qidx,
        "idx": row.get("idx"),
        "category_name": kind.name,
        "target_kind": kind.target,
        "success_metric": kind.success_metric,
        "difficulty": row.get("difficulty"),
        "total_weight": row.get("total_weight"),
        "total_steps": row.get("total_steps"),
        "target": folder,
    }
    goals, categories, target = _target_fields(row, kind, folder, goal, reference)
    if goals is None:
        raise DataError(
            f"{where}: stage1_route.to must be a node of complete_route", path=path, line=line
        )
    metadata.update(target)
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


def _target_fields(
    row: dict[str, Any],
    kind: CitySeekerCategory,
    folder: str,
    goal: str,
    reference: tuple[str, ...],
) -> tuple[tuple[str, ...] | None, tuple[str, ...], dict[str, Any]]:
    """The goal nodes, goal place categories and target metadata of a question, by its
    target kind (an ordered two-stage question, a brand, a need, a place with an attribute,
    a place type); goals None when ``stage1_route.to`` is not a node of the route."""
    goals: tuple[str, ...] = (goal,)
    categories: tuple[str, ...] = ()
    metadata: dict[str, Any] = {}
    if "stage1_route" in row:
        stage1 = row["stage1_route"]
        first = stage1.get("to") if isinstance(stage1, dict) else None
        if first is None or str(first) not in reference:
            return None, categories, metadata
        goals = (str(first), goal)
        names = split_targets(folder)
        cats = [normalize_category(n) for n in names]
        categories = tuple(c for c in cats if c) if all(cats) else ()
        stage2_route = row.get("stage2_route")
        stage2 = stage2_route if isinstance(stage2_route, dict) else {}
        metadata.update(
            ordered=True,
            targets=list(names),
            services=[stage1.get("service"), stage2.get("service")],
        )
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
    return goals, categories, metadata


__all__ = [
    "CITYSEEKER_CATEGORIES",
    "CITYSEEKER_CATEGORY_TABLE",
    "CITYSEEKER_MAX_STEPS",
    "START_HEADINGS",
    "CitySeekerCategory",
    "load_cityseeker_questions",
    "with_start_heading",
]

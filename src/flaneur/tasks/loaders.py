"""Read Touchdown and map2seq task files into :class:`Episode` lists (CitySeeker: see
:mod:`flaneur.tasks.cityseeker_questions`, whose names are re-exported here).

- Touchdown / map2seq: JSON lines with ``route_panoids`` (gold path, first = start, last =
  goal), ``start_heading`` (degrees) and ``navigation_text``; map2seq rows are named by ``id``,
  Touchdown rows by ``route_id``.
Every error names the file and the line of the offending row. :func:`check_episodes` checks
node ids against a city.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from flaneur.errors import DataError
from flaneur.tasks.episode import Episode, iter_json_lines, iter_unknown_nodes
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph

VELMA_MAX_STEPS = 55
"""VELMA's step limit (``--max_steps 55``)."""

VELMA_LOOP_ACTIONS = VELMA_MAX_STEPS + 1
"""The actions VELMA's released loop lets an agent take with ``--max_steps 55``
(``while step_id <= max_steps``, ``vln/agent.py``): the step limit of ``--protocol paper``."""


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
        "source_file": path.name,
        "source_line": line,
        key: row_id,
        "dataset": "map2seq" if key == "id" else "touchdown",
    }
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

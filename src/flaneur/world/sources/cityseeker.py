"""CitySeeker street-view graphs (``connections.json`` + ``questions.json``).

``connections.json`` is a list of directed edges between panorama images::

    {"start_filename": "00001354.jpg", "end_filename": "00001346.jpg",
     "edge_azimuth": 34.4, "edge_distance": 13.38, "start_walkable_headings": [...],
     "end_walkable_headings": [...], ...}

``start_walkable_headings`` / ``end_walkable_headings`` are the walkable headings of the
edge's panoramas (the same list on every edge of a node, in the data's order); the city keeps
them per node (:class:`~flaneur.world.walkable.WalkableHeadings`), from the first edge that
lists a node's.

Node coordinates appear only in the routes of ``questions.json`` (``complete_route`` entries
with ``filename, latitude, longitude``). Nodes that no route visits are placed from placed
neighbours: going along an edge's azimuth for its distance (or back along it, for edges that
point at the placed node). Where several placed neighbours give a position, the mean is used.

``edge_distance`` is in Web-Mercator metres, not ground metres: on the Shanghai data it is
1/cos(latitude) ≈ 1.17 times the great-circle distance between the edge's ends. Positions are
placed with the ground distance ``edge_distance * cos(latitude)``, and the graph's edge lengths
are great-circle distances between the placed nodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from flaneur.errors import DataError
from flaneur.geo import destination, haversine
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph
from flaneur.world.walkable import WalkableHeadings

CITYSEEKER_LICENCE = "Apache-2.0, research use (CitySeeker benchmark)"
_EDGE_FIELDS = ("start_filename", "end_filename", "edge_azimuth", "edge_distance")


def _read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise DataError(f"file not found (expected {what})", path=path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DataError(f"invalid JSON ({err.msg})", path=path, line=err.lineno) from None


CITYSEEKER_QUESTION_FILES = ("questions.json", "question.json")
"""Names of a CitySeeker city's question file: flaneur's data uses ``questions.json``,
CitySeeker's repository ``question.json``; either is accepted."""


def cityseeker_questions_path(path: str | Path) -> Path:
    """The question file at ``path``, trying the other accepted name when it is absent.

    ``path`` may be a city folder or a file named ``questions.json`` / ``question.json``;
    the first existing name of :data:`CITYSEEKER_QUESTION_FILES` in its folder is returned
    (``path`` unchanged when none exists, so that errors name what was asked for).
    """
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    if path.is_file() or (not path.is_dir() and path.name not in CITYSEEKER_QUESTION_FILES):
        return path
    for name in CITYSEEKER_QUESTION_FILES:
        if (folder / name).is_file():
            return folder / name
    return path if not path.is_dir() else folder / CITYSEEKER_QUESTION_FILES[0]


def read_route_coordinates(questions_path: str | Path) -> dict[str, tuple[float, float]]:
    """``{filename: (lat, lng)}`` from the routes of a CitySeeker ``questions.json``."""
    path = Path(questions_path)
    rows = _read_json(path, "a list of CitySeeker questions")
    if not isinstance(rows, list):
        raise DataError("expected a JSON list of questions", path=path)
    coords: dict[str, tuple[float, float]] = {}
    for i, row in enumerate(rows):
        route = row.get("complete_route") if isinstance(row, dict) else None
        if not isinstance(route, list):
            raise DataError(f"question #{i}: field 'complete_route' must be a list", path=path)
        for step in route:
            try:
                coords[str(step["filename"])] = (float(step["latitude"]), float(step["longitude"]))
            except (KeyError, TypeError, ValueError):
                raise DataError(
                    f"question #{i}: route entries need filename, latitude and longitude",
                    path=path,
                ) from None
    return coords


def _place_unlocated(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    azimuth: np.ndarray,
    mercator_m: np.ndarray,
    lat: np.ndarray,
    lng: np.ndarray,
) -> int:
    """Fill NaN coordinates level by level from placed neighbours; return rounds used."""
    rounds = 0
    while True:
        known = ~np.isnan(lat)
        forward = known[src] & ~known[dst]  # placed start -> unplaced end
        backward = known[dst] & ~known[src]  # unplaced start -> placed end
        if not forward.any() and not backward.any():
            return rounds
        rounds += 1
        origin = np.concatenate([src[forward], dst[backward]])
        target = np.concatenate([dst[forward], src[backward]])
        heading = np.concatenate([azimuth[forward], azimuth[backward] + 180.0])
        ground = np.concatenate([mercator_m[forward], mercator_m[backward]]) * np.cos(
            np.radians(lat[origin])
        )
        new_lat, new_lng = destination(lat[origin], lng[origin], heading, ground)
        counts = np.bincount(target, minlength=n)
        has = counts > 0
        lat[has] = np.bincount(target, weights=new_lat, minlength=n)[has] / counts[has]
        lng[has] = np.bincount(target, weights=new_lng, minlength=n)[has] / counts[has]


def _walkable(edge: dict[str, Any], key: str, i: int, path: Path) -> list[float] | None:
    """The ``start_``/``end_walkable_headings`` of edge ``i`` (``None`` when absent or empty)."""
    value = edge.get(key)
    if value is None:
        return None
    try:
        heads = [float(h) for h in value]
    except (TypeError, ValueError):
        raise DataError(f"edge #{i}: {key} must be a list of numbers", path=path) from None
    if not all(np.isfinite(heads)):
        raise DataError(f"edge #{i}: {key} must be finite numbers", path=path)
    return heads or None


@dataclass
class _Edges:
    """The edges of ``connections.json`` as node indices, and each node's walkable
    headings (from the first edge that lists them, as start or end)."""

    index: dict[str, int] = field(default_factory=dict)
    src: list[int] = field(default_factory=list)
    dst: list[int] = field(default_factory=list)
    azimuth: list[float] = field(default_factory=list)
    mercator: list[float] = field(default_factory=list)
    walkable: dict[int, list[float]] = field(default_factory=dict)


def _read_edges(path: Path) -> _Edges:
    edges = _read_json(path, "a list of CitySeeker edges")
    if not isinstance(edges, list) or not edges:
        raise DataError("expected a non-empty JSON list of edges", path=path)
    out = _Edges()
    for i, edge in enumerate(edges):
        if not isinstance(edge, dict) or any(k not in edge for k in _EDGE_FIELDS):
            missing = [k for k in _EDGE_FIELDS if not isinstance(edge, dict) or k not in edge]
            raise DataError(f"edge #{i}: missing field(s) {missing}", path=path)
        try:
            out.azimuth.append(float(edge["edge_azimuth"]))
            out.mercator.append(float(edge["edge_distance"]))
        except (TypeError, ValueError):
            raise DataError(
                f"edge #{i}: edge_azimuth and edge_distance must be numbers", path=path
            ) from None
        for end, nodes in (("start", out.src), ("end", out.dst)):
            node = out.index.setdefault(str(edge[f"{end}_filename"]), len(out.index))
            nodes.append(node)
            heads = _walkable(edge, f"{end}_walkable_headings", i, path)
            if heads is not None:
                out.walkable.setdefault(node, heads)
    return out


def _cityseeker_parts(
    folder: Path,
) -> tuple[StreetGraph, dict[str, Any], WalkableHeadings | None]:
    """The graph, build statistics and walkable headings of a CitySeeker city folder."""
    read = _read_edges(folder / "connections.json")
    coords = read_route_coordinates(cityseeker_questions_path(folder))
    ids = list(read.index)
    n = len(ids)
    lat = np.full(n, np.nan)
    lng = np.full(n, np.nan)
    for node_id, (la, ln) in coords.items():
        if node_id in read.index:
            lat[read.index[node_id]], lng[read.index[node_id]] = la, ln
    located = int((~np.isnan(lat)).sum())
    if located == 0:
        raise DataError("no route node of questions.json is in connections.json", path=folder)
    src, dst = np.asarray(read.src), np.asarray(read.dst)
    azimuth, mercator = np.asarray(read.azimuth), np.asarray(read.mercator)
    rounds = _place_unlocated(n, src, dst, azimuth, mercator, lat, lng)
    lengths = haversine(lat[src], lng[src], lat[dst], lng[dst])
    unknown = np.isnan(lengths)
    lengths[unknown] = mercator[unknown] * np.cos(np.radians(np.nanmean(lat)))
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst, headings=azimuth, lengths=lengths)
    unlocated = int(np.isnan(lat).sum())
    stats = {
        "located_nodes": located,
        "placed_nodes": n - located - unlocated,
        "placement_rounds": rounds,
        "unlocated_nodes": unlocated,
    }
    walkable = None
    if read.walkable:
        walkable = WalkableHeadings.from_lists([read.walkable.get(i, []) for i in range(n)])
    return graph, stats, walkable


def graph_from_cityseeker(folder: str | Path) -> tuple[StreetGraph, dict[str, Any]]:
    """Read a CitySeeker city folder into a :class:`StreetGraph`.

    Parameters
    ----------
    folder
        Folder holding ``connections.json`` and ``questions.json`` (or ``question.json``).

    Returns
    -------
    tuple
        The graph (every edge of the file; headings = ``edge_azimuth``) and build statistics
        (``located_nodes``, ``placed_nodes``, ``placement_rounds``, ``unlocated_nodes``).
        Nodes that no chain of edges links to a node with known coordinates keep NaN
        coordinates (their edges keep the file's distance, converted to ground metres);
        :func:`city_from_cityseeker` lists them in the node set ``unlocated``.
    """
    graph, stats, _ = _cityseeker_parts(Path(folder))
    return graph, stats


def city_from_cityseeker(folder: str | Path, *, name: str | None = None) -> City:
    """A :class:`City` from a CitySeeker city folder (no places: the tasks name categories).

    The city keeps every node's walkable headings (``City.walkable``) when the edges list
    them; its metadata says how they differ from the graph's out-edges
    (:meth:`~flaneur.world.walkable.WalkableHeadings.compare`).
    """
    folder = Path(folder)
    graph, stats, walkable = _cityseeker_parts(folder)
    unlocated = np.isnan(graph.lat)
    if walkable is not None:
        stats = {**stats, "walkable_headings": walkable.compare(graph)}
    return City(
        name=name or folder.name,
        graph=graph,
        source=f"cityseeker:{folder}",
        licence=CITYSEEKER_LICENCE,
        node_sets={"unlocated": unlocated} if unlocated.any() else {},
        metadata={"cityseeker": stats},
        walkable=walkable,
    )

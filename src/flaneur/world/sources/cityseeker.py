"""CitySeeker street-view graphs (``connections.json`` + ``questions.json``).

``connections.json`` is a list of directed edges between panorama images::

    {"start_filename": "00001354.jpg", "end_filename": "00001346.jpg",
     "edge_azimuth": 34.4, "edge_distance": 13.38, "start_walkable_headings": [...], ...}

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
from pathlib import Path
from typing import Any

import numpy as np

from flaneur.errors import DataError
from flaneur.geo import destination, haversine
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph

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
    folder = Path(folder)
    conn_path = folder / "connections.json"
    edges = _read_json(conn_path, "a list of CitySeeker edges")
    if not isinstance(edges, list) or not edges:
        raise DataError("expected a non-empty JSON list of edges", path=conn_path)
    coords = read_route_coordinates(cityseeker_questions_path(folder))
    index: dict[str, int] = {}
    src_l: list[int] = []
    dst_l: list[int] = []
    az_l: list[float] = []
    dist_l: list[float] = []
    for i, edge in enumerate(edges):
        if not isinstance(edge, dict) or any(k not in edge for k in _EDGE_FIELDS):
            missing = [k for k in _EDGE_FIELDS if not isinstance(edge, dict) or k not in edge]
            raise DataError(f"edge #{i}: missing field(s) {missing}", path=conn_path)
        try:
            az_l.append(float(edge["edge_azimuth"]))
            dist_l.append(float(edge["edge_distance"]))
        except (TypeError, ValueError):
            raise DataError(
                f"edge #{i}: edge_azimuth and edge_distance must be numbers", path=conn_path
            ) from None
        for key, out in (("start_filename", src_l), ("end_filename", dst_l)):
            out.append(index.setdefault(str(edge[key]), len(index)))
    ids = list(index)
    n = len(ids)
    lat = np.full(n, np.nan)
    lng = np.full(n, np.nan)
    for node_id, (la, ln) in coords.items():
        if node_id in index:
            lat[index[node_id]], lng[index[node_id]] = la, ln
    located = int((~np.isnan(lat)).sum())
    if located == 0:
        raise DataError("no route node of questions.json is in connections.json", path=folder)
    src, dst = np.asarray(src_l), np.asarray(dst_l)
    azimuth, mercator = np.asarray(az_l), np.asarray(dist_l)
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
    return graph, stats


def city_from_cityseeker(folder: str | Path, *, name: str | None = None) -> City:
    """A :class:`City` from a CitySeeker city folder (no places: the tasks name categories)."""
    folder = Path(folder)
    graph, stats = graph_from_cityseeker(folder)
    unlocated = np.isnan(graph.lat)
    return City(
        name=name or folder.name,
        graph=graph,
        source=f"cityseeker:{folder}",
        licence=CITYSEEKER_LICENCE,
        node_sets={"unlocated": unlocated} if unlocated.any() else {},
        metadata={"cityseeker": stats},
    )

"""Touchdown / StreetLearn street-view graphs (``nodes.txt`` + ``links.txt``).

``nodes.txt`` rows are ``panoid,pano_yaw,lat,lng``; ``links.txt`` rows are
``start_panoid,heading,end_panoid`` with the heading in degrees. map2seq adds ``bbox.txt``, a
polygon (lng, lat) around the *unseen* area: nodes inside it are marked ``unseen``, the others
``seen``.
"""

from __future__ import annotations

import ast
import csv
from pathlib import Path

import shapely

from flaneur.errors import DataError
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph

TOUCHDOWN_LICENCE = "CC-BY-4.0 (Touchdown, Chen et al. 2019)"


def _rows(path: Path, n_fields: int, header: str):
    if not path.is_file():
        raise DataError(f"file not found (expected rows of {header})", path=path)
    with path.open(newline="", encoding="utf-8") as handle:
        for line_no, row in enumerate(csv.reader(handle), start=1):
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != n_fields:
                raise DataError(
                    f"expected {n_fields} comma-separated fields ({header}), got {len(row)}",
                    path=path,
                    line=line_no,
                )
            yield line_no, row


def graph_from_touchdown(folder: str | Path) -> StreetGraph:
    """Read a Touchdown/StreetLearn graph folder holding ``nodes.txt`` and ``links.txt``.

    Parameters
    ----------
    folder
        The folder (for the Touchdown release: ``touchdown/graph``).

    Returns
    -------
    StreetGraph
        Nodes with panorama yaw; edges with the file's headings and haversine lengths.

    Raises
    ------
    DataError
        Missing files, malformed rows (naming file and line), duplicate node ids, or links
        that name an unknown node.
    """
    folder = Path(folder)
    nodes_path, links_path = folder / "nodes.txt", folder / "links.txt"
    ids: list[str] = []
    yaw: list[float] = []
    lat: list[float] = []
    lng: list[float] = []
    index: dict[str, int] = {}
    for line_no, (panoid, pano_yaw, la, ln) in _rows(nodes_path, 4, "panoid,pano_yaw,lat,lng"):
        try:
            values = float(pano_yaw), float(la), float(ln)
        except ValueError:
            raise DataError(
                "pano_yaw, lat and lng must be numbers", path=nodes_path, line=line_no
            ) from None
        if not (-90 <= values[1] <= 90 and -180 <= values[2] <= 180):
            raise DataError(
                f"coordinate out of range: lat={la} lng={ln}", path=nodes_path, line=line_no
            )
        if panoid in index:
            raise DataError(f"duplicate node id {panoid!r}", path=nodes_path, line=line_no)
        index[panoid] = len(ids)
        ids.append(panoid)
        yaw.append(values[0])
        lat.append(values[1])
        lng.append(values[2])
    if not ids:
        raise DataError("no nodes (the file is empty)", path=nodes_path)
    src: list[int] = []
    dst: list[int] = []
    heading: list[float] = []
    for line_no, (start, head, end) in _rows(links_path, 3, "start_panoid,heading,end_panoid"):
        for panoid in (start, end):
            if panoid not in index:
                raise DataError(
                    f"link names unknown node id {panoid!r} (not in {nodes_path.name})",
                    path=links_path,
                    line=line_no,
                )
        try:
            heading.append(float(head))
        except ValueError:
            raise DataError(
                f"heading must be a number, got {head!r}", path=links_path, line=line_no
            ) from None
        src.append(index[start])
        dst.append(index[end])
    return StreetGraph.from_edges(ids, lat, lng, src, dst, headings=heading, pano_yaw=yaw)


def read_polygon_file(path: str | Path) -> shapely.Polygon:
    """Read a map2seq ``bbox.txt`` polygon: ``bounding_box = [[lng, lat], ...]``."""
    path = Path(path)
    if not path.is_file():
        raise DataError("polygon file not found", path=path)
    text = path.read_text(encoding="utf-8")
    _, _, value = text.partition("=")
    try:
        points = ast.literal_eval((value or text).strip().splitlines()[0])
        polygon = shapely.Polygon([(float(x), float(y)) for x, y in points])
    except (ValueError, SyntaxError, TypeError, IndexError):
        raise DataError(
            "expected 'bounding_box = [[lng, lat], ...]' on the first line", path=path, line=1
        ) from None
    if not polygon.is_valid or polygon.area == 0:
        raise DataError("the polygon is empty or self-intersecting", path=path, line=1)
    return polygon


def city_from_touchdown(
    folder: str | Path, *, unseen_polygon: str | Path | None = None, name: str = "manhattan"
) -> City:
    """A :class:`City` from a Touchdown graph folder, optionally marking seen/unseen nodes.

    Parameters
    ----------
    folder
        Folder with ``nodes.txt`` and ``links.txt``.
    unseen_polygon
        Optional map2seq ``bbox.txt``; when given, node sets ``unseen`` (inside) and ``seen``
        (outside) are stored with the city.
    name
        City name.
    """
    graph = graph_from_touchdown(folder)
    node_sets = {}
    if unseen_polygon is not None:
        unseen = graph.within_polygon(read_polygon_file(unseen_polygon))
        node_sets = {"unseen": unseen, "seen": ~unseen}
    return City(
        name=name,
        graph=graph,
        source=f"touchdown:{Path(folder)}",
        licence=TOUCHDOWN_LICENCE,
        node_sets=node_sets,
        metadata={"unseen_polygon": str(unseen_polygon) if unseen_polygon else None},
    )


def find_touchdown_graph(root: str | Path) -> Path:
    """The folder holding ``nodes.txt`` under ``root`` (``root`` or ``root/graph``...)."""
    root = Path(root)
    for candidate in (root, root / "graph", root / "touchdown" / "graph"):
        if (candidate / "nodes.txt").is_file():
            return candidate
    raise DataError("no Touchdown graph here (expected nodes.txt and links.txt)", path=root)


__all__ = [
    "city_from_touchdown",
    "find_touchdown_graph",
    "graph_from_touchdown",
    "read_polygon_file",
]

"""Cities from OpenStreetMap extracts (``.osm.pbf``), read with pyrosm and simplified by osmnx.

The walkable street network is simplified (chains of degree-2 nodes merged into one street
per pair of junctions) and then *densified*: every street gets viewpoints at a regular
spacing along its geometry, in both walking directions, so that an agent moves in steps of
about ``spacing_m`` metres like in street-view datasets.

Why 20 m by default: CitySeeker places a viewpoint about every 20 m (its Shanghai routes
average 16 m per step) and its implicit-need tasks, which flaneur generates on OSM cities,
are sized in those steps (5-25 steps to the target). Touchdown's ~10 m spacing doubles the
number of steps, model calls and cost per route without adding decision points: the
junctions are kept as viewpoints at any spacing. A storefront is at most ~10 m along the
street from the nearest viewpoint at 20 m spacing, well within sign-reading distance.

Car access: every directed edge also says whether a car may drive it in that direction
(:func:`car_directions`, from the OSM way's tags; :attr:`City.edge_car`). A street merged
from several ways keeps each way's flags along its length: a densified edge is drivable
only if every way piece it covers is drivable in its direction.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyrosm
import shapely

from flaneur.errors import DataError
from flaneur.geo import LocalProjection
from flaneur.world.city import City
from flaneur.world.furniture import OSM_FURNITURE_FILTER, Furniture, furniture_kind
from flaneur.world.graph import StreetGraph
from flaneur.world.places import Places
from flaneur.world.taxonomy import attributes_from_tags, categorize

OSM_LICENCE = "ODbL-1.0 (© OpenStreetMap contributors)"
DEFAULT_SPACING_M = 20.0
POI_FILTER: dict[str, Any] = {
    "amenity": True,
    "shop": True,
    "tourism": True,
    "leisure": True,
    "healthcare": True,
    "public_transport": True,
    "office": True,
    "craft": True,
    "railway": ["station", "halt", "tram_stop", "subway_entrance"],
    "highway": ["bus_stop"],
}
_NOT_TAGS = {
    "id",
    "lon",
    "lat",
    "tags",
    "visible",
    "version",
    "timestamp",
    "changeset",
    "geometry",
    "osm_type",
}
CAR_HIGHWAYS = frozenset(
    {
        *(
            f"{c}{link}"
            for c in ("motorway", "trunk", "primary", "secondary", "tertiary")
            for link in ("", "_link")
        ),
        "unclassified",
        "residential",
        "living_street",
        "service",
    }
)
"""``highway`` classes a car may use unless an access tag says otherwise (OSM's road classes,
https://wiki.openstreetmap.org/wiki/Key:highway). Footways, paths, pedestrian streets,
steps, cycleways, tracks and the rest are closed to cars unless ``motorcar``,
``motor_vehicle`` or ``vehicle`` opens them."""
CAR_ACCESS_KEYS = ("motorcar", "motor_vehicle", "vehicle", "access")
"""Access tags that apply to a car, most specific first: the first one set decides
(https://wiki.openstreetmap.org/wiki/Key:access, its transport-mode hierarchy)."""
CAR_DENIED = frozenset({"no", "private", "agricultural", "forestry", "emergency", "military"})
"""Access values that close a way to ordinary cars."""
CAR_GRANTED = frozenset({"yes", "permissive", "designated", "destination", "delivery", "customers"})
"""Access values that open a way to cars (``destination``: the way is drivable to reach a
place on it). The generic ``access`` key only closes a way: it never opens a footway."""
ONEWAY_FORWARD = frozenset({"yes", "1", "true"})
ONEWAY_BACKWARD = frozenset({"-1", "reverse"})
ONEWAY_NEITHER = frozenset({"reversible", "alternating"})
"""``oneway`` values: drivable along the way's direction only, against it only, or in no
fixed direction (time-dependent: treated as closed). ``junction=roundabout`` / ``circular``
and ``highway=motorway`` imply ``oneway=yes`` when no ``oneway`` is given."""


def car_directions(tags: Mapping[str, str]) -> tuple[bool, bool]:
    """Whether a car may drive an OSM way ``(along, against)`` its drawn direction.

    The way's ``highway`` class (:data:`CAR_HIGHWAYS`) gives the default; the most specific
    car access tag that is set (:data:`CAR_ACCESS_KEYS`) overrides it (``access`` only to
    close); ``oneway`` (:data:`ONEWAY_FORWARD` and the rest) then restricts the direction.
    """
    allowed = tags.get("highway", "") in CAR_HIGHWAYS
    for key in CAR_ACCESS_KEYS:
        value = tags.get(key, "").strip().lower()
        if value in CAR_DENIED:
            allowed = False
            break
        if value in CAR_GRANTED:
            allowed = allowed or key != "access"
            break
    if not allowed:
        return False, False
    oneway = tags.get("oneway", "").strip().lower()
    if not oneway and (
        tags.get("junction") in ("roundabout", "circular") or tags.get("highway") == "motorway"
    ):
        oneway = "yes"
    if oneway in ONEWAY_FORWARD:
        return True, False
    if oneway in ONEWAY_BACKWARD:
        return False, True
    if oneway in ONEWAY_NEITHER:
        return False, False
    return True, True


def _open(pbf: str | Path, bbox: tuple[float, float, float, float] | None):

    path = Path(pbf)
    if not path.is_file():
        raise DataError("OpenStreetMap extract not found (expected an .osm.pbf file)", path=path)
    try:
        return pyrosm.OSM(str(path), bounding_box=list(bbox) if bbox else None)
    except Exception as err:  # pyrosm raises plain exceptions on unreadable files
        raise DataError(f"cannot read as .osm.pbf ({err})", path=path) from None


def _simplified_streets(osm: Any, source: Path) -> Any:
    """Undirected simplified walking network (networkx) of the largest connected part."""
    # lazy: networkx takes 0.2 s to import
    import networkx as nx
    import osmnx as ox

    network = osm.get_network(network_type="walking", nodes=True)
    if network is None or network[1] is None or len(network[1]) == 0:
        raise DataError(
            "the extract has no walkable streets (empty or outside the bbox)", path=source
        )
    nodes, edges = network
    graph: nx.MultiDiGraph[int] = nx.MultiDiGraph(crs="epsg:4326", simplified=False)
    for node_id, x, y in zip(nodes["id"], nodes["lon"], nodes["lat"], strict=True):
        graph.add_node(int(node_id), x=float(x), y=float(y))
    # pyrosm draws each edge u -> v in its way's direction; the car tags sit in columns,
    # the rarer ones (junction, vehicle) in the JSON "tags" column
    car_columns = [c for c in ("highway", "oneway", *CAR_ACCESS_KEYS, "tags") if c in edges]
    way_tags = (_element_tags(row) for row in edges[car_columns].to_dict("records"))
    for way_id, u, v, geom, name, highway, length, tags in zip(
        edges["id"],
        edges["u"],
        edges["v"],
        edges["geometry"],
        edges["name"],
        edges["highway"],
        edges["length"],
        way_tags,
        strict=True,
    ):
        if geom is None or geom.geom_type != "LineString" or u == v:
            continue
        along, against = car_directions(tags)
        attrs = {
            "osmid": int(way_id),
            "geometry": geom,
            "length": float(length),
            "name": name if isinstance(name, str) else "",
            "highway": highway if isinstance(highway, str) else "",
        }
        # car_run: (length, car this way, car the other way) of each way piece, in order
        graph.add_edge(int(u), int(v), **attrs, car_run=((float(length), along, against),))
        graph.add_edge(
            int(v),
            int(u),
            **{**attrs, "geometry": geom.reverse()},
            car_run=((float(length), against, along),),
        )
    graph.remove_nodes_from([n for n, deg in graph.degree() if deg == 0])
    largest = max(nx.weakly_connected_components(graph), key=len)
    graph = graph.subgraph(largest).copy()
    simplified = ox.simplify_graph(graph, edge_attr_aggs={"length": sum, "car_run": _joined_runs})
    return ox.convert.to_undirected(simplified)


def _joined_runs(runs: list[tuple[tuple[float, bool, bool], ...]]) -> tuple:
    """The way pieces of a merged street, in path order (osmnx lists them in that order)."""
    return tuple(itertools.chain.from_iterable(runs))


def _chain_car(runs: tuple, n_seg: int) -> list[tuple[bool, bool]]:
    """``(forward, backward)`` car flags of each of ``n_seg`` equal parts of a street made of
    way pieces ``runs`` (``(length, forward, backward)`` in order): a part is drivable in a
    direction only if every piece it overlaps is."""
    lengths = np.asarray([max(r[0], 0.0) for r in runs], dtype=np.float64)
    total = float(lengths.sum())
    if total <= 0:
        fwd, back = all(r[1] for r in runs), all(r[2] for r in runs)
        return [(fwd, back)] * n_seg
    ends = np.cumsum(lengths) / total
    starts = ends - lengths / total
    eps = 1e-6
    out = []
    for i in range(n_seg):
        lo, hi = i / n_seg, (i + 1) / n_seg
        hit = [k for k in range(len(runs)) if starts[k] < hi - eps and ends[k] > lo + eps]
        hit = hit or [min(int(np.searchsorted(ends, lo)), len(runs) - 1)]
        out.append((all(runs[k][1] for k in hit), all(runs[k][2] for k in hit)))
    return out


def _densify(streets: Any, spacing_m: float) -> tuple[StreetGraph, list[str], list[bool]]:
    """Viewpoints every ``spacing_m`` along each street, linked both ways; the street name and
    car access of every directed edge in graph edge order."""
    junctions = list(streets.nodes)
    lng0 = np.asarray([streets.nodes[n]["x"] for n in junctions])
    lat0 = np.asarray([streets.nodes[n]["y"] for n in junctions])
    proj = LocalProjection.around(lat0, lng0)
    ids = [f"osm{n}" for n in junctions]
    index = {n: i for i, n in enumerate(junctions)}
    lat, lng = list(lat0), list(lng0)
    src: list[int] = []
    dst: list[int] = []
    street_names: list[str] = []
    car: dict[tuple[int, int], bool] = {}
    seen_pairs: set[tuple[int, int]] = set()
    for u, v, key, data in streets.edges(keys=True, data=True):
        geom = data.get("geometry")
        if geom is None:
            geom = shapely.LineString(
                [
                    (streets.nodes[u]["x"], streets.nodes[u]["y"]),
                    (streets.nodes[v]["x"], streets.nodes[v]["y"]),
                ]
            )
        # orient the geometry from u to v
        start = geom.coords[0]
        if math.dist(start, (streets.nodes[u]["x"], streets.nodes[u]["y"])) > math.dist(
            start, (streets.nodes[v]["x"], streets.nodes[v]["y"])
        ):
            geom = geom.reverse()
        runs = tuple(data.get("car_run") or ((0.0, False, False),))
        if data.get("from", u) != u:  # the kept direction of the street runs v -> u
            runs = tuple((length, back, fwd) for length, fwd, back in reversed(runs))
        coords = np.asarray(geom.coords)
        x, y = proj.forward(coords[:, 1], coords[:, 0])
        metric = shapely.LineString(np.column_stack([x, y]))
        n_seg = max(1, round(metric.length / spacing_m))
        if u == v and n_seg < 3:
            continue  # a tiny loop adds no place to stand
        chain = [index[u]]
        if n_seg > 1:
            points = shapely.line_interpolate_point(
                metric, np.arange(1, n_seg) * metric.length / n_seg
            )
            px, py = shapely.get_x(points), shapely.get_y(points)
            plat, plng = proj.inverse(px, py)
            for i, (la, ln) in enumerate(
                zip(np.atleast_1d(plat), np.atleast_1d(plng), strict=True)
            ):
                chain.append(len(ids))
                ids.append(f"osm{u}-{v}-{key}.{i + 1}")
                lat.append(float(la))
                lng.append(float(ln))
        chain.append(index[v])
        for (a, b), (fwd, back) in zip(
            itertools.pairwise(chain), _chain_car(runs, len(chain) - 1), strict=True
        ):
            if a != b:  # a parallel street between the same viewpoints adds its access
                car[a, b] = car.get((a, b), False) or fwd
                car[b, a] = car.get((b, a), False) or back
            if (a, b) in seen_pairs or a == b:
                continue
            seen_pairs.update({(a, b), (b, a)})
            src += [a, b]
            dst += [b, a]
            street_names += [_street_name(data.get("name"))] * 2
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst)
    # from_edges sorts the edges; pairs are unique, so names follow them by (source, target)
    by_pair = dict(zip(zip(src, dst, strict=True), street_names, strict=True))
    pairs = list(zip(graph.edge_sources.tolist(), graph.targets.tolist(), strict=True))
    return graph, [by_pair[pair] for pair in pairs], [car[pair] for pair in pairs]


def _street_name(value: Any) -> str:
    """One street name from an edge attribute (osmnx keeps a list when merged ways differ)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        names = [v for v in value if isinstance(v, str) and v]
        return names[0] if names else ""
    return ""


def _element_tags(row: Mapping[str, Any]) -> dict[str, str]:
    tags: dict[str, str] = {}
    extra = row.get("tags")
    if isinstance(extra, str) and extra:
        try:
            extra = json.loads(extra)
        except json.JSONDecodeError:
            extra = None
    if isinstance(extra, dict):
        tags.update({str(k): str(v) for k, v in extra.items() if v is not None})
    for key, value in row.items():
        if key in _NOT_TAGS or value is None:
            continue
        if isinstance(value, float) and math.isnan(value):
            continue
        tags[key] = str(value)
    return tags


def _located(frame: Any) -> Iterator[tuple[str, dict[str, str], Any]]:
    """``(id, tags, point)`` of each element of a pyrosm frame that has a geometry: nodes
    as they are, ways and relations at a point inside them."""
    for row in frame.to_dict("records"):
        geom = row.get("geometry")
        if geom is None or geom.is_empty:
            continue
        point = geom if geom.geom_type == "Point" else geom.representative_point()
        yield f"{row.get('osm_type', 'node')}/{row['id']}", _element_tags(row), point


def furniture_from_osm(osm: Any) -> Furniture:
    """Street furniture of an opened pyrosm extract (nodes, and ways at a point inside)."""
    frame = osm.get_pois(custom_filter=OSM_FURNITURE_FILTER)
    if frame is None or len(frame) == 0:
        return Furniture.empty()
    records = []
    for ident, tags, point in _located(frame):
        kind = furniture_kind(tags)
        if kind is not None:
            records.append({"id": ident, "kind": kind, "lat": point.y, "lng": point.x})
    records.sort(key=lambda r: r["id"])
    return Furniture.from_records(records)


def places_from_osm(osm: Any) -> Places:
    """Points of interest of an extract: tagged nodes, and ways/relations at a point inside."""
    pois = osm.get_pois(custom_filter=POI_FILTER)
    if pois is None or len(pois) == 0:
        return Places.empty()
    records = []
    for ident, tags, point in _located(pois):
        records.append(
            {
                "id": ident,
                "name": tags.get("name", ""),
                "lat": point.y,
                "lng": point.x,
                "categories": categorize(tags),
                "tags": tags,
                "attributes": attributes_from_tags(tags),
            }
        )
    return Places.from_records(records)


def _buildings(osm: Any) -> tuple[np.ndarray, np.ndarray]:
    frame = osm.get_buildings()
    if frame is None or len(frame) == 0:
        return np.zeros(0, dtype=object), np.zeros(0)
    polygons, heights = [], []
    for geom, height, levels in zip(
        frame["geometry"],
        frame["height"] if "height" in frame else [None] * len(frame),
        frame["building:levels"] if "building:levels" in frame else [None] * len(frame),
        strict=True,
    ):
        if geom is None or geom.is_empty:
            continue
        parts = list(geom.geoms) if geom.geom_type == "MultiPolygon" else [geom]
        value = _height_m(height, levels)
        for part in parts:
            if part.geom_type == "Polygon" and part.area > 0:
                polygons.append(shapely.Polygon(part.exterior))
                heights.append(value)
    return np.asarray(polygons, dtype=object), np.asarray(heights, dtype=np.float64)


def _height_m(height: Any, levels: Any) -> float:
    for value, scale in ((height, 1.0), (levels, 3.2)):
        try:
            number = float(str(value).split()[0].replace(",", "."))
        except (ValueError, IndexError):
            continue
        if number > 0 and not math.isnan(number):
            return number * scale
    return float("nan")


def city_from_osm(
    pbf: str | Path,
    *,
    bbox: tuple[float, float, float, float] | None = None,
    spacing_m: float = DEFAULT_SPACING_M,
    name: str | None = None,
) -> City:
    """Build a :class:`City` from an OpenStreetMap ``.osm.pbf`` extract.

    Parameters
    ----------
    pbf
        Path of the extract.
    bbox
        Optional ``(west, south, east, north)`` in degrees to cut the extract.
    spacing_m
        Distance between viewpoints along streets (default 20 m, see the module docstring).
    name
        City name (default: the file name without extension).

    Returns
    -------
    City
        The viewpoint graph (largest connected walkable part) with every directed edge's
        street name and car access, places with normalized categories and attributes, and
        building footprints with heights where tagged.

    Raises
    ------
    DataError
        A missing or unreadable file, or an extract with no walkable streets.
    """
    if spacing_m <= 0:
        raise ValueError("spacing_m must be positive")
    path = Path(pbf)
    osm = _open(path, bbox)
    streets = _simplified_streets(osm, path)
    graph, street_names, edge_car = _densify(streets, spacing_m)
    places = places_from_osm(osm)
    buildings, heights = _buildings(osm)
    furniture = furniture_from_osm(osm)
    return City(
        name=name or path.name.split(".")[0].lower(),
        graph=graph,
        places=places,
        source=f"osm:{path.name}",
        licence=OSM_LICENCE,
        buildings=buildings,
        building_heights=heights,
        edge_streets=np.asarray(street_names, dtype=str),
        edge_car=np.asarray(edge_car, dtype=bool),
        furniture=furniture,
        metadata={
            "spacing_m": spacing_m,
            "junctions": streets.number_of_nodes(),
            "streets": streets.number_of_edges(),
            "bbox_filter": list(bbox) if bbox else None,
        },
    )

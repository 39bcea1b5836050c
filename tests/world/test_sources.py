"""Loaders on small files the tests write, and on a tiny cut of the Helsinki extract."""

import json

import numpy as np
import pytest

from flaneur.errors import DataError
from flaneur.geo import bearing, destination, haversine
from flaneur.world.sources.cityseeker import city_from_cityseeker, graph_from_cityseeker
from flaneur.world.sources.touchdown import city_from_touchdown, graph_from_touchdown

NODES = (
    "a,10,40.0000,-73.0000\nb,20,40.0001,-73.0000\nc,30,40.0002,-73.0000\nd,40,40.0001,-73.0001\n"
)
LINKS = "a,0,b\nb,180,a\nb,0,c\nc,180,b\nb,270,d\nd,90,b\n"


def write_touchdown(folder, nodes=NODES, links=LINKS):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nodes.txt").write_text(nodes)
    (folder / "links.txt").write_text(links)
    return folder


def test_touchdown_graph(tmp_path):
    graph = graph_from_touchdown(write_touchdown(tmp_path))
    assert graph.n_nodes == 4 and graph.n_edges == 6
    assert graph.degree_histogram() == {1: 3, 3: 1}
    b = graph.index("b")
    assert [graph.ids[t] for t in graph.neighbors(b)] == ["c", "a", "d"]
    assert graph.out_headings(b).tolist() == [0.0, 180.0, 270.0]
    assert graph.pano_yaw[b] == 20.0
    assert graph.lengths[graph.edge_index(b, graph.index("c"))] == pytest.approx(11.12, abs=0.01)


def test_touchdown_unseen_polygon(tmp_path):
    write_touchdown(tmp_path)
    poly = tmp_path / "bbox.txt"
    poly.write_text(
        "bounding_box = [[-73.00015,40.00005],[-73.00005,40.00005],"
        "[-73.00005,40.00015],[-73.00015,40.00015],[-73.00015,40.00005]]\n"
    )
    city = city_from_touchdown(tmp_path, unseen_polygon=poly)
    assert city.graph.ids[city.node_sets["unseen"]].tolist() == ["d"]
    assert city.node_sets["seen"].sum() == 3


@pytest.mark.parametrize(
    ("nodes", "links", "message"),
    [
        (NODES + "e,1,40.0\n", LINKS, r"nodes.txt, line 5: expected 4 comma-separated fields"),
        (
            NODES + "e,x,40.0,-73.0\n",
            LINKS,
            r"nodes.txt, line 5: pano_yaw, lat and lng must be numbers",
        ),
        (NODES + "a,1,40.0,-73.0\n", LINKS, r"nodes.txt, line 5: duplicate node id 'a'"),
        (NODES, LINKS + "a,90,zz\n", r"links.txt, line 7: link names unknown node id 'zz'"),
        (NODES, LINKS + "a,north,b\n", r"links.txt, line 7: heading must be a number"),
        ("", LINKS, r"nodes.txt: no nodes"),
    ],
)
def test_touchdown_bad_input_names_file_and_line(tmp_path, nodes, links, message):
    write_touchdown(tmp_path, nodes, links)
    with pytest.raises(DataError, match=message):
        graph_from_touchdown(tmp_path)


def test_touchdown_missing_file(tmp_path):
    (tmp_path / "nodes.txt").write_text(NODES)
    with pytest.raises(DataError, match=r"links.txt: file not found"):
        graph_from_touchdown(tmp_path)


def cityseeker_folder(tmp_path, extra_edges=()):
    """Three located route nodes a-b-c, an unlocated node x east of b, and an island y-z."""
    a, b, c = (31.0, 121.0), (31.0001, 121.0), (31.0002, 121.0)
    x = destination(*b, 90.0, 15.0)
    scale = 1 / np.cos(np.radians(31.0001))  # Mercator metres per ground metre

    def edge(s, e, p, q, d=None):
        ground = haversine(*p, *q) if d is None else d
        return {
            "start_filename": s,
            "end_filename": e,
            "edge_azimuth": float(bearing(*p, *q)),
            "edge_distance": float(ground * scale),
            "start_walkable_headings": [],
        }

    edges = [
        edge("a", "b", a, b),
        edge("b", "a", b, a),
        edge("b", "c", b, c),
        edge("c", "b", c, b),
        edge("b", "x", b, x),
        edge("x", "b", x, b),
        {"start_filename": "y", "end_filename": "z", "edge_azimuth": 0.0, "edge_distance": 10.0},
        {"start_filename": "z", "end_filename": "y", "edge_azimuth": 180.0, "edge_distance": 10.0},
        *extra_edges,
    ]
    route = [
        {"filename": n, "latitude": p[0], "longitude": p[1]}
        for n, p in (("a", a), ("b", b), ("c", c))
    ]
    (tmp_path / "connections.json").write_text(json.dumps(edges))
    (tmp_path / "questions.json").write_text(json.dumps([{"complete_route": route}]))
    return tmp_path, x


def test_cityseeker_places_unlocated_nodes_from_neighbours(tmp_path):
    folder, x = cityseeker_folder(tmp_path)
    graph, stats = graph_from_cityseeker(folder)
    assert graph.n_edges == 8 and graph.n_nodes == 6
    assert stats == {
        "located_nodes": 3,
        "placed_nodes": 1,
        "placement_rounds": 1,
        "unlocated_nodes": 2,
    }
    i = graph.index("x")
    assert (
        haversine(graph.lat[i], graph.lng[i], *x) < 0.01
    )  # Mercator distance scaled back to ground
    assert graph.lengths[graph.edge_index(graph.index("b"), i)] == pytest.approx(15.0, abs=0.01)
    city = city_from_cityseeker(folder)
    assert sorted(city.graph.ids[city.node_sets["unlocated"]].tolist()) == ["y", "z"]
    assert city.graph.nearest_node(31.0, 121.0) == city.graph.index("a")


def test_cityseeker_bad_input(tmp_path):
    folder, _ = cityseeker_folder(tmp_path, extra_edges=[{"start_filename": "a"}])
    with pytest.raises(DataError, match=r"connections.json: edge #8: missing field"):
        graph_from_cityseeker(folder)
    (tmp_path / "connections.json").write_text("[{")
    with pytest.raises(DataError, match=r"connections.json, line 1: invalid JSON"):
        graph_from_cityseeker(folder)
    (tmp_path / "connections.json").unlink()
    with pytest.raises(DataError, match=r"connections\.json: file not found"):
        graph_from_cityseeker(folder)

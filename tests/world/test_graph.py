import networkx as nx
import numpy as np
import pytest
import shapely

from flaneur.errors import DataError, UnknownNodeError
from flaneur.world import UNREACHABLE, StreetGraph


def idx(graph, *names):
    return [graph.index(n) for n in names]


def test_counts_degrees_and_histogram(graph):
    assert graph.n_nodes == 8 and graph.n_edges == 14
    c, n2, s1 = idx(graph, "C", "N2", "S1")
    assert graph.degree[c] == 4 and graph.degree[n2] == 1 and graph.degree[s1] == 1
    assert graph.degree_histogram() == {1: 4, 2: 3, 4: 1}
    assert sum(k * v for k, v in graph.degree_histogram().items()) == graph.n_edges


def test_out_neighbours_sorted_by_heading(graph):
    c = graph.index("C")
    names = [graph.ids[t] for t in graph.neighbors(c)]
    assert names == ["N1", "E1", "S1", "W1"]
    assert graph.out_headings(c) == pytest.approx([0, 90, 180, 270], abs=0.01)
    targets, headings = graph.adjacency
    assert (
        targets[c] == graph.neighbors(c).tolist() and headings[c] == graph.out_headings(c).tolist()
    )


def test_edge_lookup_and_lengths(graph):
    c, n1, n2 = idx(graph, "C", "N1", "N2")
    e = graph.edge_index(c, n1)
    assert e >= 0 and graph.targets[e] == n1
    assert graph.lengths[e] == pytest.approx(11.12, abs=0.01)  # 0.0001 degree of latitude
    assert graph.edge_index(c, n2) == -1 and not graph.has_edge(c, n2)
    assert graph.path_is_walk([c, n1, n2, n2, n1]) and not graph.path_is_walk([c, n2])
    assert graph.path_length_m([c, n1, n2]) == pytest.approx(22.24, abs=0.01)


def test_unknown_node_names_the_id(graph):
    with pytest.raises(UnknownNodeError, match="'nowhere'"):
        graph.index("nowhere")
    assert "C" in graph and "nowhere" not in graph


def test_nearest_node(graph):
    assert graph.ids[graph.nearest_node(60.00019, 25.0)] == "N2"
    found = graph.nearest_node(np.array([60.0, 59.99991]), np.array([25.00021, 25.0]))
    assert [graph.ids[i] for i in found] == ["E2", "S1"]


def test_hop_and_metre_distances_to_goals(graph):
    n2, e2, s1, c = idx(graph, "N2", "E2", "S1", "C")
    hops = graph.hop_distances_to([n2, e2])
    assert hops.shape == (2, 8) and hops.dtype == np.int32
    assert hops[0, e2] == 4 and hops[0, c] == 2 and hops[0, n2] == 0 and hops[1, s1] == 3
    single = graph.hop_distances_to(n2)
    assert single.shape == (8,) and single[s1] == 3
    metres = graph.metre_distances_to(n2)
    assert metres[c] == pytest.approx(22.24, abs=0.01)
    assert metres[graph.index("E1")] == pytest.approx(22.24 + 5.56, abs=0.02)


def test_unreachable_nodes_are_marked():
    graph = StreetGraph.from_edges(["a", "b", "c"], [0, 0, 0], [0, 0.001, 0.002], [0], [1])
    hops = graph.hop_distances_to(1)
    assert hops.tolist() == [1, 0, UNREACHABLE]
    assert np.isinf(graph.metre_distances_to(1)[2])
    with pytest.raises(ValueError, match="cannot be reached"):
        graph.shortest_path(2, 1)
    assert graph.largest_component_fraction() == pytest.approx(1 / 3)


def test_shortest_paths_in_hops_and_metres(graph):
    w2, e2 = idx(graph, "W2", "E2")
    path = graph.shortest_path(w2, e2)
    assert [graph.ids[i] for i in path] == ["W2", "W1", "C", "E1", "E2"]
    assert graph.shortest_path(w2, e2, weight="length") == path
    assert graph.shortest_path(w2, w2) == [w2]


def test_subgraph_by_bbox_and_polygon(graph):
    east = graph.subgraph(bbox=(25.00005, 59.9, 25.1, 60.1))
    assert sorted(east.ids.tolist()) == ["E1", "E2"] and east.n_edges == 2
    square = shapely.box(24.99995, 59.99995, 25.00015, 60.00025)  # C, N1, N2, E1
    sub = graph.subgraph(polygon=square)
    assert sorted(sub.ids.tolist()) == ["C", "E1", "N1", "N2"] and sub.n_edges == 6
    assert sub.out_headings(sub.index("C")) == pytest.approx([0, 90], abs=0.01)


def test_networkx_export_is_osmnx_like(graph):
    g = graph.to_networkx()
    assert isinstance(g, nx.MultiDiGraph) and g.graph["crs"] == "epsg:4326"
    assert g.number_of_nodes() == 8 and g.number_of_edges() == 14
    assert g.nodes["E1"]["x"] == pytest.approx(25.0001) and g.nodes["E1"]["y"] == pytest.approx(
        60.0
    )
    data = g.get_edge_data("C", "E1")[0]
    assert data["bearing"] == pytest.approx(90, abs=0.01) and data["length"] == pytest.approx(
        5.56, abs=0.01
    )
    assert nx.shortest_path_length(g, "W2", "E2") == 4


def test_array_round_trip(graph):
    again = StreetGraph.from_arrays(graph.to_arrays(), check=True)
    assert again.ids.tolist() == graph.ids.tolist()
    assert np.array_equal(again.targets, graph.targets)


def test_duplicate_ids_rejected():
    with pytest.raises(DataError, match="'a' appears more than once"):
        StreetGraph.from_edges(["a", "a"], [0, 0], [0, 1e-4], [0], [1])


def test_unsorted_headings_rejected(graph):
    arrays = graph.to_arrays()
    arrays["headings"] = arrays["headings"][::-1].copy()
    with pytest.raises(ValueError, match="sorted by heading"):
        StreetGraph.from_arrays(arrays, check=True)


def test_hop_distances_to_sets_is_min_over_members(graph):
    n2, e2, s1, w2 = idx(graph, "N2", "E2", "S1", "W2")
    sets = graph.hop_distances_to_sets([[n2, e2], [s1], []])
    single = graph.hop_distances_to([n2, e2, s1])
    assert sets[0].tolist() == np.minimum(single[0], single[1]).tolist()
    assert sets[1].tolist() == single[2].tolist()
    assert sets[2].tolist() == [UNREACHABLE] * graph.n_nodes
    assert sets[0, w2] == 4 and sets[0, n2] == 0

"""The explorer's coverage prior, street gains, best-guess stops and query expansion."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from flaneur.agents.explorer import ExplorerAgent, SubNeed, Thresholds
from flaneur.agents.explorer.coverage import (
    CoveragePlan,
    distance_prior,
    near_matrix,
    nodes_near_nodes,
)
from flaneur.agents.explorer.scoring import expansions
from flaneur.world.graph import StreetGraph

STEP_DEG = 20.0 / 111_195.0  # 20 m of latitude


def cross_graph(arm: int = 4) -> StreetGraph:
    """A crossing: centre C=0, then arms N (1..arm), E, S, W; nodes 20 m apart, two-way."""
    lat, lng, ids = [60.0], [25.0], ["C"]
    src, dst = [], []
    for name, (dy, dx) in {"N": (1, 0), "E": (0, 1), "S": (-1, 0), "W": (0, -1)}.items():
        prev = 0
        for k in range(1, arm + 1):
            ids.append(f"{name}{k}")
            lat.append(60.0 + dy * k * STEP_DEG)
            lng.append(25.0 + dx * k * STEP_DEG / math.cos(math.radians(60.0)))
            here = len(ids) - 1
            src += [prev, here]
            dst += [here, prev]
            prev = here
    return StreetGraph.from_edges(ids, lat, lng, src, dst)


def cross_hops(graph: StreetGraph, arm: int = 4) -> dict[int, int]:
    """Hops from the centre of :func:`cross_graph` to every node."""
    hops = {graph.index("C"): 0}
    for name in "NESW":
        for k in range(1, arm + 1):
            hops[graph.index(f"{name}{k}")] = k
    return hops


@pytest.fixture(scope="module")
def graph() -> StreetGraph:
    return cross_graph()


def test_distance_prior_is_a_gamma_shape_with_the_given_mean():
    # p(h) = h^2 exp(-3h/14): p(9)/p(10) = 0.81 * exp(3/14) = 1.0036 (by hand)
    p = distance_prior(np.asarray([9, 10]), mean=14.0)
    assert p[0] / p[1] == pytest.approx(0.81 * math.exp(3 / 14), rel=1e-9)
    h = np.arange(1, 400)
    q = distance_prior(h, mean=14.0)
    assert (q * h).sum() / q.sum() == pytest.approx(14.0, rel=1e-3)


def test_nodes_near_nodes_and_the_near_matrix(graph):
    near = nodes_near_nodes(graph, 25.0)
    c, n1, n2, e1 = (graph.index(x) for x in ("C", "N1", "N2", "E1"))
    assert sorted(near[c].tolist()) == sorted(graph.index(x) for x in ("C", "N1", "E1", "S1", "W1"))
    assert sorted(near[n1].tolist()) == sorted([c, n1, n2])  # E1 is 28 m away
    assert nodes_near_nodes(graph, 25.0) is near  # built once
    m = near_matrix(graph, 25.0)
    assert m.shape == (graph.n_nodes, graph.n_nodes)
    assert m[n1, n2] == 1 and m[n1, e1] == 0 and m.sum() == sum(len(a) for a in near)


def test_plan_weights_are_prior_over_ring_size_and_covering_removes_them(graph):
    targets_of, hops = graph.adjacency[0], cross_hops(graph)
    plan = CoveragePlan(graph, targets_of, hops, mean_hops=3.0, radius_m=25.0)
    assert plan.weight.sum() == pytest.approx(1.0)
    # every ring of the crossing has four nodes (the centre one): weight = p(h) / ring size
    p = distance_prior(np.arange(0, 5), mean=3.0)
    raw = {0: p[0], **{k: p[k] / 4 for k in range(1, 5)}}
    total = sum(raw[h] for h in hops.values())
    assert plan.weight[graph.index("E2")] == pytest.approx(raw[2] / total)
    plan.visit(graph.index("C"))
    seen = [graph.index(x) for x in ("C", "N1", "E1", "S1", "W1")]
    assert plan.remaining() == pytest.approx(1.0 - plan.weight[seen].sum())


def test_gain_prefers_the_unseen_arm_and_counts_each_node_once(graph):
    targets_of, hops = graph.adjacency[0], cross_hops(graph)
    plan = CoveragePlan(graph, targets_of, hops, mean_hops=3.0, radius_m=25.0)
    c = graph.index("C")
    for name in ("C", "N1", "N2", "N3", "N4"):  # the north arm was walked already
        plan.visit(graph.index(name))
    north, east = graph.index("N1"), graph.index("E1")
    assert plan.gain(c, north, 3) == 0.0
    # east, three steps: E1 shows E2 (E1 itself was seen from C), E2 shows E3, E3 shows E4
    w = plan.weight
    expected = w[[graph.index(x) for x in ("E2", "E3", "E4")]].sum()
    assert plan.gain(c, east, 3) == pytest.approx(expected)
    assert plan.gain(c, east, 4) == pytest.approx(expected)  # E4 shows nothing new
    # ten steps: back from the dead end (seen nodes count once), through C, then the first
    # unseen arm by heading (south), where S1 shows S2 and S2 shows S3
    more = w[[graph.index(x) for x in ("S2", "S3")]].sum()
    assert plan.gain(c, east, 10) == pytest.approx(expected + more)


def test_stop_values_count_seen_places_at_the_miss_rate(graph):
    targets_of = graph.adjacency[0]
    hops = {graph.index("C"): 0, graph.index("E1"): 1, graph.index("E2"): 2}
    plan = CoveragePlan(graph, targets_of, hops, mean_hops=2.0, radius_m=25.0)
    plan.visit(graph.index("C"))  # sees C and E1, not E2
    w = plan.weight
    c, e1, e2 = (graph.index(x) for x in ("C", "E1", "E2"))
    values = plan.stop_values(near_matrix(graph, 25.0), miss=0.5)
    assert values[e1] == pytest.approx(0.5 * w[c] + 0.5 * w[e1] + w[e2])
    assert values[e2] == pytest.approx(0.5 * w[e1] + w[e2])


class Words:
    """Bag-of-words embedder (unit vectors over a fixed vocabulary)."""

    def embed(self, texts):
        texts = [texts] if isinstance(texts, str) else list(texts)
        rows = [[w.strip(".,!?").lower() for w in t.split()] for t in texts]
        out = np.zeros((len(texts), 4096), dtype=np.float32)
        for i, words in enumerate(rows):
            for w in words:
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 4096] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_query_expansion_adds_the_closest_category_labels():
    need = SubNeed("I need a pharmacy.", "", False)
    assert expansions(Words(), need, Thresholds(expand_min=0.3)) == ["pharmacy"]
    assert expansions(Words(), need, Thresholds(expand_min=0.9)) == []
    brand = SubNeed("Find the nearest Hesburger.", "Hesburger", True)
    assert expansions(Words(), brand, Thresholds(expand_min=0.0)) == []


def test_explorer_takes_threshold_and_weight_options():
    agent = ExplorerAgent(expand_k=0, w_cover=0.0, tau=0.6)
    assert agent.thresholds.expand_k == 0 and agent.thresholds.tau == 0.6
    assert agent.params.w_cover == 0.0


def test_route_searches_on_adjacency_lists():
    from flaneur.agents.explorer.routes import first_step_to_unvisited, hops_within, shortest_path

    ring = [[1, 3], [0, 2], [1, 3], [2, 0]]  # a square 0-1-2-3-0
    assert hops_within(ring, 0, 1) == {0: 0, 1: 1, 3: 1}
    assert hops_within(ring, 0, 5) == {0: 0, 1: 1, 3: 1, 2: 2}
    assert shortest_path(ring, 0, 2, limit=2) == [0, 1, 2]
    assert shortest_path(ring, 0, 2, limit=1) is None
    assert first_step_to_unvisited(ring, 0, {0: 1, 1: 1, 3: 1}) == 1  # 2 via 1 (first by order)
    assert first_step_to_unvisited(ring, 0, {0: 1, 1: 1, 2: 1, 3: 1}) is None

"""The toy city with street names, for tests of maps that write them."""

from __future__ import annotations

from itertools import pairwise

from flaneur.env.toy import toy_city
from flaneur.world.city import City

HARBOUR = ("W2", "W1", "X4", "E1", "T3", "E3", "D")
"""The toy city's east-west street, west to east."""
MARKET = ("N2", "N1", "X4", "S1", "F5", "F5S")
"""Its north-south street through X4 and the five-way node, north to south."""


def named_toy_city(extra: dict[tuple[str, str], str] | None = None) -> City:
    """The toy city with ``Harbour Street`` (:data:`HARBOUR`) and ``Market Street``
    (:data:`MARKET`) named both ways, ``extra`` names per directed edge ``(from, to)`` and
    every other edge unnamed."""
    toy = toy_city()
    graph = toy.graph
    names = {}
    for street, nodes in (("Harbour Street", HARBOUR), ("Market Street", MARKET)):
        for a, b in pairwise(nodes):
            names[a, b] = names[b, a] = street
    names.update(extra or {})
    ids = [str(i) for i in graph.ids]
    edges = zip(graph.edge_sources.tolist(), graph.targets.tolist(), strict=True)
    streets = [names.get((ids[s], ids[t]), "") for s, t in edges]
    return City(name="toy", graph=graph, places=toy.places, edge_streets=streets)

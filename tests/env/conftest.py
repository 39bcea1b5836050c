"""Hand-made graphs for the environment tests (no data files needed).

``star(arms)`` builds a centre node ``C`` with one street per heading in ``arms``; every arm
is a two-node street ``C - A<h> - B<h>`` (so arm nodes are ordinary 2-way nodes and ``B<h>``
nodes are dead ends). Edge headings are exact: ``C -> A<h>`` has heading ``h`` and
``A<h> -> C`` heading ``h + 180``. Arriving at ``C`` from arm ``h`` means facing ``h + 180``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.state import AgentState
from flaneur.geo import destination
from flaneur.world.graph import StreetGraph

LAT0, LNG0 = 60.0, 25.0


def build_star(arms: Sequence[float], *, extra: Sequence[tuple[str, str, float]] = ()):
    """Centre ``C`` with arms at ``arms`` degrees; ``extra`` adds one-way edges (a, b, h)."""
    ids = ["C"]
    lat, lng = [LAT0], [LNG0]
    src, dst, head = [], [], []

    def add(a: str, b: str, h: float) -> None:
        src.append(ids.index(a))
        dst.append(ids.index(b))
        head.append(h % 360)

    for h in arms:
        for name, dist in ((f"A{h:g}", 20.0), (f"B{h:g}", 40.0)):
            la, ln = destination(LAT0, LNG0, h, dist)
            ids.append(name)
            lat.append(float(la))
            lng.append(float(ln))
        add("C", f"A{h:g}", h)
        add(f"A{h:g}", "C", h + 180)
        add(f"A{h:g}", f"B{h:g}", h)
        add(f"B{h:g}", f"A{h:g}", h + 180)
    for a, b, h in extra:
        for name in (a, b):
            if name not in ids:
                ids.append(name)
                lat.append(LAT0 - 0.001 * len(ids))
                lng.append(LNG0)
        add(a, b, h)
    return StreetGraph.from_edges(ids, lat, lng, src, dst, headings=head)


@pytest.fixture
def star() -> Callable[..., tuple[StreetGraph, TurnsScheme]]:
    """``star(arms) -> (graph, TurnsScheme)``."""

    def make(arms: Sequence[float], **kw) -> tuple[StreetGraph, TurnsScheme]:
        graph = build_star(arms, **kw)
        return graph, TurnsScheme(graph)

    return make


def arrived(scheme: TurnsScheme, graph: StreetGraph, a: str, b: str) -> AgentState:
    """The state after moving along ``a -> b``."""
    edge = graph.edge_index(graph.index(a), graph.index(b))
    assert edge >= 0, f"no edge {a} -> {b}"
    return scheme.state(edge)


def settled(scheme: TurnsScheme, graph: StreetGraph, node: str, facing: str) -> AgentState:
    """The state on ``node`` after a rotation, facing the street to ``facing``."""
    edge = graph.edge_index(graph.index(node), graph.index(facing))
    assert edge >= 0
    return scheme.state(graph.n_edges + edge)


@pytest.fixture
def at() -> Callable[..., AgentState]:
    """``at(scheme, graph, a, b)`` = arrived via a -> b; ``at(..., settled=True)`` = on
    ``a`` facing ``b`` after a rotation."""

    def make(scheme, graph, a, b, *, rotated: bool = False) -> AgentState:
        return settled(scheme, graph, a, b) if rotated else arrived(scheme, graph, a, b)

    return make

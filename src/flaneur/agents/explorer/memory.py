"""The explorer's memory: where it has been and where it saw which text.

A text seen at distance ``d`` along bearing ``b`` from a node is placed at
``node + d * (sin b, cos b)`` in the city's metric frame (exact for map perception, an
estimate for OCR). The same text seen again near the same spot updates the entry (keeping
the position from the closest sighting, the most accurate); the same text far away (a
chain's other outlet) is a new entry. The agent can then tell that it now stands near a
place it saw earlier from farther away, and walk towards a promising sign it saw.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree

from flaneur.agents.explorer.perception import Sighting
from flaneur.world.graph import StreetGraph

SAME_PLACE_M = 40.0
"""Sightings of one text closer together than this are taken for the same place."""


@dataclass(slots=True)
class Sighted:
    """A text remembered at a position.

    Attributes
    ----------
    text
        What was read.
    xy
        Estimated position (metres, the graph's projection).
    distance_m
        Distance of the closest sighting (smaller is more accurate).
    node
        Node nearest to ``xy`` (where to walk to reach it).
    """

    text: str
    xy: tuple[float, float]
    distance_m: float
    node: int


@dataclass
class Memory:
    """Visited nodes, streets taken, and texts seen with their positions."""

    graph: StreetGraph
    visits: Counter[int] = field(default_factory=Counter)
    tried: Counter[tuple[int, int]] = field(default_factory=Counter)
    seen: list[Sighted] = field(default_factory=list)
    _by_text: dict[str, list[int]] = field(default_factory=dict)

    def _place(self, node: int, s: Sighting) -> tuple[float, float]:
        x0, y0 = (float(v) for v in self.graph.xy[node])
        b = math.radians(s.bearing)
        return (x0 + s.distance_m * math.sin(b), y0 + s.distance_m * math.cos(b))

    def novel(self, node: int, sightings: tuple[Sighting, ...]) -> int:
        """How many distinct texts of ``sightings`` (seen from ``node``) are not remembered."""
        new = {s.text for s in sightings if self._match(s.text, self._place(node, s)) is None}
        return len(new)

    def add(self, node: int, sightings: tuple[Sighting, ...]) -> None:
        """Remember the texts seen from ``node``."""
        for s in sightings:
            xy = self._place(node, s)
            entry = self._match(s.text, xy)
            if entry is None:
                self._by_text.setdefault(s.text, []).append(len(self.seen))
                self.seen.append(Sighted(s.text, xy, s.distance_m, nearest_node(self.graph, xy)))
            elif s.distance_m < entry.distance_m:
                entry.xy, entry.distance_m = xy, s.distance_m
                entry.node = nearest_node(self.graph, xy)

    def _match(self, text: str, xy: tuple[float, float]) -> Sighted | None:
        for i in self._by_text.get(text, ()):
            entry = self.seen[i]
            if math.dist(entry.xy, xy) <= SAME_PLACE_M:
                return entry
        return None

    def texts(self) -> list[str]:
        """Distinct texts remembered."""
        return list(self._by_text)

    def distances(self, node: int) -> NDArray[np.float64]:
        """Distance from ``node`` to every remembered entry (metres), in :attr:`seen` order."""
        if not self.seen:
            return np.zeros(0)
        here = self.graph.xy[node]
        return np.hypot(*(np.asarray([e.xy for e in self.seen]) - here).T)


_TREES: dict[int, tuple[weakref.ref[StreetGraph], cKDTree]] = {}
_LOCK = threading.Lock()


def nearest_node(graph: StreetGraph, xy: tuple[float, float]) -> int:
    """Index of the node nearest to ``xy`` (metres); a KD-tree per graph, built once."""
    with _LOCK:
        entry = _TREES.get(id(graph))
        if entry is None or entry[0]() is not graph:
            entry = (weakref.ref(graph), cKDTree(graph.xy))
            _TREES[id(graph)] = entry
    return int(entry[1].query(xy)[1])


__all__ = ["SAME_PLACE_M", "Memory", "Sighted", "nearest_node"]

"""Breadth-first searches on the explorer's adjacency lists (hops, paths, the frontier).

The explorer plans over small neighbourhoods (at most the 35-step budget) many times per
episode, so these walk plain Python adjacency lists (``StreetGraph.adjacency``) and stop
at the hop limit instead of searching the whole city.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence


def hops_within(targets_of: Sequence[Sequence[int]], source: int, limit: int) -> dict[int, int]:
    """Hops from ``source`` to every node at most ``limit`` hops away.

    >>> hops_within([[1], [2], [0]], 0, 1)
    {0: 0, 1: 1}
    """
    hops = {source: 0}
    queue = deque([source])
    while queue:
        here = queue.popleft()
        if hops[here] < limit:
            for nxt in targets_of[here]:
                if nxt not in hops:
                    hops[nxt] = hops[here] + 1
                    queue.append(nxt)
    return hops


def shortest_path(
    targets_of: Sequence[Sequence[int]], source: int, goal: int, *, limit: int
) -> list[int] | None:
    """A shortest path in hops from ``source`` to ``goal`` of at most ``limit`` hops, or None.

    >>> shortest_path([[1, 2], [3], [3], []], 0, 3, limit=5)
    [0, 1, 3]
    >>> shortest_path([[1, 2], [3], [3], []], 0, 3, limit=1) is None
    True
    """
    parent = {source: source}
    queue = deque([(source, 0)])
    while queue:
        here, depth = queue.popleft()
        if here == goal:
            path = [here]
            while path[-1] != source:
                path.append(parent[path[-1]])
            return path[::-1]
        if depth < limit:
            for nxt in targets_of[here]:
                if nxt not in parent:
                    parent[nxt] = here
                    queue.append((nxt, depth + 1))
    return None


def first_step_to_unvisited(
    targets_of: Sequence[Sequence[int]], node: int, visits: Mapping[int, int]
) -> int | None:
    """The first node on a shortest path from ``node`` to the nearest node never stood on
    (``visits[n] == 0``), or None when every reachable node was visited.

    >>> first_step_to_unvisited([[1], [0, 2], [1]], 0, {0: 1, 1: 2, 2: 0})
    1
    """
    parent: dict[int, int] = {node: node}
    queue = deque([node])
    while queue:
        here = queue.popleft()
        if here != node and visits.get(here, 0) == 0:
            while parent[here] != node:
                here = parent[here]
            return here
        for nxt in targets_of[here]:
            if nxt not in parent:
                parent[nxt] = here
                queue.append(nxt)
    return None


__all__ = ["first_step_to_unvisited", "hops_within", "shortest_path"]

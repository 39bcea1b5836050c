"""The online map an agent builds while it walks (MapGPT's topological map).

Every node the agent stands on is *explored*; its out-neighbours become *observed*. Observed
nodes that were never visited are *unexplored*; the out-neighbours of the current node are
*accessible*. The agent knows the out-edges of explored nodes only, so routes through the
map (for jumps to an unexplored node) run over explored nodes.

Nodes get episode-local numbers in the order they were first observed (``Place 0`` is the
start), which is how the verbalizer names them.
"""

from __future__ import annotations

from collections import deque

from flaneur.world.graph import StreetGraph


class OnlineMap:
    """Explored and observed nodes of one episode.

    Parameters
    ----------
    graph
        The street graph (the map reveals it node by node).
    """

    def __init__(self, graph: StreetGraph) -> None:
        self.graph = graph
        self._targets = graph.adjacency[0]
        self.reset()

    def reset(self) -> None:
        """Forget everything (start of an episode)."""
        self.explored: dict[int, int] = {}  # node -> order of first visit
        self.observed: dict[int, int] = {}  # node -> local number (order first observed)
        self.trail: list[int] = []  # visited nodes in order, with repeats

    def visit(self, node: int) -> None:
        """Record that the agent stands on ``node`` (observing its out-neighbours)."""
        if not self.trail or self.trail[-1] != node:
            self.trail.append(node)
        if node in self.explored:
            return
        self.explored[node] = len(self.explored)
        observed = self.observed
        if node not in observed:
            observed[node] = len(observed)
        for t in self._targets[node]:
            if t not in observed:
                observed[t] = len(observed)

    def number(self, node: int) -> int:
        """Episode-local number of an observed node (``Place <number>``); -1 if unobserved."""
        return self.observed.get(node, -1)

    def node_of_number(self, number: int) -> int:
        """The node with local number ``number`` (-1 if none)."""
        for node, k in self.observed.items():
            if k == number:
                return node
        return -1

    def unexplored(self) -> list[int]:
        """Observed nodes never visited, in the order they were observed."""
        explored = self.explored
        return [v for v in self.observed if v not in explored]

    def accessible(self, node: int) -> list[int]:
        """Out-neighbours of ``node`` (ordered by heading)."""
        return list(self._targets[node])

    def _search(self, source: int, target: int | None = None) -> dict[int, int]:
        """Breadth-first ``{node: parent}`` over known edges from ``source``; stops early once
        ``target`` is reached."""
        parent = {source: source}
        queue = deque([source])
        targets, explored = self._targets, self.explored
        while queue:
            u = queue.popleft()
            if u not in explored:
                continue
            for w in targets[u]:
                if w not in parent:
                    parent[w] = u
                    if w == target:
                        return parent
                    queue.append(w)
        return parent

    def reachable(self, source: int) -> dict[int, int]:
        """``{node: parent}`` of every node a route over known edges reaches from ``source``."""
        return self._search(source)

    def route(self, source: int, target: int) -> list[int] | None:
        """Fewest-edge route from ``source`` to ``target`` over known edges (out-edges of
        explored nodes), excluding ``source``; ``None`` if the map has none."""
        if source == target:
            return []
        parent = self._search(source, target)
        if target not in parent:
            return None
        path = [target]
        while parent[path[-1]] != source:
            path.append(parent[path[-1]])
        return path[::-1]

    def snapshot(self, current: int) -> dict[str, list[int]]:
        """``{"explored", "accessible", "unexplored", "trail"}`` node lists."""
        return {
            "explored": list(self.explored),
            "accessible": self.accessible(current),
            "unexplored": self.unexplored(),
            "trail": list(self.trail),
        }


__all__ = ["OnlineMap"]

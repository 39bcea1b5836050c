"""The ``nodes`` scheme (MapGPT): choose the next node by id, or stop.

Slot 0 is ``stop``; slots ``1..k`` are the *candidates* of the current state:

* the out-neighbours of the current node, in ascending heading order; then,
* with ``allow_jumps=True``, the other observed but unexplored nodes of the online map (in
  the order they were observed) that a route over explored nodes reaches.

Choosing a neighbour moves one edge. Choosing a farther node walks the fewest-edge route
through the explored part of the map and **consumes one step per edge** (the environment
cuts the walk at the step limit); the agent then faces the heading of the last edge.
The candidate list is capped at ``max_candidates`` (default: the maximum out-degree, or 32
with jumps).
"""

from __future__ import annotations

from typing import ClassVar

from flaneur.env.online_map import OnlineMap
from flaneur.env.schemes.base import (
    STOP,
    InvalidActionError,
    UnknownActionError,
    normalize_name,
    valid_pairs,
)
from flaneur.env.state import AgentState
from flaneur.world.graph import StreetGraph


class NodesScheme:
    """Choose an adjacent (or, with jumps, any observed unexplored) node, or stop.

    Parameters
    ----------
    graph
        The street graph.
    allow_jumps
        Also offer observed, unexplored nodes that are not adjacent.
    max_candidates
        Number of candidate slots.
    """

    name: ClassVar[str] = "nodes"
    multi_step: ClassVar[bool] = True

    def __init__(
        self, graph: StreetGraph, *, allow_jumps: bool = False, max_candidates: int | None = None
    ) -> None:
        self.graph = graph
        self.allow_jumps = allow_jumps
        self._targets, self._heads = graph.adjacency
        self._ids = graph.ids.tolist()
        most = int(graph.degree.max()) if graph.n_edges else 0
        default = max(most, 32) if allow_jumps else most
        self.max_candidates = default if max_candidates is None else int(max_candidates)
        self.n_actions = 1 + self.max_candidates
        self.map = OnlineMap(graph)
        self.last_route: list[int] = []
        self._cache_key: tuple[int, int] = (-1, -1)
        self._cache: tuple[int, ...] = ()

    def start(self, node: int, heading: float) -> AgentState:
        """Start on ``node`` facing ``heading``; resets the online map."""
        self.map.reset()
        self.map.visit(node)
        self.last_route = []
        self._cache_key = (-1, -1)
        return AgentState(node, heading % 360.0)

    def candidates(self, state: AgentState) -> tuple[int, ...]:
        """Candidate nodes of ``state``, slot 1 first."""
        key = (state.node, len(self.map.trail))
        if key == self._cache_key:
            return self._cache
        neighbours = self._targets[state.node]
        cands = list(dict.fromkeys(neighbours))
        if self.allow_jumps:
            seen = set(cands)
            reach = self.map.reachable(state.node)
            for v in self.map.unexplored():
                if len(cands) >= self.max_candidates:
                    break
                if v not in seen and v in reach:
                    cands.append(v)
                    seen.add(v)
        out = tuple(cands[: self.max_candidates])
        self._cache_key, self._cache = key, out
        return out

    def labels(self, state: AgentState) -> tuple[str, ...]:
        """``("stop", id of candidate 1, ...)``; ``""`` for unused slots."""
        ids = [self._ids[v] for v in self.candidates(state)]
        return ("stop", *ids, *([""] * (self.max_candidates - len(ids))))

    def valid(self, state: AgentState) -> tuple[bool, ...]:
        """Stop and one slot per candidate."""
        k = len(self.candidates(state))
        return (True,) + (True,) * k + (False,) * (self.max_candidates - k)

    def actions(self, state: AgentState) -> tuple[tuple[int, str], ...]:
        """Valid ``(slot, node id)`` pairs."""
        return valid_pairs(self.labels(state), self.valid(state))

    def plan(self, state: AgentState, action: int) -> list[int]:
        """The nodes that ``action`` walks through (excluding the current node)."""
        if not 0 < action <= self.max_candidates:
            raise UnknownActionError(action, self.name)
        cands = self.candidates(state)
        if action > len(cands):
            raise InvalidActionError(action, f"there are {len(cands)} candidates here")
        target = cands[action - 1]
        if target in self._targets[state.node]:
            return [target]
        route = self.map.route(state.node, target)
        if not route:
            raise InvalidActionError(action, "no known route to that node")
        return route

    def follow(self, state: AgentState, route: list[int]) -> AgentState:
        """Walk ``route`` (from :meth:`plan`, possibly cut short); one step per edge."""
        node, heading, prev = state.node, state.heading, state.prev_node
        for nxt in route:
            k = self._targets[node].index(nxt)
            heading = self._heads[node][k]
            prev, node = node, nxt
            self.map.visit(node)
        self.last_route = list(route)
        return AgentState(node, heading, prev, state.steps + len(route))

    def step(self, state: AgentState, action: int) -> AgentState:
        """Move to candidate ``action``; stop stays."""
        if action == STOP:
            self.last_route = []
            return state._replace(prev_node=state.node, steps=state.steps + 1)
        return self.follow(state, self.plan(state, action))

    def slot_of(self, state: AgentState, target: int) -> int:
        """Slot of candidate ``target`` (-1 if it is not a candidate)."""
        try:
            return self.candidates(state).index(target) + 1
        except ValueError:
            return -1

    def parse(self, text: str, state: AgentState) -> int:
        """Slot named by ``"stop"``, a node id, ``"place 7"`` (online-map number) or a slot
        number."""
        raw = str(text).strip()
        key = normalize_name(raw)
        if key in ("stop", "end"):
            return STOP
        cands = self.candidates(state)
        ids = [self._ids[v] for v in cands]
        if raw in ids:
            return ids.index(raw) + 1
        if key.startswith("place_") and key[6:].isdigit():
            node = self.map.node_of_number(int(key[6:]))
            if node in cands:
                return cands.index(node) + 1
            raise InvalidActionError(text, "that place is not a candidate here")
        if key.isdigit() and int(key) <= self.max_candidates:
            return int(key)
        raise UnknownActionError(text, self.name, ("stop", "<node id>", "place <n>"))


__all__ = ["NodesScheme"]

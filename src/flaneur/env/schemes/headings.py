"""The ``headings`` scheme (CitySeeker, V-IRL): pick one of the navigable headings, or stop.

Slot 0 is ``stop``; slot ``k`` (1-based) moves along the ``k``-th street of the node in
ascending heading order (so the meaning of a slot does not depend on which way the agent
faces). Each slot is labelled with its direction relative to the agent's heading::

                    front
        slightly left  |  slightly right          front           |Δ| <= 22.5
                  \\    |    /                     slightly l/r    22.5 < |Δ| <= 67.5
           left ---  agent  --- right             left/right      67.5 < |Δ| <= 112.5
                  /    |    \\                     back l/r       112.5 < |Δ| <= 157.5
           back left   |   back right             back           |Δ| > 157.5
                     back

After moving along an edge the agent faces that edge's heading. Slots beyond the node's
number of streets are invalid.
"""

from __future__ import annotations

import re
from typing import ClassVar

from flaneur.env.schemes.base import (
    STOP,
    InvalidActionError,
    UnknownActionError,
    normalize_name,
    valid_pairs,
)
from flaneur.env.state import AgentState, direction_label, relative_angle
from flaneur.world.graph import StreetGraph

_NUMBER = re.compile(r"^(?:option_|slot_|heading_)?(\d+)$")


class HeadingsScheme:
    """Choose a navigable heading (street) at each node, or stop.

    Parameters
    ----------
    graph
        The street graph.
    max_slots
        Number of street slots (default: the graph's maximum out-degree).
    """

    name: ClassVar[str] = "headings"
    multi_step: ClassVar[bool] = False

    def __init__(self, graph: StreetGraph, *, max_slots: int | None = None) -> None:
        self.graph = graph
        self._targets, self._heads = graph.adjacency
        most = int(graph.degree.max()) if graph.n_nodes and graph.n_edges else 0
        self.max_slots = most if max_slots is None else int(max_slots)
        self.n_actions = 1 + self.max_slots
        self._masks: dict[int, tuple[bool, ...]] = {}
        self._label_cache: dict[tuple[int, float], tuple[str, ...]] = {}

    def start(self, node: int, heading: float) -> AgentState:
        """Start on ``node`` facing ``heading`` (not snapped)."""
        return AgentState(node, heading % 360.0)

    def labels(self, state: AgentState) -> tuple[str, ...]:
        """``("stop", label of street 1, ...)``; ``""`` for unused slots."""
        key = (state.node, state.heading)
        labels = self._label_cache.get(key)
        if labels is None:
            h = state.heading
            heads = self._heads[state.node][: self.max_slots]
            names = [direction_label(relative_angle(x, h)) for x in heads]
            labels = ("stop", *names, *([""] * (self.max_slots - len(names))))
            if len(self._label_cache) < 1_000_000:
                self._label_cache[key] = labels
        return labels

    def valid(self, state: AgentState) -> tuple[bool, ...]:
        """Stop and one slot per street of the node."""
        d = min(len(self._heads[state.node]), self.max_slots)
        mask = self._masks.get(d)
        if mask is None:
            mask = (True,) + (True,) * d + (False,) * (self.max_slots - d)
            self._masks[d] = mask
        return mask

    def actions(self, state: AgentState) -> tuple[tuple[int, str], ...]:
        """Valid ``(slot, label)`` pairs."""
        return valid_pairs(self.labels(state), self.valid(state))

    def step(self, state: AgentState, action: int) -> AgentState:
        """Move along street ``action`` (1-based); stop stays."""
        if action == STOP:
            return state._replace(prev_node=state.node, steps=state.steps + 1)
        if not 0 < action <= self.max_slots:
            raise UnknownActionError(action, self.name)
        node = state.node
        targets = self._targets[node]
        if action > len(targets):
            raise InvalidActionError(action, f"this node has {len(targets)} streets")
        return AgentState(targets[action - 1], self._heads[node][action - 1], node, state.steps + 1)

    def slot_of(self, state: AgentState, target: int) -> int:
        """Slot of the street leading to ``target`` (-1 if none)."""
        try:
            return self._targets[state.node].index(target) + 1
        except ValueError:
            return -1

    def parse(self, text: str, state: AgentState) -> int:
        """Slot named by a number (``"2"``), ``"stop"``, a label (``"slightly left"``) or a
        heading in degrees (``"90°"``, nearest street)."""
        key = normalize_name(str(text))
        if key in ("stop", "end"):
            return STOP
        match = _NUMBER.match(key)
        if match and int(match.group(1)) <= self.max_slots:
            return int(match.group(1))
        labels = self.labels(state)
        spaced = key.replace("_", " ")
        if spaced and spaced in labels[1:]:
            return labels.index(spaced, 1)
        try:
            degrees = float(key.rstrip("°").removesuffix("_degrees").removesuffix("deg"))
        except ValueError:
            known = ("stop", "<slot number>", "<label>")
            raise UnknownActionError(text, self.name, known) from None
        heads = self._heads[state.node]
        if not heads:
            raise InvalidActionError(text, "this node has no streets")
        best = min(range(len(heads)), key=lambda k: abs(relative_angle(heads[k], degrees)))
        return best + 1


__all__ = ["HeadingsScheme"]

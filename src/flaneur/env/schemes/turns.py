"""The ``turns`` scheme: VELMA's corrected Touchdown rules (forward, left, right, turn around).

The agent stands on a node and faces a heading. Out-edges of the node are its *streets*;
``d`` is their number (the out-degree); a node with ``d > 2`` is an *intersection*. States
come in two kinds, and the rules below depend on which one the agent is in:

* **arrived** – the last action moved the agent here along the edge ``u -> v``; it still
  faces that edge's heading ``h`` (moving never rotates the agent);
* **settled** – at the start of an episode, or after a rotation in place; the agent then
  always faces one of the node's streets (the start heading is snapped to the nearest one).

``FORWARD``
    1. If the heading equals the heading of a street, follow it.
    2. Else on a 2-way node follow the street closest to the heading.
    3. Else at an intersection follow the *forward street*: drop the street back to ``u``
       (if it exists), sort the others by their angle relative to ``h`` from left-most to
       right-most; the forward street is the middle one, and with an even number of them the
       one of the two middle streets closer to ``h`` (the left one on a tie).
    4. Else (a dead end not faced, or a node without streets) the action is invalid.
``LEFT`` / ``RIGHT`` (rotate in place, only at intersections; invalid elsewhere)
    * arrived at a 3-way node: face the left-most / right-most of the two streets ahead;
    * arrived at a node with 4 or more streets: face the nearest street counter-clockwise /
      clockwise of the forward street, among the streets ahead (back street excluded);
    * settled: face the next street counter-clockwise / clockwise of the current one.
``TURN_AROUND`` (rotate in place)
    Face the street closest to ``h + 180``; invalid only on a node without streets.
``STOP``
    End the episode (always valid).

Closest-heading ties go to the smaller street heading. These rules reproduce VELMA's
``base_navigator`` (Schumann et al., AAAI 2024) except that a dead end does not swallow a
``FORWARD`` once the agent has turned around to face its only street. VELMA's remapping of
actions (``left``/``right`` on a 2-way node become ``forward``; anything but ``stop`` or
``turn_around`` at a dead end becomes ``stop``) is available as :meth:`TurnsScheme.remap`.

Transitions are table-driven: a state is coded as an integer (arrived via edge ``e`` ->
``e``; settled facing edge ``e`` -> ``m + e``; a node ``v`` without streets -> ``2m + v``),
and ``next[action][code]`` is computed once on first use.
"""

from __future__ import annotations

from typing import ClassVar

from flaneur.env.schemes.base import (
    STOP,
    InvalidActionError,
    UnknownActionError,
    normalize_name,
    valid_pairs,
)
from flaneur.env.state import NO_NODE, AgentState, angular_distance, relative_angle
from flaneur.world.graph import StreetGraph

FORWARD, LEFT, RIGHT, TURN_AROUND = 1, 2, 3, 4
TURN_ACTIONS = ("stop", "forward", "left", "right", "turn_around")
"""Names of the five slots of the ``turns`` scheme, in slot order."""

_ALIASES = {
    "turnaround": "turn_around",
    "turn": "turn_around",
    "u_turn": "turn_around",
    "turn_left": "left",
    "turn_right": "right",
    "go_forward": "forward",
    "go_straight": "forward",
    "straight": "forward",
    "move_forward": "forward",
    "end": "stop",
}
_UNSET = -2
INVALID = -1
"""Transition-table value of an action that cannot be taken."""
_FACING_TOLERANCE = 1e-6


class TurnsScheme:
    """VELMA's corrected Touchdown action rules on a street graph (see the module docstring).

    Parameters
    ----------
    graph
        The street graph.
    """

    name: ClassVar[str] = "turns"
    multi_step: ClassVar[bool] = False
    n_actions: int = 5

    def __init__(self, graph: StreetGraph) -> None:
        self.graph = graph
        targets_of, headings_of = graph.adjacency
        self._targets = targets_of
        self._heads = headings_of
        self._first = graph.indptr.tolist()
        m, n = graph.n_edges, graph.n_nodes
        self._m = m
        src = graph.edge_sources.tolist()
        dst = graph.targets.tolist()
        eh = graph.headings.tolist()
        self._src, self._dst, self._eh = src, dst, eh
        # per code: node, heading, previous node (settled: the node itself)
        self.node_of: list[int] = dst + src + list(range(n))
        self.heading_of: list[float] = eh + eh + [0.0] * n
        self.prev_of: list[int] = src + src + list(range(n))
        self._table = [[_UNSET] * (2 * m + n) for _ in range(5)]
        self._masks: list[tuple[bool, ...] | None] = [None] * (2 * m + n)
        self.labels_all = TURN_ACTIONS

    # ------------------------------------------------------------------ public API
    def start(self, node: int, heading: float) -> AgentState:
        """Start on ``node`` facing the street closest to ``heading`` (VELMA's snapping)."""
        heads = self._heads[node]
        if not heads:
            return AgentState(node, heading % 360.0, NO_NODE, 0, 2 * self._m + node)
        k = _closest(heads, heading % 360.0)
        return AgentState(node, heads[k], NO_NODE, 0, self._m + self._first[node] + k)

    def state(self, code: int, steps: int = 0) -> AgentState:
        """The :class:`AgentState` of a state code."""
        return AgentState(
            self.node_of[code], self.heading_of[code], self.prev_of[code], steps, code
        )

    def labels(self, state: AgentState) -> tuple[str, ...]:
        """The five slot names (they do not depend on the state)."""
        return TURN_ACTIONS

    def valid(self, state: AgentState) -> tuple[bool, ...]:
        """Action mask of ``state``: stop, forward, left, right, turn_around."""
        code = state.code
        mask = self._masks[code]
        if mask is None:
            mask = (True, *(self.transition(code, a) != INVALID for a in range(1, 5)))
            self._masks[code] = mask
        return mask

    def actions(self, state: AgentState) -> tuple[tuple[int, str], ...]:
        """Valid ``(slot, name)`` pairs."""
        return valid_pairs(TURN_ACTIONS, self.valid(state))

    def transition(self, code: int, action: int) -> int:
        """Next state code after ``action`` (1-4), or :data:`INVALID`. The fast path."""
        nxt = self._table[action][code]
        if nxt == _UNSET:
            nxt = self._compute(code, action)
            self._table[action][code] = nxt
        return nxt

    def step(self, state: AgentState, action: int) -> AgentState:
        """The state after ``action``; stop leaves the agent where it is.

        Raises
        ------
        InvalidActionError
            If the action cannot be taken in ``state``.
        UnknownActionError
            If ``action`` is not a slot 0-4.
        """
        if action == STOP:
            return state._replace(prev_node=state.node, steps=state.steps + 1)
        if not 0 < action < 5:
            raise UnknownActionError(action, self.name, TURN_ACTIONS)
        nxt = self._table[action][state.code]
        if nxt == _UNSET:
            nxt = self.transition(state.code, action)
        if nxt < 0:
            raise InvalidActionError(TURN_ACTIONS[action], self._why(state, action))
        return AgentState(
            self.node_of[nxt], self.heading_of[nxt], self.prev_of[nxt], state.steps + 1, nxt
        )

    def parse(self, text: str, state: AgentState | None = None) -> int:
        """Slot of an action name (``"forward"``, ``"Turn around"``, ``"left"``, ``"3"``...)."""
        key = normalize_name(str(text))
        key = _ALIASES.get(key, key)
        if key in TURN_ACTIONS:
            return TURN_ACTIONS.index(key)
        if key.isdigit() and int(key) < 5:
            return int(key)
        raise UnknownActionError(text, self.name, TURN_ACTIONS)

    def remap(self, state: AgentState, action: int) -> int:
        """VELMA's ``validate_action``: the action VELMA would execute instead of ``action``.

        ``left``/``right`` on a 2-way node become ``forward``; at a dead end anything but
        ``stop`` and ``turn_around`` becomes ``stop``. Other actions are returned unchanged.
        """
        d = len(self._heads[state.node])
        if d <= 1 and action not in (STOP, TURN_AROUND):
            return STOP
        if d == 2 and action in (LEFT, RIGHT):
            return FORWARD
        return action

    def is_intersection(self, node: int) -> bool:
        """Whether ``node`` has more than two streets."""
        return len(self._heads[node]) > 2

    # ------------------------------------------------------------------ the rules
    def _decode(self, code: int) -> tuple[bool, int, int, float]:
        m = self._m
        if code < m:
            return True, code, self._dst[code], self._eh[code]
        return False, code - m, self._src[code - m], self._eh[code - m]

    def _compute(self, code: int, action: int) -> int:
        if code >= 2 * self._m or action not in (FORWARD, LEFT, RIGHT, TURN_AROUND):
            return INVALID
        arrived, edge, node, h = self._decode(code)
        heads = self._heads[node]
        first = self._first[node]
        d = len(heads)
        if action == TURN_AROUND:
            return INVALID if d == 0 else self._m + first + _closest(heads, (h + 180.0) % 360.0)
        if action == FORWARD:
            k = _facing(heads, h)
            if k < 0:
                if d <= 1:
                    return INVALID
                k = _closest(heads, h) if d == 2 else self._forward_street(node, edge, arrived)
            return first + k
        if d <= 2:
            return INVALID
        return self._m + first + self._turn_street(node, edge, arrived, action)

    def _ahead(self, node: int, edge: int, h: float) -> list[int]:
        """Streets of ``node`` except the one back to the previous node, left-most first."""
        back = self._src[edge]
        ks = [k for k, t in enumerate(self._targets[node]) if t != back]
        heads = self._heads[node]
        return sorted(ks, key=lambda k: relative_angle(heads[k], h))

    def _forward_street(self, node: int, edge: int, arrived: bool) -> int:
        heads = self._heads[node]
        h = self._eh[edge]
        if not arrived:
            return edge - self._first[node]
        ahead = self._ahead(node, edge, h)
        n = len(ahead)
        if n % 2:
            return ahead[n // 2]
        a, b = ahead[n // 2 - 1], ahead[n // 2]
        return a if angular_distance(heads[a], h) <= angular_distance(heads[b], h) else b

    def _turn_street(self, node: int, edge: int, arrived: bool, action: int) -> int:
        heads = self._heads[node]
        if arrived:
            pool = self._ahead(node, edge, self._eh[edge])
            if len(heads) == 3:
                return pool[0] if action == LEFT else pool[-1]
        else:
            pool = list(range(len(heads)))
        f = self._forward_street(node, edge, arrived)
        hf = heads[f]
        others = [k for k in pool if k != f]
        if action == LEFT:
            return min(others, key=lambda k: (hf - heads[k]) % 360.0)
        return min(others, key=lambda k: (heads[k] - hf) % 360.0)

    def _why(self, state: AgentState, action: int) -> str:
        d = len(self._heads[state.node])
        if d == 0:
            return "the node has no streets"
        if action in (LEFT, RIGHT):
            return f"{TURN_ACTIONS[action]} needs an intersection (this node has {d} streets)"
        return "dead end: turn around first"


def _closest(heads: list[float], h: float) -> int:
    best, best_d = 0, 361.0
    for k, x in enumerate(heads):
        dist = angular_distance(x, h)
        if dist < best_d:
            best, best_d = k, dist
    return best


def _facing(heads: list[float], h: float) -> int:
    for k, x in enumerate(heads):
        if angular_distance(x, h) <= _FACING_TOLERANCE:
            return k
    return -1


__all__ = ["FORWARD", "INVALID", "LEFT", "RIGHT", "TURN_ACTIONS", "TURN_AROUND", "TurnsScheme"]

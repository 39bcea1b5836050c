"""The teacher: the oracle action toward the goal, for every action scheme.

With a reference path the teacher follows it with a pointer (so routes that visit a node
twice work): when the agent stands on the node after the pointer, the pointer advances; when
it has left the path, the teacher leads it back to the goal by a shortest path and picks the
path up again, furthest along, where the agent rejoins it. Without a reference path it leads
to the nearest goal (or, for ordered goals, to the next one in order) by hop distance.

Once the next node is known, the action follows from the scheme:

* ``headings`` / ``nodes`` - the slot of the edge (candidate) leading to that node;
* ``turns`` - VELMA's gold-action logic made complete: ``forward`` if it leads there; else
  the rotation after which ``forward`` leads there (tried in the order turn around, left,
  right); else the first rotation of a shortest rotation sequence, preferring left or right
  (whichever faces closer to the target street) over turning around. Because rotations can
  face every street of a node, this reproduces any walk of the graph under the turns rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from flaneur.env.schemes.base import STOP, ActionScheme, TargetSlots
from flaneur.env.schemes.turns import FORWARD, LEFT, RIGHT, TURN_AROUND, TurnsScheme
from flaneur.env.state import AgentState, angular_distance
from flaneur.errors import FlaneurError
from flaneur.tasks.episode import Episode
from flaneur.world.graph import StreetGraph


class TeacherError(FlaneurError):
    """The teacher cannot find an action (the next node is not reachable from here)."""


class Teacher:
    """Oracle actions for one episode.

    Parameters
    ----------
    scheme
        The action scheme the actions are for.
    graph
        The street graph.
    reference
        Reference path as node indices (first = start, last = goal); may be empty.
    goals
        Goal node indices; default: the last node of ``reference``.
    ordered
        Whether the goals must be reached in order (used without a reference path).
    """

    def __init__(
        self,
        scheme: ActionScheme,
        graph: StreetGraph,
        *,
        reference: Sequence[int] = (),
        goals: Sequence[int] = (),
        ordered: bool = False,
    ) -> None:
        self.scheme = scheme
        self.graph = graph
        self.reference = [int(v) for v in reference]
        self.goals = [int(v) for v in goals] or self.reference[-1:]
        if not self.goals:
            raise TeacherError("the teacher needs a reference path or goal nodes")
        self.ordered = ordered
        self._occurrences: dict[int, list[int]] = {}
        for i, v in enumerate(self.reference):
            self._occurrences.setdefault(v, []).append(i)
        self._dist_cache: dict[tuple[int, ...], list[int]] = {}
        self.reset()

    @classmethod
    def for_episode(cls, scheme: ActionScheme, graph: StreetGraph, episode: Episode) -> Teacher:
        """A teacher for ``episode`` (node ids resolved; unknown ids raise an error)."""
        reference = graph.indices(episode.reference_path).tolist()
        goals = graph.indices(episode.goal_nodes).tolist() if episode.goal_nodes else []
        ordered = bool(episode.metadata.get("ordered", False))
        return cls(scheme, graph, reference=reference, goals=goals, ordered=ordered)

    def reset(self) -> None:
        """Forget progress (call at the start of an episode)."""
        self._ptr = 0 if self.reference else -1
        self._goal_idx = 0

    # ------------------------------------------------------------------ next node
    def next_node(self, state: AgentState) -> int | None:
        """The node the agent should move to next, or ``None`` to stop here."""
        node = state.node
        if self.reference:
            ref, p = self.reference, self._ptr
            if p >= 0 and p + 1 < len(ref) and ref[p + 1] == node:
                p += 1
            elif p < 0 or ref[p] != node:
                occ = self._occurrences.get(node)
                p = occ[-1] if occ else -1
            self._ptr = p
            if p >= 0:
                return None if p == len(ref) - 1 else ref[p + 1]
            return self._toward((self.goals[-1],), node)
        if self.ordered:
            while self._goal_idx < len(self.goals) - 1 and node == self.goals[self._goal_idx]:
                self._goal_idx += 1
            return self._toward((self.goals[self._goal_idx],), node)
        return self._toward(tuple(self.goals), node)

    def _toward(self, goals: tuple[int, ...], node: int) -> int | None:
        if node in goals:
            return None
        dist = self._dist_cache.get(goals)
        if dist is None:
            d = np.asarray(self.graph.hop_distances_to(np.asarray(goals))).reshape(len(goals), -1)
            d = np.where(d < 0, np.iinfo(np.int32).max, d).min(axis=0)
            dist = d.tolist()
            self._dist_cache[goals] = dist
        here = dist[node]
        for t in self.graph.adjacency[0][node]:
            if dist[t] == here - 1:
                return t
        return None  # unreachable: stop

    # ------------------------------------------------------------------ actions
    def act(self, state: AgentState) -> int:
        """The oracle action slot in ``state``."""
        target = self.next_node(state)
        if target is None:
            return STOP
        return action_toward(self.scheme, state, target)


def action_toward(scheme: ActionScheme, state: AgentState, target: int) -> int:
    """The first action of the shortest action sequence that moves the agent to ``target``.

    Raises
    ------
    TeacherError
        If ``target`` cannot be reached with one move from ``state``.
    """
    if isinstance(scheme, TurnsScheme):
        action = _turns_toward(scheme, state.code, target)
    else:
        action = cast(TargetSlots, scheme).slot_of(state, target)  # headings, nodes
    if action is None or action < 0:
        raise TeacherError(
            f"node {scheme_node_id(scheme, target)} is not reachable in one move from "
            f"node {scheme_node_id(scheme, state.node)}"
        )
    return action


def scheme_node_id(scheme: Any, node: int) -> str:
    """The string id of ``node`` in the scheme's graph (for messages)."""
    return str(scheme.graph.ids[node])


def _turns_toward(scheme: TurnsScheme, code: int, target: int) -> int | None:
    """VELMA's choice: forward if it leads there; else the rotation that needs the fewest
    further rotations (ties: turn around, left, right when one rotation suffices, otherwise
    the rotation whose new heading is closer to the target street, as VELMA's teacher)."""
    nxt = scheme.transition(code, FORWARD)
    if nxt >= 0 and scheme.node_of[nxt] == target:
        return FORWARD
    node = scheme.node_of[code]
    targets, heads = scheme.graph.adjacency[0][node], scheme.graph.adjacency[1][node]
    if target not in targets:
        return None
    goal_heading = heads[targets.index(target)]
    best: tuple[int, int, float] | None = None
    best_action = None
    for rank, action in enumerate((TURN_AROUND, LEFT, RIGHT)):
        c2 = scheme.transition(code, action)
        if c2 < 0:
            continue
        more = _rotations_needed(scheme, c2, target)
        if more is None:
            continue
        if more == 0:  # one rotation does it: VELMA's order turn around, left, right
            key = (0, rank, 0.0)
        else:  # left or right, whichever faces closer to the target street
            off = angular_distance(scheme.heading_of[c2], goal_heading)
            key = (more, int(action == TURN_AROUND), off)
        if best is None or key < best:
            best, best_action = key, action
    return best_action


def _rotations_needed(scheme: TurnsScheme, code: int, target: int) -> int | None:
    """Fewest rotations from ``code`` after which ``forward`` reaches ``target``."""
    node_of = scheme.node_of
    frontier, seen, depth = [code], {code}, 0
    while frontier:
        layer = []
        for c in frontier:
            fwd = scheme.transition(c, FORWARD)
            if fwd >= 0 and node_of[fwd] == target:
                return depth
            for action in (TURN_AROUND, LEFT, RIGHT):
                c2 = scheme.transition(c, action)
                if c2 >= 0 and c2 not in seen:
                    seen.add(c2)
                    layer.append(c2)
        frontier, depth = layer, depth + 1
    return None


def gold_rollout(
    scheme: ActionScheme, graph: StreetGraph, episode: Episode, *, max_steps: int | None = None
) -> tuple[list[int], list[AgentState]]:
    """Replay the teacher on ``episode`` without an environment.

    Returns
    -------
    tuple
        ``(actions, states)``: the action slots (ending with stop unless the step limit
        cut the run short) and the states from the start state on (one per action plus the
        start).
    """
    teacher = Teacher.for_episode(scheme, graph, episode)
    state = scheme.start(graph.index(episode.start_node), episode.start_heading)
    limit = max_steps if max_steps is not None else 4 * len(episode.reference_path) + 100
    actions: list[int] = []
    states = [state]
    while len(actions) < limit:
        action = teacher.act(state)
        actions.append(action)
        if action == STOP:
            break
        state = scheme.step(state, action)
        states.append(state)
    return actions, states


def node_path(states: Sequence[AgentState]) -> list[int]:
    """Nodes visited by a state sequence, without repeats from rotations or stops."""
    path: list[int] = []
    for s in states:
        if not path or path[-1] != s.node:
            path.append(s.node)
    return path


__all__ = ["Teacher", "TeacherError", "action_toward", "gold_rollout", "node_path"]

"""Backtracking strategies: B1 (confidence), B2 (step reward) and B3 (B1 plus a hint).

A backtracking strategy returns a :class:`BacktrackPlan`; the agent then walks back along a
shortest path (``city.graph.shortest_path``; through the plan's ``via`` nodes when it names
them), one heading choice per step, without asking the model, and records each move
(``thoughts``: ``"backtracking to ..."``).

* **B1** keeps the confidences of the model's decided moves since the last backtrack. When
  the mean of the last ``k`` (default 3) is below ``theta`` (0.75), it returns to the *last
  trusted node*: the node reached by the latest decided move whose confidence was at least
  ``theta`` (the start node if there is none). A missing confidence counts as 0. Under
  ``paper`` it goes back as CitySeeker's code does instead (:func:`paper_way_back`), walking
  its own trail.
* **B2** keeps the graph distance to the goal (metres along streets, nearest goal) at every
  node reached by a decided move. When it rose ``k`` moves in a row, it returns to the node
  where it started rising. The distance is privileged: it is the oracle distance
  ``env_info.privileged.goal_distances_m()``, as CitySeeker's step reward is computed from
  the oracle distance (the run's rows are marked privileged).
* **B3** is B1 plus a hint in the next choice prompt once back: the most frontal option
  not tried from that node in this episode (or, with ``b3_oracle=True``, the teacher's
  option - privileged).

Under ``--protocol paper`` (``run.paper``): B1 and B3 go back as CitySeeker's released
``Map._backtrack`` (``src/map.py``) does, not to the last trusted node (:func:`paper_way_back`);
B2's distance is CitySeeker's "steps to destination", the number of streets (hops) on a
shortest path to the goal (its released ``get_steps_between_two_viewpoints``), and B3's hint
is the paper's oracle (the agent turns ``b3_oracle`` on): the option that starts a shortest
path to the goal.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from flaneur.agents.cityseeker.options import Option, compass
from flaneur.agents.cityseeker.state import BacktrackPlan, EpisodeRun
from flaneur.agents.cityseeker.strategies import Ask, Strategy


class ConfidenceBacktrack(Strategy):
    """B1: backtrack after low confidence.

    Parameters
    ----------
    k
        Window of decided moves.
    theta
        Confidence threshold.
    oracle
        (B3 only) make the hint name the teacher's option (privileged).
    """

    code: ClassVar[str] = "b1"
    with_hint: ClassVar[bool] = False

    def __init__(self, *, k: int = 3, theta: float = 0.75, oracle: bool = False) -> None:
        self.k = max(1, int(k))
        self.theta = float(theta)
        self.oracle = oracle

    def _state(self, run: EpisodeRun) -> dict:
        return run.cache.setdefault(
            "confidence",
            {"window": [], "trusted": run.start, "pending": None, "positions": []},
        )

    def after_decision(self, run: EpisodeRun) -> None:
        memo = run.history[-1]
        state = self._state(run)
        conf = memo.confidence if memo.confidence is not None else 0.0
        state["window"].append(conf)
        state["positions"].append(memo.node)  # CitySeeker's trajectory (paper_way_back)
        if conf >= self.theta and memo.target is not None:
            state["trusted"] = memo.target

    def check(self, run: EpisodeRun) -> BacktrackPlan | None:
        window = self._state(run)["window"]
        if len(window) < self.k:
            return None
        mean = float(np.mean(window[-self.k :]))
        if mean >= self.theta:
            return None
        below = (
            f"{self.code}: mean confidence {mean:.2f} over the last {self.k} decisions is below "
            f"{self.theta:g}"
        )
        if run.paper:
            return self._paper_plan(run, below)
        target = self._state(run)["trusted"]
        reason = f"{below}; returning to the last trusted node {run.node_id(target)}"
        return BacktrackPlan(target, reason, self.code)

    def _paper_plan(self, run: EpisodeRun, below: str) -> BacktrackPlan:
        """CitySeeker's way back (:func:`paper_way_back`): along the agent's trail to the
        position ``k + 1`` decisions back."""
        positions = self._state(run)["positions"]
        back = paper_way_back(positions, self.k)
        if not back:
            return BacktrackPlan(run.node, f"{below}; nothing recorded to go back to", self.code)
        via = (positions[-1], *reversed(back))
        where = f"going back the last {len(back)} nodes to {run.node_id(back[0])}"
        return BacktrackPlan(back[0], f"{below}; {where}", self.code, via)

    def on_plan(self, run: EpisodeRun, plan: BacktrackPlan) -> None:
        state = self._state(run)
        state["window"].clear()
        if run.paper and plan.code == self.code:
            state["positions"].extend(plan.via[1:])  # re-recorded newest first, as CitySeeker

    def on_return(self, run: EpisodeRun, plan: BacktrackPlan) -> None:
        if self.with_hint:
            self._state(run)["pending"] = run.node

    def hint(self, run: EpisodeRun, options: Sequence[Option]) -> str:
        state = self._state(run)
        if not self.with_hint or state["pending"] != run.node or not options:
            return ""
        state["pending"] = None
        if self.oracle:
            best = _oracle_option(run, options)
            if best is not None:
                run.events.append(f"b3: oracle hint option {best.letter}")
                return (
                    f"Hint (after backtracking): the best option from here is option "
                    f"{best.letter} ({best.coarse}, toward the {compass(best.heading)})."
                )
        tried = [
            m.target
            for m in run.history
            if m.node == run.node and not m.backtrack and m.target is not None
        ]
        fresh = [o for o in options if o.target not in tried]
        last = tried[-1] if tried else None
        best = fresh[0] if fresh else next((o for o in options if o.target != last), options[0])
        used = [o for o in options if o.target in tried]
        before = (
            "From here you already tried "
            + ", ".join(f"option {o.letter} (toward the {compass(o.heading)})" for o in used)
            + ", which did not work out. "
            if used
            else ""
        )
        run.events.append(f"b3: hint option {best.letter}")
        return (
            "Hint (after backtracking): you came back to this point because your recent "
            f"decisions were uncertain. {before}The most promising option now is option "
            f"{best.letter} ({best.coarse}, toward the {compass(best.heading)})."
        )


def paper_way_back(positions: Sequence[int], k: int) -> list[int]:
    """The positions B1 goes back through under ``paper``, oldest first (empty: it stays).

    CitySeeker's ``Map._backtrack`` (``src/map.py``; ``backtrack_steps = 3`` in ``main.py``)
    slices the positions its trajectory recorded, ``trajectory[-k - 1 : -1]``: the ``k``
    positions before the last one, fewer when fewer were recorded. It records them again,
    newest first, and puts the agent on the oldest. A position is recorded at every decided
    step (the node the agent decided on; the node a move reaches is recorded only when the
    agent decides there) and for every node a backtrack re-records. So from the node the
    low-confidence move reached, the agent goes ``k + 1`` streets back along its own trail,
    to where it decided ``k + 1`` steps before (to the start when it has decided only ``k``
    times; with one recorded position the slice is empty and it stays).

    Parameters
    ----------
    positions
        The recorded positions, oldest first (the last: where the low-confidence move
        started).
    k
        CitySeeker's ``backtrack_steps`` (B1's window, 3).

    Returns
    -------
    list of int
        ``positions[-k - 1 : -1]``: the first is where the agent goes back to.
    """
    return list(positions[-k - 1 : -1])


class HintedBacktrack(ConfidenceBacktrack):
    """B3: B1 plus a hint toward the best option in the first choice prompt once back."""

    code: ClassVar[str] = "b3"
    with_hint: ClassVar[bool] = True


def _oracle_option(run: EpisodeRun, options: Sequence[Option]) -> Option | None:
    if run.privileged is None:
        return None
    env = run.privileged.env
    if env.scheme.name != "headings":
        return None
    try:
        slot = env.teacher().act(env.state)
    except Exception:  # the teacher may fail on broken episodes; fall back to exploring
        return None
    found = next((o for o in options if o.slot == slot), None)
    if found is not None or not 1 <= slot <= len(run.graph.out_headings(run.node)):
        return found
    # walkable-heading options (paper) may not reach the teacher's street: as CitySeeker's
    # get_proper_perspective_after_backtrack, the heading closest to it (|a - b|, no wrap)
    street = float(run.graph.out_headings(run.node)[slot - 1])
    return min(options, key=lambda o: abs(o.heading - street))


class RewardBacktrack(Strategy):
    """B2: backtrack when the oracle distance to the goal rose ``k`` moves in a row."""

    code: ClassVar[str] = "b2"

    def __init__(self, *, k: int = 3) -> None:
        self.k = max(1, int(k))

    async def prepare(self, run: EpisodeRun, ask: Ask | None) -> None:
        if run.privileged is None:
            dist = np.full(run.graph.n_nodes, np.inf)  # no oracle: B2 never fires
        elif run.paper:
            dist = goal_hops(run)
        else:
            dist = run.privileged.goal_distances_m()
        run.cache["b2"] = {"dist": dist, "trail": [(run.node, float(dist[run.node]))]}

    def observe(self, run: EpisodeRun) -> None:
        state = run.cache["b2"]
        trail = state["trail"]
        if trail[-1][0] != run.node:
            trail.append((run.node, float(state["dist"][run.node])))
            del trail[: -(self.k + 1)]

    def check(self, run: EpisodeRun) -> BacktrackPlan | None:
        trail = run.cache["b2"]["trail"]
        if len(trail) < self.k + 1:
            return None
        last = trail[-(self.k + 1) :]
        if not all(b[1] > a[1] for a, b in itertools.pairwise(last)):
            return None
        target, d0 = last[0]
        unit = " streets" if run.paper else " m"
        reason = (
            f"b2: distance to the goal rose {self.k} moves in a row ({d0:.0f}{unit} -> "
            f"{last[-1][1]:.0f}{unit}); returning to {run.node_id(target)}"
        )
        return BacktrackPlan(target, reason, self.code)

    def on_plan(self, run: EpisodeRun, plan: BacktrackPlan) -> None:
        state = run.cache["b2"]
        state["trail"] = [(plan.target, float(state["dist"][plan.target]))]


def goal_hops(run: EpisodeRun) -> np.ndarray:
    """Streets (hops) from every node to the nearest goal, ``inf`` where none is reachable:
    CitySeeker's "steps to destination" (privileged: read through the environment)."""
    env = run.privileged.env
    graph = run.graph
    goals = [g for g in (env.episode.goal_nodes if env.episode else ()) if g in graph]
    if not goals:
        return np.full(graph.n_nodes, np.inf)
    hops = np.atleast_2d(graph.hop_distances_to(graph.indices(goals))).astype(float)
    hops[hops < 0] = np.inf  # unreachable
    return hops.min(axis=0)


__all__ = [
    "ConfidenceBacktrack",
    "HintedBacktrack",
    "RewardBacktrack",
    "goal_hops",
    "paper_way_back",
]

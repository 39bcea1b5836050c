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
  the oracle distance (the run's rows are marked privileged). Under ``paper`` it fires and
  goes back as CitySeeker's code does instead (:meth:`RewardBacktrack.paper_check`).
* **B3** is B1 plus a hint in the next choice prompt once back: the most frontal option
  not tried from that node in this episode (or, with ``b3_oracle=True``, the teacher's
  option - privileged).

Under ``--protocol paper`` (``run.paper``): B1 and B3 go back as CitySeeker's released
``Map._backtrack`` (``src/map.py``) does, not to the last trusted node (:func:`paper_way_back`);
B2's distance is CitySeeker's "steps to destination", the number of streets (hops) on a
shortest path to the goal (its released ``get_steps_between_two_viewpoints``), its trigger
the code's ``is_increasing`` over the last ``k`` of them (ties count) and its way back
``Map._backtrack``'s, as B1's; and B3's hint is the paper's oracle (the agent turns
``b3_oracle`` on): the option that starts a shortest path to the goal.
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
        """CitySeeker's way back (:func:`paper_plan`)."""
        return paper_plan(run, self._state(run)["positions"], self.k, below, self.code)

    def on_plan(self, run: EpisodeRun, plan: BacktrackPlan) -> None:
        state = self._state(run)
        state["window"].clear()
        if run.paper:  # re-recorded newest first, as CitySeeker (B2's way back too)
            state["positions"].extend(plan.via[1:])

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


def paper_plan(
    run: EpisodeRun, positions: Sequence[int], k: int, reason: str, code: str
) -> BacktrackPlan:
    """CitySeeker's way back under ``paper`` (B1, B2 and B3): along the agent's trail.

    Parameters
    ----------
    run
        The running episode.
    positions
        The positions CitySeeker's trajectory recorded, oldest first (see
        :func:`paper_way_back`).
    k
        CitySeeker's ``backtrack_steps`` (3).
    reason
        Why the strategy backtracks (the start of the event).
    code
        The strategy (``"b1"``, ``"b2"``, ``"b3"``).

    Returns
    -------
    BacktrackPlan
        To the oldest of :func:`paper_way_back`'s positions, through the last recorded
        position and the others newest first; on the current node (no walk) when nothing is
        recorded before the last position.
    """
    back = paper_way_back(positions, k)
    if not back:
        return BacktrackPlan(run.node, f"{reason}; nothing recorded to go back to", code)
    via = (positions[-1], *reversed(back))
    where = f"going back the last {len(back)} nodes to {run.node_id(back[0])}"
    return BacktrackPlan(back[0], f"{reason}; {where}", code, via)


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
    """B2: backtrack when the oracle distance to the goal keeps rising.

    ``flaneur``: the distance rose ``k`` moves in a row, strictly, counting from the node
    before the first rise (the start included) -> back to that node along a shortest path.

    ``paper`` (CitySeeker's ``topo_distance`` mechanism, ``Map._step`` and
    ``Map._should_backtrack`` in ``src/map.py``; :meth:`paper_check`): after every decided
    move, the streets from the node it reached to the goal; once ``k`` (``backtrack_steps``,
    3) are kept, the last ``k`` never falling (``is_increasing``) -> back as B1 goes back
    (:func:`paper_plan`).

    Parameters
    ----------
    k
        ``flaneur``: rises in a row; ``paper``: distances in the window.
    """

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
        run.cache["b2"] = {
            "dist": dist,
            "trail": [(run.node, float(dist[run.node]))],
            "window": [],  # paper: CitySeeker's score_container
            "positions": [],  # paper: CitySeeker's trajectory (paper_way_back)
        }

    def after_decision(self, run: EpisodeRun) -> None:
        if not run.paper:
            return
        memo = run.history[-1]
        state = run.cache["b2"]
        state["positions"].append(memo.node)
        if memo.target is not None:  # measured from where the move arrives, as after _step
            state["window"].append(float(state["dist"][memo.target]))
            del state["window"][: -self.k]

    def observe(self, run: EpisodeRun) -> None:
        if run.paper:
            return
        state = run.cache["b2"]
        trail = state["trail"]
        if trail[-1][0] != run.node:
            trail.append((run.node, float(state["dist"][run.node])))
            del trail[: -(self.k + 1)]

    def check(self, run: EpisodeRun) -> BacktrackPlan | None:
        if run.paper:
            return self.paper_check(run)
        trail = run.cache["b2"]["trail"]
        if len(trail) < self.k + 1:
            return None
        last = trail[-(self.k + 1) :]
        if not all(b[1] > a[1] for a, b in itertools.pairwise(last)):
            return None
        target, d0 = last[0]
        reason = (
            f"b2: distance to the goal rose {self.k} moves in a row ({d0:.0f} m -> "
            f"{last[-1][1]:.0f} m); returning to {run.node_id(target)}"
        )
        return BacktrackPlan(target, reason, self.code)

    def paper_check(self, run: EpisodeRun) -> BacktrackPlan | None:
        """CitySeeker's trigger: the last ``k`` distances never fell.

        The code appends the streets from the node a decided move reached to the goal
        (``get_steps_between_two_viewpoints``, after the move) to a ``deque(maxlen=k)``,
        and backtracks when it is full and ``np.all(np.diff(d) >= 0)``: with ``k = 3``,
        three moves whose distances rose or stayed twice in a row (the start's distance is
        never in it). A backtrack adds no distance. The code never clears the window, but
        it sets ``backtrack_steps = True`` after its first backtrack, so it never fires
        again in the run; flaneur backtracks again (as B1, ``docs/fidelity.md``), from an
        empty window: ``k`` more moves after the walk back.

        Parameters
        ----------
        run
            The running episode.

        Returns
        -------
        BacktrackPlan or None
            :func:`paper_plan` when it fires (never without the oracle or a reachable goal).
        """
        state = run.cache["b2"]
        window = state["window"]
        if len(window) < self.k or not np.isfinite(window).all():
            return None
        if any(b < a for a, b in itertools.pairwise(window)):
            return None
        seen = ", ".join(f"{d:.0f}" for d in window)
        reason = f"b2: streets to the goal over the last {self.k} moves never fell ({seen})"
        return paper_plan(run, state["positions"], self.k, reason, self.code)

    def on_plan(self, run: EpisodeRun, plan: BacktrackPlan) -> None:
        state = run.cache["b2"]
        if run.paper:
            state["window"].clear()
            state["positions"].extend(plan.via[1:])  # re-recorded newest first, as B1's
        else:
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
    "paper_plan",
    "paper_way_back",
]

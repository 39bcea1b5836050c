"""V-IRL's six VLN metrics, computed as the paper's tables report them.

Reference: Yang et al. (2024), "V-IRL", §5.4, Tables 5 and 8; scorer
``tools/tasks/benchmark/vln.py`` of github.com/VIRL-Platform/VIRL (read for behaviour).

For each route the agent leaves a trajectory (its position before each action and after the
last) and an action list (``forward()``, ``turn_direction(<compass word>)``, ``stop()``).

* **Success**: the final position is less than 25 m from the destination place (straight
  line; V-IRL does not require a ``stop()``).
* A successful route counts as correct on every key-position metric (V-IRL's scorer returns
  before scoring it, and its oracle row is 1.0 everywhere).
* **Start reaction**: the first action is ``turn_direction(<first leg's compass word>)``.
* **Intersection arrival**: an intersection (a key position before the destination) is
  arrived at when some trajectory point lies less than 5 m from it.
* **Intersection reaction**: at an arrived intersection, the gold turn
  ``turn_direction(<next leg's compass word>)`` appears among the actions
  ``actions[max(m-3, 0) : m+3]``, ``m`` the index of the trajectory point nearest to it
  (V-IRL's slice: 3 actions before, the action there and 2 after).
* **Stop arrival**: some trajectory point lies less than 20 m from the destination.
* **Stop reaction**: the route succeeded (stopping at the right place).

Denominators, as in the paper's tables: Success, Start reaction, Stop arrival and Stop
reaction divide by **all routes**; Intersection arrival by all intersections of all routes;
Intersection reaction by the arrived intersections (the paper's LLaVA row, arrival .55 with
reaction 1.0, is only possible with that denominator). V-IRL's printed table divides start
reaction and stop arrival by the number of *failed* routes instead, a defect not repeated
here (the paper's 0.22 = 4/18 and 0.83 = 15/18 divide by all 18 routes).

flaneur's own variant (:mod:`flaneur.metrics.virl`) works on the viewpoint graph instead:
key positions are nodes where the reference path turns by 45° or more, arrival means
*visiting the node*, reaction compares the first action taken at the node with the gold
action there, and every episode is scored (successful ones included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from flaneur.bench.vln_routes import distance_m

SUCCESS_RADIUS_M = 25.0
INTERSECTION_ARRIVE_M = 5.0
INTERSECTION_REACT_ACTIONS = 3
STOP_ARRIVE_M = 20.0
METRICS = (
    "success",
    "start_reaction",
    "intersection_arrival",
    "intersection_reaction",
    "stop_arrival",
    "stop_reaction",
)


@dataclass(frozen=True)
class VlnOutcome:
    """What one route and one agent run leave for scoring.

    Attributes
    ----------
    destination
        ``(lat, lng)`` of the destination place.
    intersections
        ``(lat, lng)`` of each intersection, in route order.
    gold_start
        The gold first action, ``turn_direction(<compass word of the first leg>)``.
    gold_turns
        The gold action at each intersection (``turn_direction(<next leg's word>)``).
    trajectory
        The agent's positions ``(lat, lng)``: before each action, then the final one.
    actions
        The agent's actions in order.
    """

    destination: tuple[float, float]
    intersections: tuple[tuple[float, float], ...]
    gold_start: str
    gold_turns: tuple[str, ...]
    trajectory: tuple[tuple[float, float], ...]
    actions: tuple[str, ...] = field(default=())

    @property
    def final_distance_m(self) -> float:
        """Distance from the final position to the destination."""
        return distance_m(self.trajectory[-1], self.destination)


@dataclass(frozen=True)
class RouteScore:
    """Per-route counts behind the six metrics."""

    success: bool
    start_reaction: bool
    stop_arrival: bool
    intersections: int
    arrived: int
    reacted: int


def score_route(outcome: VlnOutcome) -> RouteScore:
    """Score one route as V-IRL does (a success is correct everywhere)."""
    n = len(outcome.intersections)
    if not outcome.trajectory:
        raise ValueError("a VLN outcome needs at least the start position")
    if outcome.final_distance_m < SUCCESS_RADIUS_M:
        return RouteScore(True, True, True, n, n, n)
    actions = list(outcome.actions)
    start = bool(actions) and actions[0] == outcome.gold_start
    stop = min(distance_m(p, outcome.destination) for p in outcome.trajectory) < STOP_ARRIVE_M
    arrived = reacted = 0
    k = INTERSECTION_REACT_ACTIONS
    for point, gold in zip(outcome.intersections, outcome.gold_turns, strict=True):
        dists = [distance_m(p, point) for p in outcome.trajectory]
        m = min(range(len(dists)), key=dists.__getitem__)
        if dists[m] >= INTERSECTION_ARRIVE_M:
            continue
        arrived += 1
        if gold in actions[max(m - k, 0) : m + k]:
            reacted += 1
    return RouteScore(False, start, stop, n, arrived, reacted)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def vln_metrics(outcomes: Sequence[VlnOutcome]) -> dict[str, float | int | None]:
    """V-IRL's six metrics over a route set, with the counts behind them."""
    scores = [score_route(o) for o in outcomes]
    n = len(scores)
    inter = sum(s.intersections for s in scores)
    arrived = sum(s.arrived for s in scores)
    return {
        "routes": n,
        "success": _ratio(sum(s.success for s in scores), n),
        "start_reaction": _ratio(sum(s.start_reaction for s in scores), n),
        "intersection_arrival": _ratio(arrived, inter),
        "intersection_reaction": _ratio(sum(s.reacted for s in scores), arrived),
        "stop_arrival": _ratio(sum(s.stop_arrival for s in scores), n),
        "stop_reaction": _ratio(sum(s.success for s in scores), n),
        "intersections": inter,
        "intersections_arrived": arrived,
    }

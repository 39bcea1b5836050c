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

Rows of ``flaneur run`` become outcomes with :func:`row_outcome`: the V-IRL actions are
the ``moves`` an agent records (Ling's turns in place) followed by ``forward()`` or
``stop()`` for each environment action (or by the step's own ``turn_direction(...)`` when
the record says so: under ``--protocol paper`` Ling's turns move, as V-IRL's do); for agents
that record no moves (the oracle, the forward baseline) they are derived as V-IRL would see
them: a ``forward()`` per move, preceded by ``turn_direction(<compass word of the move>)``
when that word differs from the way the agent faced.

flaneur's own variant (:mod:`flaneur.metrics.virl`) works on the viewpoint graph instead:
key positions are nodes where the reference path turns by 45° or more, arrival means
*visiting the node*, reaction compares the first action taken at the node with the gold
action there, and every episode is scored (successful ones included).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flaneur.geo import haversine
from flaneur.metrics.summary import wilson_interval
from flaneur.services.directions import compass
from flaneur.tasks.episode import Episode
from flaneur.world.graph import StreetGraph

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
VLN_KEYS = ("key_latlng", "destination_latlng", "milestones")
"""Metadata of an episode that V-IRL's metrics need (``virl-vln`` and ``virl-ling`` sets)."""


def distance_m(a: Sequence[float], b: Sequence[float]) -> float:
    """Great-circle distance in metres between two ``(lat, lng)`` points."""
    return float(haversine(a[0], a[1], b[0], b[1]))


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


def vln_counts(outcomes: Sequence[VlnOutcome]) -> dict[str, tuple[int, int]]:
    """``{metric: (numerator, denominator)}`` of the six metrics over a route set."""
    scores = [score_route(o) for o in outcomes]
    n = len(scores)
    inter = sum(s.intersections for s in scores)
    arrived = sum(s.arrived for s in scores)
    success = sum(s.success for s in scores)
    return {
        "success": (success, n),
        "start_reaction": (sum(s.start_reaction for s in scores), n),
        "intersection_arrival": (arrived, inter),
        "intersection_reaction": (sum(s.reacted for s in scores), arrived),
        "stop_arrival": (sum(s.stop_arrival for s in scores), n),
        "stop_reaction": (success, n),
    }


def vln_figures(outcomes: Sequence[VlnOutcome]) -> dict[str, dict[str, Any]]:
    """The six metrics, each ``{"value", "n", "ci95"}`` (Wilson interval over its
    denominator; ``None`` value and interval when the denominator is 0)."""
    out: dict[str, dict[str, Any]] = {}
    for name, (hits, n) in vln_counts(outcomes).items():
        if not n:
            out[name] = {"value": None, "n": 0, "ci95": None}
            continue
        lo, hi = wilson_interval(hits, n)
        out[name] = {"value": hits / n, "n": n, "ci95": [round(lo, 4), round(hi, 4)]}
    return out


def has_vln_metadata(episode: Any) -> bool:
    """Whether an episode carries what V-IRL's metrics need (:data:`VLN_KEYS`)."""
    metadata = getattr(episode, "metadata", None) or {}
    return all(metadata.get(k) for k in VLN_KEYS)


def _virl_actions(
    states: Sequence[tuple[int, float]], row: Mapping[str, Any], facing: float
) -> tuple[list[int], list[str]]:
    """``(node before each V-IRL action, actions)`` of a row (see the module docstring)."""
    records = list(row.get("records") or [])
    nodes: list[int] = []
    actions: list[str] = []
    for i, taken in enumerate(row.get("actions") or []):
        if i + 1 >= len(states):
            break
        here, (there, heading) = states[i][0], states[i + 1]
        record = records[i] if i < len(records) else {}
        if "moves" in record:
            last = str(record.get("parsed_action") or "")
            if not last.startswith("turn_direction("):  # paper: a turn that moves is one
                last = "stop()" if taken == "stop" else "forward()"
            words = [*record["moves"], last]
        elif taken == "stop":
            words = ["stop()"]
        elif there != here:
            words = ["forward()"]
            if compass(heading) != compass(facing):
                words.insert(0, f"turn_direction({compass(heading)})")
            facing = heading
        else:
            words = []  # a turn in place of another scheme: V-IRL sees it with the move
        nodes += [here] * len(words)
        actions += words
    return nodes, actions


def row_outcome(graph: StreetGraph, episode: Episode, row: Mapping[str, Any]) -> VlnOutcome | None:
    """The :class:`VlnOutcome` of one run row of a VLN episode (``None`` for a row without a
    trajectory, e.g. an episode the city cannot start)."""
    trajectory = row.get("trajectory") or []
    known = [(graph.index(str(n)), float(h)) for n, h in trajectory if str(n) in graph]
    if not known or len(known) != len(trajectory):
        return None
    nodes, actions = _virl_actions(known, row, float(episode.start_heading))
    nodes.append(known[-1][0])
    items = episode.metadata["milestones"]
    return VlnOutcome(
        destination=tuple(episode.metadata["destination_latlng"]),
        intersections=tuple(tuple(p) for p in episode.metadata["key_latlng"][:-1]),
        gold_start=f"turn_direction({items[0]['heading_words']})",
        gold_turns=tuple(f"turn_direction({m['next_heading_words']})" for m in items[:-1]),
        trajectory=tuple((float(graph.lat[n]), float(graph.lng[n])) for n in nodes),
        actions=tuple(actions),
    )


__all__ = [
    "METRICS",
    "VLN_KEYS",
    "RouteScore",
    "VlnOutcome",
    "distance_m",
    "has_vln_metadata",
    "row_outcome",
    "score_route",
    "vln_counts",
    "vln_figures",
]

"""Peng, V-IRL's route optimizer: a sentence naming places → their best visiting order →
a walk along it in :class:`NavigationEnv` with V-IRL's greedy-bearing rule.

The places are listed by the language model (``--llm``, prompt ``peng/places``), or offline
by a rule of our own design (the sentence is cut at commas, ``and`` and ``then``, each piece
is geocoded, dropping leading words until a name matches). The scenario's ``sentence``
names them (default: the intention); the option ``mode`` sets the minutes (the order is
the metre-shortest whatever the mode). The start is the persona's and stays first; the end is free
(V-IRL drops the last leg back). The walk is V-IRL's point navigator: at each viewpoint take
the navigable heading closest to the bearing of the next key position; a key position is
reached when the walker stands on it; after coming back to where it was two steps before
:data:`MAX_GO_BACKS` (3) times in a row, skip that key position.

Key positions are viewpoints *on the route* (graph nodes, as V-IRL relocates its step ends
onto panoramas): the step ends, every route node where the route bends by
:data:`BEND_DEG` (15°) or more, and a route node every :data:`KEY_EVERY_M` (40 m) — the
counterpart of V-IRL's polyline mode, which sub-samples the route's polyline. Why not the
step ends within 5 m alone (V-IRL's rule on Google panoramas, ``peng_walk_end_reached_virl_rule``
in ``benchmarks/services.py``: about 0.3): OSM maps sidewalks as their own ways, so a turn
is often a 5-10 m crossing that no step end marks, the bearing to the next step end then
points across the block, the walker takes the parallel sidewalk, and abreast of the key
position — 6-7 m away across the street, beyond the 5 m radius — both ways along it are
about 90° off the bearing: it goes back and forth until the key position is skipped, and
every later one with it. And a radius counted a key position as reached from the node
across a crossing (often < 5 m apart), from which the bearing to the next one leads into a
dead end. Standing on the node cannot be fooled that way; :data:`REACHED_M` is the radius
of the benchmark's "ended at the last stop". Our one further addition: a street that led
straight back (A → B → A) is not taken from A again until the next key position is reached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

import numpy as np

from flaneur.agents.base import SolveInfo
from flaneur.agents.virl.common import ScenarioPlanner, node_ids, walking_env
from flaneur.agents.virl.thinking import Thinker
from flaneur.env.state import angular_distance
from flaneur.geo import bearing
from flaneur.models import extract_json
from flaneur.options import Range, option
from flaneur.services.directions import Route, directions_via
from flaneur.services.errors import UnknownPlaceError
from flaneur.services.geocode import GeocodeResult, gazetteer, geocode_one
from flaneur.services.optimize import optimize_order
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City

REACHED_M = 5.0
KEY_EVERY_M = 40.0
BEND_DEG = 15.0
MAX_GO_BACKS = 3
ACCEPT_SCORE = 86.0
_SPLIT = re.compile(r"\s*(?:,|;|\band then\b|\bthen\b|\band\b|\bafter that\b)\s*", re.IGNORECASE)


def places_in_sentence(city: City, sentence: str) -> list[str]:
    """Offline: the place names of a sentence, in order (see the module docstring)."""
    gaz = gazetteer(city)
    names: list[str] = []
    for piece in _SPLIT.split(sentence.strip().rstrip(".!?")):
        words = piece.split()
        for k in range(len(words)):
            phrase = " ".join(words[k:])
            found = gaz.search(phrase, limit=1, kinds=("place", "address"))
            if found and found[0].score >= ACCEPT_SCORE and len(phrase) >= 3:
                if found[0].name not in names:
                    names.append(found[0].name)
                break
    return names


@dataclass
class GreedyWalk:
    """Result of :func:`greedy_bearing_walk`."""

    nodes: list[int]
    reached: list[int]
    skipped: list[int]
    length_m: float


def greedy_bearing_walk(
    city: City,
    start: int,
    key_positions: list[int],
    *,
    step_limit: int | None = None,
    avoid_returns: bool = True,
    reach_m: float | None = None,
) -> GreedyWalk:
    """Walk from viewpoint ``start`` through ``key_positions`` (node indices, in order) in a
    ``headings``-scheme env with V-IRL's rule, in at most ``step_limit`` moves (default
    ``40 + 40`` per key position): the viewpoints visited, the key positions reached and those
    skipped. ``avoid_returns`` (our addition): do not retake a street that led straight back
    until the next key position is reached. ``reach_m``: ``None``, a key position is reached
    by standing on it; a number, by standing within that many metres of it (V-IRL's 5 m
    radius; see the module docstring)."""
    graph = city.graph
    limit = step_limit or 40 + 4 * len(key_positions) * 10
    goal = key_positions[-1] if key_positions else start
    env = walking_env(city, "peng", "follow the key positions", start, goal, steps=limit)
    env.reset()
    nodes, reached, skipped = [start], [], []
    k, backs = 0, 0
    dead: set[tuple[int, int]] = set()

    def at(node: int, key: int) -> bool:
        if reach_m is None:
            return node == key
        return float(np.hypot(*(graph.xy[node] - graph.xy[key]))) <= reach_m

    for _ in range(limit):
        node = env.state.node
        while k < len(key_positions) and at(node, key_positions[k]):
            reached.append(key_positions[k])
            k, backs = k + 1, 0
            dead.clear()  # progress: streets that led back before may be right now
        if k >= len(key_positions):
            env.step(0)
            break
        target = key_positions[k]
        env.step(_greedy_slot(graph, node, target, dead if avoid_returns else set()))
        nodes.append(env.state.node)
        if len(nodes) >= 3 and nodes[-1] == nodes[-3]:
            dead.add((nodes[-1], nodes[-2]))
            backs += 1
            if backs >= MAX_GO_BACKS:
                skipped.append(target)
                k, backs = k + 1, 0
        else:
            backs = 0  # V-IRL counts go-backs in a row
    return GreedyWalk(nodes, reached, skipped, graph.path_length_m(nodes))


def _greedy_slot(graph: Any, node: int, target: int, dead: set[tuple[int, int]]) -> int:
    """The action slot of the street from ``node`` closest to the bearing of ``target``
    (streets in ``dead`` only when every street is)."""
    want = float(bearing(graph.lat[node], graph.lng[node], graph.lat[target], graph.lng[target]))
    heads = graph.out_headings(node).tolist()
    nexts = graph.neighbors(node).tolist()
    options = [s for s in range(len(heads)) if (node, nexts[s]) not in dead]
    options = options or list(range(len(heads)))
    return min(options, key=lambda s: angular_distance(heads[s], want)) + 1


def _heading(graph, a: int, b: int) -> float:
    return float(bearing(graph.lat[a], graph.lng[a], graph.lat[b], graph.lng[b]))


def _left_straight_on(graph, before: int, node: int, after: int) -> bool:
    """Whether ``before → node → after`` takes, at ``node``, the street closest to straight
    on (a node with one way forward always does)."""
    into = _heading(graph, before, node)
    ways = [n for n in graph.neighbors(node).tolist() if n != before]
    if not ways or after == before:
        return True  # a dead end, or a turn back (a bend of 180 degrees)
    straightest = min(ways, key=lambda n: float(angular_distance(_heading(graph, node, n), into)))
    return straightest == after


def key_positions(
    city: City, route: Route, key_every_m: float = KEY_EVERY_M, bend_deg: float = BEND_DEG
) -> list[int]:
    """Key positions of ``route`` for the walk (route nodes, in order).

    Its step ends; with ``bend_deg > 0`` every route node where the route bends by that
    much or more, and the first node past a junction where the route does not take the
    street closest to straight on (a fork); with ``key_every_m > 0`` one every that many
    metres. Both ``0`` gives V-IRL's step ends.
    """
    ends = set(route.key_positions)
    graph = city.graph
    nodes = list(route.nodes)
    out: list[int] = []
    since = 0.0
    for i in range(1, len(nodes)):
        a, b = nodes[i - 1], nodes[i]
        since += float(np.hypot(*(graph.xy[b] - graph.xy[a])))
        bend = fork = False
        if bend_deg > 0 and i + 1 < len(nodes):
            c = nodes[i + 1]
            turn = float(angular_distance(_heading(graph, a, b), _heading(graph, b, c)))
            bend = turn >= bend_deg
        if bend_deg > 0 and i >= 2:
            fork = not _left_straight_on(graph, nodes[i - 2], a, b)
        due = key_every_m > 0 and since >= key_every_m
        if b in ends or i == len(nodes) - 1 or bend or fork or due:
            out.append(b)
            since = 0.0
    return out


async def list_places(thinker: Thinker, city: City, sentence: str, background: str) -> list[str]:
    """Place names in the sentence (the model's list, else the offline rule)."""
    reply = await thinker.ask("places", sentence=sentence, background=background)
    if reply is not None:
        items = extract_json(reply, want=list)
        if items and all(isinstance(x, str) for x in items):
            names = [x.strip() for x in items if x.strip()]
            if names:
                return names
        thinker.fell_back()
    return places_in_sentence(city, sentence)


@dataclass(frozen=True)
class PengOptions:
    """Peng's options (``flaneur virl peng FILE mode=bicycling``)."""

    mode: Literal["walking", "bicycling", "driving"] = option(
        "walking", "travel mode: minutes at the directions speeds (5, 15, 30 km/h)"
    )
    key_every_m: Annotated[float, Range(0, 1000)] = option(
        KEY_EVERY_M, "a key position every this many metres of the route (0: none)"
    )
    bend_deg: Annotated[float, Range(0, 180)] = option(
        BEND_DEG, "a key position where the route bends this much (0: none, nor forks)"
    )


def _leg(route: Route) -> dict[str, float]:
    return {"length_m": round(route.distance_m, 1), "minutes": round(route.duration_s / 60, 1)}


class PengAgent(ScenarioPlanner):
    """The route optimizer on ``virl-peng`` scenarios (see the module docstring)."""

    name: ClassVar[str] = "peng"
    solves: ClassVar[tuple[str, ...]] = ("virl-peng",)
    Options: ClassVar[type] = PengOptions

    async def solve(self, item: TaskItem, info: SolveInfo) -> dict[str, Any]:
        """List the sentence's places, order them, walk the order."""
        city, mode = info.city, self.options.mode
        scene = self.begin(item, info)
        start, label, thinker = scene.start, scene.label, scene.thinker
        sentence = str(item.get("sentence") or "") or scene.persona.intention
        names = await list_places(thinker, city, sentence, scene.persona.background)
        if not names:
            raise UnknownPlaceError(sentence)
        found: list[GeocodeResult] = [geocode_one(city, n) for n in names]
        stops = [start, *(f.node for f in found)]
        labels = [label, *(f.name for f in found)]
        ordered, result = optimize_order(city.graph, stops, labels=labels)
        given = directions_via(city, stops, mode=mode)
        best = directions_via(city, ordered, mode=mode)
        keys = key_positions(city, best, self.options.key_every_m, self.options.bend_deg)
        walk = greedy_bearing_walk(city, start, keys)
        off = float(np.hypot(*(city.graph.xy[walk.nodes[-1]] - city.graph.xy[best.nodes[-1]])))
        return {
            "start": label,
            "sentence": sentence,
            "mode": mode,
            "places": [{**f.to_dict(), "node_id": node_ids(city, [f.node])[0]} for f in found],
            "stops": node_ids(city, stops),
            "given_order": labels,
            "order": list(result.order),
            "optimized_order": [labels[i] for i in result.order],
            "given": {**_leg(given), "node_ids": node_ids(city, list(given.nodes))},
            "optimized": _leg(best),
            "saving_minutes": round((given.duration_s - best.duration_s) / 60, 1),
            "route": best.to_dict(city),
            "walk": {
                "node_ids": node_ids(city, walk.nodes),
                "length_m": round(walk.length_m, 1),
                "key_positions_reached": len(walk.reached),
                "key_positions_skipped": len(walk.skipped),
                "key_positions": len(keys),
                "ended_at_last_stop": off <= REACHED_M,
            },
            "records": thinker.records,
        }


__all__ = [
    "REACHED_M",
    "GreedyWalk",
    "PengAgent",
    "PengOptions",
    "greedy_bearing_walk",
    "key_positions",
    "list_places",
    "places_in_sentence",
]

"""Peng, V-IRL's route optimizer: a sentence naming places → their best visiting order →
a walk along it in :class:`NavigationEnv` with V-IRL's greedy-bearing rule.

The places are listed by the language model, or offline by a rule of our own design (the
sentence is cut at commas, ``and`` and ``then``, each piece is geocoded, dropping leading
words until a name matches). The start is the persona's and stays first; the end is free
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
from typing import Any

import numpy as np

from flaneur.agents.virl.common import Thinker, prompt_template
from flaneur.env.navigation_env import NavigationEnv
from flaneur.env.state import angular_distance
from flaneur.geo import bearing
from flaneur.models import extract_json
from flaneur.services.directions import Route, directions_via
from flaneur.services.geocode import GeocodeResult, gazetteer, geocode_one
from flaneur.services.optimize import optimize_order
from flaneur.tasks.episode import Episode
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
    """Walk through ``key_positions`` in a ``headings``-scheme env with V-IRL's rule.

    Parameters
    ----------
    city
        The city.
    start
        Start viewpoint (node index).
    key_positions
        Viewpoints to pass in order (node indices).
    step_limit
        Moves allowed (default ``40 + 40`` per key position).
    avoid_returns
        Our addition: do not retake a street that led straight back until the next key
        position is reached.
    reach_m
        ``None``: a key position is reached by standing on it; a number: by standing within
        that many metres of it (V-IRL's 5 m radius; see the module docstring).

    Returns
    -------
    GreedyWalk
        The viewpoints visited and the key positions reached and skipped.
    """
    graph = city.graph
    limit = step_limit or 40 + 4 * len(key_positions) * 10
    episode = Episode(
        id="peng",
        city=city.name,
        instruction="follow the key positions",
        start_node=str(graph.ids[start]),
        start_heading=0.0,
        goal_nodes=(str(graph.ids[key_positions[-1] if key_positions else start]),),
        max_steps=limit + 1,
    )
    env = NavigationEnv(city, episode, scheme="headings")
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
        want = float(
            bearing(graph.lat[node], graph.lng[node], graph.lat[target], graph.lng[target])
        )
        heads = graph.out_headings(node).tolist()
        nexts = graph.neighbors(node).tolist()
        options = [
            s for s in range(len(heads)) if not avoid_returns or (node, nexts[s]) not in dead
        ] or list(range(len(heads)))
        slot = min(options, key=lambda s: angular_distance(heads[s], want)) + 1
        env.step(slot)
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
    city: City,
    route: Route,
    key_every_m: float = KEY_EVERY_M,
    bend_deg: float = BEND_DEG,
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
        if (
            b in ends
            or i == len(nodes) - 1
            or bend
            or fork
            or (key_every_m > 0 and since >= key_every_m)
        ):
            out.append(b)
            since = 0.0
    return out


class Peng:
    """The route optimizer."""

    def __init__(
        self,
        city: City,
        thinker: Thinker | None = None,
        *,
        key_every_m: float = KEY_EVERY_M,
        bend_deg: float = BEND_DEG,
    ) -> None:
        self.city = city
        self.thinker = thinker or Thinker()
        self.key_every_m = key_every_m
        self.bend_deg = bend_deg

    def list_places(self, sentence: str, background: str = "") -> list[str]:
        """Place names in the sentence (LLM, else the offline rule)."""
        reply = self.thinker.ask(
            prompt_template("peng_places").format(sentence=sentence, background=background)
        )
        if reply is not None:
            items = extract_json(reply, want=list)
            if items and all(isinstance(x, str) for x in items):
                return [x.strip() for x in items if x.strip()]
            self.thinker.fell_back()
        return places_in_sentence(self.city, sentence)

    def run(
        self,
        start: int,
        start_label: str,
        sentence: str,
        background: str = "",
        mode: str = "walking",
    ) -> dict[str, Any]:
        """Plan and walk; the result as a JSON-ready dict."""
        names = self.list_places(sentence, background)
        if not names:
            from flaneur.errors import FlaneurError

            raise FlaneurError(f"no place of {self.city.name} found in {sentence!r}")
        found: list[GeocodeResult] = [geocode_one(self.city, n) for n in names]
        stops = [start, *(f.node for f in found)]
        labels = [start_label, *(f.name for f in found)]
        ordered, result = optimize_order(self.city.graph, stops, labels=labels)
        given: Route = directions_via(self.city, stops, mode=mode)
        best: Route = directions_via(self.city, ordered, mode=mode)
        keys = key_positions(self.city, best, self.key_every_m, self.bend_deg)
        walk = greedy_bearing_walk(self.city, start, keys)
        return {
            "places": [f.to_dict() for f in found],
            "given_order": labels,
            "optimized_order": [labels[i] for i in result.order],
            "given": {
                "length_m": round(given.distance_m, 1),
                "minutes": round(given.duration_s / 60, 1),
            },
            "optimized": {
                "length_m": round(best.distance_m, 1),
                "minutes": round(best.duration_s / 60, 1),
            },
            "saving_minutes": round((given.duration_s - best.duration_s) / 60, 1),
            "route": best.to_dict(self.city),
            "walk": {
                "nodes": walk.nodes,
                "length_m": round(walk.length_m, 1),
                "key_positions_reached": len(walk.reached),
                "key_positions_skipped": len(walk.skipped),
                "key_positions": len(keys),
                "ended_at_last_stop": bool(
                    float(
                        np.hypot(
                            *(
                                self.city.graph.xy[walk.nodes[-1]]
                                - self.city.graph.xy[best.nodes[-1]]
                            )
                        )
                    )
                    <= REACHED_M
                ),
            },
            "_given_nodes": list(given.nodes),
        }

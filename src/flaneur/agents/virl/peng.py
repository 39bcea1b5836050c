"""Peng, V-IRL's route optimizer: a sentence naming places → their best visiting order →
a walk along it in :class:`NavigationEnv` with V-IRL's greedy-bearing rule.

The places are listed by the language model, or offline by a rule of our own design (the
sentence is cut at commas, ``and`` and ``then``, each piece is geocoded, dropping leading
words until a name matches). The start is the persona's and stays first; the end is free
(V-IRL drops the last leg back). The walk: at each viewpoint take the navigable heading
closest to the bearing of the next key position (the step ends of the route); a key position
is reached within :data:`REACHED_M` (5 m); after coming back to where it was two steps
before :data:`MAX_GO_BACKS` (3) times, skip that key position. Our one addition: on a bent
street the bearing to a far step end can point across blocks, so a route viewpoint every
:data:`KEY_EVERY_M` (40 m) along the route is a key position too (``key_every_m=0`` gives
V-IRL's step ends only), and a street that led straight back (A → B → A) is not taken
from A again until the next key position is reached.
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
) -> GreedyWalk:
    """Walk through ``key_positions`` in a ``headings``-scheme env with V-IRL's rule
    (``avoid_returns=False`` and key positions at step ends only: V-IRL's rule exactly)."""
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
    for _ in range(limit):
        node = env.state.node
        while (
            k < len(key_positions)
            and float(np.hypot(*(graph.xy[node] - graph.xy[key_positions[k]]))) <= REACHED_M
        ):
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
    return GreedyWalk(nodes, reached, skipped, graph.path_length_m(nodes))


def key_positions(city: City, route: Route, key_every_m: float = KEY_EVERY_M) -> list[int]:
    """Step ends of ``route``, plus a route viewpoint every ``key_every_m`` metres (0: none)."""
    ends = set(route.key_positions)
    out: list[int] = []
    since = 0.0
    graph = city.graph
    for a, b in zip(route.nodes[:-1], route.nodes[1:], strict=True):
        since += float(graph.lengths[graph.edge_index(a, b)])
        if b in ends or (key_every_m > 0 and since >= key_every_m):
            out.append(b)
            since = 0.0
    return out


class Peng:
    """The route optimizer."""

    def __init__(
        self, city: City, thinker: Thinker | None = None, *, key_every_m: float = KEY_EVERY_M
    ) -> None:
        self.city = city
        self.thinker = thinker or Thinker()
        self.key_every_m = key_every_m

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
        keys = key_positions(self.city, best, self.key_every_m)
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
            },
            "_given_nodes": list(given.nodes),
        }

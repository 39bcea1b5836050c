"""Ling, V-IRL's tourist: follows Local's instruction in a :class:`NavigationEnv`.

Actions are V-IRL's: ``forward()``, ``turn_direction(<compass word>)`` and ``stop()``. The
:class:`CompassAdapter` maps them onto the ``headings`` scheme: a turn only changes the way
Ling faces (no env step), ``forward()`` takes the street whose heading is closest to where
she faces (never the one back unless it is the only one), ``stop()`` is slot 0.

Observations are V-IRL's: ``"There is a N-way intersection."`` only near a key position of
the route with more than 2 streets, and ``"<landmark> is on your <direction>."`` for the
landmarks of the instruction visible from where she stands (offline recogniser: the place of
that name within :data:`LANDMARK_SIGHT_M`, V-IRL's oracle row), else ``"No landmarks
nearby."``. She stops early after 5 turns in a row or 6 moves away from every key position,
and at the step limit. Success is stopping within :data:`SUCCESS_RADIUS_M` (25 m) of the
destination (:func:`goal_position`); on failure she asks a new Local from where she stands
(bounded attempts).

Offline, her policy is a rule of our own design: the instruction, in any wording, is parsed
into legs (:mod:`flaneur.agents.virl.instruction_parse`); she faces each leg's compass
direction or turns to the street its relative turn names, walks until what ends the leg (a
distance, the N-th junction, a landmark in sight at a junction or passed, a street sign)
and stops after the last. :func:`instruction_legs` reads Local's template wording only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from flaneur.agents.virl.common import Thinker, prompt_template
from flaneur.agents.virl.instruction_parse import TURN_OFFSET, Leg, parse_instruction
from flaneur.agents.virl.local import Direction, Local, relative8
from flaneur.env.navigation_env import NavigationEnv
from flaneur.env.state import angular_distance, relative_angle
from flaneur.services.directions import COMPASS, compass
from flaneur.services.geocode import GeocodeResult, gazetteer, normalize
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

SUCCESS_RADIUS_M = 25.0
DEST_VIEWPOINT_M = 20.0
LANDMARK_SIGHT_M = 20.0
KEY_POSITION_NEAR_M = 10.0
MAX_TURNS_IN_A_ROW = 5
MAX_STEPS_AWAY = 6
STEP_LIMIT = 30
LEG_SLACK_M = 10.0
"""The rule ends a leg this many metres before its told distance (viewpoints ~20 m apart)."""
REFACE_DEG = 60.0
TURN_SEEK_M = 25.0
"""A relative turn told where no street branches off is taken at the next intersection
within this many metres."""
LAST_LEG_M = 120.0
"""A last leg with no end in the text ends where the destination is seen, or after this."""
"""The offline rule faces the leg's direction again when the street bends more than this."""
_COMPASS_WORDS = "|".join(sorted(COMPASS, key=len, reverse=True))  # "south-west" before "south"
_LEG = re.compile(r"face\s+(" + _COMPASS_WORDS + r")\b[^.]*?walk about\s+(\d+)\s*m", re.IGNORECASE)
_ACTION = re.compile(
    r"(forward)\s*\(\s*\)|turn_direction\s*\(\s*['\"]?([a-z-]+)['\"]?\s*\)|"
    r"(stop)\s*\(\s*\)",
    re.IGNORECASE,
)
COMPASS_DEG = {word: 45.0 * i for i, word in enumerate(COMPASS)}


class CompassAdapter:
    """V-IRL's compass actions on the ``headings`` scheme of a :class:`NavigationEnv`."""

    def __init__(self, env: NavigationEnv) -> None:
        self.env = env

    def forward_slot(self, facing: float, came_from: int | None) -> int:
        """Slot of the street closest to ``facing``, avoiding the way back when possible."""
        graph = self.env.city.graph
        node = self.env.state.node
        targets = graph.neighbors(node).tolist()
        heads = graph.out_headings(node).tolist()
        order = sorted(range(len(heads)), key=lambda k: angular_distance(heads[k], facing))
        ahead = [k for k in order if targets[k] != came_from] or order
        return ahead[0] + 1


def parse_action(text: str) -> tuple[str, str] | None:
    """``("forward", "")``, ``("turn", "<compass>")`` or ``("stop", "")`` from a reply."""
    match = _ACTION.search(text or "")
    if not match:
        return None
    if match.group(1):
        return ("forward", "")
    if match.group(3):
        return ("stop", "")
    word = match.group(2).lower().replace("_", "-")
    word = {
        "northeast": "north-east",
        "northwest": "north-west",
        "southeast": "south-east",
        "southwest": "south-west",
    }.get(word, word)
    return ("turn", word) if word in COMPASS_DEG else None


def instruction_legs(instruction: str) -> list[tuple[str, float]]:
    """``[(compass word, metres), ...]`` of an instruction in the template's wording."""
    return [(m.group(1).lower(), float(m.group(2))) for m in _LEG.finditer(instruction)]


def landmarks_in(city: City, instruction: str) -> list[str]:
    """Place names of the city that appear word for word in the instruction (offline)."""
    text = f" {normalize(instruction)} "
    found: dict[str, str] = {}
    gaz = gazetteer(city)
    for name, kind, key in zip(gaz.names, gaz.kinds, gaz.keys, strict=True):
        if kind == "place" and len(key) >= 4 and f" {key} " in text:
            found.setdefault(key, name)
    return list(found.values())


def goal_position(city: City, goal: GeocodeResult) -> np.ndarray:
    """Where success is measured: the place, or its viewpoint when the place lies more than
    :data:`DEST_VIEWPOINT_M` from every viewpoint (inside a large building or park)."""
    node_xy = city.graph.xy[goal.node]
    if goal.place_row < 0:
        return node_xy
    place_xy = city.places.xy[goal.place_row]
    return place_xy if float(np.hypot(*(place_xy - node_xy))) <= DEST_VIEWPOINT_M else node_xy


@dataclass
class Attempt:
    """One try at following one instruction."""

    direction: Direction
    nodes: list[int] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    ended: str = ""
    distance_to_goal_m: float = float("inf")

    def to_dict(self, city: City) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "direction": self.direction.to_dict(city),
            "nodes": self.nodes,
            "actions": self.actions,
            "observations": self.observations,
            "ended": self.ended,
            "distance_to_goal_m": round(self.distance_to_goal_m, 1),
        }


class Ling:
    """The tourist.

    Parameters
    ----------
    city
        The city.
    thinker
        Language model wrapper (offline when it has no model).
    step_limit
        Actions per attempt (V-IRL: 30, 40 in its benchmark).
    max_asks
        How many times she may ask a Local (the first question included).
    """

    def __init__(
        self,
        city: City,
        thinker: Thinker | None = None,
        *,
        step_limit: int = STEP_LIMIT,
        max_asks: int = 3,
    ) -> None:
        self.city = city
        self.thinker = thinker or Thinker()
        self.step_limit = step_limit
        self.max_asks = max_asks

    # ------------------------------------------------------------------ observations
    def _observe(
        self, node: int, facing: float, key_positions: set[int], landmarks: list[str]
    ) -> str:
        return self._look(node, facing, key_positions, landmarks)[0]

    def _look(
        self, node: int, facing: float, key_positions: set[int], landmarks: list[str]
    ) -> tuple[str, set[str]]:
        graph, places = self.city.graph, self.city.places
        parts = []
        near_key = any(
            float(np.hypot(*(graph.xy[node] - graph.xy[k]))) <= KEY_POSITION_NEAR_M
            for k in key_positions
        )
        if near_key and graph.degree[node] > 2:
            parts.append(f"There is a {int(graph.degree[node])}-way intersection.")
        wanted = {normalize(x) for x in landmarks}
        rows, _ = places.within(graph.xy[node], LANDMARK_SIGHT_M)
        seen = []
        for row in rows.tolist():
            key = normalize(str(places.names[row]))
            if key and key in wanted and key not in seen:
                seen.append(key)
                dx, dy = places.xy[row] - graph.xy[node]
                where = relative8(relative_angle(float(np.degrees(np.arctan2(dx, dy))), facing))
                parts.append(f"{places.names[row]} is on your {where}.")
        if not seen:
            parts.append("No landmarks nearby.")
        return " ".join(parts), set(seen)

    def _landmarks(self, instruction: str) -> list[str]:
        reply = self.thinker.ask(prompt_template("ling_landmarks").format(instruction=instruction))
        if reply is not None:
            start, end = reply.find("["), reply.rfind("]")
            try:
                items = json.loads(reply[start : end + 1]) if start >= 0 < end else None
            except json.JSONDecodeError:
                items = None
            if isinstance(items, list):
                return [str(x) for x in items if str(x).strip()]
            self.thinker.fell_back()
        return landmarks_in(self.city, instruction)

    def _leg_done(
        self,
        plan: list[Leg],
        leg: int,
        node: int,
        walked_m: float,
        crossings: int,
        seen: set[str],
        seen_past: bool,
        goal_key: str,
    ) -> bool:
        """Whether the offline rule has finished leg ``leg`` of ``plan`` at ``node``."""
        step = plan[leg]
        if step.metres is not None:
            return walked_m >= step.metres - LEG_SLACK_M
        if step.intersections:
            return crossings >= step.intersections
        if step.until:  # in sight, at a junction (turns are taken at intersections)
            return normalize(step.until) in seen and int(self.city.graph.degree[node]) > 2
        if step.past:
            return seen_past and normalize(step.past) not in seen
        if step.street:
            return self._on_street(node, step.street) and walked_m > 0
        if leg + 1 < len(plan):
            return crossings >= 1  # "turn left, then ...": at the next intersection
        return goal_key in seen or walked_m >= LAST_LEG_M

    def _turn_way(self, node: int, facing: float, turn: str, came_from: int | None) -> str:
        """The compass word for a relative turn (``"left"``, ...) at ``node``.

        Of the streets not leading back, the one closest to the turned heading; then the
        compass word closest to that street among those for which ``forward()`` takes it
        (the 8 words are coarse: a street at 200° is "south", but "south" may pick another).
        """
        want = facing + TURN_OFFSET.get(turn, 0.0)
        graph = self.city.graph
        heads = graph.out_headings(node).tolist()
        targets = graph.neighbors(node).tolist()
        ways = [k for k, t in enumerate(targets) if t != came_from or turn == "around"] or list(
            range(len(heads))
        )
        if not turn or not heads:
            return compass(want)
        street = min(ways, key=lambda k: float(angular_distance(heads[k], want)))
        for word in sorted(
            COMPASS, key=lambda w: float(angular_distance(COMPASS_DEG[w], heads[street]))
        ):
            taken = min(ways, key=lambda k: float(angular_distance(heads[k], COMPASS_DEG[word])))
            if taken == street:
                return word
        return compass(heads[street])

    def _on_street(self, node: int, street: str) -> bool:
        """Whether a street leaving ``node`` carries the name (a street sign read)."""
        names = self.city.edge_streets
        if not len(names):
            return False
        graph = self.city.graph
        want = normalize(street)
        here = names[graph.indptr[node] : graph.indptr[node + 1]].tolist()
        return any(want and normalize(n).startswith(want) for n in here if n)

    # ------------------------------------------------------------------ one attempt
    def follow(self, direction: Direction, start: int, heading: float) -> Attempt:
        """Follow one instruction from ``start`` facing ``heading``."""
        city, graph = self.city, self.city.graph
        goal_xy = goal_position(city, direction.destination)
        episode = Episode(
            id="ling",
            city=city.name,
            instruction=direction.instruction,
            start_node=str(graph.ids[start]),
            start_heading=float(heading),
            goal_nodes=(str(graph.ids[direction.destination.node]),),
            max_steps=self.step_limit + 1,
        )
        env = NavigationEnv(city, episode, scheme="headings")
        env.reset()
        adapter = CompassAdapter(env)
        attempt = Attempt(direction, nodes=[start])
        keys = set(direction.route.key_positions)
        key_list = sorted(keys)
        landmarks = self._landmarks(direction.instruction)
        keyed = {normalize(x): x for x in landmarks}

        def find(phrase: str) -> list[str]:
            text = f" {normalize(phrase)} "
            return [name for key, name in keyed.items() if f" {key} " in text]

        plan = parse_instruction(direction.instruction, find)
        goal_key = normalize(direction.destination.name)
        leg, walked_leg, walked, crossings = 0, 0.0, 0.0, 0
        leg_way, leg_faced, last_way = "", -1, ""
        seen_past, moved = False, True
        facing = float(heading)
        came_from: int | None = None
        turns_in_a_row = away = 0
        best = {k: float(np.hypot(*(graph.xy[start] - graph.xy[k]))) for k in key_list}
        ended = "step_limit"
        for _ in range(self.step_limit):
            node = env.state.node
            observation, seen = self._look(
                node, facing, keys, [*landmarks, direction.destination.name]
            )
            attempt.observations.append(observation)
            # the offline rule (also the fallback for unusable model replies)
            if leg < len(plan):
                seen_past = seen_past or normalize(plan[leg].past) in seen
                if self._leg_done(
                    plan, leg, node, walked_leg, crossings, seen, seen_past, goal_key
                ):
                    moved, last_way = walked_leg > 0, leg_way
                    leg, walked_leg, crossings, leg_way, seen_past = leg + 1, 0.0, 0, "", False
            sideways = plan[leg].turn not in ("", "straight") if leg < len(plan) else False
            if leg >= len(plan):
                rule = ("stop", "")
            elif (
                not leg_way
                and sideways
                and moved
                and graph.degree[node] <= 2
                and walked_leg < TURN_SEEK_M
            ):
                rule = ("forward", "")  # "turn left": at the next intersection
            else:
                if not leg_way:
                    ahead = facing if moved or not last_way else COMPASS_DEG[last_way]
                    if plan[leg].direction or plan[leg].turn != "straight" or not last_way:
                        leg_way = plan[leg].direction or self._turn_way(
                            node, ahead, plan[leg].turn, came_from
                        )
                    else:
                        leg_way = last_way  # "carry straight on": the way of the last leg
                    walked_leg = 0.0 if sideways else walked_leg
                if (leg_faced != leg and compass(facing) != leg_way) or angular_distance(
                    facing, COMPASS_DEG[leg_way]
                ) > REFACE_DEG:
                    rule = ("turn", leg_way)
                else:
                    rule = ("forward", "")
                leg_faced = leg
            action = rule
            if self.thinker.online:
                reply = self.thinker.ask(
                    prompt_template("ling_action").format(
                        instruction=direction.instruction,
                        landmarks=", ".join(landmarks) or "none",
                        walked_m=round(walked),
                        heading_words=compass(facing),
                        observation=observation,
                        history=", ".join(attempt.actions[-5:]) or "none",
                    )
                )
                parsed = parse_action(reply or "")
                if parsed is None:
                    self.thinker.fell_back()
                else:
                    action = parsed
            if action[0] == "stop":
                attempt.actions.append("stop()")
                env.step(0)
                ended = "stopped"
                break
            if action[0] == "turn":
                attempt.actions.append(f"turn_direction({action[1]})")
                facing = COMPASS_DEG[action[1]]
                turns_in_a_row += 1
                if turns_in_a_row >= MAX_TURNS_IN_A_ROW:
                    ended = "too_many_turns"
                    break
                continue
            turns_in_a_row = 0
            slot = adapter.forward_slot(facing, came_from)
            env.step(slot)
            attempt.actions.append("forward()")
            came_from, new = node, env.state.node
            step_m = float(np.hypot(*(graph.xy[new] - graph.xy[node])))
            walked += step_m
            walked_leg += step_m
            crossings += int(graph.degree[new] > 2)
            facing = env.state.heading
            attempt.nodes.append(new)
            dists = {k: float(np.hypot(*(graph.xy[new] - graph.xy[k]))) for k in key_list}
            if key_list and all(dists[k] > best[k] for k in key_list):
                away += 1
            else:
                away = 0
            best = {k: min(best[k], dists[k]) for k in key_list}
            if away >= MAX_STEPS_AWAY:
                ended = "moving_away"
                break
        attempt.ended = ended
        attempt.distance_to_goal_m = float(np.hypot(*(graph.xy[env.state.node] - goal_xy)))
        return attempt

    # ------------------------------------------------------------------ the whole task
    def travel(
        self,
        local: Local,
        question: str,
        start: int,
        heading: float = 0.0,
        destination: GeocodeResult | None = None,
    ) -> dict[str, Any]:
        """Ask Local, follow, and ask again from where she stands on failure."""
        attempts: list[Attempt] = []
        node, facing = start, heading
        goal = destination
        for _ in range(self.max_asks):
            direction = local.answer(question, node, destination=goal)
            goal = direction.destination
            attempt = self.follow(direction, node, facing)
            attempts.append(attempt)
            if attempt.ended == "stopped" and attempt.distance_to_goal_m <= SUCCESS_RADIUS_M:
                break
            node = attempt.nodes[-1]
            if len(attempt.nodes) > 1:
                a, b = attempt.nodes[-2], attempt.nodes[-1]
                facing = float(self.city.graph.headings[self.city.graph.edge_index(a, b)])
        last = attempts[-1]
        return {
            "success": last.ended == "stopped" and last.distance_to_goal_m <= SUCCESS_RADIUS_M,
            "first_attempt_success": attempts[0].ended == "stopped"
            and attempts[0].distance_to_goal_m <= SUCCESS_RADIUS_M,
            "asks": len(attempts),
            "attempts": attempts,
        }

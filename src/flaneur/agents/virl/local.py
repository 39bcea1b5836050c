"""Local, V-IRL's direction giver: a question → a destination → a route → milestones → an
instruction.

At each key position of the route but the last, Local picks a landmark: the most prominent
named place within :data:`LANDMARK_RADIUS_M` (18 m, as V-IRL), ties to the nearest. Each key
position becomes a *milestone* (intersection size, the landmark and its direction relative
to the walker, the leg distance, the heading before and the next heading in degrees and
compass words); the last milestone says where the destination is. The instruction is
written from the milestones by the language model, or offline by a deterministic template
over the same milestones (our own wording).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Any

from flaneur.agents.virl.common import Thinker, prompt_template
from flaneur.agents.virl.instruction_parse import parse_instruction
from flaneur.env.state import relative_angle
from flaneur.services.directions import Route, compass, directions
from flaneur.services.geocode import GeocodeResult, geocode_one
from flaneur.services.nearby import prominence
from flaneur.world.city import City

LANDMARK_RADIUS_M = 18.0
DESTINATION_SCORE = 86.0
"""Geocode score (0-100) the model's destination name needs; a looser match (a whole
sentence matched fuzzily to some place) is not used."""
RELATIVE8 = (
    "front",
    "front-right",
    "right",
    "back-right",
    "back",
    "back-left",
    "left",
    "front-left",
)
_QUESTION = re.compile(
    r"(?:get|go|walk|way|directions|route|take me)\s+(?:back\s+)?(?:to|towards?)\s+(?:the\s+)?"
    r"(?P<a>.+?)[?.!]*$|where\s+is\s+(?:the\s+)?(?P<b>.+?)[?.!]*$",
    re.IGNORECASE,
)


def relative8(relative: float) -> str:
    """The 8-way relative direction of a signed angle (negative = left)."""
    return RELATIVE8[int(((relative % 360.0) + 22.5) // 45.0) % 8]


def destination_from_question(question: str) -> str:
    """The destination phrase of a question (``"How do I get to Kiasma?"`` → ``"Kiasma"``)."""
    match = _QUESTION.search(question.strip())
    if match:
        return (match.group("a") or match.group("b")).strip()
    return question.strip().rstrip("?.!")


def landmark_at(
    city: City, node: int, *, radius_m: float = LANDMARK_RADIUS_M, exclude: int = -1
) -> int:
    """Row of the most prominent named place within ``radius_m`` of ``node`` (-1 if none)."""
    places = city.places
    rows, dist = places.within(city.graph.xy[node], radius_m)
    best, best_key = -1, None
    for row, d in zip(rows.tolist(), dist.tolist(), strict=True):
        if not places.names[row] or row == exclude:
            continue
        key = (-prominence(places.tags[row]), d)
        if best_key is None or key < best_key:
            best, best_key = row, key
    return best


def _bearing_xy(city: City, node: int, xy: Any) -> float:
    dx, dy = xy[0] - city.graph.xy[node][0], xy[1] - city.graph.xy[node][1]
    return math.degrees(math.atan2(dx, dy)) % 360.0


def milestones(city: City, route: Route, destination: GeocodeResult) -> list[dict[str, Any]]:
    """V-IRL's milestone list for a route (one per key position)."""
    graph = city.graph
    out: list[dict[str, Any]] = []
    steps = route.steps
    for i, step in enumerate(steps):
        last_edge = graph.edge_index(step.nodes[-2], step.nodes[-1])
        heading_before = float(graph.headings[last_edge])
        item: dict[str, Any] = {
            "index": i + 1,
            "node": step.end_node,
            "distance_m": round(step.distance_m),
            "heading": round(step.heading),
            "heading_words": compass(step.heading),
            "street": step.street,
            "intersection": int(graph.degree[step.end_node]),
        }
        if i + 1 < len(steps):
            nxt = steps[i + 1].heading
            item["next_heading"] = round(nxt)
            item["next_heading_words"] = compass(nxt)
            item["turn"] = relative8(relative_angle(nxt, heading_before))
            row = landmark_at(city, step.end_node, exclude=destination.place_row)
            if row >= 0:
                where = _bearing_xy(city, step.end_node, city.places.xy[row])
                item["landmark"] = str(city.places.names[row])
                item["landmark_direction"] = relative8(relative_angle(where, heading_before))
        else:
            if destination.place_row >= 0:
                where = _bearing_xy(city, step.end_node, city.places.xy[destination.place_row])
                item["destination_direction"] = relative8(relative_angle(where, heading_before))
            item["destination"] = destination.name
        out.append(item)
    return out


def template_instruction(items: list[dict[str, Any]]) -> str:
    """Deterministic instruction over milestones (our own wording, one sentence each)."""
    if not items:
        return "You are already there."
    sentences = [f"Face {items[0]['heading_words']} and walk about {items[0]['distance_m']} m."]
    for prev, item in itertools.pairwise(items):
        where = "At the intersection" if prev["intersection"] > 2 else "Then"
        if "landmark" in prev:
            where += f" with {prev['landmark']} on your {prev['landmark_direction']}"
        sentences.append(
            f"{where}, turn to face {prev['next_heading_words']} and walk about "
            f"{item['distance_m']} m."
        )
    last = items[-1]
    side = last.get("destination_direction")
    sentences.append(
        f"{last['destination']} will be on your {side}."
        if side
        else f"You will arrive at {last['destination']}."
    )
    return " ".join(sentences)


@dataclass
class Direction:
    """Local's answer: destination, route, milestones and the instruction."""

    question: str
    destination: GeocodeResult
    route: Route
    milestones: list[dict[str, Any]]
    instruction: str
    written_by: str

    def to_dict(self, city: City) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "question": self.question,
            "destination": self.destination.to_dict(),
            "route": self.route.to_dict(city),
            "milestones": self.milestones,
            "instruction": self.instruction,
            "written_by": self.written_by,
        }


class Local:
    """The direction giver.

    Parameters
    ----------
    city
        The city.
    thinker
        Language model wrapper (offline when it has no model).
    """

    def __init__(self, city: City, thinker: Thinker | None = None) -> None:
        self.city = city
        self.thinker = thinker or Thinker()

    def destination(self, question: str) -> GeocodeResult:
        """The place the question asks about (LLM extraction online, a pattern offline)."""
        phrase = destination_from_question(question)
        reply = self.thinker.ask(prompt_template("local_destination").format(question=question))
        if reply is not None:
            candidate = reply.strip().strip('"').splitlines()[0].strip() if reply.strip() else ""
            found = None
            if candidate:
                try:
                    found = geocode_one(self.city, candidate)
                except LookupError:
                    found = None
            if found is not None and found.score >= DESTINATION_SCORE:
                return found
            self.thinker.fell_back()  # no reply, no place, or a loose match of a sentence
        return geocode_one(self.city, phrase)

    def answer(
        self, question: str, from_node: int, destination: GeocodeResult | None = None
    ) -> Direction:
        """Directions from viewpoint ``from_node`` for ``question``."""
        goal = destination or self.destination(question)
        route = directions(self.city, from_node, goal.node)
        items = milestones(self.city, route, goal)
        text = template_instruction(items)
        written_by = "template"
        if self.thinker.online:
            lines = "\n".join(str(m) for m in items)
            reply = self.thinker.ask(
                prompt_template("local_instruction").format(question=question, milestones=lines)
            )
            if reply and parse_instruction(reply):
                text, written_by = reply.strip(), "llm"
            elif reply is not None:
                self.thinker.fell_back()  # nothing in it says where to walk: the template
        return Direction(question, goal, route, items, text, written_by)

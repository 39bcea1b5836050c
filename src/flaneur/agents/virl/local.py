"""Local, V-IRL's direction giver: a question → a destination → a route → milestones → an
instruction.

At each key position of the route but the last, Local picks a landmark: the most prominent
named place within ``landmark_radius_m`` (18 m, as V-IRL), ties to the nearest. Each key
position becomes a *milestone* (intersection size, the landmark and its direction relative
to the walker, the leg distance, the heading before and the next heading in degrees and
compass words); the last milestone says where the destination is. The instruction is
written from the milestones by the language model (prompt ``local/instruction``), or offline
by the template of :mod:`flaneur.agents.virl.instructions` over the same milestones.

The destination is the place the question names: offline a pattern (``"How do I get to
Kiasma?"`` → ``Kiasma``) geocoded; with a model, the model names it (``local/destination``)
and its answer is used when it geocodes with a score of at least :data:`DESTINATION_SCORE`.

:class:`LocalAgent` plans ``virl-local`` scenarios (a persona and a question) through the
runner; Ling (:mod:`flaneur.agents.virl.ling`) asks the same :func:`give_directions`, and
the VLN route collector (:mod:`flaneur.bench.vln_routes`) writes its instructions with
:func:`template_direction`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from flaneur.agents.base import SolveInfo
from flaneur.agents.virl.common import ScenarioPlanner
from flaneur.agents.virl.instructions import parse_instruction, relative8, template_instruction
from flaneur.agents.virl.thinking import Thinker
from flaneur.errors import DataError
from flaneur.geo import angle_diff
from flaneur.options import Range, option
from flaneur.services.directions import Route, compass, directions
from flaneur.services.errors import CoordinateError, UnknownPlaceError
from flaneur.services.geocode import GeocodeResult, geocode_one
from flaneur.services.nearby import prominence
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City

LANDMARK_RADIUS_M = 18.0
"""V-IRL's landmark radius around a key position."""
DESTINATION_SCORE = 86.0
"""Geocode score (0-100) the model's destination name needs; a looser match (a whole
sentence matched fuzzily to some place) is not used."""
_QUESTION = re.compile(
    r"(?:get|go|walk|way|directions|route|take me)\s+(?:back\s+)?(?:to|towards?)\s+(?:the\s+)?"
    r"(?P<a>.+?)[?.!]*$|where\s+is\s+(?:the\s+)?(?P<b>.+?)[?.!]*$",
    re.IGNORECASE,
)


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


def _relative_to(city: City, node: int, xy: Any, heading: float) -> str:
    """Where a point lies seen from ``node`` facing ``heading`` (8 words)."""
    dx, dy = xy[0] - city.graph.xy[node][0], xy[1] - city.graph.xy[node][1]
    bearing = math.degrees(math.atan2(dx, dy)) % 360.0
    return relative8(float(angle_diff(bearing, heading)))


def milestones(
    city: City, route: Route, destination: GeocodeResult, radius_m: float = LANDMARK_RADIUS_M
) -> list[dict[str, Any]]:
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
            item["turn"] = relative8(float(angle_diff(nxt, heading_before)))
            row = landmark_at(city, step.end_node, radius_m=radius_m, exclude=destination.place_row)
            if row >= 0:
                item["landmark"] = str(city.places.names[row])
                item["landmark_direction"] = _relative_to(
                    city, step.end_node, city.places.xy[row], heading_before
                )
        else:
            if destination.place_row >= 0:
                item["destination_direction"] = _relative_to(
                    city, step.end_node, city.places.xy[destination.place_row], heading_before
                )
            item["destination"] = destination.name
        out.append(item)
    return out


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
        """JSON-ready form (the route's node ids included)."""
        return {
            **vars(self),
            "destination": self.destination.to_dict(),
            "route": self.route.to_dict(city),
        }


def template_direction(
    city: City,
    destination: GeocodeResult,
    from_node: int,
    question: str = "",
    *,
    radius_m: float = LANDMARK_RADIUS_M,
) -> Direction:
    """Local's offline answer: the walking route to ``destination``, its milestones and the
    template instruction."""
    route = directions(city, from_node, destination.node)
    items = milestones(city, route, destination, radius_m)
    return Direction(question, destination, route, items, template_instruction(items), "template")


async def find_destination(city: City, thinker: Thinker, question: str) -> GeocodeResult:
    """The place the question asks about (the model's name when it geocodes well, else the
    question's phrase geocoded).

    Raises
    ------
    UnknownPlaceError
        The city has no such place (the message names the closest names).
    """
    reply = await thinker.ask("destination", question=question)
    if reply is not None:
        candidate = reply.strip().strip('"').splitlines()[0].strip() if reply.strip() else ""
        found = None
        if candidate:
            try:
                found = geocode_one(city, candidate)
            except (UnknownPlaceError, CoordinateError):  # a name of numbers is no place
                found = None
        if found is not None and found.score >= DESTINATION_SCORE:
            return found
        thinker.fell_back()  # a sentence, no place, or a loose match
    return geocode_one(city, destination_from_question(question))


async def give_directions(
    city: City,
    thinker: Thinker,
    question: str,
    from_node: int,
    *,
    destination: GeocodeResult | None = None,
    radius_m: float = LANDMARK_RADIUS_M,
    writer: str = "model",
) -> Direction:
    """Local's answer to ``question`` from viewpoint ``from_node`` (the destination found
    from the question unless given). With a model and ``writer="model"`` the model writes
    the instruction; a reply that gives no leg to walk falls back to the template."""
    goal = destination or await find_destination(city, thinker, question)
    answer = template_direction(city, goal, from_node, question, radius_m=radius_m)
    if not thinker.online or writer != "model":
        return answer
    lines = "\n".join(str(m) for m in answer.milestones)
    reply = await thinker.ask("instruction", question=question, milestones=lines)
    if reply and parse_instruction(reply):
        answer.instruction, answer.written_by = reply.strip(), "llm"
    elif reply is not None:
        thinker.fell_back()  # nothing in it says where to walk: the template's
    return answer


@dataclass(frozen=True)
class LocalOptions:
    """Local's options (``flaneur virl local FILE landmark_radius_m=25``)."""

    landmark_radius_m: Annotated[float, Range(1, 100)] = option(
        LANDMARK_RADIUS_M, "landmarks are named places this close to a key position, m"
    )
    writer: Literal["model", "template"] = option(
        "model", "who writes the instruction when the run has a model"
    )


class LocalAgent(ScenarioPlanner):
    """The direction giver on ``virl-local`` scenarios: the persona asks ``question`` where it
    starts; the plan is the destination, the route, the milestones and the instruction."""

    name: ClassVar[str] = "local"
    solves: ClassVar[tuple[str, ...]] = ("virl-local",)
    Options: ClassVar[type] = LocalOptions

    async def solve(self, item: TaskItem, info: SolveInfo) -> dict[str, Any]:
        """Directions for the scenario's question from the persona's start."""
        question = str(item.get("question") or "").strip()
        if not question:
            raise DataError(f"scenario {item.id!r}: field 'question' is missing")
        scene, options = self.begin(item, info), self.options
        answer = await give_directions(
            info.city,
            scene.thinker,
            question,
            scene.start,
            radius_m=options.landmark_radius_m,
            writer=options.writer,
        )
        return scene.result(**answer.to_dict(info.city))

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

Under ``--protocol paper`` Local does what V-IRL's Local does (``tools/tasks/
vision_language_nav/local.py``): the question names a type of place or a place (the model's
answer to ``local/destination_paper``, offline a pattern: ``"Where is a bank?"`` → ``bank``)
and the destination is the *nearest* place of that type, or whose name holds those words,
within :data:`PAPER_SEARCH_M` (2,000 m) of where he stands (V-IRL's text search ranked by
distance); the route is asked for :data:`PAPER_MODE` (bicycling: the street graph is the
walking network for every mode, so only the route's mode and durations change); the
instruction never gives a distance (:func:`~flaneur.agents.virl.instructions.
paper_instruction` offline, ``local/instruction_paper`` with a model).

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

import numpy as np

from flaneur.agents.base import SolveInfo
from flaneur.agents.virl.common import ScenarioPlanner
from flaneur.agents.virl.instructions import (
    paper_instruction,
    parse_instruction,
    relative8,
    template_instruction,
)
from flaneur.agents.virl.thinking import Thinker
from flaneur.errors import DataError
from flaneur.geo import angle_diff
from flaneur.options import Range, option
from flaneur.services.directions import Route, compass, directions
from flaneur.services.errors import CoordinateError, UnknownPlaceError
from flaneur.services.geocode import GeocodeResult, geocode, geocode_one
from flaneur.services.nearby import nearby_search, prominence
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City
from flaneur.world.taxonomy import normalize_category

LANDMARK_RADIUS_M = 18.0
"""V-IRL's landmark radius around a key position."""
DESTINATION_SCORE = 86.0
"""Geocode score (0-100) the model's destination name needs; a looser match (a whole
sentence matched fuzzily to some place) is not used."""
PAPER_SEARCH_M = 2000.0
"""V-IRL's Local searches the place a question asks about this far from where he stands
(``QUESTION_TO_PLACE.RADIUS``, ``tools/cfgs/local/local_template.yaml`` line 18)."""
PAPER_MODE = "bicycling"
"""V-IRL's Local asks for routes by bicycle (``ROUTE.ROUTE_MODE``,
``tools/cfgs/local/local_template.yaml`` line 21, and every other Local config)."""
NAME_CANDIDATES = 200
"""Places of a name :func:`nearest_match` compares (a chain has many of one name)."""
_ASKED_TYPE = re.compile(
    r"(?:is there|are there|where can i (?:find|get|buy)|where(?:'s| is)|i need|looking for)"
    r"\s+(?:a|an|any|some|the)?\s*(?:nearest\s+|closest\s+)?(?P<x>.+?)"
    r"(?:\s+(?:nearby|near here|around here|close by|around|near me))?\s*[?.!]*$",
    re.IGNORECASE,
)
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


def asked_phrase(question: str) -> str:
    """What a question asks for under ``--protocol paper``: a type of place or a place
    (``"Is there a pharmacy nearby?"`` → ``"pharmacy"``, ``"How do I get to Kiasma?"`` →
    ``"Kiasma"``)."""
    if _QUESTION.search(question.strip()) is None:
        match = _ASKED_TYPE.search(question.strip())
        if match and match.group("x").strip():
            return match.group("x").strip()
    return destination_from_question(question)


def _place_result(city: City, row: int) -> GeocodeResult:
    """The geocode answer of place ``row`` (its nearest viewpoint)."""
    places = city.places
    lat, lng = float(places.lat[row]), float(places.lng[row])
    node = int(city.graph.nearest_node(lat, lng))
    return GeocodeResult(str(places.names[row]), "place", lat, lng, node, row, 100.0, "", "words")


def nearest_match(
    city: City, phrase: str, from_node: int, *, radius_m: float = PAPER_SEARCH_M
) -> GeocodeResult | None:
    """V-IRL's Local's destination: the nearest named place within ``radius_m`` of
    ``from_node`` of the type ``phrase`` names (``"a bank"``), else of the places whose name
    it names (flaneur's geocoder standing in for Google's text search: those of its best
    tier, ``"NP"`` the places called NP before those whose name holds NP; a loose match,
    under :data:`DESTINATION_SCORE`, is none); ``None`` when there is none."""
    xy = city.graph.xy[from_node]
    category = normalize_category(phrase)
    if category:
        hits = nearby_search(city, xy, radius_m=radius_m, place_type=category, named_only=True)
        return _place_result(city, hits[0].row) if hits else None
    try:
        found = geocode(city, phrase, limit=NAME_CANDIDATES)
    except CoordinateError:
        return None
    found = [f for f in found if f.place_row >= 0 and f.score >= DESTINATION_SCORE]
    tier = [f for f in found if found and f.match == found[0].match]
    gaps = [float(np.hypot(*(city.places.xy[f.place_row] - xy))) for f in tier]
    near = sorted((g, k) for k, g in enumerate(gaps) if g <= radius_m)
    return tier[near[0][1]] if near else None


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


def count_crossings(city: City, route: Route, items: list[dict[str, Any]]) -> None:
    """Add to each milestone at an intersection the intersections its leg passes, its own
    included (``crossings``: what Ling counts walking it), for :func:`paper_instruction`."""
    degree = city.graph.degree
    for item, step in zip(items, route.steps, strict=True):
        if item["intersection"] > 2:
            item["crossings"] = int(sum(int(degree[n]) > 2 for n in step.nodes[1:]))


def template_direction(
    city: City,
    destination: GeocodeResult,
    from_node: int,
    question: str = "",
    *,
    radius_m: float = LANDMARK_RADIUS_M,
    protocol: str = "flaneur",
    mode: str | None = None,
) -> Direction:
    """Local's offline answer: the walking route to ``destination``, its milestones and the
    template instruction (under ``protocol="paper"``: the route asked for by bicycle and
    the instruction without distances, see the module docstring). ``mode`` asks for the
    route in another travel mode (the VLN collector's ``driving``)."""
    paper = protocol == "paper"
    mode = mode or (PAPER_MODE if paper else "walking")
    route = directions(city, from_node, destination.node, mode=mode, car_only=mode == "driving")
    items = milestones(city, route, destination, radius_m)
    if not paper:
        text = template_instruction(items)
    else:
        count_crossings(city, route, items)
        text = paper_instruction(items)
    return Direction(question, destination, route, items, text, "template")


async def paper_destination(
    city: City, thinker: Thinker, question: str, from_node: int
) -> GeocodeResult:
    """V-IRL's Local's destination (``--protocol paper``): what the question asks for (the
    model's answer, else :func:`asked_phrase`), the nearest such place within
    :data:`PAPER_SEARCH_M` (:func:`nearest_match`).

    Raises
    ------
    UnknownPlaceError
        No such place within :data:`PAPER_SEARCH_M`.
    """
    reply = await thinker.ask("destination_paper", question=question)
    if reply is not None:
        candidate = reply.strip().strip('"').splitlines()[0].strip() if reply.strip() else ""
        found = nearest_match(city, candidate, from_node) if candidate else None
        if found is not None:
            return found
        thinker.fell_back()  # nothing of the kind near: the question's own words
    phrase = asked_phrase(question)
    found = nearest_match(city, phrase, from_node)
    if found is None:
        err = UnknownPlaceError(phrase)
        err.args = (f"no place matches {phrase!r} within {PAPER_SEARCH_M:g} m of the start",)
        raise err
    return found


async def find_destination(
    city: City, thinker: Thinker, question: str, *, from_node: int = -1, protocol: str = "flaneur"
) -> GeocodeResult:
    """The place the question asks about (the model's name when it geocodes well, else the
    question's phrase geocoded; under ``protocol="paper"`` :func:`paper_destination` from
    viewpoint ``from_node``).

    Raises
    ------
    UnknownPlaceError
        The city has no such place (the message names the closest names).
    """
    if protocol == "paper":
        return await paper_destination(city, thinker, question, from_node)
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
    protocol: str = "flaneur",
) -> Direction:
    """Local's answer to ``question`` from viewpoint ``from_node`` (the destination found
    from the question unless given) under ``protocol`` (see the module docstring). With a
    model and ``writer="model"`` the model writes the instruction; a reply that gives no leg
    to walk falls back to the template."""
    goal = destination or await find_destination(
        city, thinker, question, from_node=from_node, protocol=protocol
    )
    answer = template_direction(
        city, goal, from_node, question, radius_m=radius_m, protocol=protocol
    )
    if not thinker.online or writer != "model":
        return answer
    lines = "\n".join(str(m) for m in answer.milestones)
    prompt = "instruction_paper" if protocol == "paper" else "instruction"
    reply = await thinker.ask(prompt, question=question, milestones=lines)
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
            protocol=info.protocol,
        )
        paper = {"protocol": "paper"} if info.protocol == "paper" else {}  # the scorer's
        return scene.result(**answer.to_dict(info.city), **paper)

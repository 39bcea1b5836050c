"""Scenarios of V-IRL's Local and Ling on any city, and the scorer of Local's answers.

Both generators draw their routes from the one VLN route collector
(:func:`flaneur.bench.vln_routes.collect_routes`: V-IRL's filters in every 500 m cell that
holds viewpoints) and keep the routes whose destination's name geocodes back to that very
place, so that the question names it unambiguously (other places of the same name are
reported as skipped). A persona asks ``"How do I get to <place>?"`` at the route's start
(written as ``lat,lng``), facing north or a seeded random heading.

* ``virl-local`` (:class:`LocalScenarios`): items planned by ``--agent local``, scored by
  :func:`score_local`: ``destination_correct`` (Local's destination is the place asked
  for), ``route_m``, ``milestones``, ``legs`` (of the instruction, as Ling reads it) and
  ``followed`` (the success metric): Ling's offline rule
  (:func:`flaneur.agents.virl.ling.follow_offline`, map landmarks) walking Local's
  instruction from the start ends within :data:`SUCCESS_RADIUS_M` of the place asked for.
* ``virl-ling`` (:class:`LingScenarios`): navigation episodes (scheme ``headings``, success
  ``virl_success``) whose metadata holds the question; ``--agent ling`` asks Local and
  walks. They carry V-IRL's VLN metadata of the route from the start (key positions,
  milestones), so runs report V-IRL's six metrics too.

A persona file (``flaneur virl local|ling FILE``) gives the same fields
(:class:`RouteQuestion`); its question must name a place of the city.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np

from flaneur.agents.baselines import episode_seed
from flaneur.agents.virl.instructions import parse_instruction
from flaneur.agents.virl.ling import follow_offline
from flaneur.agents.virl.local import destination_from_question, template_direction
from flaneur.bench.scenario_parts import latlng_text
from flaneur.bench.vln_routes import VlnRoute, collect_routes, no_route_error, route_episode
from flaneur.errors import DataError, FlaneurError
from flaneur.options import Range, option
from flaneur.services.errors import CoordinateError, UnknownPlaceError
from flaneur.services.geocode import GeocodeResult, geocode_one, resolve_point
from flaneur.services.persona import PersonaFields
from flaneur.services.region import grid_regions, region_has_viewpoints
from flaneur.tasks.episode import Episode
from flaneur.tasks.generators import Generator
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City

SCENARIO_VERSION = 2
"""Version of the ``virl-local`` and ``virl-ling`` generators (part of their cache key). 2: a
destination must geocode back to itself under the ranked geocoder (every name of a place;
ties among equal names broken by distance to the city's middle), which picks other routes."""
SUCCESS_RADIUS_M = 25.0
"""V-IRL's success radius around the destination."""
FOLLOW_STEPS = 200
"""Ling's action budget in the ``followed`` check (Local's routes may be long)."""
DEST_VIEWPOINT_M = 20.0
"""A destination farther than this from its viewpoint (inside a large building or park) is
reached at the viewpoint."""


@dataclass(frozen=True)
class RouteQuestion(PersonaFields):
    """A persona asking the way (the keys of a ``flaneur virl local|ling`` persona file)."""

    question: str = option("", "what the persona asks, e.g. 'How do I get to Kiasma?'")
    heading: Annotated[float, Range(0, 360)] = option(0.0, "where the persona faces, degrees")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.question.strip():
            raise DataError("field 'question' must be a non-empty string (it is missing)")


@dataclass(frozen=True)
class LocalQuestion(RouteQuestion):
    """A persona asking Local the way (``flaneur virl local FILE``)."""

    step_limit: Annotated[int, Range(1, 400)] = option(
        FOLLOW_STEPS, "Ling's actions in the check that Local's directions can be followed"
    )


@dataclass(frozen=True)
class RouteQuestionOptions:
    """Options of the ``virl-local`` generator (and of ``virl-ling``)."""

    per_region: Annotated[int, Range(1, 1000)] = option(10, "routes per region at most")
    cell_m: Annotated[float, Range(50, 50_000)] = option(500.0, "region cell side, m")
    heading: Literal["north", "random"] = option("random", "where the persona faces at first")


@dataclass(frozen=True)
class TripOptions(RouteQuestionOptions):
    """Options of the ``virl-ling`` generator."""

    max_steps: Annotated[int, Range(2, 2000)] = option(
        200, "environment steps of a Ling episode (all asks together)"
    )


def goal_xy(city: City, place_row: int, node: int) -> np.ndarray:
    """Where a destination is reached: the place, or its viewpoint when the place lies more
    than :data:`DEST_VIEWPOINT_M` from it."""
    node_xy = city.graph.xy[node]
    if place_row < 0:
        return node_xy
    place_xy = city.places.xy[place_row]
    return place_xy if float(np.hypot(*(place_xy - node_xy))) <= DEST_VIEWPOINT_M else node_xy


def asked_destination(city: City, question: str) -> GeocodeResult:
    """The place a question names (its phrase geocoded).

    Raises
    ------
    UnknownPlaceError
        The city has no such place (naming the closest names).
    DataError
        The question names a street, not a place.
    """
    found = geocode_one(city, destination_from_question(question))
    if found.place_row < 0:
        raise DataError(f"{question!r} asks for the street {found.name!r}, not a place")
    return found


def _fields(city: City, route: VlnRoute, index: int, heading: float) -> dict[str, Any]:
    name = route.destination.name
    return {
        "name": f"Visitor {index}",
        "city": city.name,
        "start": latlng_text(city, route.start),
        "background": "A visitor who does not know the city.",
        "intention": f"Go to {name}.",
        "status": {},
        "budget": None,
        "question": f"How do I get to {name}?",
        "heading": heading,
    }


def _question_routes(
    city: City, seed: int, size: int, options: RouteQuestionOptions
) -> tuple[list[tuple[VlnRoute, float]], dict[str, Any]]:
    """``[(route, heading)]`` of routes whose destination the question names unambiguously,
    and the report (regions skipped, routes whose place name is not unique)."""
    regions = grid_regions(city, options.cell_m)
    usable = [r for r in regions if region_has_viewpoints(city, r.polygon)]
    routes = collect_routes(city, usable, seed=seed, per_region=options.per_region)
    if not routes:
        raise no_route_error(city, usable)
    chosen: list[tuple[VlnRoute, float]] = []
    ambiguous = 0
    for route in routes:
        if len(chosen) >= size:
            break
        try:
            found = asked_destination(city, f"How do I get to {route.destination.name}?")
        except (UnknownPlaceError, CoordinateError):  # a name of numbers is no place
            found = None
        if found is None or found.place_row != route.destination.place_row:
            ambiguous += 1
            continue
        heading = 0.0
        if options.heading == "random":
            rng = np.random.default_rng(episode_seed(seed, f"{route.region}-{route.start}"))
            heading = round(float(rng.uniform(0.0, 360.0)), 1)
        chosen.append((route, heading))
    skipped: dict[str, Any] = {r.name: "holds no viewpoint" for r in regions if r not in usable}
    if ambiguous:
        skipped["routes to a place whose name another place shares"] = ambiguous
    if not chosen:
        raise FlaneurError(
            f"no route in {city.name} passes V-IRL's filters to a place of a unique name"
        )
    return chosen, {"regions": len(usable), "skipped": skipped}


def _destination_data(city: City, dest: GeocodeResult) -> dict[str, Any]:
    places, graph = city.places, city.graph
    return {
        "destination": dest.name,
        "destination_place_id": str(places.ids[dest.place_row]) if dest.place_row >= 0 else "",
        "destination_node": str(graph.ids[dest.node]),
        "destination_latlng": [float(dest.lat), float(dest.lng)],
    }


class LocalScenarios(Generator):
    """Local's direction questions (``virl-local``, see the module docstring)."""

    kind = "virl-local"
    version = SCENARIO_VERSION
    success_metric = "followed"
    description = "Local's direction questions (a persona asks the way to a named place)"
    default_size = 20
    Options = RouteQuestionOptions
    Scenario: ClassVar[type] = LocalQuestion

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        chosen, report = _question_routes(city, seed, size, options)
        items = []
        for k, (route, heading) in enumerate(chosen, start=1):
            data = {**_fields(city, route, k, heading), "step_limit": FOLLOW_STEPS}
            data["region"] = route.region
            data.update(_destination_data(city, route.destination))
            category = f"virl-local-{len(route.intersections)}-int"
            items.append(TaskItem(f"{set_name}-{k:03d}", category, data))
        return items, report

    def from_fields(
        self, fields: dict[str, Any], city: City, *, item_id: str, source: Path | None = None
    ) -> TaskItem:
        del source
        resolve_point(city, str(fields["start"]))  # a start outside the city: one line now
        dest = asked_destination(city, str(fields["question"]))
        return TaskItem(item_id, self.kind, {**fields, **_destination_data(city, dest)})


def _ling_episode(
    city: City,
    item_id: str,
    fields: dict[str, Any],
    start: int,
    dest: GeocodeResult,
    max_steps: int,
) -> Episode:
    """A question episode: the persona at ``start``, the route's VLN metadata for V-IRL's
    metrics, the destination as the goal (not read by Ling: she asks)."""
    route = VlnRoute.answered(
        "", start, template_direction(city, dest, start, str(fields["question"]))
    )
    base = route_episode(city, route, 0)
    drop = ("region", "written_by")
    return dataclasses.replace(
        base,
        id=item_id,
        instruction=str(fields["question"]),
        start_heading=float(fields.get("heading") or 0.0),
        category=f"virl-ling-{len(route.intersections)}-int",
        max_steps=max_steps,
        metadata={
            **{k: v for k, v in base.metadata.items() if k not in drop},
            "question": str(fields["question"]),
            "scenario": dict(fields),
            "scheme": "headings",
            "success_metric": "virl_success",
        },
    )


class LingScenarios(Generator):
    """Ling's trips by asking (``virl-ling``, see the module docstring)."""

    kind = "navigation"
    version = SCENARIO_VERSION
    success_metric = "virl_success"
    scheme = "headings"
    description = "Ling's trips: a tourist asks Local the way and walks"
    default_size = 20
    Options = TripOptions
    Scenario: ClassVar[type] = RouteQuestion

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[Episode], dict[str, Any]]:
        chosen, report = _question_routes(city, seed, size, options)
        episodes = [
            _ling_episode(
                city,
                f"{set_name}-{k:03d}",
                _fields(city, route, k, heading),
                route.start,
                route.destination,
                options.max_steps,
            )
            for k, (route, heading) in enumerate(chosen, start=1)
        ]
        return episodes, report

    def from_fields(
        self, fields: dict[str, Any], city: City, *, item_id: str, source: Path | None = None
    ) -> Episode:
        del source
        start, _ = resolve_point(city, str(fields["start"]))
        dest = asked_destination(city, str(fields["question"]))
        return _ling_episode(city, item_id, fields, start, dest, TripOptions().max_steps)


def score_local(item: TaskItem, result: dict[str, Any], city: City) -> dict[str, Any]:
    """The metrics of Local's answer to one question (see the module docstring)."""
    places, graph = city.places, city.graph
    wanted = str(item.get("destination_place_id") or "")
    got = result.get("destination") or {}
    got_row = int(got.get("place_row", -1))
    got_id = str(places.ids[got_row]) if 0 <= got_row < len(places) else ""
    if wanted:
        correct = got_id == wanted
    else:
        correct = str(got.get("name", "")) == str(item.get("destination", ""))
    goal_row = places.index(wanted) if wanted and wanted in places else -1
    goal_node = graph.index(str(item["destination_node"]))
    start = graph.index(str(result["start_node"]))
    instruction = str(result.get("instruction") or "")
    heading = float(item.get("heading") or 0.0)
    limit = int(item.get("step_limit") or FOLLOW_STEPS)
    protocol = str(result.get("protocol") or "flaneur")  # paper: Ling walks as V-IRL's
    keys = [int(k["node"]) for k in (result.get("route") or {}).get("key_positions", [])]
    end = follow_offline(
        city,
        instruction,
        start,
        heading,
        step_limit=limit,
        protocol=protocol,
        keys=keys,
        destination=str(got.get("name", "")),
    )
    miss = float(np.hypot(*(graph.xy[end] - goal_xy(city, goal_row, goal_node))))
    return {
        "destination_correct": correct,
        "route_m": float((result.get("route") or {}).get("distance_m", 0.0)),
        "milestones": len(result.get("milestones") or []),
        "legs": len(parse_instruction(instruction)),
        "followed_end_m": round(miss, 1),
        "followed": miss <= SUCCESS_RADIUS_M,
    }

"""Scenarios of V-IRL's planner agents made on any city, and their scorers.

Generators (:data:`flaneur.tasks.generators.GENERATORS`) place personas in a city the way
V-IRL's example personas are placed: each starts at the viewpoint of a named place (a name
the city's geocoder finds again), with a background and an intention from templates of our
own wording, and what the scenario asks for drawn from the city's places:

``virl-peng`` (:class:`PengScenarios`)
    errands at 2-7 named places within reach, in a sentence that names them;
``virl-aria`` (:class:`AriaScenarios`)
    a wish that a type of place meets (the ``target_types``), with such a place in reach;
``virl-vivek`` (:class:`VivekScenarios`)
    synthetic listings, a budget and the amenities wanted nearby, one listing at least
    meeting both;
``virl-diego`` (:class:`DiegoScenarios`)
    a day out with sights to see (``wishes``), a budget and status values.

A part of the city that cannot serve (a template whose place type the city lacks) is
skipped and reported; nothing at all to make is one error line. A scenario's answer key
(``target_types``, ``places``, ``amenities``) is read by the scorers, never by the agents.

Their scorers are in :mod:`flaneur.bench.scenario_scores`; templates and named places in
:mod:`flaneur.bench.scenario_parts`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np

from flaneur.agents.virl.diego import ASK, read_feedback
from flaneur.agents.virl.listings import load_listings, synthetic_listings
from flaneur.agents.virl.peng import places_in_sentence
from flaneur.agents.virl.vivek import amenities_near
from flaneur.bench.scenario_parts import (
    ARIA_WISHES,
    DIEGO_DAYS,
    ERRANDS,
    NAMES,
    PENG_PEOPLE,
    SIGHTS,
    VIVEK_SEARCHES,
    ScenarioGenerator,
    cannot_serve,
    made_set,
    named_places,
    persona_data,
    place_node,
    places_near,
    relative_path,
    round_robin,
    stdin_is_terminal,
)
from flaneur.errors import DataError
from flaneur.options import Range, option
from flaneur.services.optimize import distance_matrix
from flaneur.services.persona import PersonaFields
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City
from flaneur.world.taxonomy import CATEGORIES


# ---------------------------------------------------------------- scenario fields
def _check_types(types: tuple[str, ...], field: str) -> None:
    unknown = [t for t in types if t not in CATEGORIES]
    if unknown:
        raise DataError(f"field {field!r}: {', '.join(unknown)} is no place type of the taxonomy")


@dataclass(frozen=True)
class AriaScenario(PersonaFields):
    """A persona and the place types that meet its wish (for scoring)."""

    target_types: tuple[str, ...] = option((), "place types that meet the wish (scoring only)")

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_types(self.target_types, "target_types")


@dataclass(frozen=True)
class PengScenario(PersonaFields):
    """A persona and the errands of the day, naming the places."""

    sentence: str = option("", "the errands, naming the places (default: the intention)")
    places: tuple[str, ...] = option((), "the places the sentence names (scoring only)")


@dataclass(frozen=True)
class VivekScenario(PersonaFields):
    """A persona looking for a home, the listings on offer and what it wants nearby."""

    listings: str = option("", "a RentCast JSON/CSV file of listings (relative to this file)")
    synthetic_listings: Annotated[int, Range(1, 500)] = option(
        30, "made-up listings from building footprints when no file is given"
    )
    amenities: tuple[str, ...] = option((), "place types wanted within 200 m (scoring only)")

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_types(self.amenities, "amenities")


@dataclass(frozen=True)
class DiegoScenario(PersonaFields):
    """A persona's day out: the places to see and its remarks."""

    wishes: tuple[str, ...] = option((), "places to visit (a list of names)")
    feedback: str = option(
        "", "remarks: a text file (one a line, relative to this file), or - to be asked"
    )


# ---------------------------------------------------------------- Aria
@dataclass(frozen=True)
class AriaGeneratorOptions:
    """Options of ``virl-aria`` (``tasks generate CITY --kind virl-aria -T reach_m=300``)."""

    reach_m: Annotated[float, Range(50, 2000)] = option(
        400.0, "a named place meeting the wish lies this close to the start"
    )


class AriaScenarios(ScenarioGenerator):
    """Aria's recommendation wishes: a persona at a named place, a wish that a type of place
    meets, and such a named place within ``reach_m`` (the wishes cycle, in a seeded order)."""

    kind = "virl-aria"
    success_metric = "top1_fits"
    description = "Aria's recommendation wishes (a type of place within reach)"
    default_size = 20
    Options = AriaGeneratorOptions
    Scenario = AriaScenario

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        """Scenarios cycling through :data:`ARIA_WISHES` the city can serve."""
        rng = np.random.default_rng(seed)
        starts = named_places(city)
        named = np.flatnonzero(city.places.names != "")
        usable, skipped = [], {}
        for wish in ARIA_WISHES:
            types = set(wish[0])
            fits = np.asarray([r for r in named if types & set(city.places.categories[r])])
            if not fits.size:
                skipped["|".join(wish[0])] = "no named place of the type"
                continue
            usable.append((wish, fits))
        items: list[TaskItem] = []
        for (types, background, intention), fits in round_robin(rng, usable, size):
            for row in rng.permutation(starts).tolist():
                in_reach = places_near(city, fits, row, 0.0, options.reach_m)
                if in_reach.size:
                    break
            else:
                skipped["|".join(types)] = f"no start has one within {options.reach_m:g} m"
                continue
            data = persona_data(city, row, background, intention, target_types=list(types))
            data["in_reach"] = int(in_reach.size)
            items.append(TaskItem(f"{set_name}-{len(items):04d}", types[0], data))
        return made_set(self.kind, city, items, skipped, why="no named place")


# ---------------------------------------------------------------- Peng
@dataclass(frozen=True)
class PengGeneratorOptions:
    """Options of ``virl-peng`` (``-T stops=5 -T spread_m=800``)."""

    stops: Annotated[int, Range(2, 7)] = option(4, "places named in each sentence")
    spread_m: Annotated[float, Range(200, 5000)] = option(
        1200.0, "the places lie within this distance of the start"
    )


def peng_sentence(names: list[str], rng: np.random.Generator) -> str:
    """The errands at ``names`` in one sentence: "First I need to ..., then ... and ..."."""
    picks = rng.permutation(len(ERRANDS))[: len(names)]
    errands = [ERRANDS[i].format(n) for i, n in zip(picks, names, strict=True)]
    if len(errands) == 1:
        return f"I need to {errands[0]}."
    return f"First I need to {', then '.join(errands[:-1])} and finally {errands[-1]}."


class PengScenarios(ScenarioGenerator):
    """Peng's errands: ``stops`` named places within ``spread_m`` of a named start, listed in
    a random order in a sentence the offline reader parses back to the same places, every
    place reachable on the street graph."""

    kind = "virl-peng"
    success_metric = "optimal"
    description = "Peng's errands to order (named places within reach)"
    default_size = 20
    Options = PengGeneratorOptions
    Scenario = PengScenario

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        """Scenarios of random starts and places (up to six draws per scenario asked)."""
        rng = np.random.default_rng(seed)
        pool = named_places(city)
        items: list[TaskItem] = []
        misses: Counter[str] = Counter()
        for _ in range(size * 6):
            if len(items) >= size or not pool.size:
                break
            start = int(rng.choice(pool))
            near = places_near(city, pool, start, 60.0, options.spread_m)
            nodes = {place_node(city, r): r for r in near.tolist()}  # one place per viewpoint
            nodes.pop(place_node(city, start), None)
            if len(nodes) < options.stops:
                misses["too few named places within reach"] += 1
                continue
            rows = [int(r) for r in rng.choice(list(nodes.values()), options.stops, replace=False)]
            stops = [place_node(city, r) for r in [start, *rows]]
            if not np.isfinite(distance_matrix(city.graph, stops)).all():
                misses["a place cannot be reached"] += 1
                continue
            names = [str(city.places.names[r]) for r in rows]
            sentence = peng_sentence(names, rng)
            if places_in_sentence(city, sentence) != names:
                misses["the sentence reads back as other places"] += 1
                continue
            background, intention = PENG_PEOPLE[len(items) % len(PENG_PEOPLE)]
            data = persona_data(city, start, background, intention, sentence=sentence, places=names)
            items.append(TaskItem(f"{set_name}-{len(items):04d}", f"{options.stops} stops", data))
        skipped = {k: f"{v} draw(s)" for k, v in misses.items()}
        return made_set(self.kind, city, items, skipped, why="no named place")


# ---------------------------------------------------------------- Vivek
@dataclass(frozen=True)
class VivekGeneratorOptions:
    """Options of ``virl-vivek`` (``-T listings=30``)."""

    listings: Annotated[int, Range(3, 200)] = option(20, "synthetic listings per scenario")


def _vivek_item(
    city: City, search: tuple, listings: list[dict], rng: np.random.Generator, start: int
) -> dict[str, Any] | None:
    """A search's scenario data: a budget that one listing with every wanted amenity within
    200 m meets (``None`` when no listing has them all)."""
    types, background, intention = search
    fitting = [
        x["price"]
        for x in listings
        if all(
            v["count"]
            for v in amenities_near(city, x["latitude"], x["longitude"], list(types)).values()
        )
    ]
    if not fitting:
        return None
    middle = float(np.median([x["price"] for x in listings]))
    budget = float(math.ceil(max(min(fitting), middle) / 50.0) * 50.0)
    return persona_data(
        city,
        start,
        background,
        intention,
        budget=budget,
        listings=listings,
        listings_source="synthetic (made from OpenStreetMap building footprints)",
        amenities=list(types),
        name=str(rng.choice(NAMES)),
    )


class VivekScenarios(ScenarioGenerator):
    """Vivek's home searches: ``listings`` synthetic listings (from building footprints), a
    search for amenities nearby and a budget, at least one listing meeting both."""

    kind = "virl-vivek"
    success_metric = "top1_fits"
    description = "Vivek's home searches (synthetic listings, amenities, budget)"
    default_size = 10
    Options = VivekGeneratorOptions
    Scenario = VivekScenario

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        """Scenarios cycling through :data:`VIVEK_SEARCHES` (new listings for each draw)."""
        rng = np.random.default_rng(seed)
        starts = named_places(city)
        if not starts.size:
            raise cannot_serve("virl-vivek", city, {"city": "no named place to start from"})
        items: list[TaskItem] = []
        misses: Counter[str] = Counter()
        for k, search in enumerate(round_robin(rng, list(VIVEK_SEARCHES), size * 3)):
            if len(items) >= size:
                break
            listings = synthetic_listings(city, options.listings, seed=[seed, k])
            data = _vivek_item(city, search, listings, rng, int(rng.choice(starts)))
            if data is None:
                misses["|".join(search[0])] += 1
                continue
            items.append(TaskItem(f"{set_name}-{len(items):04d}", "+".join(search[0]), data))
        skipped = {k: f"no listing near all of them in {v} draw(s)" for k, v in misses.items()}
        return made_set(self.kind, city, items, skipped)

    def resolve(self, data: dict[str, Any], city: City, source: Path | None) -> dict[str, Any]:
        """A listings file's listings in the item (checked; relative to the persona file)."""
        if data.get("listings"):
            path = relative_path(str(data["listings"]), source)
            data["listings"] = load_listings(path, city)
            data["listings_source"] = str(path)
        else:
            data.pop("listings", None)
        return data


# ---------------------------------------------------------------- Diego
@dataclass(frozen=True)
class DiegoGeneratorOptions:
    """Options of ``virl-diego`` (``-T wishes=3``)."""

    wishes: Annotated[int, Range(1, 5)] = option(2, "sights to see in a day")
    spread_m: Annotated[float, Range(200, 5000)] = option(
        1500.0, "the sights lie within this distance of the start"
    )


class DiegoScenarios(ScenarioGenerator):
    """Diego's day plans: a named start, ``wishes`` sights (museums, parks, ... named places)
    within ``spread_m``, a budget of 40-150 and status values drawn per scenario."""

    kind = "virl-diego"
    success_metric = "feasible"
    description = "Diego's day plans (sights to see, budget, status)"
    default_size = 10
    Options = DiegoGeneratorOptions
    Scenario = DiegoScenario

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        """Scenarios of random starts and sights (up to six draws per scenario asked)."""
        rng = np.random.default_rng(seed)
        starts, sights = named_places(city), named_places(city, SIGHTS)
        items: list[TaskItem] = []
        misses = 0
        for _ in range(size * 6):
            if len(items) >= size or not starts.size:
                break
            start = int(rng.choice(starts))
            near = [int(r) for r in places_near(city, sights, start, 100.0, options.spread_m)]
            if len(near) < options.wishes:
                misses += 1
                continue
            rows = [int(r) for r in rng.choice(near, options.wishes, replace=False)]
            names = [str(city.places.names[r]) for r in rows]
            background, intention = DIEGO_DAYS[len(items) % len(DIEGO_DAYS)]
            status = {"hunger": float(rng.integers(10, 45)), "energy": float(rng.integers(55, 95))}
            data = persona_data(
                city,
                start,
                background,
                intention.format(" and ".join(names)),
                status=status,
                budget=float(rng.choice([40.0, 60.0, 90.0, 120.0, 150.0])),
                wishes=names,
                feedback="",
            )
            items.append(TaskItem(f"{set_name}-{len(items):04d}", f"{len(names)} wishes", data))
        skipped = {"sights": f"too few within reach in {misses} draw(s)"} if sights.size else {}
        why = f"no named sight ({', '.join(SIGHTS[:5])}, ...) with a viewpoint near it"
        return made_set(self.kind, city, items, skipped if misses else {}, why=why)

    def resolve(self, data: dict[str, Any], city: City, source: Path | None) -> dict[str, Any]:
        """The feedback file's remarks in the item; ``"-"`` by default on a terminal."""
        feedback = str(data.get("feedback") or "")
        if feedback and feedback != ASK:
            data["feedback"] = read_feedback(relative_path(feedback, source))
        elif not feedback and stdin_is_terminal():
            data["feedback"] = ASK
        return data


__all__ = [
    "AriaScenario",
    "AriaScenarios",
    "DiegoScenario",
    "DiegoScenarios",
    "PengScenario",
    "PengScenarios",
    "VivekScenario",
    "VivekScenarios",
    "peng_sentence",
]

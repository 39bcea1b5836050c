"""What V-IRL's planner scenarios are made of: persona and wish templates in our own words,
and the named places of a city a scenario may start at or name.

A named place serves when the city's geocoder finds it again by its name (no other entry
reads the same), when a sentence cannot cut its name apart (no comma, "and", "then", digit),
and when a viewpoint lies within :data:`VIEW_M` of it. :class:`ScenarioGenerator` is the base
of the planner scenarios' generators (:mod:`flaneur.bench.scenarios`).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from flaneur.errors import FlaneurError
from flaneur.services.geocode import gazetteer, normalize, resolve_point
from flaneur.tasks.generators import Generator
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City

VIEW_M = 40.0
"""A named place serves as a start or a stop when a viewpoint lies this close to it."""
NAMES = ("Alex", "Maija", "Wei", "Priya", "Jonas", "Amara", "Diego", "Hana", "Omar", "Lena")
"""First names of generated personas."""
_SPLITS = re.compile(r"[,;]|\b(?:and|then|after|finally)\b|\d", re.IGNORECASE)

ARIA_WISHES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("cafe",), "A graphic designer who works from her laptop.",
     "I want a calm cafe with good coffee where I can work for an hour."),
    (("restaurant",), "A retired couple celebrating their anniversary.",
     "We would like a nice restaurant for a relaxed dinner."),
    (("bar", "pub"), "A football fan meeting old classmates.",
     "I'm looking for a lively place to have a beer with friends tonight."),
    (("pharmacy",), "A tourist who caught a cold on the ferry.",
     "I need something for a sore throat and a runny nose."),
    (("supermarket", "convenience_store", "grocery_store"),
     "A student who just moved into a flat with an empty fridge.",
     "I need to buy milk, bread and vegetables for the week."),
    (("bakery",), "An early riser who loves fresh pastries.",
     "I would like a warm cinnamon bun and a loaf of bread for breakfast."),
    (("book_store",), "A literature teacher on holiday.",
     "I want to browse for a new novel to read on the train."),
    (("museum", "art_gallery"), "An architecture student visiting for a week.",
     "I want to spend a rainy afternoon looking at art and history exhibitions."),
    (("park", "garden"), "A parent with a toddler who needs to run around.",
     "We need some green space to sit on the grass and play."),
    (("fast_food",), "A courier with fifteen minutes for lunch.",
     "I want something quick and cheap to eat right now."),
    (("hotel", "hostel", "guest_house"), "A backpacker whose night train was cancelled.",
     "I need a bed for tonight."),
    (("clothing_store",), "A traveller whose suitcase got lost.",
     "I need to buy a warm jacket and a couple of shirts."),
    (("gym", "sports_center"), "A runner keeping up her training on a business trip.",
     "I want to work out for an hour on treadmills and weights."),
    (("ice_cream",), "A grandfather out with his grandchild on a hot day.",
     "We would love something cold and sweet to cool down."),
    (("hair_salon",), "A best man two days before a wedding.",
     "I need a haircut and a beard trim."),
    (("atm", "bank"), "A visitor at a market that takes only cash.",
     "I need to withdraw some cash."),
)  # fmt: skip
"""Aria's wishes: (place types that meet it, background, intention), in our own words."""


ERRANDS = (
    "pick up a parcel at {}",
    "buy a birthday card at {}",
    "meet a friend at {}",
    "drop off a form at {}",
    "take a look at {}",
    "get a coffee at {}",
    "ask about opening hours at {}",
    "collect my keys at {}",
)
"""Peng's errands, each naming one place (the name ends the errand)."""
PENG_PEOPLE = (
    ("A student who arrived last week for an exchange semester.", "Get my errands done."),
    ("A nurse with a free morning between two night shifts.", "Run errands before noon."),
    ("A visiting researcher with a packed day.", "See everything on my list today."),
)


VIVEK_SEARCHES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("supermarket", "gym"), "A software engineer who cooks every night and lifts weights.",
     "Rent a flat close to a supermarket and a gym."),
    (("park", "playground"), "A father of two small children.",
     "Find a home near a park and a playground for the kids."),
    (("cafe", "library"), "A doctoral student who writes all day.",
     "Rent a place near a cafe and a library."),
    (("pharmacy", "supermarket"), "A retired teacher who no longer drives.",
     "Find a flat with a pharmacy and a food shop a short walk away."),
    (("restaurant", "bar"), "A chef who likes to go out after late shifts.",
     "Live near restaurants and bars."),
    (("tram_stop",), "A commuter who hates being late.", "Rent a flat next to a tram stop."),
    (("bus_stop", "supermarket"), "A nurse with shifts at odd hours.",
     "Find a home near a bus stop and a supermarket."),
    (("kindergarten", "park"), "A couple expecting their first child.",
     "Rent a flat close to a kindergarten and a park."),
)  # fmt: skip
"""Vivek's home searches: (amenity types wanted, background, intention), our own words."""


SIGHTS: tuple[str, ...]
SIGHTS = ("museum", "art_gallery", "tourist_attraction", "historic_site", "park", "garden")
SIGHTS += ("viewpoint", "place_of_worship", "library", "theater", "zoo", "aquarium")
"""Place types a day out visits."""
DIEGO_DAYS = (
    ("A retired teacher who loves art and long lunches.", "See {} and relax over lunch."),
    ("A nurse on her first day off in two weeks.", "Visit {} without rushing."),
    ("A father showing his teenage son the city.", "Show my son {} and eat well."),
    ("A photographer scouting places for a shoot.", "Photograph {} in good light."),
)


def named_places(city: City, categories: tuple[str, ...] = ()) -> np.ndarray:
    """Rows of the places a scenario may name: a name the geocoder finds again (no other
    entry reads the same), that a sentence cannot split, with a viewpoint within
    :data:`VIEW_M`; of ``categories`` when given."""
    places, graph = city.places, city.graph
    if len(places) == 0:
        return np.zeros(0, dtype=np.int64)
    gaz = gazetteer(city)
    # main names, addresses and streets (tag rank 0): another place's alias does not hide one
    keys = Counter(k for k, rank in zip(gaz.keys, gaz.tag_rank.tolist(), strict=True) if not rank)
    nodes = np.atleast_1d(graph.nearest_node(places.lat, places.lng))
    x, y = graph.projection.forward(places.lat, places.lng)
    off = np.hypot(np.atleast_1d(x) - graph.xy[nodes, 0], np.atleast_1d(y) - graph.xy[nodes, 1])
    wanted = set(categories)
    rows = []
    for row, name in enumerate(places.names.tolist()):
        if len(name) < 3 or keys[normalize(name)] != 1 or _SPLITS.search(name):
            continue
        if off[row] > VIEW_M or (wanted and not wanted & set(places.categories[row])):
            continue
        rows.append(row)
    return np.asarray(rows, dtype=np.int64)


def latlng_text(city: City, node: int) -> str:
    """Viewpoint ``node`` as ``"lat,lng"`` (a start or an end a persona file may give)."""
    return f"{float(city.graph.lat[node]):.7f},{float(city.graph.lng[node]):.7f}"


def place_node(city: City, row: int) -> int:
    """The viewpoint nearest to place ``row``."""
    return int(city.graph.nearest_node(city.places.lat[row], city.places.lng[row]))


def persona_data(city: City, start_row: int, background: str, intention: str, **more: Any) -> dict:
    """A scenario's persona fields, starting at place ``start_row`` (by its name), with the
    scenario's ``more`` fields (``name``, ``status`` and ``budget`` may be among them)."""
    return {
        "name": more.pop("name", NAMES[start_row % len(NAMES)]),
        "city": city.name,
        "start": str(city.places.names[start_row]),
        "background": background,
        "intention": intention,
        "status": more.pop("status", {}),
        "budget": more.pop("budget", None),
        **more,
    }


def places_near(city: City, rows: np.ndarray, row: int, low: float, high: float) -> np.ndarray:
    """Rows whose place lies ``low``-``high`` metres from place ``row``."""
    xy = city.places.xy
    dist = np.hypot(*(xy[rows] - xy[row]).T)
    return rows[(dist >= low) & (dist <= high)]


class ScenarioGenerator(Generator):
    """What the planner scenarios' generators share: the start of a persona file's
    scenario must be in the city (checked by :meth:`from_fields`)."""

    def from_fields(
        self, fields: dict[str, Any], city: City, *, item_id: str, source: Path | None = None
    ) -> TaskItem:
        """The item of a persona file's checked fields (its start must be in the city;
        :meth:`resolve` reads the files it names)."""
        resolve_point(city, str(fields["start"]))  # one line when the city lacks it
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}
        return TaskItem(item_id, self.kind, self.resolve(data, city, source))

    def resolve(self, data: dict[str, Any], city: City, source: Path | None) -> dict[str, Any]:
        """A persona file's fields as item data (files it names read or made absolute)."""
        return data


def relative_path(value: str, source: Path | None) -> Path:
    """``value`` as a path, relative to the folder of the file ``source`` when not absolute."""
    path = Path(value)
    return path if path.is_absolute() or source is None else source.parent / path


def round_robin(rng: np.random.Generator, usable: list[Any], size: int) -> list[Any]:
    """``size`` picks cycling through ``usable`` in a shuffled order."""
    order = [usable[i] for i in rng.permutation(len(usable))]
    return [order[k % len(order)] for k in range(size)] if order else []


def cannot_serve(kind: str, city: City, skipped: dict[str, str]) -> FlaneurError:
    """The one-line error of a city that cannot serve a single scenario (the first reasons)."""
    reasons = "; ".join(f"{k}: {v}" for k, v in list(skipped.items())[:4])
    return FlaneurError(f"{city.name} cannot serve a single {kind} scenario ({reasons})")


def made_set(
    kind: str, city: City, items: list, skipped: dict[str, Any], *, why: str = "", **more: Any
) -> tuple[list, dict[str, Any]]:
    """``(items, report)`` of a generated set: the items per category, the parts skipped and
    ``more``. No item at all: :func:`cannot_serve` (``why``: the reason when none was
    recorded)."""
    if not items:
        raise cannot_serve(kind, city, skipped or ({"city": why} if why else {}))
    return items, {"counts": dict(Counter(i.category for i in items)), "skipped": skipped, **more}


def stdin_is_terminal() -> bool:
    """Whether standard input is a terminal (someone can answer questions)."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False

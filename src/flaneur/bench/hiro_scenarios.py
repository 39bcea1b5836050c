"""Hiro's intentional searches (``virl-hiro``) made on any city: navigation episodes whose
instruction is an intention in the words of V-IRL's Hiro scenario (our own wording), with a
place meeting it at a unique nearest distance (made by
:func:`flaneur.tasks.generate.generate_need_tasks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from flaneur.bench.scenario_parts import made_set
from flaneur.errors import FlaneurError
from flaneur.options import Range, option
from flaneur.tasks.episode import Episode
from flaneur.tasks.generate import generate_need_tasks
from flaneur.tasks.generators import Generator
from flaneur.tasks.needs import NeedTemplate, PlaceMatcher
from flaneur.world.city import City

HIRO_INTENTIONS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("restaurant", ("restaurant",),
     "Hiro has walked all morning and is starving; he wants a proper sit-down lunch."),
    ("cafe", ("cafe",), "Hiro wants a good coffee and a quiet table to write postcards."),
    ("pharmacy", ("pharmacy",), "Hiro caught a cold on the plane and needs some medicine."),
    ("food_shop", ("supermarket", "convenience_store", "grocery_store"),
     "Hiro wants fruit, bread and milk for the fridge of his hostel."),
    ("bar", ("bar", "pub"), "Hiro feels like a relaxed drink somewhere lively this evening."),
    ("bakery", ("bakery",), "Hiro fancies fresh pastries for a late breakfast."),
    ("books", ("book_store", "library"),
     "Hiro finished his novel and wants something new to read."),
    ("art", ("museum", "art_gallery"),
     "Hiro has a rainy afternoon to fill and wants to see some art or history."),
    ("cash", ("atm", "bank"), "Hiro only has a card, and the market stalls want cash."),
    ("green", ("park", "garden"), "Hiro wants some green space to sit in the sun with a sandwich."),
    ("ice_cream", ("ice_cream",), "It is a hot day and Hiro craves something cold and sweet."),
    ("haircut", ("hair_salon",), "Hiro's hair has grown too long for his interview tomorrow."),
)  # fmt: skip
"""Hiro's intentions (V-IRL's intentional explorer): (key, place types, intention)."""


@dataclass(frozen=True)
class HiroGeneratorOptions:
    """Options of ``virl-hiro`` (``-T per_intention=3 -T max_hops=20``)."""

    per_intention: Annotated[int, Range(1, 100)] = option(2, "episodes per intention")
    min_hops: Annotated[int, Range(1, 200)] = option(5, "fewest hops from start to the place")
    max_hops: Annotated[int, Range(1, 200)] = option(25, "most hops from start to the place")

    def __post_init__(self) -> None:
        if self.max_hops < self.min_hops:
            raise FlaneurError(f"max_hops {self.max_hops} is below min_hops {self.min_hops}")


class HiroScenarios(Generator):
    """Hiro's intentional searches: navigation episodes whose instruction is an intention in
    the words of V-IRL's Hiro scenario, a place meeting it at a unique nearest distance of
    ``min_hops``-``max_hops`` from the start (CitySeeker-style linking, see
    :func:`flaneur.tasks.generate.generate_need_tasks`); walked in the ``headings`` scheme,
    success: stopping within 50 m of such a place (``tcp``)."""

    kind = "navigation"
    scheme = "headings"
    success_metric = "tcp"
    description = "Hiro's intentional searches (V-IRL's intentional explorer)"
    default_size = 10_000
    Options = HiroGeneratorOptions

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[Episode], dict[str, Any]]:
        """Need episodes of :data:`HIRO_INTENTIONS` (``per_intention`` each, ``size`` in all)."""
        templates = [
            NeedTemplate(f"hiro:{key}", key, text, (PlaceMatcher(types),))
            for key, types, text in HIRO_INTENTIONS
        ]
        made = generate_need_tasks(
            city,
            seed=seed,
            per_template=options.per_intention,
            min_hops=options.min_hops,
            max_hops=options.max_hops,
            templates=templates,
            set_name=set_name,
        )
        episodes = made.episodes[:size]
        for episode in episodes:
            episode.metadata.update(
                scheme=self.scheme,
                success_metric=self.success_metric,
                scenario={"agent": "hiro", "name": "Hiro", "intention": episode.instruction},
            )
        return made_set("virl-hiro", city, episodes, made.skipped, why="no place")

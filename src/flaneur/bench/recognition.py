"""Place recognition sets (V-IRL §5, ``place_centric_recog.py``): storefront view -> place type.

:class:`RecognitionSet` (generator ``virl-recognition``) picks named places of a V-IRL type
list in each region of a city and aims a view at each one's facade from its nearest street
viewpoint. An item's id is the place id, its category the place's first V-IRL type; its data
hold the place's ``name``, ``region`` and true ``types``, the candidate type list
(``candidates``), and the camera (``node``, ``heading``, ``pitch``, ``fov``). The
``virl-recognition`` task kind (:mod:`flaneur.evaluate.kinds.virl_bench`) shows a recogniser
(:mod:`flaneur.bench.recognisers`) each view and scores its ranking of the candidates.

Regions are a GeoJSON file's polygons or, by default, a grid over the city; a region without
a usable place is skipped and named in the set's report, and a city where no region has one
is a one-line error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from flaneur.agents import episode_seed
from flaneur.bench.types import load_type_list, place_virl_types
from flaneur.geo import bearing
from flaneur.options import Range, option
from flaneur.services.errors import RegionError
from flaneur.services.region import Region, grid_regions, read_regions, region_of_points
from flaneur.tasks.generators import Generator
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City

__all__ = [
    "MAX_VIEW_M",
    "RECOGNITION_VERSION",
    "RecognitionOptions",
    "RecognitionSet",
    "recognition_places",
]

RECOGNITION_VERSION = 1
"""Version of the recognition set's construction rules."""

MAX_VIEW_M = 40.0
"""Places farther than this from every street viewpoint are skipped (no facade view)."""

FOV, PITCH = 60.0, 5.0
"""Camera of every view, aimed from the nearest viewpoint straight at the place."""


@dataclass(frozen=True)
class RecognitionOptions:
    """Options of the recognition and VQA generators (``-T key=value``)."""

    types: str = option(
        "96", "V-IRL type list: 20, 96, comma-separated types or a file with one type a line"
    )
    per_region: Annotated[int, Range(1, 1000)] = option(20, "places per region at most")
    cell_m: Annotated[float, Range(50, 20000)] = option(
        500.0, "grid cell size in metres (without regions)"
    )
    regions: str = option("", "GeoJSON polygons named by properties.name (default: a grid)")

    def __post_init__(self) -> None:
        load_type_list(self.types)  # an unknown type fails when the options are checked


def _candidates(spec: str) -> str | list[str]:
    """What items store as their candidate list: V-IRL's list by name, else the types."""
    return spec if spec in ("20", "96") else list(load_type_list(spec))


def _places_by_region(
    city: City, regions: Sequence[Region], types: Sequence[str]
) -> dict[str, list[int]]:
    """Rows of the named places of ``types`` in each region."""
    places = city.places
    names = region_of_points(list(regions), places.lat, places.lng)
    found: dict[str, list[int]] = {r.name: [] for r in regions}
    for row, region in enumerate(names):
        if (
            region in found
            and places.names[row]
            and place_virl_types(places.categories[row], types)
        ):
            found[region].append(row)
    return found


def _item(city: City, row: int, node: int, region: str, types: Sequence[str], candidates: Any):
    places, graph = city.places, city.graph
    heading = float(bearing(graph.lat[node], graph.lng[node], places.lat[row], places.lng[row]))
    true = list(place_virl_types(places.categories[row], types))
    data = {
        "name": str(places.names[row]),
        "region": region,
        "types": true,
        "candidates": candidates,
        "node": str(graph.ids[node]),
        "heading": round(heading % 360.0, 2),
        "pitch": PITCH,
        "fov": FOV,
        "distance_m": round(float(np.hypot(*(graph.xy[node] - places.xy[row]))), 1),
    }
    return TaskItem(str(places.ids[row]), true[0], data)


def recognition_places(
    city: City, options: RecognitionOptions, *, seed: int
) -> tuple[list[tuple[int, TaskItem]], dict[str, str], int]:
    """The places of a recognition set: ``([(place row, item)], skipped, regions)``.

    In each region the named places of the type list are shuffled with a seed of ``seed``
    and the region's name, and the first ``per_region`` within :data:`MAX_VIEW_M` of a
    street viewpoint are kept. ``skipped`` names each region that gave none, and why.

    Raises
    ------
    RegionError
        When no region holds a usable place (one line naming the regions' source).
    DataError
        An unreadable region file.
    """
    types = load_type_list(options.types)
    candidates = _candidates(options.types)
    regions = (
        read_regions(options.regions) if options.regions else grid_regions(city, options.cell_m)
    )
    graph, places = city.graph, city.places
    kept: list[tuple[int, TaskItem]] = []
    skipped: dict[str, str] = {}
    for region, rows in _places_by_region(city, regions, types).items():
        if not rows:
            skipped[region] = "no named place of the type list"
            continue
        rng = np.random.default_rng(episode_seed(seed, region))
        count = 0
        for i in rng.permutation(len(rows)):
            row = rows[int(i)]
            node = int(graph.nearest_node(places.lat[row], places.lng[row]))
            if float(np.hypot(*(graph.xy[node] - places.xy[row]))) > MAX_VIEW_M:
                continue
            kept.append((row, _item(city, row, node, region, types, candidates)))
            count += 1
            if count >= options.per_region:
                break
        if not count:
            skipped[region] = f"no such place within {MAX_VIEW_M:g} m of a street viewpoint"
    if not kept:
        where = options.regions or f"a grid of {options.cell_m:g} m cells"
        raise RegionError(
            f"{where}: no named place of the type list within {MAX_VIEW_M:g} m of a street "
            f"viewpoint of {city.name!r}"
        )
    return kept, skipped, len(regions)


def region_counts(items: Sequence[TaskItem]) -> dict[str, int]:
    """Items per region."""
    return dict(Counter(str(item.get("region")) for item in items))


class RecognitionSet(Generator):
    """V-IRL's place recognition: one storefront view per named place of the type list, at
    most ``per_region`` per region (``size`` caps the set)."""

    kind = "virl-recognition"
    version = RECOGNITION_VERSION
    success_metric = "top1"
    description = "V-IRL's place recognition: a storefront view per named place"
    default_size = 10_000
    Options = RecognitionOptions

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        kept, skipped, regions = recognition_places(city, options, seed=seed)
        return self.report([item for _, item in kept][:size], skipped, regions)

    @staticmethod
    def report(
        items: list[TaskItem], skipped: dict[str, str], regions: int
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        """``(items, report)``: the regions, the items per region and the parts skipped."""
        return items, {"regions": regions, "per_region": region_counts(items), "skipped": skipped}

"""V-IRL's VLN route set on any city: destinations, starts, filters, regions, instructions.

The collector follows V-IRL's ``collect_vln_routes.py`` (paper §5.4):

* a *destination* is a named place of one of V-IRL's 20 benchmark types
  (:data:`VLN_TYPES`, mapped onto flaneur's taxonomy) whose nearest viewpoint lies within
  :data:`DEST_VIEWPOINT_M` (20 m);
* a *start* is the viewpoint of another named place :data:`MIN_START_M`-:data:`MAX_START_M`
  (40-150 m, straight line) away;
* the walking route (:func:`flaneur.services.directions`) is at most :data:`MAX_ROUTE_M`
  (150 m) long with 1-2 *intersections* (key positions before the destination), and each
  intersection has a landmark (Local's choice: the most prominent named place within 18 m);
* at most :data:`PER_REGION` (10) routes per region, one per destination.

V-IRL's collector stopped at the first valid start, so its "most landmarks" choice never ran.
Here every candidate start is checked and the valid one whose intersections have the most
named places within Local's landmark radius wins (ties: the shorter route, then the lower
viewpoint index). The order of destinations is a permutation drawn from ``seed``.

Regions: the built-in extract has no district boundaries, so a region is a square cell of
:data:`REGION_CELL_M` (500 m) in the city's metric projection, anchored at the south-west
corner of its streets and places, named ``r<row>c<col>`` (the same grid as the place
benchmarks' default regions); a GeoJSON polygon can be given instead.

Instructions are Local's offline answers (:func:`flaneur.agents.virl.local.template_direction`:
the template over its milestones). A region without viewpoints is skipped (the generator's
report names it).

Travel mode: V-IRL asked Google for *driving* directions (``tools/cfgs/collect_data/
collect_vln_routes.yaml`` l.32). The option ``mode=driving`` collects the routes over the
streets a car may use (:func:`flaneur.services.directions.directions`; a city pack with car
access data, i.e. OpenStreetMap); ``--protocol paper`` asks for that set where the city has
the data and keeps the walking set otherwise, with a one-time note
(:meth:`VlnRoutes.paper_options`). The default (``flaneur`` protocol) is walking.

Under ``--protocol paper`` a run also writes each route's instruction again without
distances from the episode's milestones (:func:`paper_episode`), as V-IRL's instructions
never give one.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Annotated, Any, Literal

import numpy as np
import shapely

from flaneur.agents.virl.instructions import paper_instruction
from flaneur.agents.virl.local import (
    LANDMARK_RADIUS_M,
    Direction,
    landmark_at,
    template_direction,
)
from flaneur.bench.types import TYPES_20, VIRL_TO_FLANEUR
from flaneur.errors import FlaneurError
from flaneur.options import Range, option
from flaneur.services.directions import Route, directions, has_car_access
from flaneur.services.errors import UnreachableError
from flaneur.services.geocode import GeocodeResult
from flaneur.services.region import Region, grid_regions, region_has_viewpoints
from flaneur.tasks.episode import Episode
from flaneur.tasks.generators import Generator
from flaneur.world.city import City

DEST_VIEWPOINT_M = 20.0
MIN_START_M, MAX_START_M = 40.0, 150.0
MAX_ROUTE_M = 150.0
MIN_INTERSECTIONS, MAX_INTERSECTIONS = 1, 2
PER_REGION = 10
REGION_CELL_M = 500.0
STEP_LIMIT = 40
"""Actions per route in V-IRL's benchmark (its tourist alone: 30)."""
COLLECTOR_VERSION = 1

VLN_TYPES = MappingProxyType({t: VIRL_TO_FLANEUR[t] for t in TYPES_20})
"""V-IRL's 20 place types → flaneur categories (the one map: :mod:`flaneur.bench.types`)."""


@dataclass(frozen=True)
class VlnRoute:
    """One collected route: where it starts, where it goes, and Local's directions."""

    region: str
    start: int
    destination: GeocodeResult
    route: Route
    landmarks: tuple[str, ...]
    milestones: tuple[dict, ...]
    instruction: str
    written_by: str

    @property
    def intersections(self) -> tuple[int, ...]:
        """Key positions before the destination (viewpoint indices)."""
        return self.route.key_positions[:-1]

    @classmethod
    def answered(cls, region: str, start: int, answer: Direction) -> VlnRoute:
        """The route of Local's ``answer`` from viewpoint ``start`` (landmarks: its milestones')."""
        marks = tuple(m["landmark"] for m in answer.milestones if "landmark" in m)
        milestones, how = tuple(answer.milestones), (answer.instruction, answer.written_by)
        return cls(region, start, answer.destination, answer.route, marks, milestones, *how)


def destination_rows(city: City, polygon: shapely.Geometry) -> np.ndarray:
    """Rows of named places of the 20 types inside ``polygon`` with a viewpoint within 20 m."""
    places, graph = city.places, city.graph
    wanted = {c for cats in VLN_TYPES.values() for c in cats}
    named = [i for i in range(len(places)) if places.names[i]]
    typed = [i for i in named if wanted.intersection(places.categories[i])]
    inside = [i for i in typed if shapely.contains_xy(polygon, places.lng[i], places.lat[i])]
    rows = np.asarray(inside, dtype=np.int64)
    if rows.size == 0:
        return rows
    nodes = np.atleast_1d(graph.nearest_node(places.lat[rows], places.lng[rows]))
    gap = np.hypot(*(graph.xy[nodes] - places.xy[rows]).T)
    return rows[gap <= DEST_VIEWPOINT_M]


def landmark_count(city: City, node: int, exclude: int) -> int:
    """Named places within Local's landmark radius of ``node`` (the destination left out)."""
    rows, _ = city.places.within(city.graph.xy[node], LANDMARK_RADIUS_M)
    return sum(1 for r in rows.tolist() if r != exclude and city.places.names[r])


def best_start(
    city: City, dest_row: int, goal: int, mode: str = "walking"
) -> tuple[Route, int] | None:
    """The valid start with the most landmarks for a destination (V-IRL's intent, fixed),
    its route in travel ``mode``.

    Returns ``(route, landmark count)`` or ``None`` when no start passes the filters.
    """
    places, graph = city.places, city.graph
    rows, dist = places.within(places.xy[dest_row], MAX_START_M)
    candidates = [
        r
        for r, d in zip(rows.tolist(), dist.tolist(), strict=True)
        if r != dest_row and places.names[r] and d >= MIN_START_M
    ]
    if not candidates:
        return None
    nodes = np.atleast_1d(graph.nearest_node(places.lat[candidates], places.lng[candidates]))
    best: tuple[tuple, Route, int] | None = None
    for start in sorted(set(nodes.tolist()) - {goal}):
        try:
            route = directions(city, start, goal, mode=mode, car_only=mode == "driving")
        except UnreachableError:
            continue
        inner = route.key_positions[:-1]
        if route.distance_m > MAX_ROUTE_M or not (
            MIN_INTERSECTIONS <= len(inner) <= MAX_INTERSECTIONS
        ):
            continue
        if any(landmark_at(city, k, exclude=dest_row) < 0 for k in inner):
            continue
        count = sum(landmark_count(city, k, dest_row) for k in inner)
        key = (-count, route.distance_m, start)
        if best is None or key < best[0]:
            best = (key, route, count)
    return None if best is None else (best[1], best[2])


@dataclass(frozen=True)
class VlnOptions:
    """Options of the ``virl-vln`` generator."""

    per_region: Annotated[int, Range(1, 1000)] = option(PER_REGION, "routes per region at most")
    cell_m: Annotated[float, Range(50, 50_000)] = option(REGION_CELL_M, "region cell side, m")
    mode: Literal["walking", "driving"] = option(
        "walking", "travel mode of the routes (V-IRL's: driving; needs car access data)"
    )


def collect_routes(
    city: City,
    regions: Sequence[Region] | None = None,
    *,
    seed: int = 0,
    per_region: int = PER_REGION,
    progress: Callable[[int, int], None] | None = None,
    mode: str = "walking",
) -> list[VlnRoute]:
    """V-IRL's VLN routes in every region that holds viewpoints (the others are skipped),
    reproducible by ``seed``, in travel ``mode`` (``driving``: over car-usable edges)."""
    if mode == "driving" and not has_car_access(city):
        raise FlaneurError(
            f"no driving VLN routes in {city.name}: its city pack has no car access data"
        )
    regions = [
        r
        for r in (list(regions) if regions is not None else grid_regions(city))
        if region_has_viewpoints(city, r.polygon)
    ]
    rng = np.random.default_rng(seed)
    places, graph = city.places, city.graph
    out: list[VlnRoute] = []
    for done, region in enumerate(regions):
        rows = destination_rows(city, region.polygon)
        taken = 0
        for row in rng.permutation(rows).tolist() if rows.size else []:
            if taken >= per_region:
                break
            lat, lng = float(places.lat[row]), float(places.lng[row])
            goal = int(graph.nearest_node(lat, lng))
            found = best_start(city, row, goal, mode)
            if found is None:
                continue
            route, _ = found
            dest = GeocodeResult(str(places.names[row]), "place", lat, lng, goal, row, 100.0)
            question = f"How do I get to {dest.name}?"
            answer = template_direction(city, dest, route.nodes[0], question, mode=mode)
            out.append(VlnRoute.answered(region.name, route.nodes[0], answer))
            taken += 1
        if progress is not None:
            progress(done + 1, len(regions))
    return out


def route_episode(city: City, item: VlnRoute, index: int) -> Episode:
    """The flaneur episode of a collected route (V-IRL's initial heading: north)."""
    graph, places = city.graph, city.places
    row = item.destination.place_row
    key_xy = [[float(graph.lat[k]), float(graph.lng[k])] for k in item.route.key_positions]
    return Episode(
        id=f"virl-vln-{item.region}-{index:03d}",
        city=city.name,
        instruction=item.instruction,
        start_node=str(graph.ids[item.start]),
        start_heading=0.0,
        goal_nodes=(str(graph.ids[item.destination.node]),),
        goal_place_ids=(str(places.ids[row]),),
        goal_categories=tuple(
            c for c in places.categories[row] if any(c in cats for cats in VLN_TYPES.values())
        ),
        reference_path=tuple(str(graph.ids[n]) for n in item.route.nodes),
        category=f"virl-vln-{len(item.intersections)}-int",
        max_steps=STEP_LIMIT + 1,
        metadata={
            "region": item.region,
            "destination": item.destination.name,
            "destination_latlng": [float(places.lat[row]), float(places.lng[row])],
            "key_positions": [str(graph.ids[k]) for k in item.route.key_positions],
            "key_latlng": key_xy,
            "landmarks": list(item.landmarks),
            "milestones": [dict(m) for m in item.milestones],
            "route_m": round(item.route.distance_m, 1),
            "written_by": item.written_by,
            **({"travel_mode": item.route.mode} if item.route.mode != "walking" else {}),
        },
    )


def paper_episode(episode: Any) -> Any:
    """A VLN route under ``--protocol paper``: its template instruction written again from
    its milestones without distances (:func:`~flaneur.agents.virl.instructions.
    paper_instruction`; every intersection of a route has its landmark, so each leg ends at
    one); any other item as it is."""
    metadata = getattr(episode, "metadata", None) or {}
    milestones = metadata.get("milestones")
    if metadata.get("written_by") != "template" or not milestones:
        return episode
    return replace(episode, instruction=paper_instruction([dict(m) for m in milestones]))


def route_episodes(city: City, routes: Sequence[VlnRoute]) -> list[Episode]:
    """Episodes of collected routes, numbered within each region."""
    counts: dict[str, int] = {}
    out = []
    for item in routes:
        counts[item.region] = counts.get(item.region, 0) + 1
        out.append(route_episode(city, item, counts[item.region]))
    return out


class VlnRoutes(Generator):
    """V-IRL's VLN routes with Local's instructions in every 500 m cell of the city that
    has viewpoints (``size`` caps the routes; ``per_region`` per cell)."""

    kind = "navigation"
    version = COLLECTOR_VERSION
    success_metric = "virl_success"
    scheme = "headings"
    description = "V-IRL's vision-language navigation routes"
    default_size = 10_000
    Options = VlnOptions

    @classmethod
    def paper_options(cls, city: City, options: dict[str, Any]) -> dict[str, Any]:
        """Under ``--protocol paper``: driving routes, as V-IRL collected them, where the
        city has car access data; the walking routes otherwise (noted once per city)."""
        if "mode" in options:
            return options
        if has_car_access(city):
            return {**options, "mode": "driving"}
        if city.name not in _NOTED_WALKING:
            _NOTED_WALKING.add(city.name)
            warnings.warn(
                f"{city.name} has no car access data: its V-IRL VLN routes are walking "
                "routes (V-IRL collected driving routes)",
                stacklevel=2,
            )
        return options

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[Episode], dict[str, Any]]:
        regions = grid_regions(city, options.cell_m)
        usable = [r for r in regions if region_has_viewpoints(city, r.polygon)]
        routes = collect_routes(
            city, usable, seed=seed, per_region=options.per_region, mode=options.mode
        )
        episodes = route_episodes(city, routes)[:size]
        if not episodes:
            raise no_route_error(city, usable)
        for episode in episodes:
            episode.metadata.update(scheme="headings", success_metric="virl_success")
        skipped = {r.name: "holds no viewpoint" for r in regions if r not in usable}
        return episodes, {"regions": len(usable), "skipped": skipped}


_NOTED_WALKING: set[str] = set()
"""Cities whose walking fallback under ``--protocol paper`` was noted (once per process)."""


def no_route_error(city: City, regions: Sequence[Region]) -> FlaneurError:
    """The one-line error of a city where no route passes V-IRL's filters, naming the
    filter: no destination at all, or no start and walk for any destination."""
    found = sum(len(destination_rows(city, r.polygon)) for r in regions)
    if not found:
        return FlaneurError(
            f"{city.name} has no named place of V-IRL's 20 VLN types with a viewpoint within "
            f"{DEST_VIEWPOINT_M:g} m: no VLN route has a destination"
        )
    return FlaneurError(
        f"no VLN route in {city.name} passes V-IRL's filters: none of its {found} "
        f"destination(s) has a named start {MIN_START_M:g}-{MAX_START_M:g} m away with a walk "
        f"of at most {MAX_ROUTE_M:g} m over {MIN_INTERSECTIONS}-{MAX_INTERSECTIONS} "
        f"intersection(s), each with a named landmark within {LANDMARK_RADIUS_M:g} m"
    )

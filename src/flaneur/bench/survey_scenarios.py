"""Scenarios of V-IRL's vision agents made on any city, and their scorers.

``virl-rx399`` (:class:`RobotScenarios`)
    RX-399 walks from ``start`` to ``end`` and counts the ``labels`` (street furniture) it
    passes. A persona file's scenario (:class:`RobotScenario`) resolves ``start`` and ``end``
    with the geocoder and the walk with the directions service (the item's ``route``).
    Generated scenarios run between two viewpoints ``min_m``-``max_m`` (150-400 m) apart
    whose shortest walk passes within 20 m of an object of the labels.
``virl-imani`` (:class:`PlannerScenarios`)
    Imani counts the ``labels`` inside a ``polygon`` (a GeoJSON file, relative to the
    persona file, or ``[lat, lng]`` corners). A scenario (:class:`PlannerScenario`) keeps the
    corners and the viewpoints the region service samples every ``spacing`` metres with the
    walk through them (OR-Tools orders them; the item file fixes that order). Generated
    scenarios are square cells of ``cell_m`` over the city holding at least
    ``min_objects`` objects of the labels.

What the person asks (start, end, polygon, spacing, labels) is the scenario; how the agent
perceives is its options (:mod:`flaneur.agents.virl.rx399`). A city without furniture of
the labels, or a cell without a viewpoint, is skipped and reported.

Scorers (``score(item, result, city) -> metrics``):

* :func:`score_robot`: per label, the objects RX-399 counted along its way against the
  OpenStreetMap objects it had in view (``in_view``: within
  :data:`~flaneur.perception.survey.RANGE_M`, 20 m, of a walked viewpoint and inside the
  fields of view it took there, :func:`~flaneur.perception.survey.in_view`); ``count_exact``
  (the success metric) when every count is right, ``count_error`` (sum of the absolute
  differences); and V-IRL's ``accuracy`` and ``recall`` of every object in its memory
  (:func:`~flaneur.perception.survey.evaluate_survey`: ground truth within 20 m of the
  route; ``reported``, ``true_positives``, ``found`` and ``ground_truth`` for pooling over
  scenarios).
* :func:`score_planner`: per label, the objects Imani counted inside the polygon against
  the OpenStreetMap objects in it; ``count_within`` (the success metric) when every count
  is within ±20 % or ±1 of the truth, ``over`` and ``under`` (summed), ``count_error``, and
  the scene simulator's de-duplication errors (``duplicates``, ``merged``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import shapely

from flaneur.agents.virl.common import node_ids
from flaneur.bench.scenario_parts import ScenarioGenerator, latlng_text, made_set, relative_path
from flaneur.errors import DataError, FlaneurError
from flaneur.options import Range, option
from flaneur.perception.memory import VisualMemory
from flaneur.perception.survey import (
    RANGE_M,
    SurveyResult,
    SurveySettings,
    dedup_errors,
    evaluate_survey,
    furniture_labels,
    in_view,
)
from flaneur.services.directions import directions
from flaneur.services.errors import RegionError
from flaneur.services.geocode import resolve_point
from flaneur.services.persona import PersonaFields
from flaneur.services.region import load_polygon, polygon_from_latlng, sample_region
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City

WITHIN_SHARE = 0.2
"""A planner's count is right within this share of the truth (or within one object)."""
ROUTE_TRIES = 12
"""Start/end pairs tried per object before the generator moves on."""


def _labels(labels: Sequence[str]) -> dict[str, str]:
    try:
        return furniture_labels(labels)
    except FlaneurError as err:
        raise DataError(f"field 'labels': {err}") from None


@dataclass(frozen=True)
class RobotScenario(PersonaFields):
    """RX-399's walk: where it ends and what it counts."""

    end: str = option("", "where the walk ends: a place name, an address or lat,lng")
    labels: tuple[str, ...] = option(("trash bin",), "what to count (street furniture)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.end.strip():
            raise DataError("field 'end' must be a non-empty string (it is missing)")
        _labels(self.labels)


@dataclass(frozen=True)
class PlannerScenario(PersonaFields):
    """Imani's survey: the region, the sampling grid and what to count."""

    polygon: str | tuple[tuple[float, float], ...] = option(
        "", "the region: a GeoJSON file (relative to this file) or [[lat, lng], ...]"
    )
    spacing: Annotated[float, Range(10.0, 1000.0)] = option(
        50.0, "metres between the sampled viewpoints"
    )
    labels: tuple[str, ...] = option(("trash bin", "bench"), "what to count (street furniture)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.polygon:
            raise DataError("field 'polygon' is required: a GeoJSON file or [[lat, lng], ...]")
        _labels(self.labels)


@dataclass(frozen=True)
class RobotSetOptions:
    """Options of ``virl-rx399`` (``tasks generate CITY --kind virl-rx399 -T max_m=300``)."""

    labels: tuple[str, ...] = option(("trash bin",), "what the robot counts")
    min_m: Annotated[float, Range(50.0, 5000.0)] = option(150.0, "shortest walk in metres")
    max_m: Annotated[float, Range(50.0, 5000.0)] = option(400.0, "longest walk in metres")

    def __post_init__(self) -> None:
        _labels(self.labels)
        if self.min_m >= self.max_m:
            raise DataError(f"min_m ({self.min_m:g}) must be below max_m ({self.max_m:g})")


@dataclass(frozen=True)
class PlannerSetOptions:
    """Options of ``virl-imani`` (``-T cell_m=250 -T spacing=40``)."""

    labels: tuple[str, ...] = option(("trash bin", "bench"), "what the planner counts")
    cell_m: Annotated[float, Range(50.0, 2000.0)] = option(200.0, "side of the square regions")
    spacing: Annotated[float, Range(10.0, 500.0)] = option(40.0, "metres between viewpoints")
    min_objects: Annotated[int, Range(1, 1000)] = option(
        2, "objects of the labels a region holds at least"
    )

    def __post_init__(self) -> None:
        _labels(self.labels)


class RobotScenarios(ScenarioGenerator):
    """RX-399's walks past street furniture (see the module docstring)."""

    kind = "virl-rx399"
    success_metric = "count_exact"
    description = "RX-399 counts street furniture on a 150-400 m walk"
    default_size = 20
    Options = RobotSetOptions
    Scenario = RobotScenario

    def resolve(self, data: dict[str, Any], city: City, source: Path | None) -> dict[str, Any]:
        """The walk from ``start`` to ``end`` (the directions service's shortest)."""
        start, start_label = resolve_point(city, str(data["start"]))
        end, end_label = resolve_point(city, str(data["end"]))
        route = directions(city, start, end)
        data.update(
            start_label=start_label,
            end_label=end_label,
            route=node_ids(city, route.nodes),
            route_m=round(route.distance_m, 1),
        )
        return data

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        labels = _labels(options.labels)
        furniture = city.furniture
        rows = np.concatenate([furniture.of_kind(c) for c in dict.fromkeys(labels.values())])
        rng = np.random.default_rng(seed)
        items: list[TaskItem] = []
        skipped: dict[str, str] = {}
        if not rows.size:
            skipped["labels"] = f"{city.name} maps no {', '.join(labels.values())}"
        too_far = f"no walk of {options.min_m:g}-{options.max_m:g} m passes it"
        for row in rng.permutation(rows).tolist():
            if len(items) >= size:
                break
            pair = _walk_past(city, furniture.xy[row], options, rng)
            if pair is None:
                skipped[str(furniture.ids[row])] = too_far
                continue
            fields = {
                "name": "RX-399",
                "city": city.name,
                "start": latlng_text(city, pair[0]),
                "end": latlng_text(city, pair[1]),
                "background": "An urban assistance robot that keeps the streets tidy.",
                "intention": f"Count the {' and '.join(labels)} along the way.",
                "labels": list(labels),
            }
            items.append(self.from_fields(fields, city, item_id=f"{set_name}-{len(items):04d}"))
        return made_set(self.kind, city, items, skipped, objects=int(rows.size))


def _walk_past(
    city: City, xy: np.ndarray, options: Any, rng: np.random.Generator
) -> tuple[int, int] | None:
    """Start and end viewpoints whose shortest walk, ``min_m``-``max_m`` long, passes within
    :data:`RANGE_M` of ``xy`` (``None`` when :data:`ROUTE_TRIES` pairs fail)."""
    graph = city.graph
    near = graph.nodes_within_xy(xy, RANGE_M)
    if not len(near):
        return None
    centre = int(near[np.argmin(np.hypot(*(graph.xy[near] - xy).T))])
    dist = graph.metre_distances_to([centre])
    ring = np.flatnonzero(
        graph.located & (dist >= 0.3 * options.min_m) & (dist <= 0.6 * options.max_m)
    )
    if ring.size < 2:
        return None
    for _ in range(ROUTE_TRIES):
        start, end = (int(n) for n in rng.choice(ring, size=2, replace=False))
        try:
            route = directions(city, start, end)
        except FlaneurError:
            continue
        passes = np.hypot(*(graph.xy[list(route.nodes)] - xy).T).min() <= RANGE_M
        if passes and options.min_m <= route.distance_m <= options.max_m:
            return start, end
    return None


class PlannerScenarios(ScenarioGenerator):
    """Imani's surveys of regions holding street furniture (see the module docstring)."""

    kind = "virl-imani"
    success_metric = "count_within"
    description = "Imani counts street furniture in a region (grid cells with furniture)"
    default_size = 10
    Options = PlannerSetOptions
    Scenario = PlannerScenario

    def resolve(self, data: dict[str, Any], city: City, source: Path | None) -> dict[str, Any]:
        """The region's corners and the viewpoints sampled in it, with the walk."""
        raw = data["polygon"]
        if isinstance(raw, str):
            polygon = load_polygon(relative_path(raw, source))
        else:
            try:
                polygon = polygon_from_latlng(raw)
            except RegionError as err:
                raise DataError(f"field 'polygon': {err}") from None
        sample = sample_region(city, polygon, spacing_m=float(data["spacing"]))
        data.update(
            polygon=[[round(lat, 7), round(lng, 7)] for lng, lat in polygon.exterior.coords],
            viewpoints=node_ids(city, sample.nodes),
            walk=node_ids(city, sample.route.nodes),
            walk_m=round(sample.route.distance_m, 1),
            grid_points=sample.grid_points,
        )
        return data

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        labels = _labels(options.labels)
        cells = furniture_cells(city, list(dict.fromkeys(labels.values())), options.cell_m)
        usable = [c for c, n in cells.items() if n >= options.min_objects]
        skipped = {
            f"cell {c[0]},{c[1]}": f"{n} objects (fewer than {options.min_objects})"
            for c, n in cells.items()
            if n < options.min_objects
        }
        if not cells:
            skipped["labels"] = f"{city.name} maps no {', '.join(labels.values())}"
        rng = np.random.default_rng(seed)
        items: list[TaskItem] = []
        for k in rng.permutation(len(usable)).tolist():
            if len(items) >= size:
                break
            corners = cell_corners(city, usable[k], options.cell_m)
            fields = {
                "name": "Imani",
                "city": city.name,
                "start": f"{corners[0][0]:.7f},{corners[0][1]:.7f}",
                "background": "An urban planner auditing street furniture.",
                "intention": f"Know where the {' and '.join(labels)} are, and how many.",
                "polygon": corners,
                "spacing": options.spacing,
                "labels": list(labels),
            }
            try:
                items.append(self.from_fields(fields, city, item_id=f"{set_name}-{len(items):04d}"))
            except FlaneurError as err:
                skipped[f"cell {usable[k][0]},{usable[k][1]}"] = str(err)
        return made_set(self.kind, city, items, skipped, cells=len(usable))


def _grid_origin(city: City, cell_m: float) -> np.ndarray:
    """The south-west corner of the cells: half a cell beyond the located streets' (so that a
    straight street is not a cell border)."""
    graph = city.graph
    return graph.xy[graph.located].min(axis=0) - cell_m / 2.0


def furniture_cells(city: City, categories: list[str], cell_m: float) -> dict[tuple, int]:
    """Objects of ``categories`` per square cell of ``cell_m`` (``(column, row)`` from
    :func:`_grid_origin`), cells holding none left out."""
    furniture, graph = city.furniture, city.graph
    rows = np.concatenate([furniture.of_kind(c) for c in categories])
    if not rows.size or not graph.located.any():
        return {}
    origin = _grid_origin(city, cell_m)
    cells = np.floor((furniture.xy[rows] - origin) / cell_m).astype(int)
    found: dict[tuple, int] = {}
    for col, row in cells.tolist():
        found[(col, row)] = found.get((col, row), 0) + 1
    return dict(sorted(found.items()))


def cell_corners(city: City, cell: tuple, cell_m: float) -> list[list[float]]:
    """``[lat, lng]`` corners of a cell of :func:`furniture_cells`."""
    graph = city.graph
    origin = _grid_origin(city, cell_m)
    x0, y0 = origin[0] + cell[0] * cell_m, origin[1] + cell[1] * cell_m
    xs = np.array([x0, x0 + cell_m, x0 + cell_m, x0])
    ys = np.array([y0, y0, y0 + cell_m, y0 + cell_m])
    lat, lng = graph.projection.inverse(xs, ys)
    return [[round(float(a), 7), round(float(b), 7)] for a, b in zip(lat, lng, strict=True)]


# ---------------------------------------------------------------- scorers
def score_robot(item: TaskItem, result: dict[str, Any], city: City) -> dict[str, Any]:
    """RX-399's counts against the furniture along its walk (see the module docstring)."""
    memory = VisualMemory.from_dict(result["memory"])
    route = [city.graph.index(n) for n in result["walked"]]
    walked = SurveyResult(memory, route)
    looked = result["settings"]
    settings = SurveySettings(views_per_point=looked["views_per_point"], fov=looked["fov"])
    sums = dict.fromkeys(("reported", "true_positives", "found", "ground_truth", "in_view"), 0)
    exact, error = True, 0
    for category in dict.fromkeys(_labels(item["labels"]).values()):
        figures = evaluate_survey(walked, city, category, radius_m=RANGE_M)
        rows = city.furniture.of_kind(category)
        truth = int(in_view(city, city.furniture.xy[rows], route, settings).sum())
        counted = int(result["counts"].get(category, 0))
        exact = exact and counted == truth
        error += abs(counted - truth)
        for key in ("reported", "true_positives", "found"):
            sums[key] += int(figures[key])
        sums["ground_truth"] += int(figures["ground_truth_objects"])
        sums["in_view"] += truth
    return {
        "count_exact": exact,
        "count_error": error,
        **sums,
        "accuracy": sums["true_positives"] / sums["reported"] if sums["reported"] else None,
        "recall": sums["found"] / sums["ground_truth"] if sums["ground_truth"] else None,
    }


def truth_in_polygon(city: City, polygon: Any, category: str) -> list[int]:
    """Rows of the city's furniture of ``category`` inside ``polygon``."""
    furniture = city.furniture
    rows = furniture.of_kind(category)
    inside = shapely.contains_xy(polygon, furniture.lng[rows], furniture.lat[rows])
    return [int(r) for r in rows[inside]]


def score_planner(item: TaskItem, result: dict[str, Any], city: City) -> dict[str, Any]:
    """Imani's counts against the furniture in the polygon (see the module docstring)."""
    polygon = polygon_from_latlng(item["polygon"])
    within, over, under = True, 0, 0
    counted_all = truth_all = 0
    for category in dict.fromkeys(_labels(item["labels"]).values()):
        counted = int(result["counts"].get(category, 0))
        truth = len(truth_in_polygon(city, polygon, category))
        within = within and abs(counted - truth) <= max(1.0, WITHIN_SHARE * truth)
        over += max(counted - truth, 0)
        under += max(truth - counted, 0)
        counted_all, truth_all = counted_all + counted, truth_all + truth
    errors = dedup_errors(VisualMemory.from_dict(result["memory"]))
    return {
        "count_within": within,
        "count_error": over + under,
        "over": over,
        "under": under,
        "counted": counted_all,
        "ground_truth": truth_all,
        **errors,
    }


__all__ = [
    "PlannerScenario",
    "PlannerScenarios",
    "RobotScenario",
    "RobotScenarios",
    "cell_corners",
    "furniture_cells",
    "score_planner",
    "score_robot",
    "truth_in_polygon",
]

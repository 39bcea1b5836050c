"""Build the place detection set of a city and run a detector on it with resume and progress.

Files (in the folder of ``flaneur bench build``): ``detection-v1.jsonl`` (header with the
ground-truth places, then one viewpoint a line) and per-run results
``detection-v1.<detector>.results.jsonl`` (one line per viewpoint, appended as it is scored;
a rerun skips the viewpoints already there).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from flaneur.bench.detection import (
    DETECTION_VERSION,
    FOVS,
    RADIUS_M,
    SPACING_M,
    build_detection_set,
    evaluate_detection,
)
from flaneur.bench.runner import open_run, progress
from flaneur.bench.sets import write_set
from flaneur.bench.types import VIRL_TO_FLANEUR, load_type_list, type_label
from flaneur.perception.detection import (
    DetectionError,
    Detector,
    SceneDetector,
    StorefrontDetector,
)
from flaneur.services.errors import RegionError
from flaneur.services.region import Region, grid_regions, read_regions
from flaneur.views.base import View
from flaneur.world.builtin import load_city
from flaneur.world.city import City

__all__ = [
    "DETECTORS",
    "build_detection",
    "make_bench_detector",
    "run_detection",
    "write_detection_csv",
]

DETECTORS = ("ocr", "scene")
SET_NAME = f"detection-v{DETECTION_VERSION}.jsonl"


def build_detection(
    city_spec: str,
    out_dir: str | Path,
    *,
    regions: str | Path | None = None,
    types: str = "20",
    cell_m: float = 500.0,
    spacing_m: float = SPACING_M,
    radius_m: float = RADIUS_M,
    per_region: int | None = None,
    seed: int = 0,
    city: City | None = None,
) -> dict[str, Any]:
    """Write ``detection-v1.jsonl`` for a city; return its sizes.

    Raises
    ------
    RegionError
        A given polygon with no street viewpoint on its grid (named), or no viewpoint of
        any region with a place of the list near.
    TypeListError
        Unknown types in the list (named).
    """
    type_list = load_type_list(types)
    given = read_regions(regions) if regions else None
    city = city or load_city(city_spec)
    region_list: list[Region] = given or grid_regions(city, cell_m)
    items, truth, grid = build_detection_set(
        city,
        region_list,
        type_list,
        spacing_m=spacing_m,
        radius_m=radius_m,
        per_region=per_region,
        seed=seed,
    )
    if given:
        empty = [name for name, n in grid.items() if n == 0]
        if empty:
            raise RegionError(
                f"{regions}: region {empty[0]!r} has no street viewpoint within {spacing_m:g} m "
                f"of its {spacing_m:g} m grid (is the polygon inside {city.name}?)"
            )
    if not items:
        where = regions or f"grid of {cell_m:g} m cells"
        raise RegionError(
            f"{where}: no viewpoint has a place of the type list within {radius_m:g} m"
        )
    header = {
        "benchmark": "virl-detection",
        "version": DETECTION_VERSION,
        "city": city_spec,
        "city_name": city.name,
        "types": list(type_list),
        "regions": [r.name for r in region_list],
        "spacing_m": spacing_m,
        "radius_m": radius_m,
        "per_region": per_region,
        "seed": seed,
        "fovs": list(FOVS),
        "grid_viewpoints": grid,
        "places": truth,
    }
    path = write_set(Path(out_dir) / SET_NAME, header, items)
    for stale in Path(out_dir).glob(f"{Path(SET_NAME).stem}.*.results.jsonl"):
        stale.unlink()  # results of the set this one replaces
    return {
        "detection_set": str(path),
        "detection_viewpoints": len(items),
        "detection_grid_viewpoints": sum(grid.values()),
        "detection_places": len(truth),
        "detection_views": sum(len(it["views"]) for it in items),
    }


def make_bench_detector(
    name: str, city: City, types: Sequence[str], *, seed: int = 0, **kwargs: Any
) -> Detector:
    """The detector of the benchmark: ``ocr`` (PP-OCR storefront) or ``scene`` (simulator).

    The scene simulator is told the places' categories and what each type name means
    (V-IRL's types onto flaneur's taxonomy) so it reports the storefronts it drew.
    """
    if name == "ocr":
        if "ocr" not in kwargs:
            from flaneur.paths import cache_dir
            from flaneur.perception.ocr import OCR

            kwargs["ocr"] = OCR(cache_dir=cache_dir("ocr"))  # reruns read PP-OCR from disk
        return StorefrontDetector(**kwargs)
    if name == "scene":
        places = city.places
        return SceneDetector(
            seed=seed,
            places={str(places.ids[r]): places.categories[r] for r in range(len(places))},
            label_categories={type_label(t): VIRL_TO_FLANEUR[t] for t in types},
            **kwargs,
        )
    raise DetectionError(f"unknown detector {name!r}; choose one of {', '.join(DETECTORS)}")


def run_detection(
    set_path: str | Path,
    detector: Detector | str,
    *,
    limit: int | None = None,
    resume: bool = True,
    show_progress: bool = True,
    threshold: float | None = None,
    seed: int = 0,
    view_of: Callable[[str, float, float, float], View] | None = None,
) -> dict[str, Any]:
    """Evaluate a detector (or a name of :data:`DETECTORS`) on a detection set."""
    from flaneur.views.synthetic import SyntheticViews

    suffix = detector if isinstance(detector, str) else detector.name
    run = open_run(
        set_path,
        "virl-detection",
        DETECTION_VERSION,
        str(suffix),
        key="node",
        limit=limit,
        resume=resume,
    )
    types = run.header["types"]
    city = None
    if view_of is None or isinstance(detector, str):
        city = load_city(run.header["city"])
    if isinstance(detector, str):
        detector = make_bench_detector(detector, city, types, seed=seed)
    if view_of is None:
        views = SyntheticViews(city)

        def view_of(node: str, heading: float, pitch: float, fov: float) -> View:
            return views.view(node, heading, pitch=pitch, fov=fov)

    summary = evaluate_detection(
        progress(run.items, f"detection ({detector.name})", show_progress),
        run.header["places"],
        types,
        lambda vs, labels: detector.detect_batch(vs, labels, threshold=threshold),
        view_of,
        done=run.done,
        on_result=run.on_result,
    )
    return {
        **summary,
        "detector": detector.name,
        "city": run.header["city"],
        "results_file": str(run.results),
    }


def write_detection_csv(summary: dict[str, Any], path: str | Path) -> Path:
    """Per-type and per-region rows: ``table,name,places,recall,localisation,box_accuracy``.

    A type's ``recall`` is its share of places recalled with a correct label; a region's is
    its AR (mean recall over the types it has).
    """
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["city", "table", "name", "places", "recall", "localisation", "box_accuracy"])
        city = summary.get("city", "")
        for name, row in summary["per_type"].items():
            out.writerow(
                [city, "type", name, row["places"], _f(row["recall"]), _f(row["localisation"]), ""]
            )
        for name, row in summary["per_region"].items():
            out.writerow(
                [
                    city,
                    "region",
                    name,
                    row["places"],
                    _f(row["ar"]),
                    _f(row["ar_localisation"]),
                    _f(row["box_accuracy"]),
                ]
            )
    return path


def _f(value: float) -> str:
    return "" if value != value else f"{value:.6f}"

"""Perception throughput: detections per second on 640x640 synthetic Helsinki views.

    python benchmarks/detection.py --json [--quick] [--views N] [--repeats R]

Renders ``--views`` views (random viewpoints and headings, fov 60, 640x640; rendering is not
timed), then times the scene detector simulator over all of them, asking for every
street-furniture kind:

* ``views_per_s`` / ``boxes_per_s`` — first pass (a fresh detector, nothing cached);
* ``cached_views_per_s`` / ``cached_boxes_per_s`` — the same views again (cache hits);
* ``cache_speedup`` — cached over uncached views per second.

Each figure is the median of ``--repeats`` runs. ``--ocr`` adds the OCR storefront detector
on a quarter of the views (it runs PP-OCR and the sentence embedder, so it is much slower).

``place_detection``: the scene simulator and the oracle on the first ``--viewpoints``
viewpoints of ``helsinki-virl-detection-v1`` (V-IRL's place detection, 13 views each; 3 with
``--quick``) through the runner (:func:`flaneur.evaluate.runner.run_benchmark`): AR, AR10,
AR20, localisation AR and matched-box accuracy, and viewpoints per second (rendering
included).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.perception.detection import StorefrontDetector, make_detector
from flaneur.perception.ocr import OCR
from flaneur.views.synthetic import SyntheticViews
from flaneur.world.builtin import load_city
from flaneur.world.furniture import FURNITURE_KINDS


def timed(detector_factory, views, labels, repeats: int) -> dict:
    first, again, boxes = [], [], 0
    for _ in range(repeats):
        detector = detector_factory()
        t0 = time.perf_counter()
        found = detector.detect_batch(views, labels)
        first.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        detector.detect_batch(views, labels)
        again.append(time.perf_counter() - t0)
        boxes = sum(len(f) for f in found)
    t1, t2 = statistics.median(first), statistics.median(again)
    return {
        "views": len(views),
        "boxes": boxes,
        "views_per_s": round(len(views) / t1, 1),
        "boxes_per_s": round(boxes / t1, 1),
        "cached_views_per_s": round(len(views) / t2, 1),
        "cached_boxes_per_s": round(boxes / t2, 1),
        "cache_speedup": round(t1 / t2, 1),
    }


def place_detection(viewpoints: int) -> dict:
    """The scene simulator and the oracle on the first ``viewpoints`` of the built-in place
    detection set, through the runner; their task-set figures and speed."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("scene", "oracle"):
            config = RunConfig(
                agents=(name,), tasks=("helsinki-virl-detection-v1",), limit=viewpoints
            )
            t0 = time.perf_counter()
            summary = run_benchmark(config, Path(tmp) / name, progress="none")
            seconds = time.perf_counter() - t0
            (entry,) = summary["runs"]
            figures = entry.get("task_metrics") or {}
            out[name] = {k: (v or {}).get("value") for k, v in figures.items()}
            out[name]["places"] = (figures.get("ar") or {}).get("n")
            out[name]["viewpoints"] = entry["rows"]
            out[name]["viewpoints_per_s"] = round(entry["rows"] / seconds, 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="20 views, 3 repeats")
    parser.add_argument("--views", type=int, default=100, help="views to detect in")
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--ocr", action="store_true", help="also time the OCR detector")
    parser.add_argument("--seed", type=int, default=0, help="seed of the view sample")
    parser.add_argument(
        "--viewpoints", type=int, default=20, help="place detection viewpoints (--quick: 3)"
    )
    args = parser.parse_args(argv)
    n_views, repeats = (20, 3) if args.quick else (args.views, args.repeats)
    city = load_city("helsinki")
    provider = SyntheticViews(city, scene_cache=True, memory_items=0).prepare()
    rng = np.random.default_rng(args.seed)
    nodes = rng.integers(city.graph.n_nodes, size=n_views)
    headings = rng.uniform(0, 360, size=n_views)
    views = [
        provider.view(int(n), float(h), fov=60.0, size=(640, 640))
        for n, h in zip(nodes, headings, strict=True)
    ]
    for view in views:
        view.digest()  # the pixel hash is part of every lookup; computed once per view
    labels = list(FURNITURE_KINDS)
    result = {
        "size": [640, 640],
        "labels": labels,
        "scene": timed(lambda: make_detector("scene", seed=0), views, labels, repeats),
    }
    if args.ocr:
        quarter = views[: max(1, n_views // 4)]
        fresh = lambda: StorefrontDetector(ocr=OCR())  # noqa: E731 - no disk cache: timed
        result["ocr"] = timed(fresh, quarter, ["cafe", "restaurant", "shop"], 1)
    result["place_detection"] = place_detection(3 if args.quick else args.viewpoints)
    if args.json:
        print(json.dumps(result))
    else:
        for name in ("scene", "ocr", "place_detection"):
            if name in result:
                print(name, result[name])
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Calibrate Hiro's active-detection thresholds for the OCR storefront detector.

Usage::

    python benchmarks/hiro_calibration.py --json            # 400 views, seed 0
    python benchmarks/hiro_calibration.py --views 40         # a quick look

No episode is read: the views are drawn from the built-in Helsinki city alone. Each view
stands at a random street viewpoint within 20 m of a random named place (of a taxonomy
category) and looks towards it (its bearing +- up to 20 degrees), 60 degrees wide, 640 x
640 px, rendered by the synthetic renderer, as Hiro's views are. Hiro is asked for 3 place
types, the 3 closest to a category's label by the sentence embedder (as he turns a need
into types): on half of the views the category of the place looked at, on the other half a
category drawn at random from the named places' categories that the place does not have
(mostly absent, where false boxes come from).

Every setting runs Hiro's own perception (:meth:`flaneur.agents.hiro.HiroEyes.look_now`:
OCR storefront detector, glossing embedder, :func:`~flaneur.perception.matching.match_box`
with 20 m and +- 5 degrees) on every view:

* a *sighting* is a box Hiro matched to a place; it is **correct** when the place has the
  box's label among its categories (the right type);
* the *positives* of a view are the places of the 3 types within 20 m of the viewpoint
  whose sign or label the renderer drew in the view (its metadata, read here for scoring
  only; Hiro never reads it); one is **found** when a correct sighting matched it;
* precision = correct / sightings, recall = found / positives, F1 their harmonic mean,
  pooled over all views; ``zoom`` is the zoomed views per view.

The grid: the single pass at 0.25-0.60, and active detection with proposals at 0.25-0.40
and checks from the proposal threshold to 0.60 (steps of 0.05). The detector caches every
box with its score and applies the threshold on the way out, so each view and zoomed view
is read once for the whole grid.

``chosen`` is the best F1 among the active settings whose check is higher than the proposal
threshold (V-IRL's scheme) and that take at most :data:`MAX_ZOOM_PER_VIEW` zoomed view per
view on average (active detection may at most double Hiro's detection views; ties: fewer
zoomed views). ``best_active`` is the best F1 without these two conditions, ``best_single``
the best single pass.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from flaneur.agents.hiro.perception import HiroEyes
from flaneur.agents.hiro.rules import MATCH_RADIUS_M, VIEW_FOV
from flaneur.agents.virl.rating import closest_types
from flaneur.geo import bearing
from flaneur.views.synthetic import SyntheticViews
from flaneur.world.builtin import load_city
from flaneur.world.city import City
from flaneur.world.taxonomy import CATEGORIES

PASSIVE = (0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)
PROPOSALS = (0.25, 0.30, 0.35, 0.40)
CHECKS = (0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)
MAX_OFFSET_DEG = 20.0
MAX_ZOOM_PER_VIEW = 1.0


def settings() -> list[tuple[str, float, float]]:
    """``(mode, proposal or single-pass threshold, check)`` of the grid."""
    grid = [("single", t, t) for t in PASSIVE]
    grid += [("active", p, c) for p in PROPOSALS for c in CHECKS if c >= p]
    return grid


def sample_views(city: City, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` viewpoints facing named places, with the 3 types Hiro is asked for."""
    rng = np.random.default_rng(seed)
    graph, places = city.graph, city.places
    named = [
        r
        for r in range(len(places))
        if places.names[r] and places.categories[r] and places.categories[r][0] in CATEGORIES
    ]
    pool = [places.categories[r][0] for r in named]  # category frequencies of named places
    items: list[dict[str, Any]] = []
    while len(items) < n:
        row = int(named[rng.integers(len(named))])
        near = np.flatnonzero(np.hypot(*(graph.xy - places.xy[row]).T) <= MATCH_RADIUS_M).tolist()
        near = [i for i in near if graph.located[i]]
        if not near:
            continue
        node = int(near[rng.integers(len(near))])
        towards = float(bearing(graph.lat[node], graph.lng[node], places.lat[row], places.lng[row]))
        heading = (towards + rng.uniform(-MAX_OFFSET_DEG, MAX_OFFSET_DEG)) % 360.0
        facing = len(items) % 2 == 0
        if facing:
            sought = places.categories[row][0]
        else:
            sought = pool[rng.integers(len(pool))]
            if sought in places.categories[row]:
                continue
        types = list(closest_types(CATEGORIES[sought].label, 3))
        items.append(
            {
                "node": node,
                "heading": round(heading, 2),
                "place": row,
                "sought": sought,
                "types": types,
                "facing": facing,
            }
        )
    return items


def positives(city: City, views: Any, item: dict[str, Any]) -> set[int]:
    """Places of the item's types within 20 m whose sign the renderer drew in the view."""
    places = city.places
    view = views.view(item["node"], item["heading"], fov=VIEW_FOV, size=(640, 640))
    drawn = {s["place_id"] for s in view.metadata.get("signs", [])}
    rows, _ = places.within(city.graph.xy[item["node"]], MATCH_RADIUS_M)
    wanted = set(item["types"])
    return {
        int(r)
        for r in rows.tolist()
        if str(places.ids[r]) in drawn and wanted & set(places.categories[r])
    }


def calibrate(city: City, items: Sequence[dict[str, Any]], eyes: HiroEyes) -> list[dict]:
    """Counts and precision, recall and F1 of every setting of the grid on ``items``."""
    grid = settings()
    counts = {s: np.zeros(5, dtype=np.int64) for s in grid}  # sightings correct pos found zoom
    places = city.places
    for item in items:
        truth = positives(city, eyes.views, item)
        for setting in grid:
            mode, proposal, check = setting
            eyes.active = mode == "active"
            eyes.detector.threshold = proposal  # the single pass's threshold
            eyes.proposal_threshold, eyes.check_threshold = proposal, check
            before = eyes.zoom_views
            (seen,) = eyes.look_now(item["node"], [item["heading"]], item["types"])
            correct = [s for s in seen if s.detection.label in places.categories[s.match.place_row]]
            found = {int(s.match.place_row) for s in correct} & truth
            counts[setting] += (len(seen), len(correct), len(truth), len(found), 0)
            counts[setting][4] += eyes.zoom_views - before
    out = []
    for (mode, proposal, check), row in counts.items():
        seen, correct, pos, found, zoom = (int(v) for v in row)
        precision = correct / seen if seen else 0.0
        recall = found / pos if pos else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out.append(
            {
                "mode": mode,
                "proposal": proposal,
                "check": check if mode == "active" else None,
                "sightings": int(seen),
                "correct": int(correct),
                "positives": int(pos),
                "found": int(found),
                "precision": round(precision, 4),
                "recall": round(recall, 4),
                "f1": round(f1, 4),
                "zoom_per_view": round(zoom / max(1, len(items)), 2),
            }
        )
    return out


def best(rows: Sequence[dict], mode: str, *, chosen: bool = False) -> dict:
    """The row of ``mode`` with the best F1 (ties: fewer zoomed views, then lower
    thresholds); ``chosen``: only checks above the proposal and at most
    :data:`MAX_ZOOM_PER_VIEW` zoomed views per view."""
    mine = [r for r in rows if r["mode"] == mode]
    if chosen:
        mine = [
            r
            for r in mine
            if r["check"] > r["proposal"] and r["zoom_per_view"] <= MAX_ZOOM_PER_VIEW
        ]
    return max(mine, key=lambda r: (r["f1"], -r["zoom_per_view"], -r["proposal"]))


def main(argv: list[str] | None = None) -> dict:
    """Run the calibration and print the grid."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--views", type=int, default=400, help="views to score")
    parser.add_argument("--seed", type=int, default=0, help="seed of the viewpoints")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.views < 2:
        parser.error(f"--views must be at least 2, not {args.views}")
    started = time.perf_counter()
    city = load_city("helsinki")
    views = SyntheticViews(city, scene_cache=True, memory_items=512)
    eyes = HiroEyes(city, views)
    items = sample_views(city, args.views, args.seed)
    rows = calibrate(city, items, eyes)
    out = {
        "views": len(items),
        "seed": args.seed,
        "facing": sum(it["facing"] for it in items),
        "grid": rows,
        "best_single": best(rows, "single"),
        "best_active": best(rows, "active"),
        "chosen": best(rows, "active", chosen=True),
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print("| mode | proposal | check | sightings | P | R | F1 | zoomed / view |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            check = "" if r["check"] is None else f"{r['check']:.2f}"
            print(
                f"| {r['mode']} | {r['proposal']:.2f} | {check} | {r['sightings']} | "
                f"{r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | "
                f"{r['zoom_per_view']} |"
            )
        for key in ("chosen", "best_active", "best_single"):
            print(key, out[key])
        print("seconds", out["seconds"])
    return out


if __name__ == "__main__":
    main()

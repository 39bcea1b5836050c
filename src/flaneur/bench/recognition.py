"""Place recognition (V-IRL §5, ``place_centric_recog.py``): storefront view -> place type.

:func:`build_recognition_set` picks named places of the chosen type list in each region and
aims a view at each one's facade from its nearest street viewpoint. A :class:`Recogniser`
scores a view against the type names; :func:`evaluate_recognition` ranks them (top-1/3/5)
and computes mAcc (:func:`flaneur.bench.metrics.mean_accuracy`) on top-1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from flaneur.bench.metrics import mean_accuracy, topk_hits
from flaneur.bench.sets import score_items
from flaneur.bench.types import place_virl_types, type_label
from flaneur.geo import bearing
from flaneur.services.region import Region, region_of_points
from flaneur.views.base import View
from flaneur.world.city import City

__all__ = [
    "RECOGNITION_VERSION",
    "Recogniser",
    "build_recognition_set",
    "evaluate_recognition",
]

RECOGNITION_VERSION = 1
"""Version of the recognition set format and construction rules."""


class Recogniser(Protocol):
    """Scores a view against place-type names (higher is more likely)."""

    name: str

    def scores(self, image: Image.Image, labels: Sequence[str]) -> NDArray[np.float64]:
        """One score per label."""
        ...


def build_recognition_set(
    city: City,
    regions: Sequence[Region],
    types: Sequence[str],
    *,
    seed: int = 0,
    per_region: int = 20,
    max_view_m: float = 40.0,
    fov: float = 60.0,
    pitch: float = 5.0,
) -> list[dict[str, Any]]:
    """One storefront view per named place that has a type of ``types``.

    Parameters
    ----------
    city, regions, types
        The city, the regions to draw from and the V-IRL type list.
    seed
        Seed of the per-region sample (places are shuffled with it, then the first
        ``per_region`` kept); the same inputs give the same set.
    per_region
        At most this many places per region (V-IRL keeps every place with a photo).
    max_view_m
        Places farther than this from every street viewpoint are skipped (no facade view).
    fov, pitch
        Camera of the view, aimed from the nearest viewpoint straight at the place.

    Returns
    -------
    list of dict
        Items ``{"place_id", "name", "region", "types", "node", "heading", "pitch", "fov",
        "distance_m"}``, ordered by region then sample order.
    """
    places, graph = city.places, city.graph
    names = region_of_points(list(regions), places.lat, places.lng)
    rng = np.random.default_rng(seed)
    items: list[dict[str, Any]] = []
    for region in regions:
        rows = [
            r
            for r in range(len(places))
            if names[r] == region.name
            and places.names[r]
            and place_virl_types(places.categories[r], types)
        ]
        rows = [rows[i] for i in rng.permutation(len(rows))]
        kept = 0
        for r in rows:
            if kept >= per_region:
                break
            node = int(graph.nearest_node(places.lat[r], places.lng[r]))
            dist = float(np.hypot(*(graph.xy[node] - places.xy[r])))
            if dist > max_view_m:
                continue
            heading = float(bearing(graph.lat[node], graph.lng[node], places.lat[r], places.lng[r]))
            items.append(
                {
                    "place_id": str(places.ids[r]),
                    "name": str(places.names[r]),
                    "region": region.name,
                    "types": list(place_virl_types(places.categories[r], types)),
                    "node": str(graph.ids[node]),
                    "heading": round(heading % 360.0, 2),
                    "pitch": pitch,
                    "fov": fov,
                    "distance_m": round(dist, 1),
                }
            )
            kept += 1
    return items


def evaluate_recognition(
    items: Iterable[dict[str, Any]],
    types: Sequence[str],
    recogniser: Recogniser,
    image_of: Callable[[dict[str, Any]], Image.Image | View],
    *,
    done: dict[str, dict[str, Any]] | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Score every item, rank the types and compute top-1/3/5 and mAcc.

    Parameters
    ----------
    items
        Items of :func:`build_recognition_set`.
    types
        The candidate types (scored as their words, ``"convenience store"``).
    recogniser
        The recogniser.
    image_of
        Returns the view of an item (a :class:`View` or a PIL image).
    done
        Results already computed, by place id (resume); they are not scored again.
    on_result
        Called with each new per-place result (to append it to a results file).

    Returns
    -------
    dict
        ``places``, ``top1``, ``top3``, ``top5``, ``acc``, ``macc``, ``per_type``
        (``{type: [accuracy, weight]}``), ``per_region`` and ``results`` (per place).
    """
    labels = [type_label(t) for t in types]

    def score(item: dict[str, Any]) -> dict[str, Any]:
        image = image_of(item)
        pil = image.image if isinstance(image, View) else image
        scores = np.asarray(recogniser.scores(pil, labels), dtype=np.float64)
        hits = topk_hits(scores, list(types), item["types"])
        best = [types[i] for i in np.argsort(-scores, kind="stable")[:5]]
        return {
            "place_id": item["place_id"],
            "region": item.get("region"),
            "types": item["types"],
            "top1": hits[1],
            "top3": hits[3],
            "top5": hits[5],
            "predicted": best,
        }

    results = score_items(items, "place_id", score, done, on_result)
    return summarize_recognition(results)


def summarize_recognition(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Top-k accuracies, mAcc, per-type and per-region tables of per-place results."""
    n = len(results)
    m = mean_accuracy((r["types"], r["top1"]) for r in results)
    regions: dict[str, list[bool]] = {}
    for r in results:
        regions.setdefault(str(r.get("region")), []).append(bool(r["top1"]))
    return {
        "places": n,
        "top1": sum(r["top1"] for r in results) / n if n else 0.0,
        "top3": sum(r["top3"] for r in results) / n if n else 0.0,
        "top5": sum(r["top5"] for r in results) / n if n else 0.0,
        "acc": m.acc,
        "macc": m.macc,
        "per_type": {t: [a, w] for t, (a, w) in m.per_type.items()},
        "per_region": {k: [sum(v) / len(v), len(v)] for k, v in sorted(regions.items())},
        "results": list(results),
    }

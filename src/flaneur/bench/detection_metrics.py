"""Metrics of V-IRL's place detection benchmark (``place_localization.py``), exactly defined.

* **Box → place**: a box spans the compass headings of its left and right edges (seen from
  the viewpoint); among the ground-truth places within 25 m of that viewpoint whose bearing
  lies inside the span, the nearest is *matched* (:func:`match_box`). A matched box is
  *correct* when its label is one of the place's types.
* **Recall of a type** ``t``: the places having ``t`` that some correct box labelled ``t``
  matched, over all places having ``t`` (a place with ``k`` types counts once under each).
  **AR** is the mean recall over the types that have at least one place.
* **Localisation recall** of a type: the places having ``t`` that any box matched, whatever
  its label (V-IRL's "category-agnostic TP"); its mean over types is ``ar_localisation``.
* **Classification accuracy of matched boxes**: correct matched boxes / matched boxes.
* **AR10, AR20** (V-IRL Table 3): AR with at most 10 (20) proposals per view, the
  best-scoring boxes of each view (:func:`top_boxes`), as AR@k counts at most ``k``
  detections per image in detection benchmarks. **AR** itself takes every box above the
  detector's threshold.

:func:`detection_figures` gives these for a whole task set, each with a 95% interval: a
seeded bootstrap over the ground-truth places for the recalls (the same places give the same
interval), the Wilson interval for the accuracy of matched boxes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from flaneur.bench.metrics import (
    BOOTSTRAP_REPS,
    BOOTSTRAP_SEED,
    bootstrap_counts,
    interval95,
    type_means,
)
from flaneur.metrics.summary import wilson_interval

PROPOSALS = (10, 20)
"""Proposals per view of V-IRL's AR10 and AR20."""


def heading_in_span(heading: float, span: tuple[float, float]) -> bool:
    """Whether a compass ``heading`` lies in ``span = (left, right)``, clockwise from left.

    A span whose left edge is numerically larger than its right one wraps through north.

    Examples
    --------
    >>> heading_in_span(5.0, (350.0, 20.0)), heading_in_span(180.0, (350.0, 20.0))
    (True, False)
    """
    left, right = span[0] % 360.0, span[1] % 360.0
    h = heading % 360.0
    if left <= right:
        return left <= h <= right
    return h >= left or h <= right


def match_box(
    span: tuple[float, float], candidates: Iterable[tuple[str, float, float]]
) -> str | None:
    """The nearest candidate place whose bearing lies in the box's heading ``span``.

    Parameters
    ----------
    span
        ``(left, right)`` compass headings of the box's edges.
    candidates
        ``(place_id, bearing from the viewpoint, distance in metres)`` of the ground-truth
        places near the viewpoint (already within the matching radius).

    Returns
    -------
    str or None
        The matched place id (ties on distance: the first given), or None.
    """
    best: tuple[float, str] | None = None
    for pid, bearing_deg, dist in candidates:
        if heading_in_span(bearing_deg, span) and (best is None or dist < best[0]):
            best = (dist, pid)
    return None if best is None else best[1]


def recall_matrix(
    place_types: Mapping[str, Sequence[str]],
    boxes: Iterable[tuple[str, str | None]],
    types: Sequence[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per place and type: ``(has, recalled, localised)`` boolean matrices.

    Rows follow ``place_types``' order, columns ``types``: ``has[i, j]`` when place ``i`` has
    type ``j``, ``recalled[i, j]`` when some box labelled ``j`` matched it (and it has ``j``),
    ``localised[i, j]`` when any box matched it (and it has ``j``).
    """
    index = {pid: i for i, pid in enumerate(place_types)}
    column = {t: j for j, t in enumerate(types)}
    has = np.zeros((len(index), len(column)), dtype=bool)
    for pid, ts in place_types.items():
        for t in ts:
            if t in column:
                has[index[pid], column[t]] = True
    recalled = np.zeros_like(has)
    matched = np.zeros(len(index), dtype=bool)
    for label, matched_pid in boxes:
        if matched_pid is None:
            continue
        matched[index[matched_pid]] = True
        if label in column:
            recalled[index[matched_pid], column[label]] = True
    return has, recalled & has, has & matched[:, None]


def _mean_recall(has: np.ndarray, hit: np.ndarray) -> float:
    """Mean over the types with places of their share of places hit (NaN without places)."""
    total = has.sum(axis=0)
    present = total > 0
    if not present.any():
        return float("nan")
    return float(np.mean(hit.sum(axis=0)[present] / total[present]))


def top_boxes(boxes: Sequence[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """The ``k`` best-scoring boxes of each view (``box["view"]``); ties keep the given
    order."""
    by_view: dict[Any, list[dict[str, Any]]] = {}
    for box in boxes:
        by_view.setdefault(box["view"], []).append(box)
    kept = []
    for group in by_view.values():
        kept += sorted(group, key=lambda b: -float(b["score"]))[:k]
    return kept


def _figure(value: float, n: int, ci: Any) -> dict[str, Any]:
    if not math.isfinite(value):
        return {"value": None, "n": n, "ci95": None}
    return {"value": value, "n": n, "ci95": list(ci) if ci else None}


def detection_figures(
    viewpoints: Sequence[tuple[Sequence[dict[str, Any]], Sequence[dict[str, Any]]]],
    types: Sequence[str],
    *,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """AR, AR10, AR20, localisation AR and box accuracy of a task set, with intervals.

    Parameters
    ----------
    viewpoints
        Per scored viewpoint: its ground-truth places (``{"id", "types"}``) and its matched
        boxes (``{"view", "type", "score", "place"}``, see
        :func:`flaneur.bench.detection.match_boxes`). A place near several viewpoints is
        one place.
    types
        The type list.
    reps, seed
        Bootstrap resamples of the places and their seed.

    Returns
    -------
    dict
        ``ar``, ``ar10``, ``ar20``, ``ar_localisation`` (``n``: places) and ``box_accuracy``
        (``n``: matched boxes), each ``{"value", "n", "ci95"}``; ``value`` is ``None`` when
        no place (or no matched box) is there to score.
    """
    place_types: dict[str, list[str]] = {}
    for places, _ in viewpoints:
        for p in places:
            place_types.setdefault(str(p["id"]), list(p["types"]))
    n = len(place_types)
    counts = bootstrap_counts(n, reps, seed)
    chosen = {"ar": [b for _, boxes in viewpoints for b in boxes]}
    for k in PROPOSALS:
        chosen[f"ar{k}"] = [b for _, boxes in viewpoints for b in top_boxes(boxes, k)]
    figures: dict[str, Any] = {}
    for name, boxes in chosen.items():
        pairs = [(b["type"], b["place"]) for b in boxes]
        has, recalled, localised = recall_matrix(place_types, pairs, types)
        ci = interval95(type_means(counts, has.astype(float), recalled.astype(float)))
        figures[name] = _figure(_mean_recall(has, recalled), n, ci)
        if name == "ar":
            ci = interval95(type_means(counts, has.astype(float), localised.astype(float)))
            figures["ar_localisation"] = _figure(_mean_recall(has, localised), n, ci)
    matched = [b for b in chosen["ar"] if b["place"] is not None]
    correct = sum(b["type"] in place_types[b["place"]] for b in matched)
    accuracy = correct / len(matched) if matched else float("nan")
    figures["box_accuracy"] = _figure(
        accuracy, len(matched), wilson_interval(correct, len(matched)) if matched else None
    )
    return figures

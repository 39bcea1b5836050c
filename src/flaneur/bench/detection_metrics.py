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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["DetectionScore", "heading_in_span", "match_box", "score_detection"]


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


@dataclass(frozen=True)
class DetectionScore:
    """Recall per type, AR, localisation AR and the accuracy of matched boxes.

    Attributes
    ----------
    ar
        Mean over types (with at least one place) of the type's recall; NaN without places.
    ar_localisation
        Mean over the same types of the share of their places matched by any box.
    box_accuracy
        Correct matched boxes / matched boxes (NaN when no box matched).
    boxes, matched_boxes, correct_boxes
        Box counts.
    places
        Ground-truth places.
    per_type
        ``{type: {"places", "localised", "recalled", "recall", "localisation"}}``.
    """

    ar: float
    ar_localisation: float
    box_accuracy: float
    boxes: int
    matched_boxes: int
    correct_boxes: int
    places: int
    per_type: dict[str, dict[str, float]]


def score_detection(
    place_types: Mapping[str, Sequence[str]],
    boxes: Iterable[tuple[str, str | None]],
    types: Sequence[str] | None = None,
) -> DetectionScore:
    """Score boxes against ground-truth places.

    Parameters
    ----------
    place_types
        ``{place_id: its types}`` of every ground-truth place.
    boxes
        ``(label type, matched place id or None)`` per box.
    types
        The type list (sets the order of ``per_type``); default: the types of the places.

    Returns
    -------
    DetectionScore

    Examples
    --------
    >>> s = score_detection({"p": ["cafe", "bakery"], "q": ["bar"]},
    ...                     [("cafe", "p"), ("bar", "p"), ("bar", None)])
    >>> s.ar, s.ar_localisation, s.box_accuracy  # cafe 1/1, bakery 0/1, bar 0/1
    (0.3333333333333333, 0.6666666666666666, 0.5)
    """
    localised: set[str] = set()
    recalled: dict[str, set[str]] = {}
    n_boxes = n_matched = n_correct = 0
    for label, pid in boxes:
        n_boxes += 1
        if pid is None:
            continue
        n_matched += 1
        localised.add(pid)
        if label in place_types[pid]:
            n_correct += 1
            recalled.setdefault(pid, set()).add(label)
    order = (
        list(types) if types is not None else sorted({t for v in place_types.values() for t in v})
    )
    per_type: dict[str, dict[str, float]] = {}
    for t in order:
        having = [pid for pid, ts in place_types.items() if t in ts]
        if not having:
            continue
        loc = sum(pid in localised for pid in having)
        rec = sum(t in recalled.get(pid, ()) for pid in having)
        per_type[t] = {
            "places": len(having),
            "localised": loc,
            "recalled": rec,
            "recall": rec / len(having),
            "localisation": loc / len(having),
        }
    recalls = [v["recall"] for v in per_type.values()]
    locs = [v["localisation"] for v in per_type.values()]
    return DetectionScore(
        ar=float(np.mean(recalls)) if recalls else float("nan"),
        ar_localisation=float(np.mean(locs)) if locs else float("nan"),
        box_accuracy=n_correct / n_matched if n_matched else float("nan"),
        boxes=n_boxes,
        matched_boxes=n_matched,
        correct_boxes=n_correct,
        places=len(place_types),
        per_type=per_type,
    )

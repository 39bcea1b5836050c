"""Matching what is seen to what is on the map: fuzzy names and box-to-place frustums.

Box-to-place matching follows V-IRL (Fig. 14): a 2D box detected in a view spans a range of
compass directions from the viewpoint, i.e. a frustum; the nearest place inside it and
within a radius is the match, otherwise the detection is a false positive.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from flaneur.geo import angle_diff
from flaneur.views.base import View
from flaneur.world.city import City

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


@lru_cache(maxsize=65536)
def normalize_name(text: str) -> str:
    """Lower-case ASCII words, accents dropped, punctuation to spaces (``"Kämp!"``: ``"kamp"``)."""
    folded = unicodedata.normalize("NFKD", text)
    folded = "".join(c for c in folded if not unicodedata.combining(c)).casefold()
    folded = folded.replace("ß", "ss").replace("ø", "o").replace("æ", "ae")
    return _NON_ALNUM.sub(" ", folded).strip()


def _ratio(a: str, b: str) -> float:
    if not a or not b:
        return 0.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


@lru_cache(maxsize=262144)
def fuzzy_ratio(name: str, text: str) -> float:
    """Similarity in [0, 1] of a landmark name and a piece of text.

    The best of: the whole strings, the strings without spaces (OCR often drops them),
    and the name against every run of consecutive words of ``text`` (a sign that says
    more than the name still matches it).
    """
    a, b = normalize_name(name), normalize_name(text)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    best = max(_ratio(a, b), _ratio(a.replace(" ", ""), b.replace(" ", "")))
    words = b.split()
    target = len(a.replace(" ", ""))
    if len(words) > 1 and best < 1.0:
        for i in range(len(words)):
            run = ""
            for j in range(i, len(words)):
                run += words[j]
                if len(run) > 1.5 * target + 2:
                    break
                if len(run) >= 0.6 * target:
                    best = max(best, _ratio(a.replace(" ", ""), run))
    return best


@dataclass(frozen=True)
class BoxMatch:
    """The place a 2D box in a view points at (or a false positive).

    Attributes
    ----------
    matched
        Whether a place lies inside the box's frustum within the radius.
    place_row
        Row of the place in ``city.places`` (None if not matched).
    place_id, name
        Id and name of the matched place.
    distance_m
        Distance from the viewpoint to the matched place.
    heading_range
        ``(left, right)`` compass headings spanned by the box.
    """

    matched: bool
    place_row: int | None
    place_id: str | None
    name: str | None
    distance_m: float | None
    heading_range: tuple[float, float]


def match_box(
    city: City,
    view: View,
    box: Sequence[float],
    *,
    radius_m: float = 50.0,
    candidates: ArrayLike | None = None,
    named_only: bool = False,
    margin_deg: float = 0.0,
) -> BoxMatch:
    """Match a box ``(x0, y0, x1, y1)`` in ``view`` to the nearest place in its frustum.

    Parameters
    ----------
    city
        The city of the view.
    view
        The view the box was found in (its node, heading, fov and width define the rays).
    box
        Pixel box; only its horizontal extent is used (places are points on the ground).
    radius_m
        Places farther than this are not matched.
    candidates
        Restrict the match to these place rows (e.g. the places of one category).
    named_only
        Only match places with a name.
    margin_deg
        A place up to this many degrees outside the box's heading span still matches
        (V-IRL's ``HEADING_EPS``; the intentional explorer uses 5).
    """
    x0, x1 = float(min(box[0], box[2])), float(max(box[0], box[2]))
    left, right = view.bearing_of_x(x0), view.bearing_of_x(x1)
    span = (left, right)
    node = city.graph.index(view.node)
    rows, dist = city.places.within(city.graph.xy[node], radius_m)
    if candidates is not None and rows.size:
        keep = np.isin(rows, np.asarray(candidates, dtype=np.int64))
        rows, dist = rows[keep], dist[keep]
    if named_only and rows.size:
        keep = city.places.names[rows] != ""
        rows, dist = rows[keep], dist[keep]
    if rows.size:
        delta = city.places.xy[rows] - city.graph.xy[node]
        bearing = np.degrees(np.arctan2(delta[:, 0], delta[:, 1])) % 360.0
        width = angle_diff(right, left) % 360.0 + 2.0 * margin_deg
        offset = angle_diff(bearing, left - margin_deg) % 360.0
        inside = (offset <= width) | (dist < 1e-6)
        rows, dist = rows[inside], dist[inside]
    if rows.size == 0:
        return BoxMatch(False, None, None, None, None, span)
    row = int(rows[0])
    return BoxMatch(
        True, row, str(city.places.ids[row]), str(city.places.names[row]), float(dist[0]), span
    )

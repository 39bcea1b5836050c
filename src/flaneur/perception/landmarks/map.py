"""``MapLandmarks``: the map oracle - places inside the view frustum and radius (V-IRL)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from flaneur.perception.landmarks.base import LandmarkObservation, LandmarkScorer, unique_landmarks
from flaneur.perception.matching import fuzzy_ratio, normalize_name
from flaneur.views.base import View
from flaneur.world.city import City


class MapLandmarks(LandmarkScorer):
    """A landmark is visible when a place of that name lies inside the view's field of view
    and within ``radius_m`` of the viewpoint (no line-of-sight test: it is the oracle).

    Parameters
    ----------
    city
        The city whose places are the landmarks.
    radius_m
        How far the oracle sees.
    match
        Fuzzy ratio at which a place name counts as the landmark name (1.0 = same name
        after normalisation).
    categories
        Also match landmarks to place categories (``"cafe"`` finds any café in view).

    Notes
    -----
    The score is the closeness ``1 - distance / radius_m`` of the nearest matching place.
    """

    name = "map"

    def __init__(
        self, city: City, *, radius_m: float = 50.0, match: float = 0.9, categories: bool = True
    ) -> None:
        self.city = city
        self.radius_m = radius_m
        self.match = match
        self.categories = categories

    def _matches(self, landmark: str, rows: np.ndarray) -> np.ndarray:
        places = self.city.places
        target = normalize_name(landmark)
        keep = []
        for r in rows.tolist():
            name = str(places.names[r])
            ok = bool(name) and (
                normalize_name(name) == target
                or (self.match < 1.0 and fuzzy_ratio(landmark, name) >= self.match)
            )
            if not ok and self.categories:
                ok = any(
                    normalize_name(c.replace("_", " ")) == target for c in places.categories[r]
                )
            keep.append(ok)
        return rows[np.asarray(keep, dtype=bool)] if keep else rows

    def score(self, view: View, landmarks: Sequence[str]) -> list[LandmarkObservation]:
        """One observation per landmark: the nearest matching place in the frustum."""
        graph = self.city.graph
        node = graph.index(view.node)
        xy = graph.xy[node]
        rows, dist, rel = self.city.places.in_view(
            xy, view.heading, fov=view.fov, radius_m=self.radius_m
        )
        order = {int(r): k for k, r in enumerate(rows.tolist())}
        out = []
        for landmark in unique_landmarks(landmarks):
            hits = self._matches(landmark, rows)
            if hits.size == 0:
                out.append(
                    LandmarkObservation(landmark, False, 0.0, source=self.name, node=view.node)
                )
                continue
            k = order[int(hits[0])]  # rows are nearest first
            d, b = float(dist[k]), float(rel[k])
            out.append(
                LandmarkObservation(
                    landmark=landmark,
                    visible=True,
                    score=round(1.0 - d / self.radius_m, 4),
                    heading=(view.heading + b) % 360.0,
                    relative_bearing=b,
                    source=self.name,
                    place_id=str(self.city.places.ids[hits[0]]),
                    distance_m=d,
                    evidence=str(self.city.places.names[hits[0]]),
                    node=view.node,
                )
            )
        return out

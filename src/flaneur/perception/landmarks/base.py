"""The interface shared by every landmark scorer.

A scorer answers "which of these named landmarks are visible in this view?": for each
landmark it returns a :class:`LandmarkObservation` with a score, a visibility decision and,
where the scorer can tell, the compass direction in which the landmark is seen.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from flaneur.views.base import View


@dataclass(frozen=True)
class LandmarkObservation:
    """What a scorer says about one landmark in one view.

    Attributes
    ----------
    landmark
        The landmark name as asked.
    visible
        The scorer's decision.
    score
        The scorer's evidence (fuzzy ratio for OCR, z-score for CLIP, 1/0 for a VLM,
        closeness for the map); comparable within one scorer only.
    heading
        Compass direction (degrees) of the landmark from the viewpoint, if known.
    relative_bearing
        Direction relative to the view heading in (-180, 180], negative = left.
    source
        Scorer name (``"map"``, ``"ocr"``, ``"clip"``, ``"vlm"``).
    place_id
        The matching place, where the scorer knows it.
    distance_m
        Distance to the place, where known.
    box
        ``(x0, y0, x1, y1)`` in the view image, where known.
    evidence
        Free text: the OCR line, the model's answer, ...
    node
        Viewpoint node id.
    """

    landmark: str
    visible: bool
    score: float
    heading: float | None = None
    relative_bearing: float | None = None
    source: str = ""
    place_id: str | None = None
    distance_m: float | None = None
    box: tuple[float, float, float, float] | None = None
    evidence: str | None = None
    node: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out = asdict(self)
        if self.box is not None:
            out["box"] = list(self.box)
        return out


class LandmarkScorer(ABC):
    """Base class of landmark scorers.

    Subclasses implement :meth:`score` (or :meth:`ascore` for scorers that call a model);
    :meth:`visible` keeps the landmarks judged visible, best first.
    """

    name: str = ""

    @abstractmethod
    def score(self, view: View, landmarks: Sequence[str]) -> list[LandmarkObservation]:
        """One observation per landmark, in the order asked."""

    async def ascore(self, view: View, landmarks: Sequence[str]) -> list[LandmarkObservation]:
        """Async :meth:`score` (runs it in a worker thread unless overridden)."""
        return await asyncio.to_thread(self.score, view, landmarks)

    def visible(self, view: View, landmarks: Sequence[str]) -> list[LandmarkObservation]:
        """The observations judged visible, highest score first."""
        obs = [o for o in self.score(view, landmarks) if o.visible]
        return sorted(obs, key=lambda o: -o.score)

    def score_views(
        self, views: Sequence[View], landmarks: Sequence[str]
    ) -> list[list[LandmarkObservation]]:
        """:meth:`score` for several views."""
        return [self.score(v, landmarks) for v in views]

    def seen_in(self, views: Sequence[View], landmarks: Sequence[str]) -> list[LandmarkObservation]:
        """The landmarks visible in any of ``views``: the best observation of each."""
        per_view = self.score_views(views, landmarks)
        return [o for o in best_per_landmark(per_view) if o.visible]

    async def aseen_in(
        self, views: Sequence[View], landmarks: Sequence[str]
    ) -> list[LandmarkObservation]:
        """Async :meth:`seen_in` (the views are scored concurrently)."""
        per_view = await asyncio.gather(*(self.ascore(v, landmarks) for v in views))
        return [o for o in best_per_landmark(per_view) if o.visible]


def best_per_landmark(
    observations: Sequence[Sequence[LandmarkObservation]],
) -> list[LandmarkObservation]:
    """Merge the observations of several views: the best-scoring one per landmark."""
    best: dict[str, LandmarkObservation] = {}
    for per_view in observations:
        for obs in per_view:
            cur = best.get(obs.landmark)
            if cur is None or (obs.visible, obs.score) > (cur.visible, cur.score):
                best[obs.landmark] = obs
    return list(best.values())


def unique_landmarks(landmarks: Sequence[str]) -> list[str]:
    """Landmark names without blanks and repeats, order kept."""
    seen: set[str] = set()
    out = []
    for name in landmarks:
        name = str(name).strip()
        if name and name not in seen:
            seen.add(name)
            out.append(name)
    return out

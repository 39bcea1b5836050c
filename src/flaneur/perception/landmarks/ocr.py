"""``OCRLandmarks``: a landmark is visible when text read in the view matches its name."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from flaneur.perception.landmarks.base import LandmarkObservation, LandmarkScorer, unique_landmarks
from flaneur.perception.matching import fuzzy_ratio
from flaneur.perception.ocr import OCR, TextBox
from flaneur.views.base import View


def text_candidates(
    boxes: Sequence[TextBox],
) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Lines read by OCR, plus pairs of neighbouring lines joined (a name split in two).

    Two lines are joined when they sit side by side (overlapping rows, small gap) or one
    right above the other (overlapping columns, small gap).
    """
    out = [(b.text, b.bbox) for b in boxes]
    for i, a in enumerate(boxes):
        ax0, ay0, ax1, ay1 = a.bbox
        h = ay1 - ay0
        for b in boxes[i + 1 :]:
            bx0, by0, bx1, by1 = b.bbox
            same_row = min(ay1, by1) - max(ay0, by0) > 0.5 * min(h, by1 - by0)
            gap_x = max(bx0 - ax1, ax0 - bx1)
            same_col = min(ax1, bx1) - max(ax0, bx0) > 0
            gap_y = max(by0 - ay1, ay0 - by1)
            if (same_row and gap_x < 1.5 * h) or (same_col and gap_y < 0.8 * h):
                first, second = (a, b) if (ax0, ay0) <= (bx0, by0) else (b, a)
                if same_col:
                    first, second = (a, b) if ay0 <= by0 else (b, a)
                box = (min(ax0, bx0), min(ay0, by0), max(ax1, bx1), max(ay1, by1))
                out.append((f"{first.text} {second.text}", box))
    return out


class OCRLandmarks(LandmarkScorer):
    """Find landmarks by reading text in the view (signs, shop fronts).

    Parameters
    ----------
    ocr
        The OCR engine (a default :class:`OCR` when None).
    threshold
        Fuzzy-match ratio at which a landmark counts as visible (0.8).
    min_text_score
        OCR lines recognised with lower confidence are ignored.
    min_chars
        Landmark names shorter than this (after normalisation) are never matched.
    """

    name = "ocr"

    def __init__(
        self,
        ocr: OCR | None = None,
        *,
        threshold: float = 0.8,
        min_text_score: float = 0.6,
        min_chars: int = 3,
    ) -> None:
        self.ocr = ocr or OCR()
        self.threshold = threshold
        self.min_text_score = min_text_score
        self.min_chars = min_chars

    def read(self, view: View) -> list[TextBox]:
        """The OCR lines of ``view`` above the confidence floor (cached by image hash)."""
        return [b for b in self.ocr.read(view) if b.score >= self.min_text_score]

    def score(self, view: View, landmarks: Sequence[str]) -> list[LandmarkObservation]:
        """Best fuzzy ratio of each landmark against the text read in ``view``."""
        return self._match(view, self.read(view), landmarks)

    def score_views(
        self, views: Sequence[View], landmarks: Sequence[str]
    ) -> list[list[LandmarkObservation]]:
        """:meth:`score` for several views, read by OCR in one batch (an agent's step)."""
        read_many = getattr(self.ocr, "read_many", None)
        if read_many is None:
            return [self.score(v, landmarks) for v in views]
        lines = read_many(list(views))
        return [
            self._match(v, [b for b in boxes if b.score >= self.min_text_score], landmarks)
            for v, boxes in zip(views, lines, strict=True)
        ]

    async def aseen_in(
        self, views: Sequence[View], landmarks: Sequence[str]
    ) -> list[LandmarkObservation]:
        """Async :meth:`seen_in`: the views are read in one OCR batch in a worker thread."""
        return await asyncio.to_thread(self.seen_in, list(views), landmarks)

    def _match(
        self, view: View, boxes: Sequence[TextBox], landmarks: Sequence[str]
    ) -> list[LandmarkObservation]:
        cands = text_candidates(boxes)
        out = []
        for name in unique_landmarks(landmarks):
            best, best_text, best_box = 0.0, None, None
            if len("".join(ch for ch in name if ch.isalnum())) >= self.min_chars:
                for text, box in cands:
                    r = fuzzy_ratio(name, text)
                    if r > best:
                        best, best_text, best_box = r, text, box
            heading = rel = None
            if best_box is not None:
                cx = (best_box[0] + best_box[2]) / 2.0
                heading = view.bearing_of_x(cx)
                rel = (heading - view.heading + 180.0) % 360.0 - 180.0
            out.append(
                LandmarkObservation(
                    landmark=name,
                    visible=best >= self.threshold,
                    score=round(best, 4),
                    heading=heading,
                    relative_bearing=rel,
                    source=self.name,
                    box=best_box,
                    evidence=best_text,
                    node=view.node,
                )
            )
        return out

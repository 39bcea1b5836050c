"""The *OCR storefront detector*: PP-OCR text boxes labelled with a place type.

Each line of text PP-OCR finds in the view (shop signs, in synthetic and real views alike)
is compared with every requested label by the sentence embedder: the label's text, and when
the label is a taxonomy category its human label and synonyms. The box takes the best
label; its score is that cosine similarity times the OCR confidence. "Café Ekberg" scores
high for ``cafe``; a name that says nothing of its trade scores low, as it would for a
person reading the sign.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from flaneur.options import Range, option
from flaneur.paths import cache_dir
from flaneur.perception.detection.base import Detection, Detector, pixel_box
from flaneur.perception.ocr import OCR
from flaneur.text import shared_embedder
from flaneur.views.base import View
from flaneur.world.taxonomy import CATEGORIES, normalize_category


def label_texts(label: str) -> list[str]:
    """The texts a label is matched by: itself, and its taxonomy label and synonyms."""
    texts = [label.replace("_", " ")]
    category = normalize_category(label)
    if category is not None:
        info = CATEGORIES[category]
        texts += [info.label, *info.synonyms]
    return list(dict.fromkeys(texts))


@dataclass(frozen=True)
class StorefrontOptions:
    """Options of the OCR storefront detector (``--option ocr.KEY=VALUE``)."""

    threshold: Annotated[float, Range(0.0, 1.0)] = option(
        0.35, "minimum score (cosine similarity x OCR confidence)"
    )


class StorefrontDetector(Detector):
    """Text boxes from PP-OCR labelled with place types by the sentence embedder.

    Parameters
    ----------
    ocr
        The OCR engine (default: a new :class:`~flaneur.perception.ocr.OCR` that keeps its
        results on disk, so reruns read them back).
    embedder
        A :class:`~flaneur.text.SentenceEmbedder` (default: the shared one).
    threshold
        Minimum score (cosine similarity × OCR confidence); default 0.35.
    """

    name = "ocr-storefront"
    Options = StorefrontOptions

    def __init__(self, ocr: OCR | None = None, embedder: Any = None, **kwargs: Any) -> None:
        kwargs.setdefault("threshold", 0.35)
        super().__init__(**kwargs)
        self.ocr = ocr or OCR(cache_dir=cache_dir("ocr"))
        self._embedder = embedder

    @property
    def embedder(self) -> Any:
        """The sentence embedder (loaded on first use)."""
        if self._embedder is None:
            self._embedder = shared_embedder()
        return self._embedder

    def settings(self) -> dict[str, Any]:
        return {"ocr": self.ocr.params}

    def _detect(self, view: View, labels: tuple[str, ...]) -> list[Detection]:
        boxes = self.ocr.read(view)
        if not boxes:
            return []
        texts = [label_texts(label) for label in labels]
        flat = [t for group in texts for t in group]
        owner = np.repeat(np.arange(len(labels)), [len(g) for g in texts])
        sims = self.embedder.similarity([b.text for b in boxes], flat)  # (boxes, texts)
        best = np.full((len(boxes), len(labels)), -1.0)
        for j in range(len(labels)):
            best[:, j] = sims[:, owner == j].max(axis=1)
        out = []
        for i, box in enumerate(boxes):
            j = int(np.argmax(best[i]))
            score = float(np.clip(best[i, j], 0.0, 1.0)) * box.score
            out.append(Detection(pixel_box(box.bbox), labels[j], score))
        return out

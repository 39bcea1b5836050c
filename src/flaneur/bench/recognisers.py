"""Recognisers for the place-recognition benchmark: offline (OCR + embedder), CLIP, VLM.

Each has ``name`` and ``scores(image, labels) -> array`` (one score per type name).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

__all__ = ["CLIPRecogniser", "OfflineRecogniser", "VLMRecogniser", "rank_from_reply"]


class OfflineRecogniser:
    """Read the signs (PP-OCR) and compare their text with the type names (MiniLM).

    A view whose signs say nothing scores every type 0 (ties rank in list order).

    Parameters
    ----------
    ocr
        A :class:`flaneur.perception.ocr.OCR` (default: a new one).
    embedder
        A :class:`flaneur.text.SentenceEmbedder` (default: the shared one).
    """

    name = "offline-ocr-minilm"

    def __init__(self, ocr: Any = None, embedder: Any = None) -> None:
        if ocr is None:
            from flaneur.perception.ocr import OCR

            ocr = OCR()
        if embedder is None:
            from flaneur.text import shared_embedder

            embedder = shared_embedder()
        self.ocr, self.embedder = ocr, embedder

    def read_text(self, image: Image.Image) -> str:
        """The text of the signs in ``image``, joined by spaces."""
        return " ".join(box.text for box in self.ocr.read(image)).strip()

    def scores(self, image: Image.Image, labels: Sequence[str]) -> NDArray[np.float64]:
        """Cosine similarity between the sign text and each label."""
        text = self.read_text(image)
        if not text:
            return np.zeros(len(labels))
        return np.asarray(self.embedder.similarity([text], list(labels))[0], dtype=np.float64)


class CLIPRecogniser:
    """CLIP zero-shot recognition (V-IRL's Table 4): softmax over ``"a photo of a <type>"``.

    Parameters
    ----------
    model, pretrained
        open_clip architecture and weights (file path or open_clip tag; user-supplied).
    backend
        Any object with ``embed_images`` / ``embed_texts`` (tests use a fake); default
        :class:`flaneur.perception.landmarks.clip.OpenCLIPBackend` (imports open_clip lazily).
    """

    def __init__(
        self, model: str = "ViT-B-32", pretrained: str | Path | None = None, *, backend: Any = None
    ) -> None:
        if backend is None:
            from flaneur.perception.landmarks.clip import OpenCLIPBackend

            backend = OpenCLIPBackend(model, pretrained)
        self.backend = backend
        self.name = f"clip:{getattr(backend, 'name', model)}"
        self._text_cache: dict[tuple[str, ...], NDArray[np.float32]] = {}

    def scores(self, image: Image.Image, labels: Sequence[str]) -> NDArray[np.float64]:
        """Softmax probabilities over the labels (logit scale 100, as CLIP)."""
        key = tuple(labels)
        if key not in self._text_cache:
            self._text_cache[key] = self.backend.embed_texts([f"a photo of a {x}" for x in key])
        img = self.backend.embed_images([image])[0]
        logits = 100.0 * (self._text_cache[key] @ img).astype(np.float64)
        e = np.exp(logits - logits.max())
        return e / e.sum()


def rank_from_reply(reply: str, labels: Sequence[str]) -> NDArray[np.float64]:
    """Scores from a model's ranked answer: earlier mention scores higher, unmentioned 0.

    Labels are matched as whole words, case-insensitive, underscores as spaces; a longer
    label wins over one it contains ("convenience store" over "store").
    """
    text = reply.lower().replace("_", " ")
    taken = [False] * len(text)
    found: dict[int, int] = {}
    for i in sorted(range(len(labels)), key=lambda j: -len(labels[j])):
        pattern = r"(?<![a-z])" + re.escape(labels[i].lower()) + r"(?![a-z])"
        for m in re.finditer(pattern, text):
            if not any(taken[m.start() : m.end()]):
                taken[m.start() : m.end()] = [True] * (m.end() - m.start())
                found[i] = m.start()
                break
    scores = np.zeros(len(labels))
    for rank, i in enumerate(sorted(found, key=found.__getitem__)):
        scores[i] = len(labels) - rank
    return scores


class VLMRecogniser:
    """Ask a vision-language model (through :mod:`flaneur.models`) to rank the types.

    The prompt lists the types and asks for the five most likely, best first, one a line;
    :func:`rank_from_reply` turns the reply into scores. A reply naming no type scores all 0
    (counted in :attr:`unparsed`); a model error is raised.
    """

    PROMPT = (
        "This is a street view of a storefront. Which type of place is it? Candidate types: "
        "{types}. Answer with the five most likely types from the list, best first, one per "
        "line, and nothing else."
    )

    def __init__(self, model: Any, *, temperature: float = 0.0) -> None:
        self.model = model
        self.temperature = temperature
        self.name = f"vlm:{getattr(model, 'name', type(model).__name__)}"
        self.unparsed = 0

    def scores(self, image: Image.Image, labels: Sequence[str]) -> NDArray[np.float64]:
        """Ask the model; scores from the ranking in its reply."""
        from flaneur.models import run_sync, user

        prompt = self.PROMPT.format(types=", ".join(labels))
        reply = run_sync(self.model.complete([user(prompt, image)], temperature=self.temperature))
        scores = rank_from_reply(reply.text, labels)
        if not scores.any():
            self.unparsed += 1
        return scores

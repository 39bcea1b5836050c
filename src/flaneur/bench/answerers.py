"""VQA answerers: a model through the model layer, and an offline embedder answerer."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from PIL import Image

from flaneur.bench.metrics import LETTERS

__all__ = ["EmbedderAnswerer", "ModelAnswerer", "options_of_prompt"]

_OPTION = re.compile(r"^([A-D])\. (.*)$", re.MULTILINE)


def options_of_prompt(prompt: str) -> list[str]:
    """The option texts of a prompt made by :func:`flaneur.bench.vqa.format_question`."""
    return [m.group(2).strip() for m in _OPTION.finditer(prompt)]


class ModelAnswerer:
    """Send the view and the question to a (vision-)language model; return its raw reply.

    Parameters
    ----------
    model
        A :class:`flaneur.models.ChatModel`.
    with_image
        Attach the view (a VLM); False sends the text only, with the place's sign text
        when ``sign_text`` gives one.
    """

    def __init__(self, model: Any, *, with_image: bool = True, temperature: float = 0.0) -> None:
        self.model = model
        self.with_image = with_image
        self.temperature = temperature
        self.errors = 0

    def answer(self, image: Image.Image | None, prompt: str) -> str:
        """The model's reply text ('' after a model error, which is counted, never raised)."""
        from flaneur.models import ModelError, run_sync, user

        parts: list[Any] = [prompt]
        if self.with_image and image is not None:
            parts.append(image)
        try:
            reply = run_sync(self.model.complete([user(*parts)], temperature=self.temperature))
        except ModelError:
            self.errors += 1
            return ""
        return reply.text


class EmbedderAnswerer:
    """Offline answerer: read the signs (OCR), pick the option closest to their text.

    The text compared is the sign text plus, when the item has one, nothing else: the
    answerer sees only the image. With no text it answers the first option.
    """

    def __init__(self, ocr: Any = None, embedder: Any = None) -> None:
        if ocr is None:
            from flaneur.perception.ocr import OCR

            ocr = OCR()
        if embedder is None:
            from flaneur.text import shared_embedder

            embedder = shared_embedder()
        self.ocr, self.embedder = ocr, embedder

    def answer(self, image: Image.Image, prompt: str) -> str:
        """A letter, e.g. ``"C"``."""
        options = options_of_prompt(prompt)
        text = " ".join(b.text for b in self.ocr.read(image)).strip()
        if not text or not options:
            return "A"
        sims = np.asarray(self.embedder.similarity([text], options)[0], dtype=float)
        return LETTERS[int(np.argmax(sims))]

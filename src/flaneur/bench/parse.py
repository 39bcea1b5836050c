"""Reading a multiple-choice reply: exact letter forms first, then a matcher, else ``"none"``.

Exact forms (as V-IRL): the reply is the letter alone or followed by ``.``, ``)``, ``,`` or
``).``; flaneur also accepts it in brackets (``(B)``) and after ``Answer:`` / ``Option``.
V-IRL's "the first character is the letter" rule is not used (it reads "A bakery" as A).
Otherwise a matcher maps the reply to an option (V-IRL asks GPT; flaneur: a model through
the model layer, or offline the sentence embedder); failing that the answer is ``"none"``
(wrong, counted).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from flaneur.bench.metrics import LETTERS

__all__ = ["AnswerParser", "EmbedderMatcher", "ModelMatcher", "exact_letter"]

_EXACT = re.compile(
    r"^\s*(?:(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)\s*(?:is)?\s*[:\-]?\s*)?"
    r"\(?\s*([A-D])\s*(?:\)\.?|\.|,|:)?\s*$",
    re.IGNORECASE,
)


def exact_letter(reply: str) -> str | None:
    """The letter of a reply that is only a letter form (``"B"``, ``"B."``, ``"(b)"``, ...)."""
    m = _EXACT.match(reply or "")
    if not m:
        return None
    letter = m.group(1)
    # a bare lower-case "a" is an article more often than an answer
    return letter.upper() if letter.isupper() or reply.strip().lower() != "a" else None


class Matcher(Protocol):
    """Maps a free-text reply to an option letter, or None."""

    def match(self, question: str, options: Sequence[str], reply: str) -> str | None:
        """The letter the reply means, or None."""
        ...


class AnswerParser:
    """Exact letter forms, then ``matcher`` (optional); counts every outcome."""

    def __init__(self, matcher: Matcher | None = None) -> None:
        self.matcher = matcher
        self.exact = 0
        self.matcher_used = 0
        self.none = 0

    def parse(self, reply: str, question: str, options: Sequence[str]) -> str:
        """``"A"``..``"D"`` or ``"none"``; never raises on odd replies."""
        letter = exact_letter(reply if isinstance(reply, str) else "")
        if letter is not None:
            self.exact += 1
            return letter
        if self.matcher is not None and isinstance(reply, str) and reply.strip():
            self.matcher_used += 1
            try:
                letter = self.matcher.match(question, options, reply)
            except Exception:  # a failing matcher leaves the reply unparsed, never the run
                letter = None
            if letter in LETTERS[: len(options)]:
                return letter
        self.none += 1
        return "none"


class EmbedderMatcher:
    """Offline matcher: the option most similar to the reply (MiniLM), if clearly so.

    The best option must reach ``min_similarity`` and beat the second by ``margin``.
    """

    def __init__(self, embedder: Any = None, min_similarity: float = 0.5, margin: float = 0.05):
        if embedder is None:
            from flaneur.text import shared_embedder

            embedder = shared_embedder()
        self.embedder = embedder
        self.min_similarity, self.margin = min_similarity, margin

    def match(self, question: str, options: Sequence[str], reply: str) -> str | None:
        """Letter of the clearly most similar option, else None."""
        sims = np.asarray(self.embedder.similarity([reply], list(options))[0], dtype=float)
        order = np.argsort(-sims)
        if sims[order[0]] < self.min_similarity:
            return None
        if len(order) > 1 and sims[order[0]] - sims[order[1]] < self.margin:
            return None
        return LETTERS[int(order[0])]


MATCH_PROMPT = (
    "A model answered a multiple-choice question. Which option does its answer choose?\n"
    "Question: {question}\nOptions:\n{options}\nModel answer: {reply}\n"
    "Reply with the letter of the option the answer chooses (A, B, C or D), or 'none' if it "
    "chooses none of them. Reply with one word only."
)


class ModelMatcher:
    """V-IRL's GPT matcher through the model layer (any :class:`flaneur.models.ChatModel`)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def match(self, question: str, options: Sequence[str], reply: str) -> str | None:
        """Ask the model; its reply must itself be an exact letter form."""
        from flaneur.models import run_sync, user

        listing = "\n".join(f"{a}. {o}" for a, o in zip(LETTERS, options, strict=False))
        prompt = MATCH_PROMPT.format(question=question, options=listing, reply=reply)
        out = run_sync(self.model.complete([user(prompt)], temperature=0.0))
        return exact_letter(out.text)

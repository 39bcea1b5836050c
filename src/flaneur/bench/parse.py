"""Reading a multiple-choice reply: exact letter forms first, then a matcher, else ``"none"``.

Exact forms (as V-IRL): the reply is the letter alone or followed by ``.``, ``)``, ``,`` or
``).``; flaneur also accepts it in brackets (``(B)``) and after ``Answer:`` / ``Option``.
V-IRL's "the first character is the letter" rule is not used (it reads "A bakery" as A).
Otherwise a matcher maps the reply to an option (V-IRL asks GPT; flaneur: the run's model,
or offline the sentence embedder); failing that the answer is ``"none"`` (wrong, counted in
the row: ``read_by``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from flaneur.bench.metrics import LETTERS
from flaneur.models import user
from flaneur.text import shared_embedder

__all__ = [
    "MATCH_PROMPT_ID",
    "EmbedderMatcher",
    "Matcher",
    "ModelMatcher",
    "Reading",
    "exact_letter",
    "read_reply",
]

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


@dataclass(frozen=True)
class Reading:
    """What a reply was read as: the ``letter`` (``"A"`` .. ``"D"``, or ``"none"``), how
    (``read_by``: ``exact`` for a letter form, ``matcher`` when the matcher chose, or
    ``none``) and the matcher's model exchanges (``records``)."""

    letter: str
    read_by: str
    records: list[dict[str, Any]] = field(default_factory=list)


class Matcher(Protocol):
    """Maps a free-text reply to an option letter, or None."""

    async def match(
        self, question: str, options: Sequence[str], reply: str
    ) -> tuple[str | None, list[dict[str, Any]]]:
        """The letter the reply means (or None) and the model exchanges it took."""
        ...


async def read_reply(
    reply: Any, question: str, options: Sequence[str], matcher: Matcher | None = None
) -> Reading:
    """Read a reply: an exact letter form, else ``matcher``'s choice, else ``"none"``; never
    raises on odd replies (``None``, not text)."""
    text = reply if isinstance(reply, str) else ""
    letter = exact_letter(text)
    if letter is not None:
        return Reading(letter, "exact")
    if matcher is not None and text.strip():
        letter, records = await matcher.match(question, options, text)
        if letter in LETTERS[: len(options)]:
            return Reading(str(letter), "matcher", records)
        return Reading("none", "none", records)
    return Reading("none", "none")


class EmbedderMatcher:
    """Offline matcher: the option most similar to the reply (MiniLM), if clearly so.

    The best option must reach ``min_similarity`` and beat the second by ``margin``.
    """

    def __init__(self, embedder: Any = None, min_similarity: float = 0.5, margin: float = 0.05):
        self._embedder = embedder
        self.min_similarity, self.margin = min_similarity, margin

    @property
    def embedder(self) -> Any:
        """The sentence embedder (the shared one, loaded on first use)."""
        if self._embedder is None:
            self._embedder = shared_embedder()
        return self._embedder

    async def match(
        self, question: str, options: Sequence[str], reply: str
    ) -> tuple[str | None, list[dict[str, Any]]]:
        """Letter of the clearly most similar option, else None."""
        sims = np.asarray(self.embedder.similarity([reply], list(options))[0], dtype=float)
        order = np.argsort(-sims, kind="stable")
        if sims[order[0]] < self.min_similarity:
            return None, []
        if len(order) > 1 and sims[order[0]] - sims[order[1]] < self.margin:
            return None, []
        return LETTERS[int(order[0])], []


MATCH_PROMPT = (
    "A model answered a multiple-choice question. Which option does its answer choose?\n"
    "Question: {question}\nOptions:\n{options}\nModel answer: {reply}\n"
    "Reply with the letter of the option the answer chooses (A, B, C or D), or 'none' if it "
    "chooses none of them. Reply with one word only."
)
MATCH_PROMPT_ID = "virl-vqa-match-1"
"""Version of :data:`MATCH_PROMPT` (recorded with every exchange)."""


class ModelMatcher:
    """V-IRL's GPT matcher through the run's model (any :class:`flaneur.models.ChatModel`)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    async def match(
        self, question: str, options: Sequence[str], reply: str
    ) -> tuple[str | None, list[dict[str, Any]]]:
        """Ask the model; its reply must itself be an exact letter form."""

        listing = "\n".join(f"{a}. {o}" for a, o in zip(LETTERS, options, strict=False))
        prompt = MATCH_PROMPT.format(question=question, options=listing, reply=reply)
        out = await self.model.complete([user(prompt)], temperature=0.0)
        text = out.text or ""
        letter = exact_letter(text)
        record = {"prompt_id": MATCH_PROMPT_ID, "raw_output": text}
        record["parse_failures"] = int(letter is None)
        return letter, [record]

"""How well a text seen in the street (a sign, a place name) matches the need.

A need (the episode instruction) is split into ordered sub-needs ("find the nearest A and
then the nearest B, in order" gives two). Each sub-need is matched against a text two ways:

- *semantic*: cosine similarity of sentence embeddings (all-MiniLM-L6-v2, see
  :mod:`flaneur.text`) between the text and the sub-need, the best of the whole sentence and
  its *core* (what follows "the nearest": ``"pharmacy"``, ``"Hesburger"``);
- *lexical*: a fuzzy string match of the core inside the text (``"Hotel Haven"`` contains
  "hotel", ``"R-Kioski Sanomatalo"`` contains "R-kioski"): brand names and place types that
  signs spell out. A lexical hit scores :data:`LEXICAL_SCORE`.

Both are also computed for the text with English glosses of the Finnish and Swedish sign
words it contains (:mod:`.glossary`: "Apteekki Eliel" -> "Apteekki Eliel (pharmacy)"). The
score of a text is the best of these. :class:`Thresholds` holds the two cut-offs the
explorer uses: ``floor`` (a text worth walking towards) and ``tau`` (a text good enough to
stop at). Their defaults were calibrated on generated tasks of another seed than the
evaluation set (see ``docs/agents.md``, section Explorer).
"""

from __future__ import annotations

import contextlib
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flaneur.agents.explorer.glossary import gloss
from flaneur.perception.matching import fuzzy_ratio, normalize_name
from flaneur.text import TextEmbedder
from flaneur.world.taxonomy import CATEGORIES

LEXICAL_SCORE = 1.0
"""Score of a text that contains the need's core phrase (fuzzy ratio >= ``lexical_ratio``)."""

_THEN = re.compile(r"\s*(?:,\s*)?\b(?:and\s+)?then\b\s*", re.IGNORECASE)
_IN_ORDER = re.compile(r"[,;]?\s*\bin (?:this |that )?order\b\.?", re.IGNORECASE)
_CORE = re.compile(r"\b(?:nearest|closest|a nearby|nearby)\s+(?P<core>[^,.;:!?]+)", re.IGNORECASE)
_GENERIC = {"place", "one", "shop", "store", "spot"}


@dataclass(frozen=True)
class Thresholds:
    """Cut-offs on match scores.

    Attributes
    ----------
    floor
        Texts scoring below this are ignored when choosing a direction (the explorer then
        prefers unexplored streets).
    tau
        A place scoring at least this, within ``stop_radius_m`` of the agent, satisfies the
        sub-need (the agent stops, or moves on to the next sub-need).
    lexical_ratio
        Fuzzy ratio at which the core phrase counts as spelled out in a text.
    name_cap
        When the core is a proper name ("Hesburger", "R-kioski"), semantic similarity alone
        scores at most this (below ``tau``): only the name spelled out stops the agent, a
        similar name ("Coffee House" for "Espresso House") is merely a lead.
    expand_min, expand_gap, expand_k
        Query expansion: a need that names no place ("I need to buy some medicine") is also
        matched against the labels of the place categories it is most similar to (at most
        ``expand_k``, each at least ``expand_min`` and within ``expand_gap`` of the best;
        see :func:`expansions`).
    """

    floor: float = 0.30
    tau: float = 0.55
    lexical_ratio: float = 0.93
    name_cap: float = 0.45
    expand_min: float = 0.40
    expand_gap: float = 0.10
    expand_k: int = 3


@dataclass(frozen=True)
class SubNeed:
    """One thing to find: the text to embed, its core phrase (may be empty) and whether the
    core is a proper name (a capitalised word: a brand or a place's name)."""

    text: str
    core: str
    is_name: bool = False


def split_need(instruction: str) -> list[SubNeed]:
    """Ordered sub-needs of an instruction.

    >>> [s.core for s in split_need("Find the nearest ATM and then the nearest bar, in order.")]
    ['ATM', 'bar']
    >>> split_need("I'm thirsty.")[0].core
    ''
    >>> split_need("Please find the nearest Hesburger.")[0].is_name
    True
    """
    text = _IN_ORDER.sub("", instruction.strip()).strip()
    parts = [p.strip(" ,;") for p in _THEN.split(text) if p.strip(" ,;.")]
    if not parts:
        parts = [instruction.strip()]
    out = []
    for part in parts:
        match = _CORE.search(part)
        core = match.group("core").strip() if match else ""
        if normalize_name(core) in _GENERIC:
            core = ""
        is_name = any(w[:1].isupper() for w in core.split())
        out.append(SubNeed(part if part.endswith((".", "!", "?")) else part + ".", core, is_name))
    return out


_LABELS: weakref.WeakKeyDictionary[TextEmbedder, tuple[list[str], NDArray[np.float32]]]
_LABELS = weakref.WeakKeyDictionary()


def category_labels(embedder: TextEmbedder) -> tuple[list[str], NDArray[np.float32]]:
    """The distinct labels of the place taxonomy and their embeddings (once per embedder)."""
    try:
        hit = _LABELS.get(embedder)
    except TypeError:  # not weakly referenceable: no cache
        hit = None
    if hit is None:
        labels = sorted({info.label for info in CATEGORIES.values()})
        hit = (labels, embedder.embed(labels))
        with contextlib.suppress(TypeError):  # not weakly referenceable: no cache
            _LABELS[embedder] = hit
    return hit


def expansions(embedder: TextEmbedder, sub: SubNeed, thresholds: Thresholds) -> list[str]:
    """Category labels a need that names no place is most similar to (query expansion).

    "I need to buy some medicine." -> ``["pharmacy"]``: a sign glossed "(pharmacy)" then
    matches the need. Needs naming a brand or place (``sub.is_name``) are not expanded.
    """
    if sub.is_name:
        return []
    labels, vectors = category_labels(embedder)
    sims = (embedder.embed([sub.text]) @ vectors.T)[0]
    order = np.argsort(-sims, kind="stable")[: thresholds.expand_k]
    top = float(sims[order[0]])
    return [
        labels[i]
        for i in order.tolist()
        if sims[i] >= thresholds.expand_min and sims[i] >= top - thresholds.expand_gap
    ]


class NeedScorer:
    """Scores texts against the sub-needs of one instruction.

    Parameters
    ----------
    embedder
        A :class:`flaneur.text.SentenceEmbedder` (``embed(texts) -> (n, d)`` unit vectors).
    instruction
        The need (episode instruction).
    thresholds
        Cut-offs (:class:`Thresholds`).
    """

    def __init__(
        self, embedder: TextEmbedder, instruction: str, thresholds: Thresholds | None = None
    ) -> None:
        self.embedder = embedder
        self.thresholds = thresholds or Thresholds()
        self.sub_needs = split_need(instruction)
        queries = []
        self.expanded: list[list[str]] = []
        for sub in self.sub_needs:
            more = expansions(embedder, sub, self.thresholds) if self.thresholds.expand_k else []
            self.expanded.append(more)
            queries.append([sub.text] + ([sub.core] if sub.core else []) + more)
        self._queries = [embedder.embed(q) for q in queries]  # embedded once per episode

    def __len__(self) -> int:
        return len(self.sub_needs)

    def scores(self, texts: Sequence[str], sub: int = 0) -> NDArray[np.float32]:
        """Score of every text for sub-need ``sub``: the best of the semantic and lexical
        scores of the text and of its glossed form (:func:`.glossary.gloss`)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        variants = [t for text in texts for t in (text, gloss(text) or text)]
        semantic = (self.embedder.embed(variants) @ self._queries[sub].T).max(axis=1)
        core = self.sub_needs[sub].core
        if self.sub_needs[sub].is_name:
            semantic = np.minimum(semantic, np.float32(self.thresholds.name_cap))
        if core:
            ratio = self.thresholds.lexical_ratio
            lexical = np.asarray(
                [LEXICAL_SCORE if fuzzy_ratio(core, t) >= ratio else 0.0 for t in variants],
                dtype=np.float32,
            )
            semantic = np.maximum(semantic, lexical)
        return semantic.reshape(len(texts), 2).max(axis=1).astype(np.float32, copy=False)


__all__ = ["LEXICAL_SCORE", "NeedScorer", "SubNeed", "Thresholds", "split_need"]

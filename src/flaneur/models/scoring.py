"""Pick one of a few literal actions from a model's reply.

VELMA-style agents ask a model for the next word and take the argmax over a small set of
literals (``FORWARD``, ``LEFT``, ``RIGHT``, ``TURN_AROUND``, ``STOP``).  Where the backend
returns log-probabilities, :func:`choose_literal` adds up the probability of every top-k
token at the first generated position that names a literal: the whole word in any case
(leading spaces and tokenizer markers stripped), or a prefix of it of at least two letters
written in capitals as the literal is (``ST`` counts for ``STOP``; ``S``, ``St`` or ``The``
do not — single letters and mixed-case fragments are too often other words).

The log-probability choice is trusted only when the model means it: the literals together
must hold at least ``min_mass`` of the probability (default 0.5), or the most likely token
must be one of them.  Otherwise — real small models often put 2 % on the literals and start
with ``1.`` or ``You`` — the choice is read from the text instead and the score is marked
``fallback`` (agents count it as a parse failure).  The text parser takes the first literal
mentioned, in any case, with spaces, hyphens or underscores between words (``turn around``
= ``TURN_AROUND``).  A reply that matches nothing gives ``choice=None``; it never raises.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from flaneur.models.completion import Completion

NAV_ACTIONS: tuple[str, ...] = ("FORWARD", "LEFT", "RIGHT", "TURN_AROUND", "STOP")
"""VELMA's action words."""

NAV_ALIASES: Mapping[str, tuple[str, ...]] = {
    "FORWARD": ("go forward", "straight ahead", "go straight", "move forward"),
    "TURN_AROUND": ("u-turn", "u turn", "turn back"),
}
"""Extra phrasings accepted by the text parser for :data:`NAV_ACTIONS`."""

_MARKERS = "\u0120\u2581 \t\n\r"  # GPT-2 'Ġ', SentencePiece '▁', whitespace
_SKIPPABLE = re.compile(r"^[\W_]*$")


@dataclass(frozen=True, slots=True)
class ActionScore:
    """The outcome of choosing a literal.

    Attributes
    ----------
    choice
        The chosen literal, or ``None`` if the reply matched none (the caller records it as
        an invalid action).
    method
        ``"logprobs"``, ``"text"`` or ``"none"``.
    scores
        Log-probability mass per literal from the first position's top-k (only literals
        that matched a token; empty when no position matched).
    text
        The generated text the choice was made from.
    mass
        Probability the literals hold together at the scored position (``None`` without
        log-probabilities).
    fallback
        ``True`` when log-probabilities came back but were not trusted (too little mass,
        or no literal among them) and the text decided: a parse failure for the caller.
    """

    choice: str | None
    method: Literal["logprobs", "text", "none"]
    scores: dict[str, float] = field(default_factory=dict)
    text: str = ""
    mass: float | None = None
    fallback: bool = False

    @property
    def valid(self) -> bool:
        """True if a literal was chosen."""
        return self.choice is not None

    @property
    def confidence(self) -> float | None:
        """Probability of the choice over the model's whole distribution (log-probability
        method only; ``None`` otherwise)."""
        if self.method != "logprobs" or self.choice not in self.scores:
            return None
        return min(1.0, math.exp(self.scores[self.choice]))


def _norm_token(token: str) -> str:
    return token.strip(_MARKERS).rstrip(".,;:!?\"')]}")


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


def score_logprobs(top: Sequence[tuple[str, float]], literals: Sequence[str]) -> dict[str, float]:
    """Log-probability mass of each literal among one position's top-k tokens.

    A token counts for a literal when, stripped of spaces, tokenizer markers and trailing
    punctuation, it equals the literal in any case (``" forward"``, ``"Turn around"``), or
    is a prefix of it at least two characters long written in capitals as the literal is
    (``"TURN"`` and ``"ST"`` count, ``"S"``, ``"St"`` and ``" turn"`` do not).  Distinct
    tokens counting for the same literal are added up (log-sum-exp).

    Returns
    -------
    dict
        ``{literal: logprob}`` for the literals that matched at least one token.
    """
    forms = [(lit, {lit, lit.replace("_", " "), lit.replace("_", "")}) for lit in literals]
    found: dict[str, list[float]] = {}
    seen: set[str] = set()
    for token, logprob in top:
        if token in seen:
            continue
        seen.add(token)
        norm = _norm_token(token)
        if not norm:
            continue
        upper = norm.upper()
        for lit, written in forms:
            whole = upper in written
            prefix = len(norm) >= 2 and norm == upper and any(f.startswith(norm) for f in written)
            if whole or prefix:
                found.setdefault(lit, []).append(logprob)
    return {lit: _logsumexp(v) for lit, v in found.items()}


@lru_cache(maxsize=64)
def _literal_pattern(literals: tuple[str, ...], aliases: tuple[tuple[str, str], ...]) -> re.Pattern:
    alternatives: list[tuple[str, str]] = []
    for lit in literals:
        alternatives.append((lit, lit))
    alternatives.extend(aliases)
    parts = []
    for i, (_, phrase) in enumerate(alternatives):
        words = [re.escape(w) for w in re.split(r"[\s_\-]+", phrase.strip()) if w]
        body = r"[\s_\-]*".join(words)
        parts.append(f"(?P<g{i}>{body})")
    # Longest phrases first so that "turn around" wins over a shorter literal "turn".
    order = sorted(range(len(parts)), key=lambda i: -len(alternatives[i][1]))
    joined = "|".join(parts[i] for i in order)
    return re.compile(rf"(?<![A-Za-z0-9])(?:{joined})(?![A-Za-z0-9])", re.IGNORECASE)


def parse_literal(
    text: str,
    literals: Sequence[str] = NAV_ACTIONS,
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> str | None:
    """The first literal (or alias of one) mentioned in ``text``, else ``None``.

    Matching ignores case and punctuation around words, and accepts spaces, hyphens or
    underscores between the words of a literal (``"Turn around."`` gives ``TURN_AROUND``).

    Parameters
    ----------
    text
        Generated text.
    literals
        Allowed literals.
    aliases
        ``{literal: [phrase, ...]}`` of other phrasings; defaults to :data:`NAV_ALIASES`
        restricted to ``literals``.
    """
    if not text:
        return None
    if aliases is None:
        aliases = NAV_ALIASES
    pairs = tuple(
        (lit, phrase) for lit, phrases in aliases.items() if lit in literals for phrase in phrases
    )
    pattern = _literal_pattern(tuple(literals), pairs)
    match = pattern.search(text)
    if match is None:
        return None
    idx = int(match.lastgroup[1:]) if match.lastgroup else 0
    n = len(literals)
    return literals[idx] if idx < n else pairs[idx - n][0]


def choose_literal(
    completion: Completion,
    literals: Sequence[str] = NAV_ACTIONS,
    *,
    aliases: Mapping[str, Sequence[str]] | None = None,
    max_skip: int = 2,
    min_mass: float = 0.5,
) -> ActionScore:
    """Choose a literal from a completion: log-probabilities first, then the text.

    Parameters
    ----------
    completion
        The model's reply.
    literals
        Allowed literals, in tie-break order.
    aliases
        Extra phrasings for the text parser (see :func:`parse_literal`).
    max_skip
        Leading positions made only of whitespace or punctuation (e.g. a newline) that may
        be skipped to find the first word.
    min_mass
        Probability the literals must hold together for the log-probability choice to be
        trusted, unless the most likely token is one of them (see the module docstring).

    Returns
    -------
    ActionScore
        ``choice`` is ``None`` when nothing matched; ``fallback`` is true when
        log-probabilities were returned but the text decided.
    """
    scores: dict[str, float] = {}
    mass: float | None = None
    if completion.logprobs:
        mass = 0.0
        for pos in list(completion.logprobs)[: max_skip + 1]:
            top = pos.top or ((pos.token, pos.logprob),)
            scores = score_logprobs(top, literals)
            if scores:
                mass = min(1.0, sum(math.exp(v) for v in scores.values()))
                best = max(literals, key=lambda lit: scores.get(lit, -math.inf))
                leader = max(top, key=lambda t: t[1])[0]
                if mass >= min_mass or score_logprobs([(leader, 0.0)], literals):
                    return ActionScore(best, "logprobs", scores, completion.text, mass)
                break
            if not _SKIPPABLE.match(pos.token):
                break
    fallback = mass is not None
    parsed = parse_literal(completion.text, literals, aliases)
    if parsed is not None:
        return ActionScore(parsed, "text", scores, completion.text, mass, fallback)
    return ActionScore(None, "none", scores, completion.text, mass, fallback)


async def score_actions(
    model: Any,
    messages: Sequence[Any],
    literals: Sequence[str] = NAV_ACTIONS,
    *,
    top_logprobs: int = 20,
    max_tokens: int = 8,
    aliases: Mapping[str, Sequence[str]] | None = None,
    min_mass: float = 0.5,
    **params: Any,
) -> tuple[ActionScore, Completion]:
    """Ask ``model`` for the next word and choose a literal from its reply.

    Requests ``top_logprobs`` when ``model.supports_logprobs``; a model that
    ``scores_words`` (the in-process ``hf:`` backend) instead scores each literal whole, its
    summed token log-probability (``score_words``), so words the tokenizer splits compete
    fairly. ``temperature`` defaults to 0.

    Returns
    -------
    tuple
        The :class:`ActionScore` and the raw :class:`Completion`.
    """
    params.setdefault("temperature", 0)
    params.setdefault("max_tokens", max_tokens)
    if getattr(model, "scores_words", False):
        params.setdefault("score_words", list(literals))  # whole words, exactly
        params.setdefault("logprobs", True)
    elif getattr(model, "supports_logprobs", False):
        params.setdefault("top_logprobs", top_logprobs)
    completion = await model.complete(messages, **params)
    return choose_literal(completion, literals, aliases=aliases, min_mass=min_mass), completion

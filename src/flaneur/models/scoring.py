"""Pick one of a few literal actions from a model's reply.

VELMA-style agents ask a model for the next word and take the argmax over a small set of
literals (``FORWARD``, ``LEFT``, ``RIGHT``, ``TURN_AROUND``, ``STOP``).  Where the backend
returns log-probabilities, :func:`choose_literal` adds up the probability of every top-k
token at the first generated position that is a prefix of a literal (case-insensitive,
leading spaces and tokenizer markers stripped).  Otherwise, or if no top-k token matches,
it parses the text leniently: the first literal mentioned, in any case, with spaces,
hyphens or underscores between words (``turn around`` = ``TURN_AROUND``).  A reply that
matches nothing gives ``choice=None``; it never raises.
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
        that matched a token; empty for the text method).
    text
        The generated text the choice was made from.
    """

    choice: str | None
    method: Literal["logprobs", "text", "none"]
    scores: dict[str, float] = field(default_factory=dict)
    text: str = ""

    @property
    def valid(self) -> bool:
        """True if a literal was chosen."""
        return self.choice is not None


def _norm_token(token: str) -> str:
    return token.strip(_MARKERS).lower().rstrip(".,;:!?\"')]}")


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


def score_logprobs(top: Sequence[tuple[str, float]], literals: Sequence[str]) -> dict[str, float]:
    """Log-probability mass of each literal among one position's top-k tokens.

    A token counts for a literal when, normalised, it is a non-empty prefix of the literal
    (``"TURN"`` and ``" turn"`` count for ``TURN_AROUND``) or equals it.  Distinct tokens
    counting for the same literal are added up (log-sum-exp).

    Returns
    -------
    dict
        ``{literal: logprob}`` for the literals that matched at least one token.
    """
    lowered = [(lit, lit.lower()) for lit in literals]
    found: dict[str, list[float]] = {}
    seen: set[str] = set()
    for token, logprob in top:
        if token in seen:
            continue
        seen.add(token)
        norm = _norm_token(token)
        if not norm:
            continue
        for lit, low in lowered:
            if any(
                form.startswith(norm) for form in (low, low.replace("_", " "), low.replace("_", ""))
            ):
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

    Returns
    -------
    ActionScore
        ``choice`` is ``None`` when nothing matched.
    """
    if completion.logprobs:
        positions = list(completion.logprobs)
        for pos in positions[: max_skip + 1]:
            top = pos.top or ((pos.token, pos.logprob),)
            scores = score_logprobs(top, literals)
            if scores:
                best = max(literals, key=lambda lit: scores.get(lit, -math.inf))
                return ActionScore(best, "logprobs", scores, completion.text)
            if not _SKIPPABLE.match(pos.token):
                break
    parsed = parse_literal(completion.text, literals, aliases)
    if parsed is not None:
        return ActionScore(parsed, "text", {}, completion.text)
    return ActionScore(None, "none", {}, completion.text)


async def score_actions(
    model: Any,
    messages: Sequence[Any],
    literals: Sequence[str] = NAV_ACTIONS,
    *,
    top_logprobs: int = 20,
    max_tokens: int = 8,
    aliases: Mapping[str, Sequence[str]] | None = None,
    **params: Any,
) -> tuple[ActionScore, Completion]:
    """Ask ``model`` for the next word and choose a literal from its reply.

    Requests ``top_logprobs`` when ``model.supports_logprobs``; ``temperature`` defaults to 0.

    Returns
    -------
    tuple
        The :class:`ActionScore` and the raw :class:`Completion`.
    """
    params.setdefault("temperature", 0)
    params.setdefault("max_tokens", max_tokens)
    if getattr(model, "supports_logprobs", False):
        params.setdefault("top_logprobs", top_logprobs)
    completion = await model.complete(messages, **params)
    return choose_literal(completion, literals, aliases=aliases), completion

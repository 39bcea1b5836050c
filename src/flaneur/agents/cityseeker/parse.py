"""Lenient parsing of the CitySeeker agent's two JSON replies.

The stop prompt asks for ``{"thought": ..., "decision": "continue" | "stop", "confidence": x}``
and the choice prompt for ``{"thought": ..., "choice": "B", "confidence": x}``. Replies are
read with :func:`flaneur.models.extract_json` (JSON inside prose or code fences, trailing
commas, single quotes ...) and, failing that, with a small pattern for the one field that
matters. A reply that still cannot be read is a *parse failure*: it is counted and the agent
falls back to a documented default (see :class:`StopReply` and :class:`ChoiceReply`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flaneur.models import extract_json

_DECISION_KEYS = ("decision", "action", "answer", "stop")
_CHOICE_KEYS = ("choice", "option", "answer", "action", "direction")
_THOUGHT_KEYS = ("thought", "thoughts", "reasoning", "reason", "observation")
_DECISION_RE = re.compile(r"decision\W{0,6}(stop|continue)\b", re.IGNORECASE)
_CHOICE_RE = re.compile(r"(?:choice|option)\W{0,6}([A-Z])\b", re.IGNORECASE)
_LETTER_RE = re.compile(r"^\(?(?:option\s+)?([A-Za-z])\)?(?:[\s.:)\-]|$)", re.IGNORECASE)
_STOP_WORDS = frozenset({"stop", "stopped", "arrived", "yes", "true", "done", "finish"})
_GO_WORDS = frozenset({"continue", "go", "move", "no", "false", "explore", "keep going"})


@dataclass(frozen=True, slots=True)
class StopReply:
    """The parsed stop-prompt reply.

    Attributes
    ----------
    stop
        Whether the agent stops here. An unparseable reply gives ``False`` (keep going: a
        garbled reply never ends an episode; the step limit does).
    confidence
        Confidence in [0, 1], or ``None`` if not given.
    thought
        The model's reasoning ("" if none).
    ok
        ``False`` for a parse failure.
    """

    stop: bool
    confidence: float | None
    thought: str
    ok: bool


@dataclass(frozen=True, slots=True)
class ChoiceReply:
    """The parsed choice-prompt reply.

    Attributes
    ----------
    index
        0-based index of the chosen option (``0`` = option A, CitySeeker's action 0, for
        an unparseable reply).
    confidence
        Confidence in [0, 1], or ``None`` if not given or unparseable.
    thought
        The model's reasoning ("" if none).
    ok
        ``False`` for a parse failure.
    """

    index: int
    confidence: float | None
    thought: str
    ok: bool


def parse_confidence(value: Any) -> float | None:
    """A confidence in [0, 1] from a number, ``"0.8"``, ``"80%"`` or ``80`` (percent)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip().rstrip("%").strip()
        try:
            number = float(text)
        except ValueError:
            return None
        if value.strip().endswith("%"):
            number /= 100.0
    elif isinstance(value, int | float):
        number = float(value)
    else:
        return None
    if number != number:  # NaN
        return None
    if 1.0 < number <= 100.0:
        number /= 100.0
    return min(1.0, max(0.0, number))


def _first(data: Mapping[str, Any], keys: Sequence[str]) -> Any:
    lowered = {str(k).lower(): v for k, v in data.items()}
    for key in keys:
        if key in lowered:
            return lowered[key]
    return None


def _thought(data: Mapping[str, Any]) -> str:
    value = _first(data, _THOUGHT_KEYS)
    return str(value).strip() if value is not None else ""


def _decision(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return None
    word = value.strip().lower().strip(".!")
    if word in _STOP_WORDS:
        return True
    if word in _GO_WORDS:
        return False
    return None


def parse_stop(text: str | None) -> StopReply:
    """Parse a stop-prompt reply (never raises)."""
    data = extract_json(text or "")
    if isinstance(data, dict):
        stop = _decision(_first(data, _DECISION_KEYS))
        if stop is not None:
            conf = parse_confidence(_first(data, ("confidence", "certainty", "score")))
            return StopReply(stop, conf, _thought(data), True)
    match = _DECISION_RE.search(text or "")
    if match:
        return StopReply(match.group(1).lower() == "stop", None, "", True)
    return StopReply(False, None, "", False)


def _option_index(value: Any, labels: Sequence[str]) -> int | None:
    """Index of the option named by ``value``: a letter, ``"Option B"``, a label or 1-based
    number."""
    n = len(labels)
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and float(value).is_integer():
        k = int(value)
        return 0 if k == 0 and n else (k - 1 if 1 <= k <= n else None)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.isdigit():
        return _option_index(int(text), labels)
    match = _LETTER_RE.match(text)
    if match:
        k = ord(match.group(1).upper()) - ord("A")
        if 0 <= k < n:
            return k
    lowered = text.lower()
    hits = [i for i, label in enumerate(labels) if label.lower() == lowered]
    return hits[0] if len(hits) == 1 else None


def parse_choice(text: str | None, labels: Sequence[str]) -> ChoiceReply:
    """Parse a choice-prompt reply among ``labels`` (``FRONT``, ``LEFT``, ... in option
    order); never raises.

    Parameters
    ----------
    text
        The model's reply.
    labels
        The coarse direction label of each option, in order (option A first).
    """
    data = extract_json(text or "")
    if isinstance(data, dict):
        index = _option_index(_first(data, _CHOICE_KEYS), labels)
        if index is not None:
            conf = parse_confidence(_first(data, ("confidence", "certainty", "score")))
            return ChoiceReply(index, conf, _thought(data), True)
    match = _CHOICE_RE.search(text or "")
    if match:
        index = _option_index(match.group(1), labels)
        if index is not None:
            return ChoiceReply(index, None, "", True)
    return ChoiceReply(0, None, "", False)


__all__ = ["ChoiceReply", "StopReply", "parse_choice", "parse_confidence", "parse_stop"]

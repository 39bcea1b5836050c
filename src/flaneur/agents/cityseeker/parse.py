"""Lenient parsing of the CitySeeker agent's two JSON replies.

The stop prompt asks for ``{"thought": ..., "decision": "continue" | "stop", "confidence": x}``
and the choice prompt for ``{"thought": ..., "choice": "B", "confidence": x}``. Replies are
read with :func:`flaneur.models.extract_json` (JSON inside prose or code fences, trailing
commas, single quotes ...) and, failing that, with a small pattern for the one field that
matters. A reply that still cannot be read is a *parse failure*: it is counted and the agent
falls back to a documented default (see :class:`StopReply` and :class:`ChoiceReply`).

Two shapes of real small-model output are parse failures too, whatever they contain:

* a reply that **echoes the prompt** (:func:`echoes_prompt`: it repeats the answer
  template's placeholders such as ``<option letter>`` or ``"continue" or "stop"``, or most of
  its lines are lines of the prompt) — the template's own ``"decision": "continue"`` must not
  be read as the model's decision;
* a choice reply whose JSON has **no ``choice`` key** (nor ``option``/``answer``/...), e.g.
  the stop prompt's ``{"decision": "continue"}``.

Every failure carries a ``reason`` (``"echoed the prompt"``, ``"no choice in the JSON
reply"``, ``"unparseable"``) that the agent records with the call.
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
_PLACEHOLDERS = ("<option letter>", "<number from 0 to 1>", "<what you see", '"continue" or "stop"')
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
    reason
        Why the reply is a parse failure (``""`` when it is not).
    """

    stop: bool
    confidence: float | None
    thought: str
    ok: bool
    reason: str = ""


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
    reason
        Why the reply is a parse failure (``""`` when it is not).
    """

    index: int
    confidence: float | None
    thought: str
    ok: bool
    reason: str = ""


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


def echoes_prompt(reply: str, prompt: str | None) -> bool:
    """Whether ``reply`` repeats the prompt instead of answering it.

    True when it contains a placeholder of the answer templates (``<option letter>``,
    ``<number from 0 to 1>``, ``<what you see``, ``"continue" or "stop"``), or when at least
    two of its lines, and half of its non-empty lines, are lines of ``prompt`` (lines of 20
    characters or more, compared without surrounding spaces).
    """
    if any(p in reply for p in _PLACEHOLDERS):
        return True
    if not prompt:
        return False
    known = {ln.strip() for ln in prompt.splitlines() if len(ln.strip()) >= 20}
    lines = [ln.strip() for ln in reply.splitlines() if ln.strip()]
    copied = sum(1 for ln in lines if ln in known)
    return copied >= 2 and copied * 2 >= len(lines)


def parse_stop(text: str | None, prompt: str | None = None) -> StopReply:
    """Parse a stop-prompt reply (never raises); ``prompt`` enables echo detection."""
    if text and echoes_prompt(text, prompt):
        return StopReply(False, None, "", False, "echoed the prompt")
    data = extract_json(text or "")
    if isinstance(data, dict):
        stop = _decision(_first(data, _DECISION_KEYS))
        if stop is not None:
            conf = parse_confidence(_first(data, ("confidence", "certainty", "score")))
            return StopReply(stop, conf, _thought(data), True)
    match = _DECISION_RE.search(text or "")
    if match:
        return StopReply(match.group(1).lower() == "stop", None, "", True)
    return StopReply(False, None, "", False, "unparseable")


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


def parse_choice(text: str | None, labels: Sequence[str], prompt: str | None = None) -> ChoiceReply:
    """Parse a choice-prompt reply among ``labels`` (``FRONT``, ``LEFT``, ... in option
    order); never raises.

    Parameters
    ----------
    text
        The model's reply.
    labels
        The coarse direction label of each option, in order (option A first).
    prompt
        The prompt sent, for echo detection.
    """
    if text and echoes_prompt(text, prompt):
        return ChoiceReply(0, None, "", False, "echoed the prompt")
    data = extract_json(text or "")
    reason = "unparseable"
    if isinstance(data, dict):
        value = _first(data, _CHOICE_KEYS)
        index = _option_index(value, labels)
        if index is not None:
            conf = parse_confidence(_first(data, ("confidence", "certainty", "score")))
            return ChoiceReply(index, conf, _thought(data), True)
        reason = "no choice in the JSON reply" if value is None else "unknown option"
    match = _CHOICE_RE.search(text or "")
    if match:
        index = _option_index(match.group(1), labels)
        if index is not None:
            return ChoiceReply(index, None, "", True)
    return ChoiceReply(0, None, "", False, reason)


__all__ = [
    "ChoiceReply",
    "StopReply",
    "echoes_prompt",
    "parse_choice",
    "parse_confidence",
    "parse_stop",
]

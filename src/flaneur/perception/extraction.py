"""Landmarks mentioned in a navigation instruction.

With a language model, a few-shot prompt (examples written for flaneur) asks for a JSON
list of the landmarks in order of mention.  Without one - or when the reply cannot be
parsed - a rule-based extractor takes proper names (runs of capitalised words) and noun
phrases introduced by an article ("the bank", "a red awning").
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from flaneur.models.sync import run_sync

FEW_SHOT: tuple[tuple[str, list[str]], ...] = (
    (
        "Head past the Fazer Café and turn left at the bookshop on the corner. Stop in front "
        "of Hotel Kämp.",
        ["Fazer Café", "bookshop", "Hotel Kämp"],
    ),
    (
        "Walk straight until you see a pharmacy on your right, then take a right after the "
        "traffic light. Your goal is the green kiosk next to the bus stop.",
        ["pharmacy", "traffic light", "green kiosk", "bus stop"],
    ),
    (
        "Turn around and go two blocks. At the intersection with the scaffolding, go left; "
        "stop when Stockmann is on your left.",
        ["scaffolding", "Stockmann"],
    ),
    ("Keep going straight for three blocks and stop at the next corner.", []),
)

SYSTEM = (
    "You extract landmarks from street navigation instructions. A landmark is a named "
    "place or a visible object or business an observer could recognise (a shop, a café, "
    "a church, a traffic light, a statue). Streets, directions, distances and the "
    "intersection itself are not landmarks. Answer with a JSON list of strings in the "
    "order they are mentioned, copying each landmark's words from the instruction."
)

_NOT_LANDMARKS = {
    "end",
    "way",
    "direction",
    "side",
    "left",
    "right",
    "turn",
    "street",
    "road",
    "block",
    "blocks",
    "intersection",
    "corner",
    "path",
    "route",
    "middle",
    "front",
    "next",
    "first",
    "second",
    "third",
    "same",
    "other",
    "goal",
    "destination",
    "start",
    "top",
    "bottom",
    "distance",
    "lane",
    "avenue",
    "crossing",
    "light",
    "one",
    "place",
}
_STOP = {
    "on",
    "at",
    "to",
    "and",
    "or",
    "until",
    "when",
    "then",
    "you",
    "your",
    "with",
    "by",
    "in",
    "into",
    "past",
    "after",
    "before",
    "from",
    "of",
    "for",
    "is",
    "are",
    "will",
    "be",
    "there",
    "that",
    "which",
    "where",
    "while",
    "as",
    "near",
    "towards",
    "toward",
    "up",
    "down",
    "over",
    "under",
    "across",
    "along",
    "around",
    "behind",
    "beside",
    "between",
    "it",
    "its",
    "this",
    "go",
    "turn",
    "stop",
    "keep",
    "walk",
    "head",
    "continue",
    "take",
    "see",
    "pass",
    "reach",
    "passing",
    "going",
    "so",
    "but",
    "if",
}
_VERBS = {
    "Turn",
    "Go",
    "Walk",
    "Head",
    "Continue",
    "Stop",
    "Keep",
    "Take",
    "Pass",
    "Proceed",
    "Move",
    "Cross",
    "Make",
    "Follow",
    "Look",
    "Find",
    "Enter",
    "Leave",
    "Start",
    "Face",
    "You",
    "Your",
    "When",
    "Then",
    "After",
    "Before",
    "At",
    "On",
    "In",
    "If",
    "Once",
    "The",
    "A",
    "An",
    "There",
    "It",
    "This",
    "Left",
    "Right",
    "North",
    "South",
    "East",
    "West",
    "Straight",
    "Ahead",
    "Now",
    "Next",
    "Finally",
    "First",
}
_CONNECT = {"of", "de", "&", "and", "the", "la", "le", "du", "del", "van", "von"}
_WORD = re.compile(r"[\w'’&-]+|[,.;:!?()]")


def _proper_names(tokens: list[str]) -> list[tuple[int, str]]:
    out = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok[:1].isupper() and tok not in _VERBS:
            j = i + 1
            while j < len(tokens):
                nxt = tokens[j]
                if nxt[:1].isupper() or nxt[:1].isdigit():
                    j += 1
                elif nxt in _CONNECT and j + 1 < len(tokens) and tokens[j + 1][:1].isupper():
                    j += 2
                else:
                    break
            out.append((i, " ".join(tokens[i:j]).strip(".")))
            i = j
        else:
            i += 1
    return out


def _noun_phrases(tokens: list[str]) -> list[tuple[int, str]]:
    out = []
    for i, tok in enumerate(tokens):
        if tok.lower() not in ("the", "a", "an"):
            continue
        words = []
        for nxt in tokens[i + 1 : i + 5]:
            if nxt.lower() in _STOP or not re.match(r"[\w'’&-]", nxt) or nxt[:1].isupper():
                break
            words.append(nxt)
        while words and words[-1].lower() in _NOT_LANDMARKS and len(words) > 1:
            words.pop()
        if words and words[-1].lower() not in _NOT_LANDMARKS:
            out.append((i + 1, " ".join(words)))
    return out


def rule_based_landmarks(instruction: str) -> list[str]:
    """Proper names and article-introduced noun phrases, in order of mention, no repeats."""
    tokens = _WORD.findall(instruction)
    found = sorted(_proper_names(tokens) + _noun_phrases(tokens))
    out: list[str] = []
    for _, phrase in found:
        phrase = phrase.strip(" ,.;:")
        if phrase and phrase.lower() not in (p.lower() for p in out):
            out.append(phrase)
    return out


def extraction_messages(
    instruction: str, examples: Sequence[tuple[str, list[str]]] = FEW_SHOT
) -> list[dict[str, Any]]:
    """The few-shot chat messages sent to the model."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for text, landmarks in examples:
        messages.append({"role": "user", "content": f"Instruction: {text}"})
        messages.append({"role": "assistant", "content": json.dumps(landmarks, ensure_ascii=False)})
    messages.append({"role": "user", "content": f"Instruction: {instruction}"})
    return messages


def parse_landmark_list(text: str) -> list[str] | None:
    """The first JSON list of strings in ``text`` (None if there is none)."""
    for m in re.finditer(r"\[[^\[\]]*\]", text, flags=re.S):
        try:
            value = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            out: list[str] = []
            for v in value:
                v = v.strip()
                if v and v not in out:
                    out.append(v)
            return out
    return None


async def aextract_landmarks(
    instruction: str,
    model: Any | None = None,
    *,
    examples: Sequence[tuple[str, list[str]]] = FEW_SHOT,
    params: dict[str, Any] | None = None,
) -> list[str]:
    """Landmarks of ``instruction``: by ``model`` (``async complete(messages)`` with
    ``.text``) when given and its answer parses, else by :func:`rule_based_landmarks`."""
    if model is None:
        return rule_based_landmarks(instruction)
    reply = await model.complete(
        extraction_messages(instruction, examples),
        **({"temperature": 0.0, "max_tokens": 160} | (params or {})),
    )
    parsed = parse_landmark_list(str(getattr(reply, "text", reply) or ""))
    return parsed if parsed is not None else rule_based_landmarks(instruction)


def extract_landmarks(
    instruction: str,
    model: Any | None = None,
    *,
    examples: Sequence[tuple[str, list[str]]] = FEW_SHOT,
    params: dict[str, Any] | None = None,
) -> list[str]:
    """Synchronous :func:`aextract_landmarks`."""
    if model is None:
        return rule_based_landmarks(instruction)

    return run_sync(aextract_landmarks(instruction, model, examples=examples, params=params))

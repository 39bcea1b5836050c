"""Ling's offline reading of a walking instruction: free text → a list of :class:`Leg`.

A rule-based parser of our own design for direction text as an LLM or a person writes it,
not only the template Local writes offline. A *leg* is one stretch of walking: how it starts
(face a compass direction, or turn relative to the way one faces) and what ends it (a
distance in metres, kilometres, feet, yards or blocks; the N-th intersection; a landmark
coming into sight; passing a landmark; a street name). Understood, among others::

    Face south-west and walk about 52 m.           head north on Mannerheimintie for 120 metres
    turn left / take a right / bear left / turn around / keep going straight
    take the second left         turn right at the third intersection     walk two blocks
    walk past Stockmann          continue until you see Kiasma             at Ateneum, turn left
    1. Go east ... 2. ...        **Turn left** onto Aleksanterinkatu

Sentences are cut at full stops, semicolons, line breaks and ``then``; a clause that neither
turns nor moves nor names an end (``"Kiasma is on your right."``) adds nothing. Landmark
names are found by a callback (Ling passes the city's place names found word for word).
A block is :data:`BLOCK_M` metres (a Helsinki centre block is 70-110 m).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

BLOCK_M = 80.0
"""Metres per block in "walk two blocks"."""
TURN_OFFSET = {
    "left": -90.0,
    "right": 90.0,
    "slight left": -45.0,
    "slight right": 45.0,
    "sharp left": -135.0,
    "sharp right": 135.0,
    "around": 180.0,
    "straight": 0.0,
}
"""Degrees added to the way one faces for each relative turn."""

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "a few": 3,
    "half a": 0.5,
    "a hundred": 100,
    "a hundred and fifty": 150,
    "two hundred": 200,
}
_ORDINALS = {
    "next": 1,
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "fifth": 5,
    "5th": 5,
}
_UNITS = {
    "m": 1.0,
    "meter": 1.0,
    "meters": 1.0,
    "metre": 1.0,
    "metres": 1.0,
    "km": 1000.0,
    "kilometer": 1000.0,
    "kilometers": 1000.0,
    "kilometre": 1000.0,
    "kilometres": 1000.0,
    "ft": 0.3048,
    "feet": 0.3048,
    "foot": 0.3048,
    "yd": 0.9144,
    "yard": 0.9144,
    "yards": 0.9144,
    "block": BLOCK_M,
    "blocks": BLOCK_M,
}
_COMPASS_RE = re.compile(
    r"\b(north|south)[\s-]?(east|west)\b|\b(north|south|east|west)(?:wards?|ward)?\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = "|".join(sorted((re.escape(k) for k in _NUMBERS), key=len, reverse=True))
_UNIT_WORDS = "|".join(sorted(_UNITS, key=len, reverse=True))
_DISTANCE_RE = re.compile(
    rf"(?<![\w.])(\d+(?:[.,]\d+)?|{_NUMBER_WORDS})\s*-?\s*({_UNIT_WORDS})\b", re.IGNORECASE
)
_ORDINAL_WORDS = "|".join(sorted(_ORDINALS, key=len, reverse=True))
_SIDE = r"(left|right)"
# "take the second left", "the third street on your right", "the next right"
_NTH_TURN_RE = re.compile(
    rf"\b(?:the\s+)?({_ORDINAL_WORDS})\s+(?:(?:street|road|turn(?:ing)?|corner)\s+)?"
    rf"(?:(?:on|to)\s+(?:the|your)\s+)?{_SIDE}\b",
    re.IGNORECASE,
)
# "at the second intersection / corner / crossing / junction"
_NTH_CROSSING_RE = re.compile(
    rf"\b({_ORDINAL_WORDS})\s+(?:intersection|corner|crossing|junction|crossroads?|street)s?\b",
    re.IGNORECASE,
)
_CROSSINGS_RE = re.compile(
    rf"\b(\d+|{_NUMBER_WORDS})\s+(?:intersections|crossings|junctions|corners)\b", re.IGNORECASE
)
_TURN_RE = re.compile(
    r"\b(turn|go|take|make|hang|bear|veer|keep|head|swing|fork)\s+(?:a\s+|an\s+)?"
    r"(?:(slight|sharp|hard)\s+)?(left|right)\b|\b(slight|sharp|hard)(?:ly)?\s+(left|right)\b"
    r"|\b(?:turn|go|take|make|hang|bear|veer|keep|head|swing)\b[^,.;]*?\b(left|right)\b"
    r"|^\s*(left|right)\b",
    re.IGNORECASE,
)
_AROUND_RE = re.compile(r"\b(?:turn|spin)\s+(?:back\s+)?around\b|\bu-?turn\b|\bdouble back\b", re.I)
_STRAIGHT_RE = re.compile(
    r"\b(?:straight|continue|keep going|go on|carry on|proceed|walk on)\b", re.IGNORECASE
)
_MOVE_RE = re.compile(
    r"\b(?:walk|go|head|continue|keep|proceed|carry|follow|move|stroll|cross|pass|turn|take|"
    r"make|bear|veer|start|face|get)\b",
    re.IGNORECASE,
)
_UNTIL_RE = re.compile(
    r"\b(?:until|till|up to|as far as|all the way to)\b\s+(?:you\s+(?:see|reach|get to|come to|"
    r"arrive at|spot|find|hit)\s+)?(.*)",
    re.IGNORECASE,
)
_AT_RE = re.compile(
    r"^\s*(?:at|by|near|when you (?:see|reach|get to|come to|arrive at|spot|pass)|once you "
    r"(?:see|reach|get to|pass)|after (?:you pass|passing))\b\s+(.*?)(?:,|\s+(?:turn|go|take|"
    r"make|bear|veer|head|keep|face|hang|carry)\b|$)",
    re.IGNORECASE,
)
_PAST_RE = re.compile(r"\b(?:past|pass(?:ing)?|go by|walk by|beyond)\s+(.*)", re.IGNORECASE)
_ONTO_RE = re.compile(
    r"\b(?:onto|into|on to|along|down|up|on)\s+((?:[A-ZÅÄÖ][\w'-]*\s?)+)", re.UNICODE
)
_SPLIT_RE = re.compile(
    r"(?<!\d)[.;!?](?!\d)|\n+|\b(?:and\s+)?then\b|,\s*(?=(?:at|when|once|after)\b)"
    r"|,\s*(?:and\s+)?(?=(?:turn|walk|go|head|take|continue|keep|follow|carry|make|bear|veer)\b)",
    re.IGNORECASE,
)
_SIDE_MENTION = re.compile(
    r"\b(?:on|to|at)\s+(?:your|the)\s+(?:front|back)?-?\s?(?:left|right)(?:[\s-]hand)?"
    r"(?:\s+side)?\b",
    re.IGNORECASE,
)
"""Where a landmark is ("Stockmann is on your left"): no turn."""
_LIST_MARK = re.compile(r"^\s*(?:\d+[.)]|[-*•]|step\s+\d+:?)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Leg:
    """One stretch of walking.

    ``direction`` is a compass word to face at the start (``""``: none given); ``turn`` a
    relative turn at the start (a key of :data:`TURN_OFFSET`, ``""``: none). The leg ends at
    the first of: ``metres`` walked, ``intersections`` passed, ``until`` (a landmark name)
    seen, ``past`` (a landmark name) passed, a street named ``street`` reached; with none,
    at the next intersection (or, for the last leg, where the destination is seen).
    """

    direction: str = ""
    turn: str = ""
    metres: float | None = None
    intersections: int | None = None
    until: str = ""
    past: str = ""
    street: str = ""

    @property
    def has_end(self) -> bool:
        """Whether the text said what ends the leg."""
        return bool(
            self.metres is not None or self.intersections or self.until or self.past or self.street
        )


def _number(text: str) -> float:
    text = text.lower().replace(",", ".")
    return float(_NUMBERS[text]) if text in _NUMBERS else float(text)


def compass_word(text: str) -> str:
    """The first compass direction in ``text`` as one of the 8 words (``""`` if none)."""
    m = _COMPASS_RE.search(text)
    if not m:
        return ""
    if m.group(1):
        return f"{m.group(1).lower()}-{m.group(2).lower()}"
    return m.group(3).lower()


def _turn(text: str) -> str:
    if _AROUND_RE.search(text):
        return "around"
    m = _TURN_RE.search(text)
    if m:
        kind = (m.group(2) or m.group(4) or "").lower()
        side = (m.group(3) or m.group(5) or m.group(6) or m.group(7)).lower()
        if not kind and (m.group(1) or "").lower() in ("bear", "veer", "fork"):
            kind = "slight"
        kind = "sharp" if kind == "hard" else kind
        return f"{kind} {side}".strip()
    return ""


def _distance(text: str) -> float | None:
    m = _DISTANCE_RE.search(text)
    if not m:
        return None
    return _number(m.group(1)) * _UNITS[m.group(2).lower()]


def _clauses(text: str) -> list[str]:
    text = text.replace("**", "").replace("__", "")
    out = []
    for line in _SPLIT_RE.split(text):
        line = _LIST_MARK.sub("", line or "").strip(" ,:-")
        if line:
            out.append(line)
    return out


def parse_instruction(
    text: str, find_landmarks: Callable[[str], list[str]] | None = None
) -> list[Leg]:
    """The legs of a walking instruction (see the module docstring).

    Parameters
    ----------
    text
        The instruction, in any wording.
    find_landmarks
        ``text → landmark names`` found in it (default: none, so landmark ends are ignored).

    Returns
    -------
    list of Leg
        In walking order; empty when nothing in the text says where to go.
    """
    find = find_landmarks or (lambda _s: [])
    legs: list[Leg] = []

    def first(phrase: str) -> str:
        names = find(phrase)
        return names[0] if names else ""

    def end_current(**change: object) -> None:
        """Give the leg being walked an end it lacks (a new one if there is none)."""
        if not legs:
            legs.append(Leg())
        if not legs[-1].has_end:
            legs[-1] = replace(legs[-1], **change)

    for clause in _clauses(text):
        turn = _turn(_SIDE_MENTION.sub(" ", clause))
        direction = compass_word(clause)
        metres = _distance(clause)
        crossings = None
        nth_turn = _NTH_TURN_RE.search(clause)
        if nth_turn and not re.search(r"\bon your (?:left|right)\b", clause[: nth_turn.end()]):
            # "(go east and) take the second left (and walk 40 m)": walk on to the 2nd
            # intersection, then a new leg that turns left
            count = _ORDINALS[nth_turn.group(1).lower()]
            if direction or not legs or legs[-1].has_end:
                legs.append(Leg(direction=direction, intersections=count))
            else:
                legs[-1] = replace(legs[-1], intersections=count)
            rest = clause[nth_turn.end() :]
            until, past = _UNTIL_RE.search(rest), _PAST_RE.search(rest)
            legs.append(
                Leg(
                    turn=nth_turn.group(2).lower(),
                    metres=_distance(rest),
                    until=first(until.group(1)) if until else "",
                    past=first(past.group(1).split(" until ")[0]) if past else "",
                )
            )
            continue
        nth = _NTH_CROSSING_RE.search(clause)
        count = _CROSSINGS_RE.search(clause)
        at = _AT_RE.search(clause)
        if nth and (turn or direction) and nth.start() < (at.end() if at else len(clause)):
            end_current(intersections=_ORDINALS[nth.group(1).lower()])  # "at the 2nd corner, turn"
        elif nth or count:
            crossings = _ORDINALS[nth.group(1).lower()] if nth else int(_number(count.group(1)))
        elif at:
            name = first(at.group(1))
            if name:
                end_current(until=name)  # "at Stockmann, turn left"
            elif re.search(r"\b(?:intersection|corner|crossing|junction|end)\b", at.group(1)):
                end_current(intersections=1)
        until = _UNTIL_RE.search(clause)
        past = _PAST_RE.search(clause)
        onto = _ONTO_RE.search(clause)
        moves = bool(turn or direction or metres or crossings or until or _MOVE_RE.search(clause))
        if not moves:
            continue
        if turn == "" and _STRAIGHT_RE.search(clause) and not direction:
            turn = "straight"
        leg = Leg(
            direction=direction,
            turn=turn if not direction else "",
            metres=metres,
            intersections=crossings,
            until=first(until.group(1)) if until else "",
            past=first(past.group(1)) if past else "",
            street=onto.group(1).strip() if onto and not metres and not crossings else "",
        )
        if legs and not legs[-1].has_end and not leg.direction and leg.turn in ("", "straight"):
            # "Head north. Walk 120 m past Stockmann." - the same leg, now with its end
            merged = replace(
                legs[-1],
                metres=leg.metres,
                intersections=leg.intersections,
                until=leg.until,
                past=leg.past,
                street=leg.street,
            )
            legs[-1] = merged
            continue
        if not (leg.direction or leg.turn or leg.has_end):
            continue  # "Walk carefully." - nothing to act on
        legs.append(leg)
    return legs

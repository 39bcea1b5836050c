"""The one walking-instruction grammar of V-IRL's Local and Ling: written and read here.

*Writing*: :func:`template_instruction` turns Local's milestones into text offline (our own
wording, one sentence a milestone)::

    Face north and walk about 40 m. At the intersection with Kiasma on your front-right,
    turn to face east and walk about 25 m. Then, turn to face south and walk about 30 m.
    Cafe X will be on your left.

Under ``--protocol paper`` :func:`paper_instruction` writes the same text without a single
distance, as V-IRL's instructions never give one.

*Reading*: :func:`parse_instruction` turns direction text into :class:`Leg` records, the
template's and free wording as an LLM or a person writes it (a rule parser of our own
design). A leg is one stretch of walking: how it starts (face a compass direction, or turn
relative to the way one faces) and what ends it (a distance in metres, kilometres, feet,
yards or blocks; the N-th intersection; a landmark coming into sight; passing a landmark; a
street name). Understood, among others::

    Face south-west and walk about 52 m.           head north on Mannerheimintie for 120 metres
    turn left / take a right / bear left / turn around / keep going straight
    take the second left         turn right at the third intersection     walk two blocks
    walk past Stockmann          continue until you see Kiasma             at Ateneum, turn left
    1. Go east ... 2. ...        **Turn left** onto Aleksanterinkatu

Sentences are cut at full stops, semicolons, line breaks and ``then``; a clause that neither
turns nor moves nor names an end (``"Kiasma is on your right."``) adds nothing. A landmark
at which a leg of told length ends (``"At the intersection with Kiasma on your left, turn
..."``, ``"At Stockmann, bear right"``) is the leg's :attr:`Leg.landmark` (and where it
stands, :attr:`Leg.side`). Landmark names are read from the template's ``with X on your
<side>`` as written, elsewhere found by a callback (Ling passes the city's place names found
word for word, or the model's list). A block is :data:`BLOCK_M` metres.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from flaneur.services.directions import COMPASS

BLOCK_M = 80.0
"""Metres per block in "walk two blocks" (a Helsinki centre block is 70-110 m)."""
RELATIVE8 = (
    "front",
    "front-right",
    "right",
    "back-right",
    "back",
    "back-left",
    "left",
    "front-left",
)
"""V-IRL's eight directions relative to the walker, clockwise from ahead."""
RELATIVE_DEG = {word: 45.0 * i for i, word in enumerate(RELATIVE8)}
COMPASS_DEG = {word: 45.0 * i for i, word in enumerate(COMPASS)}
TURN_OFFSET = {"left": -90.0, "right": 90.0, "slight left": -45.0, "slight right": 45.0}
TURN_OFFSET |= {"sharp left": -135.0, "sharp right": 135.0, "around": 180.0, "straight": 0.0}
"""Degrees added to the way one faces for each relative turn."""

_NUMBERS: dict[str, float]
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_NUMBERS |= {"seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3}
_NUMBERS |= {"half a": 0.5, "a hundred": 100, "a hundred and fifty": 150, "two hundred": 200}
_ORDINALS = {"next": 1, "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3}
_ORDINALS |= {"fourth": 4, "4th": 4, "fifth": 5, "5th": 5}
_UNITS = {"m": 1.0, "meter": 1.0, "meters": 1.0, "metre": 1.0, "metres": 1.0}
_UNITS |= {k: 1000.0 for k in ("km", "kilometer", "kilometers", "kilometre", "kilometres")}
_UNITS |= {"ft": 0.3048, "feet": 0.3048, "foot": 0.3048, "yd": 0.9144, "yard": 0.9144}
_UNITS |= {"yards": 0.9144, "block": BLOCK_M, "blocks": BLOCK_M}


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _alternatives(words: Iterable[object]) -> str:
    """A regex alternation of ``words``, longest first ("south-west" before "south")."""
    return "|".join(sorted((re.escape(str(w)) for w in words), key=len, reverse=True))


_SIDES = _alternatives(RELATIVE8)
_COMPASS_RE = _rx(r"\b(north|south)[\s-]?(east|west)\b|\b(north|south|east|west)(?:wards?|ward)?\b")
_DISTANCE_RE = _rx(
    rf"(?<![\w.])(\d+(?:[.,]\d+)?|{_alternatives(_NUMBERS)})\s*-?\s*({_alternatives(_UNITS)})\b"
)
_ORDINAL_WORDS = _alternatives(_ORDINALS)
_NTH_TURN_RE = _rx(  # "take the second left", "the third street on your right"
    rf"\b(?:the\s+)?({_ORDINAL_WORDS})\s+(?:(?:street|road|turn(?:ing)?|corner)\s+)?"
    r"(?:(?:on|to)\s+(?:the|your)\s+)?(left|right)\b"
)
_NTH_CROSSING_RE = _rx(  # "at the second intersection / corner / crossing"
    rf"\b({_ORDINAL_WORDS})\s+(?:intersection|corner|crossing|junction|crossroads?|street)s?\b"
)
_CROSSINGS_RE = _rx(
    rf"\b(\d+|{_alternatives(_NUMBERS)})\s+(?:intersections|crossings|junctions|corners)\b"
)
_TURN_RE = _rx(
    r"\b(turn|go|take|make|hang|bear|veer|keep|head|swing|fork)\s+(?:a\s+|an\s+)?"
    r"(?:(slight|sharp|hard)\s+)?(left|right)\b|\b(slight|sharp|hard)(?:ly)?\s+(left|right)\b"
    r"|\b(?:turn|go|take|make|hang|bear|veer|keep|head|swing)\b[^,.;]*?\b(left|right)\b"
    r"|^\s*(left|right)\b"
)
_AROUND_RE = _rx(r"\b(?:turn|spin)\s+(?:back\s+)?around\b|\bu-?turn\b|\bdouble back\b")
_STRAIGHT_RE = _rx(r"\b(?:straight|continue|keep going|go on|carry on|proceed|walk on)\b")
_MOVE_RE = _rx(
    r"\b(?:walk|go|head|continue|keep|proceed|carry|follow|move|stroll|cross|pass|turn|take|"
    r"make|bear|veer|start|face|get)\b"
)
_UNTIL_RE = _rx(
    r"\b(?:until|till|up to|as far as|all the way to)\b\s+(?:you\s+(?:see|reach|get to|come to|"
    r"arrive at|spot|find|hit)\s+)?(.*)"
)
_AT_RE = _rx(
    r"^\s*(?:at|by|near|when you (?:see|reach|get to|come to|arrive at|spot|pass)|once you "
    r"(?:see|reach|get to|pass)|after (?:you pass|passing))\b\s+(.*?)(?:,|\s+(?:turn|go|take|"
    r"make|bear|veer|head|keep|face|hang|carry)\b|$)"
)
_PAST_RE = _rx(r"\b(?:past|pass(?:ing)?|go by|walk by|beyond)\s+(.*)")
_ONTO_RE = re.compile(r"\b(?:onto|into|on to|along|down|up|on)\s+((?:[A-ZÅÄÖ][\w'-]*\s?)+)")
_SPLIT_RE = _rx(
    r"(?<!\d)[.;!?](?!\d)|\n+|\b(?:and\s+)?then\b|,\s*(?=(?:at|when|once|after)\b)"
    r"|,\s*(?:and\s+)?(?=(?:turn|walk|go|head|take|continue|keep|follow|carry|make|bear|veer)\b)"
)
_SIDE_MENTION = _rx(  # where a landmark is ("Stockmann is on your left"): no turn
    r"\b(?:on|to|at)\s+(?:your|the)\s+(?:front|back)?-?\s?(?:left|right)(?:[\s-]hand)?"
    r"(?:\s+side)?\b"
)
_LIST_MARK = _rx(r"^\s*(?:\d+[.)]|[-*•]|step\s+\d+:?)\s*")
_TEMPLATE_MARK = _rx(rf"\bwith\s+(.+?)\s+on\s+your\s+({_SIDES})\s*,\s*(?=turn\b)")
"""The template's landmark at a turn, read as written (a name may hold dots and commas)."""
_HELD = _rx(r"\x00(\d+)\x00\s+on\s+your\s+(" + _SIDES + r")\b")


@dataclass(frozen=True)
class Leg:
    """One stretch of walking.

    ``direction`` is a compass word to face at the start (``""``: none given); ``turn`` a
    relative turn at the start (a key of :data:`TURN_OFFSET`, ``""``: none). The leg ends at
    the first of: ``metres`` walked, ``intersections`` passed, ``until`` (a landmark name)
    seen, ``past`` (a landmark name) passed, a street named ``street`` reached; with none,
    at the next intersection (or, for the last leg, where the destination is seen).
    ``landmark`` is a landmark at the end of a leg of told length, where the next leg turns
    (``side``: where it stands relative to the walker, ``""`` when not told).
    """

    direction: str = ""
    turn: str = ""
    metres: float | None = None
    intersections: int | None = None
    until: str = ""
    past: str = ""
    street: str = ""
    landmark: str = ""
    side: str = ""

    @property
    def has_end(self) -> bool:
        """Whether the text said what ends the leg."""
        return bool(
            self.metres is not None or self.intersections or self.until or self.past or self.street
        )


def relative8(relative: float) -> str:
    """The 8-way relative direction of a signed angle (negative = left)."""
    return RELATIVE8[int(((relative % 360.0) + 22.5) // 45.0) % 8]


def compass_word(text: str) -> str:
    """The first compass direction in ``text`` as one of the 8 words (``""`` if none)."""
    m = _COMPASS_RE.search(text)
    if not m:
        return ""
    if m.group(1):
        return f"{m.group(1).lower()}-{m.group(2).lower()}"
    return m.group(3).lower()


def _number(text: str) -> float:
    text = text.lower().replace(",", ".")
    return float(_NUMBERS[text]) if text in _NUMBERS else float(text)


def _turn(text: str) -> str:
    if _AROUND_RE.search(text):
        return "around"
    m = _TURN_RE.search(text)
    if not m:
        return ""
    kind = (m.group(2) or m.group(4) or "").lower()
    side = (m.group(3) or m.group(5) or m.group(6) or m.group(7)).lower()
    if not kind and (m.group(1) or "").lower() in ("bear", "veer", "fork"):
        kind = "slight"
    kind = "sharp" if kind == "hard" else kind
    return f"{kind} {side}".strip()


def _distance(text: str) -> float | None:
    m = _DISTANCE_RE.search(text)
    return None if m is None else _number(m.group(1)) * _UNITS[m.group(2).lower()]


def _clauses(text: str) -> tuple[list[str], list[str]]:
    """The clauses of ``text`` and the template landmarks held out of them (``\\x00k\\x00``)."""
    held: list[str] = []

    def hold(m: re.Match[str]) -> str:
        held.append(m.group(1).strip())
        return f"with \x00{len(held) - 1}\x00 on your {m.group(2)}, "

    text = _TEMPLATE_MARK.sub(hold, text.replace("**", "").replace("__", ""))
    out = []
    for line in _SPLIT_RE.split(text):
        line = _LIST_MARK.sub("", line or "").strip(" ,:-")
        if line:
            out.append(line)
    return out, held


class _Reader:
    """The legs of one text, clause by clause (see :func:`parse_instruction`)."""

    def __init__(self, find: Callable[[str], list[str]], held: list[str]) -> None:
        self.find, self.held = find, held
        self.legs: list[Leg] = []

    def first(self, phrase: str) -> str:
        """The first landmark named in ``phrase`` (``""``: none)."""
        names = self.find(phrase)
        return names[0] if names else ""

    def end_current(self, **change: Any) -> None:
        """Give the leg being walked an end it lacks (a new one if there is none)."""
        if not self.legs:
            self.legs.append(Leg())
        if not self.legs[-1].has_end:
            self.legs[-1] = replace(self.legs[-1], **change)

    def mark(self, name: str, side: str = "") -> None:
        """A landmark where the leg being walked ends: its turn landmark when the leg has a
        told end, else the leg ends where it is seen."""
        if self.legs and self.legs[-1].has_end:
            if not self.legs[-1].landmark:
                self.legs[-1] = replace(self.legs[-1], landmark=name, side=side)
        else:
            self.end_current(until=name)

    def nth_turn(self, clause: str, nth: re.Match[str], direction: str) -> None:
        """``"(go east and) take the second left (and walk 40 m)"``: walk on to the 2nd
        intersection, then a new leg that turns left."""
        count = _ORDINALS[nth.group(1).lower()]
        if direction or not self.legs or self.legs[-1].has_end:
            self.legs.append(Leg(direction=direction, intersections=count))
        else:
            self.legs[-1] = replace(self.legs[-1], intersections=count)
        rest = clause[nth.end() :]
        until, past = _UNTIL_RE.search(rest), _PAST_RE.search(rest)
        self.legs.append(
            Leg(
                turn=nth.group(2).lower(),
                metres=_distance(rest),
                until=self.first(until.group(1)) if until else "",
                past=self.first(past.group(1).split(" until ")[0]) if past else "",
            )
        )

    def ends(self, clause: str, turn: str, direction: str) -> int | None:
        """Ends a clause names for the leg before it (an intersection, a landmark at which to
        turn); the count of intersections that ends a leg of its own, if any."""
        held = _HELD.search(clause)
        if held:
            self.mark(self.held[int(held.group(1))], held.group(2).lower())
            return None
        nth, count, at = (r.search(clause) for r in (_NTH_CROSSING_RE, _CROSSINGS_RE, _AT_RE))
        if nth and (turn or direction) and nth.start() < (at.end() if at else len(clause)):
            self.end_current(intersections=_ORDINALS[nth.group(1).lower()])
        elif nth:
            return _ORDINALS[nth.group(1).lower()]
        elif count:
            return int(_number(count.group(1)))
        elif at:
            name = self.first(at.group(1))
            if name:
                self.mark(name)  # "at Stockmann, turn left"
            elif re.search(r"\b(?:intersection|corner|crossing|junction|end)\b", at.group(1)):
                self.end_current(intersections=1)
        return None

    def clause(self, clause: str) -> None:
        """Read one clause into the legs."""
        turn = _turn(_SIDE_MENTION.sub(" ", clause))
        direction = compass_word(clause)
        nth_turn = _NTH_TURN_RE.search(clause)
        if nth_turn and not re.search(r"\bon your (?:left|right)\b", clause[: nth_turn.end()]):
            self.nth_turn(clause, nth_turn, direction)
            return
        crossings = self.ends(clause, turn, direction)
        metres = _distance(clause)
        until, past, onto = (r.search(clause) for r in (_UNTIL_RE, _PAST_RE, _ONTO_RE))
        if not (turn or direction or metres or crossings or until or _MOVE_RE.search(clause)):
            return
        if turn == "" and _STRAIGHT_RE.search(clause) and not direction:
            turn = "straight"
        leg = Leg(
            direction=direction,
            turn=turn if not direction else "",
            metres=metres,
            intersections=crossings,
            until=self.first(until.group(1)) if until else "",
            past=self.first(past.group(1)) if past else "",
            street=onto.group(1).strip() if onto and not metres and not crossings else "",
        )
        legs = self.legs
        if legs and not legs[-1].has_end and not leg.direction and leg.turn in ("", "straight"):
            # "Head north. Walk 120 m past Stockmann." - the same leg, now with its end
            ends = ("metres", "intersections", "until", "past", "street")
            legs[-1] = replace(legs[-1], **{k: getattr(leg, k) for k in ends})
        elif leg.direction or leg.turn or leg.has_end:  # "Walk carefully.": nothing to do
            legs.append(leg)


def parse_instruction(
    text: str, find_landmarks: Callable[[str], list[str]] | None = None
) -> list[Leg]:
    """The legs of a walking instruction (see the module docstring).

    Parameters
    ----------
    text
        The instruction, in any wording.
    find_landmarks
        ``text → landmark names`` found in it (default: none, so only the template's
        landmarks are read).

    Returns
    -------
    list of Leg
        In walking order; empty when nothing in the text says where to go.
    """
    clauses, held = _clauses(text or "")
    reader = _Reader(find_landmarks or (lambda _s: []), held)
    for clause in clauses:
        reader.clause(clause)
    return reader.legs


_PAPER_ORDINALS = ("next", "second", "third", "fourth", "fifth")
"""How :func:`paper_instruction` names the N-th intersection (words the parser reads)."""


def _arrival(last: dict[str, Any]) -> str:
    """The last sentence of an instruction: where the destination will be."""
    side = last.get("destination_direction")
    if side:
        return f"{last['destination']} will be on your {side}."
    return f"You will arrive at {last['destination']}."


def _paper_turn_place(prev: dict[str, Any]) -> str:
    """Where a leg of :func:`paper_instruction` ends: at its landmark, else at the N-th
    intersection (``crossings``, when the milestone has it), else at the next one."""
    junction = prev["intersection"] > 2
    if "landmark" in prev:
        where = "At the intersection" if junction else "Then"
        return f"{where} with {prev['landmark']} on your {prev['landmark_direction']}"
    count = int(prev.get("crossings") or 0)
    if count > len(_PAPER_ORDINALS):
        return f"After {count} intersections"
    if count:
        return f"At the {_PAPER_ORDINALS[count - 1]} intersection"
    return "At the next intersection" if junction else "Then"


def paper_instruction(items: list[dict[str, Any]]) -> str:
    """Local's offline instruction under ``--protocol paper``: the template without a single
    distance, as V-IRL's instructions never give one (its instruction prompt asks to "avoid
    mentioning specific degree values or exact distances", ``virl/lm/prompt/
    places_templates.py`` line 129). A leg ends at its landmark ("At the intersection with X
    on your left, turn to face east"), else at the N-th intersection when the milestone
    counts them (``crossings``), else at the next one; the last where the destination is
    seen::

        Face north and walk straight on. At the intersection with Kiasma on your
        front-right, turn to face east and walk straight on. Cafe X will be on your left.
    """
    if not items:
        return "You are already there."
    sentences = [f"Face {items[0]['heading_words']} and walk straight on."]
    for prev in items[:-1]:
        where = _paper_turn_place(prev)
        turn = f"turn to face {prev['next_heading_words']} and walk straight on."
        sentences.append(f"{where}, {turn}")
    return " ".join([*sentences, _arrival(items[-1])])


def template_instruction(items: list[dict[str, Any]]) -> str:
    """Local's offline instruction over its milestones (our own wording, one sentence each;
    see :func:`flaneur.agents.virl.local.milestones` for the milestone fields)."""
    if not items:
        return "You are already there."
    sentences = [f"Face {items[0]['heading_words']} and walk about {items[0]['distance_m']} m."]
    for prev, item in itertools.pairwise(items):
        where = "At the intersection" if prev["intersection"] > 2 else "Then"
        if "landmark" in prev:
            where += f" with {prev['landmark']} on your {prev['landmark_direction']}"
        sentences.append(
            f"{where}, turn to face {prev['next_heading_words']} and walk about "
            f"{item['distance_m']} m."
        )
    return " ".join([*sentences, _arrival(items[-1])])

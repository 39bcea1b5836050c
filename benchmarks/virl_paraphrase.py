"""Held-out wordings of Local's milestones, for measuring Ling's offline instruction parser.

Four sentence generators, each written to sound like a different writer and none of them
Local's template (``Face <compass> and walk about N m. At the intersection with X on your
<side>, turn to face <compass> ...``) that the parser was first built against:

* ``numbered`` - an LLM-style numbered list with relative turns ("2. At Stockmann, bear
  right and go on for roughly 40 metres."), compass words without hyphens;
* ``landmarks`` - legs that end where a landmark comes into sight ("Head east until you
  see Kiasma, then turn left and ...") whenever the milestone has a landmark, distances
  otherwise;
* ``blocks`` - "take the second left" (counting the junctions of the street graph the
  step passes) and distances in blocks where a whole number of 80 m blocks is within
  20 m of the leg, metres otherwise;
* ``terse`` - clipped notes ("120m northwest. Left at the corner, 40m. Kiasma on the
  right.").

Used by ``benchmarks/services.py`` (``local_ling_success_paraphrased``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from flaneur.agents.virl.local import Direction, Local, relative8
from flaneur.env.state import relative_angle
from flaneur.services.geocode import GeocodeResult
from flaneur.world.city import City

BLOCK_M = 80.0
_ORDINAL = {1: "first", 2: "second", 3: "third"}
_TURN_WORDS = {
    "front": ("keep going straight", "straight on"),
    "front-right": ("bear right", "slight right"),
    "right": ("turn right", "right"),
    "back-right": ("make a sharp right", "sharp right"),
    "back": ("turn around", "turn around"),
    "back-left": ("make a sharp left", "sharp left"),
    "left": ("turn left", "left"),
    "front-left": ("bear left", "slight left"),
}


def _turn(item: dict[str, Any]) -> str:
    """The relative turn a reader works out from the milestone's heading and next heading."""
    if "next_heading" not in item:
        return "front"
    return relative8(relative_angle(float(item["next_heading"]), float(item["heading"])))


def _plain(word: str) -> str:
    return word.replace("-", "")


def _side(item: dict[str, Any]) -> str:
    side = item.get("destination_direction", "")
    return {"front": "ahead of you", "back": "behind you"}.get(side, f"on your {side}")


def numbered(city: City, d: Direction) -> str:
    """An LLM-style numbered list with relative turns."""
    items = d.milestones
    lines = [
        f"1. Start out facing {_plain(items[0]['heading_words'])} and walk roughly "
        f"{items[0]['distance_m']} meters."
    ]
    for n, (prev, item) in enumerate(itertools.pairwise(items), start=2):
        where = f"At {prev['landmark']}" if "landmark" in prev else "At the corner"
        lines.append(
            f"{n}. {where}, {_TURN_WORDS[_turn(prev)][0]} and go on for about "
            f"{item['distance_m']} metres."
        )
    last = items[-1]
    lines.append(f"{len(items) + 1}. {last['destination']} should be {_side(last)}.")
    return "\n".join(lines)


def landmarks(city: City, d: Direction) -> str:
    """Legs ending where the next turn's landmark comes into sight."""
    items = d.milestones
    out = []
    for i, item in enumerate(items):
        start = (
            f"Head {item['heading_words']}"
            if i == 0
            else f"Then {_TURN_WORDS[_turn(items[i - 1])][0]}"
        )
        if "landmark" in item:
            out.append(f"{start} until you see {item['landmark']}.")
        else:
            out.append(f"{start} and walk about {item['distance_m']} m.")
    out.append(f"You'll find {items[-1]['destination']} {_side(items[-1])}.")
    return " ".join(out)


def _junctions(city: City, nodes: tuple[int, ...]) -> int:
    return sum(int(city.graph.degree[n] > 2) for n in nodes[1:])


def _distance_words(metres: float) -> str:
    blocks = round(metres / BLOCK_M)
    if blocks >= 1 and abs(metres - blocks * BLOCK_M) <= 20:
        return "one block" if blocks == 1 else f"{blocks} blocks"
    return f"{round(metres)} metres"


def blocks(city: City, d: Direction) -> str:
    """Ordinal turns ("take the second left") and distances in blocks."""
    items, steps = d.milestones, d.route.steps
    out, opener = [], f"Go {items[0]['heading_words']}"
    for i, item in enumerate(items):
        turn = _turn(item)
        count = _junctions(city, steps[i].nodes)
        if i + 1 < len(items) and turn in ("left", "right") and 1 <= count <= 3:
            out.append(f"{opener} and take the {_ORDINAL[count]} {turn}.")
            opener = "Walk"
        else:
            out.append(f"{opener} for {_distance_words(item['distance_m'])}.")
            opener = f"Then {_TURN_WORDS[turn][0]} and walk" if i + 1 < len(items) else ""
    out.append(f"{items[-1]['destination']} is right there {_side(items[-1])}.")
    return " ".join(out)


def terse(city: City, d: Direction) -> str:
    """Clipped notes."""
    items = d.milestones
    out = [f"{items[0]['distance_m']}m {_plain(items[0]['heading_words'])}."]
    for prev, item in itertools.pairwise(items):
        where = prev.get("landmark", "the corner")
        word = _TURN_WORDS[_turn(prev)][1]
        out.append(f"{word[0].upper()}{word[1:]} at {where}, {item['distance_m']}m.")
    side = items[-1].get("destination_direction", "")
    out.append(f"{items[-1]['destination']} on the {side or 'way'}.")
    return " ".join(out)


GENERATORS: dict[str, Callable[[City, Direction], str]] = {
    "numbered": numbered,
    "landmarks": landmarks,
    "blocks": blocks,
    "terse": terse,
}


class ParaphrasingLocal(Local):
    """Local whose instruction is re-worded by one of :data:`GENERATORS`."""

    def __init__(self, city: City, style: str) -> None:
        super().__init__(city)
        self.style = style

    def answer(
        self, question: str, from_node: int, destination: GeocodeResult | None = None
    ) -> Direction:
        """Local's answer, the instruction re-worded."""
        d = super().answer(question, from_node, destination=destination)
        if not d.milestones:
            return d
        text = GENERATORS[self.style](self.city, d)
        return replace(d, instruction=text, written_by=f"paraphrase:{self.style}")

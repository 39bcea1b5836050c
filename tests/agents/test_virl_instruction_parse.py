"""Ling's offline instruction parser on free-form direction text (hand-written examples)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from flaneur.agents.virl.instruction_parse import BLOCK_M, Leg, compass_word, parse_instruction
from flaneur.agents.virl.ling import Ling
from flaneur.agents.virl.local import Local, relative8
from flaneur.env.state import relative_angle
from flaneur.services import geocode_one

NAMES = ("Stockmann", "Kiasma", "Ateneum", "Café Esplanad")


def find(text: str) -> list[str]:
    return [n for n in NAMES if n.lower() in text.lower()]


CASES = [
    (
        "Face south-west and walk about 52 m. At the intersection with Stockmann on your "
        "left, turn to face north and walk about 10 m. Kiasma will be on your right.",
        [Leg(direction="south-west", metres=52.0), Leg(direction="north", metres=10.0)],
    ),
    (
        "Head north on Mannerheimintie for about 120 metres, then turn left onto "
        "Aleksanterinkatu and walk 2 blocks. Kiasma is on your right.",
        [Leg(direction="north", metres=120.0), Leg(turn="left", metres=2 * BLOCK_M)],
    ),
    (
        "Go east and take the second left. Walk past Stockmann and continue until you see Kiasma.",
        [
            Leg(direction="east", intersections=2),
            Leg(turn="left", until="Kiasma", past="Stockmann"),
        ],
    ),
    (
        "1. Start by heading northeast for 40 meters.\n2. **Turn right** at Ateneum.\n"
        "3. Walk 30 m; Kiasma will be on your left.",
        [Leg(direction="north-east", metres=40.0), Leg(turn="right", metres=30.0)],
    ),
    (
        "Walk 50m west. Left at Stockmann. 40m. Kiasma on the right.",
        [Leg(direction="west", metres=50.0), Leg(turn="left", metres=40.0)],
    ),
    (
        "Head south. At Café Esplanad, bear right and keep going for half a kilometre.",
        [Leg(direction="south", until="Café Esplanad"), Leg(turn="slight right", metres=500.0)],
    ),
    (
        "Turn around and walk back 30 yards, then take a sharp left and walk until you reach "
        "the Ateneum.",
        [Leg(turn="around", metres=30 * 0.9144), Leg(turn="sharp left", until="Ateneum")],
    ),
    (
        "Go straight for two hundred feet, at the third intersection turn right, and Kiasma is "
        "right there.",
        [Leg(turn="straight", metres=200 * 0.3048), Leg(turn="right")],
    ),
    ("Kiasma is on your left.", []),
    ("Sorry, I don't know.", []),
]


@pytest.mark.parametrize(("text", "legs"), CASES)
def test_free_form_instructions(text, legs):
    assert parse_instruction(text, find) == legs


def test_nth_intersection_ends_the_leg_when_no_distance_is_told():
    legs = parse_instruction("Head west. At the second corner, turn left and walk 20 m.", find)
    assert legs == [Leg(direction="west", intersections=2), Leg(turn="left", metres=20.0)]


def test_compass_words():
    assert compass_word("walk northwards") == "north"
    assert compass_word("go South East") == "south-east"
    assert compass_word("head north-west") == "north-west"
    assert compass_word("turn left") == ""


class NotesLocal(Local):
    """Local whose instruction reads like hurried notes (a wording of this test's own)."""

    def answer(self, question, from_node, destination=None):
        d = super().answer(question, from_node, destination=destination)
        items = d.milestones
        words = {"left": "hang a left", "right": "go right", "front": "carry straight on"}
        text = [
            f"Start heading {items[0]['heading_words'].replace('-', '')}, {items[0]['distance_m']} metres."
        ]
        for prev, item in itertools.pairwise(items):
            turn = relative8(relative_angle(prev["next_heading"], prev["heading"]))
            verb = words.get(turn, f"turn to face {prev['next_heading_words']}")
            text.append(f"At the corner {verb}; {item['distance_m']} metres more.")
        text.append(f"{items[-1]['destination']} is there.")
        return replace(d, instruction="\n".join(text))


def test_ling_follows_notes_offline():
    from flaneur.world.builtin import load_builtin

    city = load_builtin("helsinki")
    start = geocode_one(city, "Stockmann").node
    local, question = NotesLocal(city), "How do I get to Akateeminen Kirjakauppa?"
    text = local.answer(question, start).instruction
    assert "Face" not in text and "hang a left" in text
    out = Ling(city, step_limit=40, max_asks=1).travel(local, question, start)
    assert out["success"] and out["attempts"][0].distance_to_goal_m <= 25

"""The one instruction grammar: Local's template written and read back, free wording read
(hand-written examples)."""

from __future__ import annotations

import pytest

from flaneur.agents.virl.instructions import (
    BLOCK_M,
    Leg,
    compass_word,
    parse_instruction,
    relative8,
    template_instruction,
)

NAMES = ("Stockmann", "Kiasma", "Ateneum", "Café Esplanad")


def find(text: str) -> list[str]:
    return [n for n in NAMES if n.lower() in text.lower()]


CASES = [
    (
        "Face south-west and walk about 52 m. At the intersection with Stockmann on your "
        "left, turn to face north and walk about 10 m. Kiasma will be on your right.",
        [
            Leg(direction="south-west", metres=52.0, landmark="Stockmann", side="left"),
            Leg(direction="north", metres=10.0),
        ],
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
        "1. Start out facing east and walk roughly 40 meters.\n2. At Ateneum, bear right and "
        "go on for about 25 metres.\n3. Kiasma should be on your left.",
        [
            Leg(direction="east", metres=40.0, landmark="Ateneum"),
            Leg(turn="slight right", metres=25.0),
        ],
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


def test_compass_and_relative_words():
    assert compass_word("walk northwards") == "north"
    assert compass_word("go South East") == "south-east"
    assert compass_word("head north-west") == "north-west"
    assert compass_word("turn left") == ""
    assert relative8(-90) == "left" and relative8(30) == "front-right" and relative8(180) == "back"


MILESTONES = [
    {"heading_words": "north", "distance_m": 40, "intersection": 4, "next_heading_words": "east",
     "landmark": "Dr. Jones, Tailor", "landmark_direction": "front-right"},
    {"heading_words": "east", "distance_m": 25, "intersection": 2, "next_heading_words": "south",
     "landmark": "Q", "landmark_direction": "back-left"},
    {"heading_words": "south", "distance_m": 30, "intersection": 3, "next_heading_words": "west"},
    {"heading_words": "west", "distance_m": 5, "intersection": 1, "destination": "Then Bar",
     "destination_direction": "left"},
]  # fmt: skip


def test_the_template_is_written_and_read_back():
    text = template_instruction(MILESTONES)
    assert text == (
        "Face north and walk about 40 m. At the intersection with Dr. Jones, Tailor on your "
        "front-right, turn to face east and walk about 25 m. Then with Q on your back-left, "
        "turn to face south and walk about 30 m. At the intersection, turn to face west and "
        "walk about 5 m. Then Bar will be on your left."
    )
    assert parse_instruction(text) == [  # landmark names as written, dots and commas too
        Leg(direction="north", metres=40.0, landmark="Dr. Jones, Tailor", side="front-right"),
        Leg(direction="east", metres=25.0, landmark="Q", side="back-left"),
        Leg(direction="south", metres=30.0),
        Leg(direction="west", metres=5.0),
    ]
    assert template_instruction([]) == "You are already there."
    last = {**MILESTONES[-1], "destination_direction": None}
    assert template_instruction([last]).endswith("You will arrive at Then Bar.")

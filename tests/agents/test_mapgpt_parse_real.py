"""MapGPT's parser against shapes of real small-model output (SmolLM2-135M on llama.cpp)."""

from __future__ import annotations

from flaneur.agents.mapgpt.parse import drop_echoed_options, parse_reply
from flaneur.agents.mapgpt.prompt_builder import Option

OPTIONS = [
    Option("A", 0, -1, -1, "stop"),
    Option("B", 1, 5, 4, "turn left to Place 4", "a 3-way intersection"),
    Option("C", 2, 6, 5, "go forward to Place 5"),
]


def test_truncated_reply_ending_in_stop_is_a_parse_failure_not_a_stop():
    text = "Thought: I walked along the street and the shops are near. The next stop will be"
    parsed = parse_reply(text, OPTIONS, truncated=True)
    assert parsed.option is None and parsed.method == "none"
    # the same words, not cut off, still read as stop (a finished sentence saying so)
    assert parse_reply("stop", OPTIONS).option.is_stop


def test_truncated_reply_with_an_action_field_is_read():
    text = "Thought: go on.\nNew Planning: keep left.\nAction: B\nThought: and then I will"
    parsed = parse_reply(text, OPTIONS, truncated=True)
    assert parsed.option.letter == "B" and parsed.method == "field"


def test_echoed_option_list_is_not_a_choice():
    text = "Action options (step 3):\nA. stop\nB. turn left to Place 4: a 3-way intersection\nC. go forward to Place 5"
    assert parse_reply(text, OPTIONS).option is None
    assert drop_echoed_options(text, OPTIONS) == "Action options (step 3):"


def test_echoed_list_then_a_real_choice():
    text = "- A. stop\n- B. turn left to Place 4\n- C. go forward to Place 5\nAction: C"
    parsed = parse_reply(text, OPTIONS)
    assert parsed.option.letter == "C"


def test_one_matching_line_is_kept():
    assert parse_reply("B. turn left to Place 4", OPTIONS).option.letter == "B"

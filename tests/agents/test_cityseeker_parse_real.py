"""CitySeeker's parser against shapes of real small-model output: echoes and missing keys."""

from __future__ import annotations

from flaneur.agents.cityseeker.parse import echoes_prompt, parse_choice, parse_stop

STOP_PROMPT = """Task: Find a pharmacy near the market square.

Step 1 of at most 35.
You stand at a 3-way intersection facing north.

First observe and think: have you reached the place the task asks for (it should be right here, within a few metres)?

Answer with JSON only:
{"thought": "<what you see and why>", "decision": "continue" or "stop", "confidence": <number from 0 to 1>}"""


def test_echoed_answer_template_is_a_failure_not_a_decision():
    reply = '{"thought": "<what you see and why>", "decision": "continue" or "stop", "confidence": <number from 0 to 1>}'
    said = parse_stop(reply, STOP_PROMPT)
    assert not said.ok and not said.stop and said.reason == "echoed the prompt"


def test_echoed_prompt_lines_are_a_failure():
    reply = "Task: Find a pharmacy near the market square.\nYou stand at a 3-way intersection facing north."
    assert echoes_prompt(reply, STOP_PROMPT)
    assert parse_stop(reply, STOP_PROMPT).reason == "echoed the prompt"
    # one quoted line inside a real answer is not an echo
    answer = 'Task: Find a pharmacy near the market square.\n{"decision": "stop"}\nI see it.'
    assert not echoes_prompt(answer, STOP_PROMPT)
    assert parse_stop(answer, STOP_PROMPT).stop


def test_choice_without_choice_key_falls_back_to_option_a():
    chosen = parse_choice('{"thought": "go on", "decision": "continue"}', ["FRONT", "LEFT"])
    assert (chosen.index, chosen.ok, chosen.reason) == (0, False, "no choice in the JSON reply")
    bad = parse_choice('{"choice": "Q"}', ["FRONT", "LEFT"])
    assert (bad.index, bad.ok, bad.reason) == (0, False, "unknown option")
    none = parse_choice("I like turtles", ["FRONT", "LEFT"])
    assert (none.ok, none.reason) == (False, "unparseable")
    good = parse_choice('{"choice": "B", "confidence": 0.6}', ["FRONT", "LEFT"])
    assert (good.index, good.ok, good.reason, good.confidence) == (1, True, "", 0.6)

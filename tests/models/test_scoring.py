"""Choosing literal actions from logprobs or text."""

from __future__ import annotations

import math

import pytest

from flaneur.models import (
    NAV_ACTIONS,
    Completion,
    TokenLogprob,
    choose_literal,
    parse_literal,
    score_actions,
    score_logprobs,
    user,
)
from flaneur.testing import WRONG_ACTION_TEXT, FakeReply


def _completion(text: str, top: list[tuple[str, float]] | None) -> Completion:
    if top is None:
        return Completion(text)
    return Completion(text, logprobs=(TokenLogprob(top[0][0], top[0][1], tuple(top)),))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FORWARD", "FORWARD"),
        ("left", "LEFT"),
        ("  Right.", "RIGHT"),
        ("I will turn around now", "TURN_AROUND"),
        ("turn-around", "TURN_AROUND"),
        ("TurnAround", "TURN_AROUND"),
        ("Action: STOP!", "STOP"),
        ("We should go straight ahead.", "FORWARD"),
        ("make a u-turn", "TURN_AROUND"),
        ("turn left at the corner", "LEFT"),
        ("Next: LEFT, then RIGHT", "LEFT"),
        ("the leftover stopover", None),
        ("I would rather fly", None),
        ("", None),
    ],
)
def test_parse_literal(text, expected):
    assert parse_literal(text) == expected


def test_parse_literal_custom_literals():
    assert parse_literal("Answer: b) north", ["NORTH", "SOUTH"], aliases={}) == "NORTH"
    assert parse_literal("pick option_two", ["OPTION_ONE", "OPTION_TWO"]) == "OPTION_TWO"


def test_score_logprobs_prefix_and_sum():
    top = [
        (" LEFT", math.log(0.4)),
        ("Left", math.log(0.2)),
        ("TURN", math.log(0.3)),
        ("R", math.log(0.05)),
        ("the", math.log(0.05)),
    ]
    scores = score_logprobs(top, NAV_ACTIONS)
    # a single letter ("R") is too ambiguous to count for RIGHT
    assert set(scores) == {"LEFT", "TURN_AROUND"}
    assert scores["LEFT"] == pytest.approx(math.log(0.6))
    assert scores["TURN_AROUND"] == pytest.approx(math.log(0.3))


def test_score_logprobs_fragments_need_capitals_and_two_letters():
    top = [
        ("ST", math.log(0.1)),
        ("S", math.log(0.2)),
        ("St", math.log(0.1)),
        (" turn", math.log(0.1)),
        ("Turn around", math.log(0.05)),
        (" forward", math.log(0.1)),
        ("The", math.log(0.1)),
        ("RI", math.log(0.02)),
    ]
    scores = score_logprobs(top, NAV_ACTIONS)
    assert set(scores) == {"STOP", "TURN_AROUND", "FORWARD", "RIGHT"}
    assert scores["STOP"] == pytest.approx(math.log(0.1))  # "ST" only
    assert scores["TURN_AROUND"] == pytest.approx(math.log(0.05))  # the whole words only


def test_low_action_mass_falls_back_to_text_as_a_parse_failure():
    # what SmolLM2 did: 2 % on action-like tokens, "You"/"1" on top, reply "1. FORWARD"
    top = [
        ("You", math.log(0.4)),
        ("1", math.log(0.3)),
        ("The", math.log(0.2)),
        ("ST", math.log(0.015)),
        ("S", math.log(0.005)),
    ]
    score = choose_literal(_completion("1. FORWARD", top))
    assert score.choice == "FORWARD" and score.method == "text" and score.fallback
    assert score.mass == pytest.approx(0.015)
    assert score.confidence is None


def test_top_token_action_is_trusted_even_with_low_mass():
    top = [("LEFT", math.log(0.3)), ("You", math.log(0.25)), ("1", math.log(0.2))]
    score = choose_literal(_completion("LEFT", top))
    assert score.choice == "LEFT" and score.method == "logprobs" and not score.fallback
    assert score.confidence == pytest.approx(0.3)  # over the whole distribution


def test_enough_mass_is_trusted_and_confidence_is_absolute():
    top = [("You", math.log(0.35)), ("RIGHT", math.log(0.33)), ("LEFT", math.log(0.32))]
    score = choose_literal(_completion("You", top), min_mass=0.5)
    assert score.choice == "RIGHT" and score.mass == pytest.approx(0.65)
    assert score.confidence == pytest.approx(0.33)
    strict = choose_literal(_completion("You", top), min_mass=0.7)
    assert strict.choice is None and strict.method == "none" and strict.fallback


def test_choose_literal_prefers_logprobs_over_text():
    top = [("RIGHT", math.log(0.55)), ("LEFT", math.log(0.45))]
    score = choose_literal(_completion("LEFT", top))
    assert score.choice == "RIGHT" and score.method == "logprobs" and score.valid


def test_choose_literal_skips_leading_newline_position():
    comp = Completion(
        "\nSTOP",
        logprobs=(
            TokenLogprob("\n", -0.1, (("\n", -0.1), ("Sure", -3.0))),
            TokenLogprob("STOP", -0.2, (("STOP", -0.2), ("FOR", -2.0))),
        ),
    )
    assert choose_literal(comp).choice == "STOP"


def test_choose_literal_falls_back_to_text_then_none():
    top = [("Sure", math.log(0.9)), ("Well", math.log(0.1))]
    score = choose_literal(_completion("Sure, turn around.", top))
    assert (score.choice, score.method) == ("TURN_AROUND", "text")
    none = choose_literal(_completion("no idea", None))
    assert none.choice is None and none.method == "none" and not none.valid


async def test_score_actions_over_http_with_logprobs(fake, make):
    fake.configure(
        lambda req: FakeReply("FORWARD", first_token_probs={"LEFT": 0.6, "FORWARD": 0.4})
    )
    score, comp = await score_actions(make(), [user("where now?")])
    # the argmax over literals (VELMA) wins over the sampled text
    assert score.choice == "LEFT" and score.method == "logprobs"
    assert comp.text == "FORWARD"
    body = fake.requests[0].body
    assert body["top_logprobs"] == 20 and body["temperature"] == 0 and body["max_tokens"] == 8


async def test_score_actions_random_policy_is_consistent(fake, make):
    fake.configure("random-action", seed=3)
    model = make()
    for _ in range(10):
        score, comp = await score_actions(model, [user("next?")])
        assert score.choice == comp.text and score.method == "logprobs"


async def test_score_actions_without_logprobs_parses_text(fake, make):
    fake.configure("constant:Let's turn around here.")
    score, _ = await score_actions(make(supports_logprobs=False), [user("next?")])
    assert (score.choice, score.method) == ("TURN_AROUND", "text")
    assert "logprobs" not in fake.requests[0].body


async def test_wrong_action_words_give_none(fake, make):
    fake.configure("constant:LEFT", faults={1: "wrong-action"})
    model = make()
    first, _ = await score_actions(model, [user("a")])
    second, comp = await score_actions(model, [user("b")])
    assert first.choice == "LEFT"
    assert second.choice is None and comp.text == WRONG_ACTION_TEXT


async def test_teacher_callable_policy(fake, make):
    route = {"a": "LEFT", "b": "STOP"}
    fake.configure(lambda req: route[req.last_user_text])
    model = make()
    assert (await score_actions(model, [user("a")]))[0].choice == "LEFT"
    assert (await score_actions(model, [user("b")]))[0].choice == "STOP"

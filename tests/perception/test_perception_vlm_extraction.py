"""VLMLandmarks and landmark extraction with fake models."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from PIL import Image

from flaneur.perception.extraction import (
    FEW_SHOT,
    aextract_landmarks,
    extract_landmarks,
    extraction_messages,
    parse_landmark_list,
    rule_based_landmarks,
)
from flaneur.perception.landmarks.vlm import VLMLandmarks, parse_choice
from flaneur.views.base import View


@dataclass
class Reply:
    text: str


class FakeModel:
    """Answers with a scripted function of the prompt text; records calls."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.calls: list[tuple[list, dict]] = []

    async def complete(self, messages, **params):
        self.calls.append((messages, params))
        last = messages[-1]["content"]
        text = last if isinstance(last, str) else last[0]["text"]
        return Reply(self.answer(text))


def _view() -> View:
    return View(Image.new("RGB", (64, 40), (90, 90, 90)), "n1", 120.0)


def test_parse_choice():
    opts = ["Stockmann", "Kiosk", "Hotel Kämp", "None of the above"]
    assert parse_choice("A, C", opts) == {0, 2}
    assert parse_choice("Answer: (B)", opts) == {1}
    assert parse_choice("I see A and the Hotel Kämp.", opts) == {0, 2}
    assert parse_choice("D", opts) == {3}
    assert parse_choice("None of the above", opts) == {3}
    assert parse_choice("A, D", opts) == {3}
    assert parse_choice("nothing useful", opts) == set()


def test_vlm_landmarks_multiple_choice():
    model = FakeModel(lambda text: "B" if "B. Kiosk" in text else "C")
    scorer = VLMLandmarks(model)
    obs = scorer.score(_view(), ["Stockmann", "Kiosk"])
    assert [(o.landmark, o.visible) for o in obs] == [("Stockmann", False), ("Kiosk", True)]
    assert obs[1].heading == 120.0 and obs[1].source == "vlm"
    messages, params = model.calls[0]
    parts = messages[0]["content"]
    assert "C. None of the above" in parts[0]["text"]
    assert parts[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert params == {"temperature": 0.0, "max_tokens": 40}


async def test_vlm_chunks_long_lists():
    model = FakeModel(lambda text: "A")
    scorer = VLMLandmarks(model, max_options=2)
    obs = await scorer.ascore(_view(), ["a1", "b2", "c3"])
    assert [o.visible for o in obs] == [True, False, True]
    assert len(model.calls) == 2


def test_vlm_none_of_the_above():
    scorer = VLMLandmarks(FakeModel(lambda text: "None of the above."))
    assert scorer.visible(_view(), ["Stockmann", "Kiosk"]) == []


def test_rule_based_extraction():
    assert rule_based_landmarks(
        "Head past the Fazer Café and turn left at the bookshop on the corner. "
        "Stop in front of Hotel Kämp."
    ) == ["Fazer Café", "bookshop", "Hotel Kämp"]
    assert rule_based_landmarks("Walk to the Museum of Modern Art, then right at Chase Bank.") == [
        "Museum of Modern Art",
        "Chase Bank",
    ]
    assert rule_based_landmarks("Keep going straight and stop at the next corner.") == []
    assert extract_landmarks("Turn left after the red awning.") == ["red awning"]


def test_model_extraction_and_fallback():
    model = FakeModel(lambda text: 'Sure: ["Stockmann", "bus stop", "Stockmann"]')
    assert extract_landmarks("Go from Stockmann to the bus stop.", model) == [
        "Stockmann",
        "bus stop",
    ]
    messages = model.calls[0][0]
    assert messages[0]["role"] == "system" and len(messages) == 2 + 2 * len(FEW_SHOT)
    bad = FakeModel(lambda text: "I cannot tell.")
    assert extract_landmarks("Walk past the pharmacy.", bad) == ["pharmacy"]


async def test_async_extraction():
    model = FakeModel(lambda text: '["kiosk"]')
    assert await aextract_landmarks("Stop at the kiosk.", model) == ["kiosk"]
    assert await aextract_landmarks("Stop at the kiosk.") == ["kiosk"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [('["a", "b"]', ["a", "b"]), ("[1, 2]", None), ("no list", None), ('x ["a"] y ["b"]', ["a"])],
)
def test_parse_landmark_list(text, expected):
    assert parse_landmark_list(text) == expected


def test_extraction_messages_end_with_the_instruction():
    msgs = extraction_messages("Go to the church.")
    assert msgs[-1] == {"role": "user", "content": "Instruction: Go to the church."}


async def test_vlm_and_extraction_through_the_model_layer():
    """The real model layer against the project's fake OpenAI-compatible server."""
    testing = pytest.importorskip("flaneur.testing")
    from flaneur.models.openai_compatible import OpenAICompatible

    with testing.FakeOpenAIServer(["B", '["Stockmann", "kiosk"]']) as server:
        model = OpenAICompatible(
            "fake-model", provider="vllm", base_url=server.base_url, timeout=5.0
        )
        try:
            obs = await VLMLandmarks(model).ascore(_view(), ["Stockmann", "Kiosk"])
            assert [o.visible for o in obs] == [False, True]
            found = await aextract_landmarks("Walk from Stockmann to the kiosk.", model)
            assert found == ["Stockmann", "kiosk"]
        finally:
            await model.aclose()
        sent = server.requests[0]
        assert sent is not None and server.counts["/v1/chat/completions"] == 2

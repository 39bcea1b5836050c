"""Place VQA: offline options, answer parsing, circular evaluation, the fake server."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from flaneur.bench.answerers import ModelAnswerer, options_of_prompt
from flaneur.bench.parse import AnswerParser, EmbedderMatcher, ModelMatcher, exact_letter
from flaneur.bench.vqa import build_vqa_set, evaluate_vqa, format_question, intention_pool
from flaneur.bench.vqa_llm import LLMOptionWriter
from flaneur.models import make_model
from flaneur.testing.fake_openai import FakeOpenAIServer
from flaneur.testing.vqa_policy import ScriptedVQAPolicy


def _item(pid: str, types: list[str], options: list[str], answer: str) -> dict:
    return {
        "place_id": pid,
        "types": types,
        "region": "r",
        "question": "Q?",
        "options": options,
        "answer": answer,
    }


@pytest.mark.parametrize(
    "reply, letter",
    [
        ("B", "B"),
        ("B.", "B"),
        ("B)", "B"),
        ("B,", "B"),
        ("B).", "B"),
        ("(c)", "C"),
        (" Answer: D ", "D"),
        ("The answer is A", "A"),
        ("A", "A"),
        ("a", None),
        ("A bakery", None),
        ("E", None),
        ("", None),
        ("B and C", None),
    ],
)
def test_exact_letter_forms(reply: str, letter: str | None) -> None:
    assert exact_letter(reply) == letter


def test_reply_without_letter_is_none_and_counted() -> None:
    parser = AnswerParser()
    opts = ["eat", "sleep", "swim", "read"]
    assert parser.parse("I cannot tell.", "Q?", opts) == "none"
    assert parser.parse("", "Q?", opts) == "none"
    assert parser.parse(None, "Q?", opts) == "none"  # type: ignore[arg-type]
    assert parser.parse("C", "Q?", opts) == "C"
    assert (parser.none, parser.exact, parser.matcher_used) == (3, 1, 0)


class _KeywordEmbedder:
    """Unit vectors on keyword axes (stands in for MiniLM)."""

    words = ("bread", "beer", "swim", "book")

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        def vec(t: str) -> np.ndarray:
            v = np.array([float(w in t.lower()) for w in self.words]) + 1e-9
            return v / np.linalg.norm(v)

        return np.array([[float(vec(x) @ vec(y)) for y in b] for x in a])


def test_embedder_matcher_reads_text_replies() -> None:
    parser = AnswerParser(EmbedderMatcher(_KeywordEmbedder()))
    opts = ["Buy bread", "Drink beer", "Go for a swim", "Borrow a book"]
    assert parser.parse("I would say: drink a beer", "Q?", opts) == "B"
    assert parser.parse("Nothing fits", "Q?", opts) == "none"
    assert parser.matcher_used == 2 and parser.none == 1


def test_offline_options_one_true_three_disjoint() -> None:
    cats = {"p1": ("bakery",), "p2": ("bank", "atm"), "p3": ("bench",)}
    items = [{"place_id": p, "types": ["x"]} for p in cats]
    built, fallbacks = build_vqa_set(items, cats.__getitem__, seed=3)
    again, _ = build_vqa_set(items, cats.__getitem__, seed=3)
    assert built == again and fallbacks == 0
    pool = {x.text: x.categories for x in intention_pool()}
    assert [b["place_id"] for b in built] == ["p1", "p2", "p3"]  # a bench has intentions too
    for b in built:
        assert len(set(b["options"])) == 4 and b["written_by"] == "offline"
        true = b["options"]["ABCD".index(b["answer"])]
        assert pool[true] & set(cats[b["place_id"]])
        others = [o for o in b["options"] if o != true]
        assert all(not pool[o] & set(cats[b["place_id"]]) for o in others)


def test_circular_and_plain_hand_computed() -> None:
    items = [
        _item("p1", ["cafe"], ["t1", "f", "g", "h"], "A"),  # answerer knows: right 4/4
        _item("p2", ["cafe", "bar"], ["f", "t2", "g", "h"], "B"),  # always says B: 1/4
        _item("p3", ["bar"], ["f", "g", "h", "t3"], "D"),  # always says A: 0
    ]
    truth = {"p1": "t1"}

    def answer(item: dict, prompt: str) -> str:
        opts = options_of_prompt(prompt)
        if item["place_id"] in truth:
            return "ABCD"[opts.index(truth[item["place_id"]])]
        return "B" if item["place_id"] == "p2" else "A"

    r = evaluate_vqa(items, answer, AnswerParser())
    # circular: p1 right; cafe = 1 / 1.5, bar = 0 / 1.5 -> mAcc 1/3; acc 1/3
    assert r["acc_circular"] == pytest.approx(1 / 3)
    assert r["macc_circular"] == pytest.approx((1 / 1.5 + 0) / 2)
    # plain (first pass): p1, p2 right; cafe = 1.5/1.5, bar = 0.5/1.5 -> mAcc 2/3
    assert r["acc_plain"] == pytest.approx(2 / 3)
    assert r["macc_plain"] == pytest.approx((1 + 1 / 3) / 2)
    assert r["asked"] == 4 + 2 + 1
    single = evaluate_vqa(items, answer, AnswerParser(), circular=False)
    assert single["acc_plain"] == pytest.approx(2 / 3) and single["asked"] == 3
    assert single["acc_circular"] is None and single["mode"] == "plain"


def test_resume_skips_done_places() -> None:
    items = [_item("p1", ["cafe"], ["t", "f", "g", "h"], "A")]
    done = {
        "p1": {
            "place_id": "p1",
            "types": ["cafe"],
            "correct": True,
            "first_pass": True,
            "answers": ["A"] * 4,
            "replies": ["A"] * 4,
        }
    }

    def never(item: dict, prompt: str) -> str:
        raise AssertionError("asked again")

    assert evaluate_vqa(items, never, AnswerParser(), done=done)["acc_circular"] == 1.0


def test_scripted_model_through_fake_server() -> None:
    pool = [x.text for x in intention_pool()]
    items = [
        _item(f"p{i}", ["cafe" if i % 2 else "bar"], pool[4 * i : 4 * i + 4], "ABCD"[i % 4])
        for i in range(12)
    ]
    truth = [(it["options"], it["options"]["ABCD".index(it["answer"])]) for it in items]
    styles = {"letter": 0.5, "text": 0.3, "none": 0.2}
    with FakeOpenAIServer(ScriptedVQAPolicy(truth, styles=styles, seed=1)) as server:
        model = make_model("fake-model", base_url=server.base_url)
        parser = AnswerParser(ModelMatcher(model))
        answerer = ModelAnswerer(model, with_image=False)
        r = evaluate_vqa(items, lambda item, p: answerer.answer(None, p), parser)
        assert r["matcher_used"] > 0 and r["none_replies"] > 0
        # the scripted model is never wrong except for "none" replies
        for res in r["results"]:
            assert res["correct"] == ("none" not in res["answers"])
        assert parser.none == r["none_replies"]
        assert server.chat_count == r["asked"] + r["matcher_used"]


def test_llm_writer_and_fallback() -> None:
    good = (
        '{"true_option": "Buy bread here", "false_options": '
        '["Swim laps", "Fly a plane", "See a dentist"]}'
    )
    items = [
        {"place_id": "p1", "name": "Leipomo", "types": ["bakery"]},
        {"place_id": "p2", "name": "X", "types": ["bakery"]},
    ]
    with FakeOpenAIServer([good, "Sorry, I cannot help."]) as server:
        writer = LLMOptionWriter(make_model("fake-model", base_url=server.base_url))
        built, fallbacks = build_vqa_set(items, lambda pid: ("bakery",), writer=writer)
    assert fallbacks == 1 and writer.failures == 1
    assert built[0]["written_by"] == "llm" and "Buy bread here" in built[0]["options"]
    assert built[0]["options"]["ABCD".index(built[0]["answer"])] == "Buy bread here"
    assert built[1]["written_by"] == "offline"


def test_format_question_round_trip() -> None:
    prompt = format_question("Q?", ["a", "b", "c", "d"])
    assert options_of_prompt(prompt) == ["a", "b", "c", "d"] and "A. a" in prompt

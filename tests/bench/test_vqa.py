"""Place VQA: offline options, reply reading, every answerer through the one runner, circular
evaluation hand-computed, and rows that do not depend on concurrency."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from flaneur.bench.parse import EmbedderMatcher, exact_letter, read_reply
from flaneur.bench.vqa import format_question, intention_pool, offline_options
from flaneur.env.toy import toy_city
from flaneur.evaluate.kinds.virl_bench import VqaKind
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.generators import generate_set
from flaneur.tasks.items import TaskItem, write_items
from flaneur.testing.fake_openai import FakeOpenAIServer
from harness.vqa_policy import ScriptedVQAPolicy

TIMING = ("started_at", "duration_s")


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The toy pack, its VQA set (3 places) and a 12-question set for text-only answerers."""
    folder = tmp_path_factory.mktemp("vqa")
    city = toy_city()
    pack = city.save(folder / "toy")
    made = generate_set("virl-vqa", city, city_spec=str(pack), options={"cell_m": 10000})
    pool = [x.text for x in intention_pool()]
    questions = [
        {
            "id": f"q{i:02d}",
            "category": "cafe" if i % 2 else "bar",
            "types": ["cafe" if i % 2 else "bar"],
            "region": "r",
            "question": "Q?",
            "options": pool[4 * i : 4 * i + 4],
            "answer": i % 4,
        }
        for i in range(12)
    ]
    header = {"kind": "virl-vqa", "version": 1, "success_metric": "correct", "city": str(pack)}
    return {
        "city": city,
        "pack": pack,
        "made": made,
        "items": made.write(folder / "vqa.jsonl"),
        "questions": write_items(folder / "questions.jsonl", header, questions),
        "truth": [(q["options"], q["options"][q["answer"]]) for q in questions],
    }


def _rows(out: Path) -> list[dict]:
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    return sorted(
        ({k: v for k, v in r.items() if k not in TIMING} for r in rows),
        key=lambda r: r["episode_id"],
    )


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


class _KeywordEmbedder:
    """Unit vectors on keyword axes (stands in for MiniLM)."""

    words = ("bread", "beer", "swim", "book")

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        def vec(t: str) -> np.ndarray:
            v = np.array([float(w in t.lower()) for w in self.words]) + 1e-9
            return v / np.linalg.norm(v)

        return np.array([[float(vec(x) @ vec(y)) for y in b] for x in a])


def test_replies_read_by_letter_matcher_or_none() -> None:
    opts = ["Buy bread", "Drink beer", "Go for a swim", "Borrow a book"]
    matcher = EmbedderMatcher(_KeywordEmbedder())

    def read(reply: object, with_matcher: bool = True) -> tuple[str, str]:
        got = asyncio.run(read_reply(reply, "Q?", opts, matcher if with_matcher else None))
        return got.letter, got.read_by

    assert read("C") == ("C", "exact")
    assert read("I would say: drink a beer") == ("B", "matcher")
    assert read("Nothing fits") == ("none", "none")
    assert read("I would say: drink a beer", with_matcher=False) == ("none", "none")
    assert read(None) == ("none", "none") and read("") == ("none", "none")


def test_offline_options_one_true_three_disjoint() -> None:
    pool = intention_pool()
    cats = {x.text: x.categories for x in pool}
    for place in (("bakery",), ("bank", "atm"), ("bench",)):
        made = offline_options(place, pool, np.random.default_rng(3))
        assert made == offline_options(place, pool, np.random.default_rng(3))
        options, answer = made
        assert len(set(options)) == 4 and cats[options[answer]] & set(place)
        assert all(not cats[o] & set(place) for i, o in enumerate(options) if i != answer)


def test_vqa_set_holds_the_recognition_places(toy: dict) -> None:
    recognition = generate_set(
        "virl-recognition", toy["city"], city_spec=str(toy["pack"]), options={"cell_m": 10000}
    )
    made = toy["made"]
    assert [it.id for it in made.items] == [it.id for it in recognition.items]
    for item in made.items:
        assert len(item["options"]) == 4 and item["answer"] in range(4)
        assert item.category == item["types"][0] and item["question"].startswith("Which")


def test_oracle_and_embedder_answerers_through_the_runner(toy: dict, tmp_path: Path) -> None:
    config = RunConfig(agents=("oracle", "embedder"), tasks=(str(toy["items"]),))
    summary = run_benchmark(config, tmp_path / "run", progress="none")
    oracle, embedder = summary["runs"]
    assert oracle["summary"]["overall"]["metrics"]["correct"]["mean"] == 1.0
    assert oracle["task_metrics"]["macc_circular"]["value"] == 1.0
    assert embedder["by_termination"] == {"completed": 3}
    for row in _rows(tmp_path / "run"):
        if row["agent"] == "embedder":  # its pick ignores the order: circular = plain
            assert row["metrics"]["correct"] == row["metrics"]["first_pass"]


def _model_run(toy: dict, out: Path, server: FakeOpenAIServer, concurrency: int) -> None:
    config = RunConfig(
        agents=("model",),
        tasks=(str(toy["questions"]),),
        llm="fake-model",
        llm_base_url=server.base_url,
        cache_mode="off",
        concurrency=concurrency,
        per_agent_options={"model": {"with_image": False}},
    )
    run_benchmark(config, out, progress="none")


def test_model_answerer_reads_replies_and_rows_ignore_concurrency(
    toy: dict, tmp_path: Path
) -> None:
    styles = {"letter": 0.5, "text": 0.3, "none": 0.2}
    with FakeOpenAIServer(ScriptedVQAPolicy(toy["truth"], styles=styles, seed=1)) as server:
        _model_run(toy, tmp_path / "one", server, 1)
        calls = server.chat_count
        _model_run(toy, tmp_path / "four", server, 4)
    rows = _rows(tmp_path / "one")
    read_by = [how for r in rows for how in r["result"]["read_by"]]
    assert "matcher" in read_by and "none" in read_by
    for row in rows:  # the scripted model is never wrong except for "none" replies
        assert row["metrics"]["correct"] == ("none" not in row["result"]["answers"])
        assert row["records"][0]["prompt_id"] == "virl-vqa-answer-1"
    asked = sum(len(r["result"]["answers"]) for r in rows)
    assert calls == asked + sum(how != "exact" for how in read_by)  # + one matcher call each
    assert _rows(tmp_path / "four") == rows


def test_circular_and_plain_figures_hand_computed() -> None:
    def row(pid: str, types: list[str], correct: bool, first: bool) -> dict:
        metrics = {"correct": correct, "first_pass": first}
        return {"episode_id": pid, "result": {"types": types}, "metrics": metrics}

    rows = [
        row("p1", ["cafe"], True, True),  # right 4 of 4
        row("p2", ["cafe", "bar"], False, True),  # right on the first pass only
        row("p3", ["bar"], False, False),
    ]
    figures = VqaKind().aggregate(rows, None)  # type: ignore[arg-type]
    # circular: cafe = 1 / 1.5, bar = 0 / 1.5 -> mAcc 1/3; acc 1/3
    assert figures["macc_circular"]["value"] == pytest.approx((1 / 1.5 + 0) / 2)
    assert figures["acc_circular"]["value"] == pytest.approx(1 / 3)
    # plain: cafe = 1.5 / 1.5, bar = 0.5 / 1.5 -> mAcc 2/3; acc 2/3
    assert figures["macc_plain"]["value"] == pytest.approx((1 + 1 / 3) / 2)
    assert figures["acc_plain"]["value"] == pytest.approx(2 / 3)
    assert all(f["n"] == 3 for f in figures.values())


def test_scoring_stops_at_the_first_wrong_pass() -> None:
    kind = VqaKind()
    q = TaskItem("q", "cafe", {"types": ["cafe"], "options": ["t", "f", "g", "h"], "answer": 1})
    assert kind.score_item(q, {"answers": ["B", "A", "D", "C"]}, None) == {  # type: ignore[arg-type]
        "correct": True,
        "first_pass": True,
    }
    assert kind.score_item(q, {"answers": ["B", "B"]}, None) == {  # type: ignore[arg-type]
        "correct": False,
        "first_pass": True,
    }


def test_format_question() -> None:
    prompt = format_question("Q?", ["a", "b", "c", "d"])
    assert prompt.startswith("Q: Q? Choices:") and "A. a" in prompt and "D. d" in prompt

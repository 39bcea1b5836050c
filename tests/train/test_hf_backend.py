"""The ``hf:`` backend: local paths only, log-probabilities of the action words, and a
trained folder run by ``flaneur run --agent velma --llm hf:DIR`` on the toy task."""

from __future__ import annotations

import asyncio
import json

import pytest

from flaneur.cli import main
from flaneur.env import toy_city, toy_episodes
from flaneur.evaluate.runlog import read_rows
from flaneur.models import ModelConfigError, make_model, score_actions, system, user
from flaneur.models.registry import parse_model_string
from flaneur.tasks.registry import register_task
from flaneur.tasks.spec import TaskSpec
from harness.train_extra import needs_train_extra

TASK = "toy-hf-backend-v1"


def test_hf_model_strings_name_local_paths_only(tmp_path):
    spec = parse_model_string("hf:runs/ft")
    assert (spec.provider, spec.model, spec.base_url) == ("hf", "runs/ft", None)
    with pytest.raises(ModelConfigError, match="hf: needs"):
        parse_model_string("hf:")
    pytest.importorskip("transformers", reason="the train extra is missing")
    with pytest.raises(ModelConfigError, match="nothing is downloaded"):
        make_model("hf:HuggingFaceTB/SmolLM2-135M-Instruct")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelConfigError, match="no config"):
        make_model(f"hf:{tmp_path / 'empty'}")


@needs_train_extra
def test_the_action_words_get_log_probabilities(tiny_model):
    model = make_model(f"hf:{tiny_model}")
    messages = [system("Act."), user("Go east .")]
    params = {"temperature": 0, "max_tokens": 8, "logprobs": True, "top_logprobs": 20}
    reply = asyncio.run(model.complete(messages, **params))
    top = reply.logprobs[0].top
    assert len(top) == 20 and top == tuple(sorted(top, key=lambda t: -t[1]))
    assert reply.usage.completion_tokens == len(reply.logprobs) <= 8
    again = asyncio.run(model.complete(messages, **params))
    assert again.text == reply.text  # greedy: the same reply
    score, scored = asyncio.run(score_actions(model, messages))
    actions = {"FORWARD", "LEFT", "RIGHT", "TURN_AROUND", "STOP"}
    assert set(score.scores) == actions and scored.text == score.choice  # whole words scored


@needs_train_extra
def test_a_trained_folder_runs_as_velmas_model(tiny_model, tmp_path, capsys):
    register_task(
        TaskSpec(id=TASK, description="toy", build=lambda _: (toy_city(), toy_episodes())),
        replace=True,
    )
    out = tmp_path / "ft"
    main(["train", "velma", "--tasks", TASK, "--model", str(tiny_model), "--out", str(out),
          "--epochs", "1", "--progress", "none", "--json"])  # fmt: skip
    capsys.readouterr()
    run = tmp_path / "run"
    main(["run", "--agent", "velma", "--tasks", TASK, "--llm", f"hf:{out}", "--out", str(run),
          "--option", "velma.k_shot=0", "--option", "velma.extract=rules", "--progress", "none",
          "--json"])  # fmt: skip
    rows, _ = read_rows(run / "episodes.jsonl")
    assert len(rows) == 5 and not [r for r in rows if r.get("error")]
    assert all(r["records"][0]["method"] in ("logprobs", "text", "none") for r in rows)
    assert json.loads((run / "summary.json").read_text())["runs"]

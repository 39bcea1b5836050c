"""``flaneur train velma`` on the toy city with a tiny random llama model: FT lowers the
action loss, RBL trains, a run killed with SIGKILL resumes to the same checkpoint, a model
too large stops with one line, and the trained folder runs as ``--llm hf:DIR``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flaneur.cli import main
from flaneur.env import toy_city, toy_episodes
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.tasks.registry import register_task
from flaneur.tasks.spec import TaskSpec
from harness.train_extra import needs_train_extra

pytestmark = needs_train_extra
TASK = "toy-train-velma-v1"
REGISTER = f"""
from flaneur.env import toy_city, toy_episodes
from flaneur.tasks.registry import register_task
from flaneur.tasks.spec import TaskSpec
register_task(TaskSpec(id={TASK!r}, description="toy", build=lambda _: (toy_city(), toy_episodes())), replace=True)
"""


@pytest.fixture(scope="module", autouse=True)
def toy_task() -> None:
    register_task(
        TaskSpec(id=TASK, description="toy", build=lambda _: (toy_city(), toy_episodes())),
        replace=True,
    )


def train_args(model: Path, out: Path, *extra: str) -> list[str]:
    return [
        "train", "velma", "--tasks", TASK, "--model", str(model), "--out", str(out),
        "--lr", "0.01", "--batch-size", "2", "--progress", "none", "--json", *extra,
    ]  # fmt: skip


def gold_loss(folder: Path) -> float:
    import torch

    from flaneur.models.hf import load_causal_lm
    from flaneur.train.examples import gold_examples
    from flaneur.train.packing import action_loss

    city = toy_city()
    examples = [
        e for ep in toy_episodes() for e in gold_examples(TurnsScheme(city.graph), city, ep)
    ]
    model, tokenizer = load_causal_lm(folder)
    return action_loss(torch, model, tokenizer, examples)


def test_ft_lowers_the_action_loss_and_writes_the_chosen_model(tiny_model, tmp_path, capsys):
    out = tmp_path / "ft"
    main([*train_args(tiny_model, out, "--epochs", "3", "--dev", TASK, "--dev-limit", "2")])
    summary = json.loads(capsys.readouterr().out)
    assert (out / "config.json").is_file() and (out / "summary.json").is_file()
    assert [d["epoch"] for d in summary["dev"]] == [1, 2, 3]
    assert all(d["episodes"] == 2 and d["errors"] == 0 for d in summary["dev"])
    best = max(d["tc"] for d in summary["dev"])
    assert summary["chosen"]["dev"]["tc"] == best
    assert all(t["teacher_forced"] == 5 for t in summary["train"])
    assert gold_loss(out / "checkpoints/epoch-3/model") < gold_loss(tiny_model) - 0.2


def test_rbl_walks_the_student_and_trains(tiny_model, tmp_path, capsys):
    out = tmp_path / "rbl"
    main([*train_args(tiny_model, out, "--method", "rbl", "--epochs", "1", "--lam", "0.0")])
    train = json.loads(capsys.readouterr().out)["train"][0]
    assert train["teacher_forced"] == 0
    assert train["student_own"] + train["student_corrected"] == 5
    assert train["examples"] > 0


def test_resume_after_sigkill_gives_the_same_checkpoint(tiny_model, tmp_path):
    from safetensors.torch import load_file

    whole, killed = tmp_path / "whole", tmp_path / "killed"
    main(train_args(tiny_model, whole, "--epochs", "3", "--full"))
    script = (
        REGISTER
        + f"from flaneur.cli import main\nmain({train_args(tiny_model, killed, '--epochs', '3', '--full')!r})\n"
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # as the tests' own runs (conftest)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, env=env)
    first = killed / "checkpoints/epoch-1/state.json"
    deadline = time.monotonic() + 120
    while not first.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert first.exists() and not (killed / "summary.json").exists()
    main(train_args(tiny_model, killed, "--epochs", "3", "--full"))
    a = load_file(str(whole / "checkpoints/epoch-3/trainable.safetensors"))
    b = load_file(str(killed / "checkpoints/epoch-3/trainable.safetensors"))
    assert a.keys() == b.keys() and all(bool((a[k] == b[k]).all()) for k in a)


def test_other_settings_in_the_folder_and_a_model_too_large_stop_with_one_line(
    tiny_model, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "x"
    main(train_args(tiny_model, out, "--epochs", "1"))
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(train_args(tiny_model, out, "--epochs", "2", "--seed", "3"))
    assert done.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "other settings (seed)" in err and len(err.splitlines()) == 1
    monkeypatch.setattr("flaneur.train.setup.available_memory", lambda: 1000)
    with pytest.raises(SystemExit):
        main(train_args(tiny_model, tmp_path / "y", "--full"))
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs about" in err and "use --lora" in err


def test_a_model_loaded_from_gguf_is_exported_as_its_float32_weights(tiny_model, tmp_path):
    """transformers keeps GGUF as the quantization of a model loaded from a GGUF file and
    refuses to save it; the export drops that mark (the weights are already float32)."""
    from flaneur.models.hf import load_causal_lm
    from flaneur.train.setup import export_model

    model, tokenizer = load_causal_lm(str(tiny_model))
    model.config.quantization_config = {"quant_method": "gguf"}
    export_model(model, tokenizer, tmp_path / "out")
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert "quantization_config" not in config
    again, _ = load_causal_lm(str(tmp_path / "out"))
    assert sum(p.numel() for p in again.parameters()) == sum(p.numel() for p in model.parameters())

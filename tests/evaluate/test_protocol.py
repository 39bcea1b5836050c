"""Evaluation protocols: ``--protocol paper|flaneur`` recorded in every row and the summary,
the paper's step limit applied, results of different protocols never paired."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from flaneur.env.toy import toy_city, toy_episodes
from flaneur.errors import FlaneurError
from flaneur.evaluate.protocol import check_protocol, check_same_protocol, protocol_episodes
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.report.run_report import compare_runs, load_run
from flaneur.tasks.formats import FORMATS
from flaneur.tasks.registry import TASKS, register_task
from flaneur.tasks.spec import TaskSpec

FLANEUR = str(Path(sys.executable).with_name("flaneur"))
TASK = "protocol-toy-v1"


@pytest.fixture(scope="module")
def toy_task():
    """The toy city as a task set whose paper step limit is 2 steps."""
    episodes = list(toy_episodes())
    register_task(
        TaskSpec(
            TASK,
            "toy city, paper step limit 2",
            build=lambda _d: (toy_city(), episodes),
            city="toy",
            scheme="turns",
            success_metric="tc",
            paper_max_steps=2,
        ),
        replace=True,
    )
    return episodes


def run(out, protocol, agents=("forward",)):
    config = RunConfig(agents=agents, tasks=(TASK,), protocol=protocol)
    summary = run_benchmark(config, out, progress="none")
    return summary, read_rows(out / "episodes.jsonl")[0]


def test_the_protocol_is_in_every_row_and_the_summary(tmp_path, toy_task):
    summary, rows = run(tmp_path / "paper", "paper")
    assert summary["protocol"] == "paper" and summary["config"]["protocol"] == "paper"
    assert {r["protocol"] for r in rows} == {"paper"}
    assert all(r["steps"] <= 2 for r in rows)  # the paper's step limit
    assert "step_limit" in {r["termination"] for r in rows}
    assert summary["task_sets"][TASK]["paper_max_steps"] == 2
    _, flaneur_rows = run(tmp_path / "ours", "flaneur")
    assert {r["protocol"] for r in flaneur_rows} == {"flaneur"}
    assert max(r["steps"] for r in flaneur_rows) > 2  # the episodes' own limits
    assert rows[0]["config_hash"] != flaneur_rows[0]["config_hash"]


def test_flaneur_protocol_leaves_earlier_config_hashes_unchanged():
    ours = RunConfig(agents=("forward",), tasks=("t",))
    assert ours.protocol == "flaneur"
    assert ours.config_hash("t", "forward", "turns") == RunConfig(
        agents=("forward",), tasks=("t",), protocol="flaneur"
    ).config_hash("t", "forward", "turns")
    paper = replace(ours, protocol="paper")
    assert paper.config_hash("t", "forward", "turns") != ours.config_hash("t", "forward", "turns")


def test_velma_sets_and_files_declare_velma_step_limit():
    # VELMA's loop lets an agent take 56 actions with --max_steps 55 (docs/fidelity.md)
    assert TASKS.get("map2seq-unseen-dev-v1").paper_max_steps == 56
    assert TASKS.get("touchdown-unseen-dev-v1").paper_max_steps == 56
    assert FORMATS["map2seq"].paper_max_steps == FORMATS["touchdown"].paper_max_steps == 56
    assert FORMATS["episodes"].paper_max_steps is None
    spec = TaskSpec("x", "x", paper_max_steps=55)
    episodes = [replace(e, max_steps=90) for e in toy_episodes()]
    assert {e.max_steps for e in protocol_episodes(spec, episodes, "paper")} == {55}
    assert protocol_episodes(spec, episodes, "flaneur") == episodes


def test_unknown_protocol_is_one_line():
    with pytest.raises(FlaneurError, match="--protocol must be one of flaneur, paper, not 'papr'"):
        check_protocol("papr")
    done = subprocess.run(
        [FLANEUR, "run", "--tasks", "helsinki-needs-v1", "--agent", "forward", "--protocol",
         "papr", "--out", "never"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and not Path("never").exists()
    assert "--protocol must be one of flaneur, paper, not 'papr'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_runs_of_different_protocols_are_never_paired(tmp_path, toy_task):
    run(tmp_path / "a", "flaneur")
    run(tmp_path / "b", "paper")
    with pytest.raises(FlaneurError, match=r"different protocols \(a: flaneur; b: paper\)"):
        compare_runs(load_run(tmp_path / "a"), load_run(tmp_path / "b"))
    check_same_protocol([("a", [{"protocol": "paper"}]), ("b", [{"protocol": "paper"}])])
    check_same_protocol([("old", [{}]), ("new", [{"protocol": "flaneur"}])])  # older rows
    done = subprocess.run(
        [FLANEUR, "report", str(tmp_path / "a"), str(tmp_path / "b"), "--out",
         str(tmp_path / "r.html")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
    assert errors == [
        "error: cannot pair results of different protocols (a: flaneur; b: paper): compare "
        "runs made with the same --protocol"
    ]


def test_a_run_resumed_under_another_protocol_is_not_paired(tmp_path, toy_task):
    run(tmp_path / "mixed", "flaneur", agents=("forward", "oracle"))
    log = tmp_path / "mixed" / "episodes.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    rows[0]["protocol"] = "paper"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from flaneur.report.run_report import paired_comparisons

    with pytest.raises(FlaneurError, match="mixed: flaneur, paper"):
        paired_comparisons(load_run(tmp_path / "mixed"))


def test_every_test_docs_fidelity_names_exists():
    root = Path(__file__).resolve().parents[2]
    named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", (root / "docs/fidelity.md").read_text())
    assert named
    for path, name in named:
        assert f"def {name}(" in (root / path).read_text(), f"{path}::{name}"

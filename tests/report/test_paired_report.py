"""Paired comparison of the agents of a run in the report: terminal, --json and HTML."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from flaneur.cli import main
from flaneur.env.toy import toy_city, toy_episodes
from flaneur.evaluate.runlog import row_success
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.metrics import mcnemar_exact
from flaneur.report.run_report import RunData, build_report, load_run, paired_comparisons

AGENTS = ("random", "forward", "oracle")


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of three baselines on ten toy episodes (each toy episode twice, new ids)."""
    out = tmp_path_factory.mktemp("runs") / "r1"
    episodes = [replace(e, id=f"{e.id}-{k}") for k in range(2) for e in toy_episodes()]
    run_benchmark(
        RunConfig(agents=AGENTS, tasks=("toy",), seed=0),
        out,
        progress="none",
        loaded={"toy": (toy_city(), episodes)},
    )
    return out


def test_oracle_against_random_wins_where_random_fails(toy_run):
    run = load_run(toy_run)
    pairs = paired_comparisons(run)
    # pairs follow the --agent order kept in the summary, not the order rows were written
    assert [(c["a"], c["b"]) for c in pairs] == [
        ("random", "forward"),
        ("random", "oracle"),
        ("forward", "oracle"),
    ]
    random_ok = {r["episode_id"]: row_success(r) for r in run.rows if r["agent"] == "random"}
    oracle_ok = {r["episode_id"]: row_success(r) for r in run.rows if r["agent"] == "oracle"}
    assert all(oracle_ok.values()) and len(oracle_ok) == 10
    fails = sum(not ok for ok in random_ok.values())
    c = pairs[1]
    assert (c["run"], c["task"], c["paired"]) == ("r1", "toy", 10)
    assert (c["wins"], c["losses"]) == (0, fails)  # a = random never beats the oracle
    assert c["a_success"] == pytest.approx(1 - fails / 10) and c["b_success"] == 1.0
    assert c["diff"] == pytest.approx(-fails / 10)
    assert c["diff_low"] < c["diff"] < c["diff_high"]
    assert c["p_value"] == pytest.approx(mcnemar_exact(0, fails))
    assert c["p_value"] == pytest.approx(0.5 ** (fails - 1))  # 2 · (1/2)^fails


def test_paired_comparison_leaves_out_unscored_rows_and_follows_the_summary_order():
    rows = [
        {"task": "t", "agent": "x", "episode_id": "e1", "metrics": {"tc": True}},
        {"task": "t", "agent": "x", "episode_id": "e2", "metrics": {"tc": True}},
        {"task": "t", "agent": "y", "episode_id": "e1", "metrics": {"tc": False}},
        {"task": "t", "agent": "y", "episode_id": "e2", "termination": "model_error"},
    ]
    summary = {"runs": [{"task": "t", "agent": "y"}, {"task": "t", "agent": "x"}]}
    (c,) = paired_comparisons(RunData(Path("run"), summary, rows))
    assert (c["a"], c["b"], c["paired"], c["wins"], c["losses"]) == ("y", "x", 1, 0, 1)


def test_html_report_has_a_paired_section_after_the_metric_tables(toy_run, tmp_path):
    path = build_report([load_run(toy_run)], tmp_path / "report.html", interactive_maps=False)
    html = path.read_text()
    metrics_at = html.index("<th>TC</th>")
    paired_at = html.index("toy: paired comparison")
    assert metrics_at < paired_at < html.index("success by category")
    assert "<th>McNemar p</th>" in html and "<th>95% CI</th>" in html
    assert "<tr><td>random</td><td>oracle</td><td>10</td>" in html
    assert "cdn" not in html.lower() and "<script" not in html


def test_report_command_prints_paired_tables_and_json(toy_run, tmp_path, capsys):
    main(["report", str(toy_run), "--out", str(tmp_path / "a.html")])
    out = capsys.readouterr().out
    assert "r1: toy: paired comparison" in out and "oracle" in out
    main(["report", str(toy_run), "--out", str(tmp_path / "b.html"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert [(c["a"], c["b"]) for c in data["paired"]] == [
        ("random", "forward"),
        ("random", "oracle"),
        ("forward", "oracle"),
    ]
    assert data["paired"][1]["run"] == "r1" and data["paired"][1]["paired"] == 10

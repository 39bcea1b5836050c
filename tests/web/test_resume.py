"""Human rows saved beside an agents' run, then `flaneur run --resume` of that run."""

from __future__ import annotations

import json

import pytest

from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import RunLog, read_rows
from flaneur.report.run_report import load_run, paired_comparisons
from harness.web_client import local_client

TASK = "helsinki-needs-v1"


def _run(main, out, limit, *extra):
    main(
        [
            "run",
            "--tasks",
            TASK,
            "--agent",
            "forward,oracle",
            "--limit",
            str(limit),
            "--out",
            str(out),
            "--progress",
            "none",
            "--json",
            *extra,
        ]
    )


def test_a_run_with_human_rows_resumes_and_reports_them(tmp_path, capsys):
    """Serve an agents' run, play two human episodes into it, resume it with more episodes:
    the human rows stay, the summary lists them, `flaneur report` pairs them with agents."""
    from flaneur.cli import main
    from flaneur.web import create_app

    runs = tmp_path / "runs"
    _run(main, runs / "agents", 2)
    capsys.readouterr()
    with local_client(create_app([runs], play_dir=tmp_path / "play")) as client:
        for _ in range(2):
            state = client.post(
                "/api/play", json={"task": TASK, "player": "eve", "into": "agents"}
            ).json()
            state = client.post(f"/api/play/{state['session']}", json={"stop": True}).json()
            assert state["saved_to"] == "agents"
    human_rows = [
        r for r in read_rows(runs / "agents" / "episodes.jsonl")[0] if r["agent"] == "human"
    ]
    assert len(human_rows) == 2

    _run(main, runs / "agents", 3, "--resume")  # refused before: rows of an agent not named
    capsys.readouterr()
    rows = read_rows(runs / "agents" / "episodes.jsonl")[0]
    assert [r for r in rows if r["agent"] == "human"] == human_rows  # kept as they were
    assert sum(r["agent"] == "oracle" for r in rows) == 3
    summary = json.loads((runs / "agents" / "summary.json").read_text())
    entries = {r["agent"]: r for r in summary["runs"]}
    assert [r["agent"] for r in summary["runs"]] == ["forward", "oracle", "human"]
    assert entries["human"]["rows"] == 2 and entries["human"]["outside"] is True
    assert entries["human"]["missing"] == 0 and not summary["partial"]
    assert entries["oracle"]["rows"] == 3 and summary["episodes"] == 8
    manifest = json.loads((runs / "agents" / "run.json").read_text())
    assert manifest["planned"] == {TASK: {"forward": 3, "oracle": 3}}
    assert manifest["total"] == 6 and manifest["to_run"] == 2  # 2 of 6 were left to run
    run = load_run(runs / "agents")
    assert run.warnings == []  # the summary counts every row of the log
    pair = next(c for c in paired_comparisons(run) if (c["a"], c["b"]) == ("oracle", "human"))
    assert pair["paired"] == 2 and pair["a_success"] == 1.0 and pair["b_success"] == 0.0

    # the same folder takes more human play after the resume, and resumes again
    with local_client(create_app([runs], play_dir=tmp_path / "play")) as client:
        state = client.post(
            "/api/play", json={"task": TASK, "player": "eve", "into": "agents"}
        ).json()
        assert state["episode_id"] == f"{TASK}-0002"
        client.post(f"/api/play/{state['session']}", json={"stop": True})
    after_play = json.loads((runs / "agents" / "summary.json").read_text())
    _run(main, runs / "agents", 3, "--resume")
    capsys.readouterr()
    resumed = json.loads((runs / "agents" / "summary.json").read_text())
    assert after_play["runs"] == resumed["runs"]  # the app and the runner agree
    main(["report", str(runs / "agents"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert ("forward", "human") in {(c["a"], c["b"]) for c in report["paired"]}


def test_runlog_keeps_human_rows_but_still_refuses_unnamed_agents(tmp_path):
    log = tmp_path / "episodes.jsonl"
    base = {"task": "t", "episode_id": "1", "config_hash": "h"}
    human = {**base, "agent": "human", "termination": "agent_error", "config_hash": "other"}
    rows = [{**base, "agent": "forward", "termination": "stopped"}, human]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept = RunLog(tmp_path, resume=True, config_hashes={("t", "forward"): "h"})
    kept.close()
    assert read_rows(log)[0] == rows  # never run again, never checked against the config
    log.write_text(log.read_text() + json.dumps({**base, "agent": "random"}) + "\n")
    with pytest.raises(FlaneurError, match="'random' on 't'"):
        RunLog(tmp_path, resume=True, config_hashes={("t", "forward"): "h"})


def test_live_progress_counts_the_planned_episodes(tmp_path):
    """k of N: N from run.json (else summary.json); k = distinct planned episodes logged."""
    from flaneur.web.runs import run_progress

    def row(agent, eid, term="stopped", tc=True):
        return {
            "task": "t",
            "agent": agent,
            "episode_id": eid,
            "termination": term,
            "metrics": {"tc": tc},
        }

    rows = [
        row("a", "1"),
        row("a", "2", tc=False),
        row("b", "1"),
        row("human", "3"),
        row("b", "2", "model_error", None),
        row("b", "2"),
    ]
    assert run_progress(tmp_path, rows)["total"] is None  # nothing planned known
    assert run_progress(tmp_path, rows)["done"] == 4  # distinct keys, outside agents left out
    (tmp_path / "summary.json").write_text(
        json.dumps(
            {
                "runs": [
                    {"task": "t", "agent": "a", "episodes": 4},
                    {"task": "t", "agent": "b", "episodes": 4},
                    {"task": "t", "agent": "human", "episodes": 1, "outside": True},
                ]
            }
        )
    )
    assert (run_progress(tmp_path, rows)["done"], run_progress(tmp_path, rows)["total"]) == (4, 8)
    (tmp_path / "run.json").write_text(json.dumps({"planned": {"t": {"a": 3}}, "total": 3}))
    got = run_progress(tmp_path, rows)
    assert (got["done"], got["total"]) == (2, 3)  # only agent a is planned
    assert got["rows"] == 6 and got["successes"] == 4  # running metrics over every row
    assert got["means"]["tc"] == 4 / 5  # the errored row has no tc

"""Human play through the HTTP API: rows like any agent's, resume, annotation, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.teacher import gold_rollout
from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import read_rows
from flaneur.report.run_report import load_run, paired_comparisons
from flaneur.tasks.episode import read_episodes
from flaneur.web.catalog import safe_name
from harness.web_client import local_client

TASK = "web-toy-v1"


def play_gold(client, city, episode, player):
    """Play ``episode`` with the teacher's actions; returns the last page state."""
    actions, _ = gold_rollout(TurnsScheme(city.graph), city.graph, episode)
    state = client.post(
        "/api/play", json={"task": TASK, "episode_id": episode.id, "player": player}
    ).json()
    assert state["instruction"] == episode.instruction and state["scheme"] == "turns"
    for slot in actions:
        assert slot in {c["slot"] for c in state["choices"]}
        state = client.post(f"/api/play/{state['session']}", json={"slot": slot}).json()
    return state


def test_a_human_row_is_built_like_an_agent_row(client, served, toy_task, tmp_path):
    city, episodes = toy_task
    episode = episodes[1]
    state = play_gold(client, city, episode, "Ada <b>")
    assert state["done"] and state["success"] and state["termination"] == "stopped"
    assert state["saved_to"] == "human-Ada_b"
    folder = tmp_path / "play" / "human-Ada_b"
    (row,) = read_rows(folder / "episodes.jsonl")[0]
    oracle = next(
        r
        for r in read_rows(served / "agents" / "episodes.jsonl")[0]
        if r["agent"] == "oracle" and r["episode_id"] == episode.id
    )
    assert row["agent"] == "human" and row["player"] == "Ada_b"
    assert set(oracle) <= set(row)  # every field an agent's row has
    assert row["path"] == oracle["path"] and row["actions"] == oracle["actions"]
    assert row["metrics"]["tc"] is True and row["metrics"]["spl"] == oracle["metrics"]["spl"]
    assert all("latency_ms" in r for r in row["records"])
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["runs"][0]["agent"] == "human" and summary["runs"][0]["rows"] == 1
    assert summary["players"] == ["Ada_b"]
    again = client.post(f"/api/play/{state['session']}", json={"slot": 1})
    assert again.status_code == 400 and "over" in again.json()["error"]


def test_next_unplayed_resumes_where_the_player_left_off(client, toy_task):
    city, episodes = toy_task
    first = client.post("/api/play", json={"task": TASK, "player": "bo"}).json()
    assert first["episode_id"] == episodes[0].id
    play_gold(client, city, episodes[0], "bo")
    listed = client.get("/api/episodes", params={"task": TASK, "player": "bo"}).json()
    assert [e["played"] for e in listed][:2] == [True, False]
    nxt = client.post("/api/play", json={"task": TASK, "player": "bo"}).json()
    assert nxt["episode_id"] == episodes[1].id


def test_stopping_early_and_invalid_actions_count(client, toy_task):
    _, episodes = toy_task
    state = client.post(
        "/api/play", json={"task": TASK, "episode_id": episodes[0].id, "player": "cy"}
    ).json()
    state = client.post(f"/api/play/{state['session']}", json={"slot": 9}).json()
    assert state["steps"] == 1 and "last_invalid" in state
    state = client.post(f"/api/play/{state['session']}", json={"stop": True}).json()
    assert state["done"] and not state["success"] and state["termination"] == "stopped"
    bad = client.post(f"/api/play/{state['session']}", json={"slot": "x"})
    assert bad.status_code == 400


def test_playing_beside_the_agents_of_a_run_gives_paired_tests(served, toy_task, tmp_path, capsys):
    """Human rows appended into an agents' run: `flaneur report RUN` pairs them with agents."""
    import shutil

    from flaneur.cli import main
    from flaneur.web import create_app

    city, episodes = toy_task
    runs = tmp_path / "runs"
    shutil.copytree(served, runs)
    before = json.loads((runs / "agents" / "summary.json").read_text())
    with local_client(create_app([runs], play_dir=tmp_path / "play")) as client:
        for episode in episodes:
            actions, _ = gold_rollout(TurnsScheme(city.graph), city.graph, episode)
            state = client.post(
                "/api/play", json={"task": TASK, "player": "dee", "into": "agents"}
            ).json()
            assert state["episode_id"] == episode.id  # next unplayed, in that run
            for slot in actions:
                state = client.post(f"/api/play/{state['session']}", json={"slot": slot}).json()
            assert state["saved_to"] == "agents"
        assert (
            client.post(
                "/api/play", json={"task": TASK, "player": "dee", "into": "agents"}
            ).status_code
            == 409
        )
        assert client.post("/api/play", json={"task": TASK, "into": "../agents"}).status_code == 404
    summary = json.loads((runs / "agents" / "summary.json").read_text())
    assert [(r["agent"], r["rows"]) for r in summary["runs"]] == [
        ("forward", 10),
        ("oracle", 10),
        ("human", 10),
    ]
    assert summary["config"] == before["config"] and summary["episodes"] == 30
    pairs = paired_comparisons(load_run(runs / "agents"))
    human_vs_forward = next(c for c in pairs if (c["a"], c["b"]) == ("forward", "human"))
    assert (
        human_vs_forward["paired"] == 10
        and human_vs_forward["losses"] == 10 - human_vs_forward["a_success"] * 10
    )
    main(["report", str(runs / "agents"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert {(c["a"], c["b"]) for c in report["paired"]} >= {
        ("forward", "human"),
        ("oracle", "human"),
    }
    assert not (tmp_path / "play" / "human-dee").exists()


def test_annotation_writes_a_task_file(client, toy_task, tmp_path):
    _, episodes = toy_task
    route = client.get("/api/route", params={"task": TASK, "id": episodes[0].id}).json()
    assert [s["node"] for s in route["steps"]] == list(episodes[0].reference_path)
    assert route["steps"][0]["heading"] == 90.0
    body = {
        "task": TASK,
        "episode_id": episodes[0].id,
        "instruction": "  Walk east\nto the museum. ",
        "file": "../../mine",
        "annotator": "<i>",
    }
    saved = client.post("/api/annotate", json=body).json()
    assert saved["file"] == "mine.jsonl" and saved["episode_id"] == f"{episodes[0].id}-1"
    client.post("/api/annotate", json=body)
    written = read_episodes(tmp_path / "play" / "annotations" / "mine.jsonl")
    assert [e.id for e in written] == [f"{episodes[0].id}-1", f"{episodes[0].id}-2"]
    assert written[0].instruction == "Walk east to the museum."
    assert written[0].reference_path == episodes[0].reference_path
    assert written[0].metadata["annotator"] == "i"
    empty = client.post("/api/annotate", json={**body, "instruction": "   "})
    assert empty.status_code == 400


def test_safe_names():
    assert safe_name("../../etc/passwd") == "etc_passwd"
    assert safe_name("<script>alert(1)</script>") == "script_alert_1_script"
    assert safe_name("...") == "anonymous" and safe_name("é") == "anonymous"
    assert len(safe_name("x" * 100)) == 40


def test_serve_command_binds_loopback_and_warns_otherwise(monkeypatch, served, capsys):
    import uvicorn

    from flaneur.cli import main

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(kw))
    main(["serve", str(served), "--port", "8999"])
    assert calls[-1]["host"] == "127.0.0.1" and calls[-1]["port"] == 8999
    assert "warning" not in capsys.readouterr().err
    main(["serve", str(served), "--host", "0.0.0.0"])
    assert calls[-1]["host"] == "0.0.0.0" and "warning" in capsys.readouterr().err


def test_installed_script_gives_one_line_errors(tmp_path):
    script = Path(sys.executable).parent / "flaneur"
    out = subprocess.run(
        [str(script), "serve", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "missing" in out.stderr


def test_an_annotated_helsinki_route_runs_with_flaneur_run(tmp_path, capsys):
    """The annotation file of a registered Helsinki route is a task set `flaneur run` takes."""
    from flaneur.cli import main
    from flaneur.web import create_app

    with local_client(create_app([tmp_path])) as client:
        body = {
            "task": "helsinki-needs-v1",
            "episode_id": "helsinki-needs-v1-0003",
            "instruction": "Find the pharmacy two streets ahead.",
            "file": "notes",
        }
        saved = client.post("/api/annotate", json=body).json()
    main(
        [
            "run",
            "--tasks",
            str(tmp_path / saved["path"]),
            "--agent",
            "oracle",
            "--out",
            str(tmp_path / "run"),
            "--progress",
            "none",
            "--json",
        ]
    )
    (row,) = read_rows(tmp_path / "run" / "episodes.jsonl")[0]
    assert row["episode_id"] == "helsinki-needs-v1-0003-1" and row["metrics"]["tcp"] is True


def test_headings_and_nodes_schemes_offer_their_choices(toy_task, tmp_path):
    """Play sessions in the other schemes: one choice per street / candidate node."""
    from flaneur.tasks.registry import register_task
    from flaneur.tasks.spec import TaskSpec
    from flaneur.web import create_app

    city, episodes = toy_task
    for scheme in ("headings", "nodes"):
        register_task(
            TaskSpec(
                f"web-toy-{scheme}-v1",
                "toy",
                build=lambda _d: (city, episodes),
                city="toy",
                scheme=scheme,
                success_metric="tc",
            ),
            replace=True,
        )
    with local_client(create_app([tmp_path], play_dir=tmp_path)) as client:
        state = client.post(
            "/api/play", json={"task": "web-toy-headings-v1", "episode_id": "toy-five-0"}
        ).json()
        graph = city.graph
        heads = graph.out_headings(graph.index(state["node"])).tolist()
        streets = [c for c in state["choices"] if c["slot"]]
        assert [c["heading"] for c in streets] == heads
        assert [v["heading"] for v in state["views"]] == heads
        state = client.post(
            "/api/play", json={"task": "web-toy-nodes-v1", "episode_id": "toy-five-0"}
        ).json()
        candidates = [c for c in state["choices"] if c["slot"]]
        assert candidates and all(c["label"] in graph for c in candidates)
        after = client.post(
            f"/api/play/{state['session']}", json={"slot": candidates[0]["slot"]}
        ).json()
        assert after["node"] == candidates[0]["label"]


def test_append_row_keeps_rows_drops_a_cut_line_and_refuses_repeats(tmp_path):
    from flaneur.web.play import append_row

    log = tmp_path / "episodes.jsonl"
    errored = {"task": "t", "agent": "a", "episode_id": "1", "termination": "model_error"}
    log.write_text(json.dumps(errored) + "\n" + '{"task": "t", "agent"')  # cut by a kill
    row = {"task": "t", "agent": "human", "episode_id": "1", "termination": "stopped"}
    rows = append_row(tmp_path, row)
    assert rows == [errored, row]
    assert read_rows(log)[0] == [errored, row] and log.read_text().endswith("}\n")
    with pytest.raises(FlaneurError, match="already played"):
        append_row(tmp_path, row)

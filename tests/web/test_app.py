"""HTTP tests of every route of the web app (Starlette TestClient, toy runs)."""

from __future__ import annotations

import json

import pytest
from pytest import approx

from flaneur.evaluate.runlog import read_rows
from flaneur.report.run_report import load_run, paired_comparisons
from flaneur.report.tables import paired_cells
from harness.web_client import local_client

TASK = "web-toy-v1"


@pytest.mark.parametrize("path", ["/", "/replay", "/live", "/play", "/annotate"])
def test_pages_are_served_with_a_strict_policy(client, path):
    response = client.get(path)
    assert response.status_code == 200 and "<!doctype html>" in response.text
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"


def test_static_assets_have_no_innerhtml_and_no_remote_urls(client):
    for name in ("common.js", "runs.js", "replay.js", "live.js", "play.js", "annotate.js"):
        text = client.get(f"/static/{name}").text
        assert (
            "innerHTML" not in text and "outerHTML" not in text and "insertAdjacentHTML" not in text
        )
        assert "https://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert client.get("/static/style.css").headers["content-type"].startswith("text/css")


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/static/..%2f..%2f..%2fetc%2fpasswd",
        "/api/runs/..%2f..%2fetc",
        "/api/runs/%2e%2e",
        "/api/runs/..%2fagents/episode?task=x&agent=y&id=z",
    ],
)
def test_path_traversal_is_refused(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "root:" not in response.text


def test_runs_list_and_tables(client, served):
    runs = {r["key"]: r for r in client.get("/api/runs").json()}
    assert set(runs) == {"agents", "second"}
    assert runs["agents"]["agents"] == ["forward", "oracle"] and runs["agents"]["rows"] == 20
    assert runs["agents"]["live"] is False
    data = client.get("/api/runs/agents").json()
    oracle = next(t for t in data["tables"] if t["agent"] == "oracle")
    assert oracle["rows"] == 10 and oracle["figures"]["tc"]["mean"] == 1.0
    assert oracle["figures"]["tc"]["n"] == 10 and oracle["figures"]["tc"]["ci95"][1] == approx(1.0)
    assert set(oracle["categories"]) == {"route", "revisit", "goal"}
    assert oracle["categories"]["route"]["episodes"] == 6
    expected = [paired_cells(c) for c in paired_comparisons(load_run(served / "agents"))]
    assert [p["cells"] for p in data["paired"]] == expected  # the report's comparison
    assert data["totals"]["rows"] == 20 and data["progress"]["rows"] == 20
    assert data["facets"]["agent"] == ["forward", "oracle"]
    assert data["warnings"] == []


def test_run_warnings_are_those_of_the_report(served, tmp_path):
    import os
    import shutil

    from flaneur.web import create_app

    shutil.copytree(served / "agents", tmp_path / "runs" / "agents")
    log = tmp_path / "runs" / "agents" / "episodes.jsonl"
    rows = log.read_text().splitlines(keepends=True)
    log.write_text("".join(rows[:-1]))  # one row fewer than the summary counts
    os.utime(tmp_path / "runs" / "agents" / "summary.json")  # not a live run
    with local_client(create_app([tmp_path / "runs"], play_dir=tmp_path)) as client:
        data = client.get("/api/runs/agents").json()
    assert data["warnings"] == load_run(tmp_path / "runs" / "agents").warnings != []


def test_unknown_run_is_404(client):
    response = client.get("/api/runs/nope")
    assert response.status_code == 404 and response.json() == {"error": "no run named 'nope'"}


def test_episode_replay_data(client, served):
    rows, _ = read_rows(served / "agents" / "episodes.jsonl")
    row = next(r for r in rows if r["agent"] == "oracle" and r["episode_id"] == "toy-fork-0")
    data = client.get(
        "/api/runs/agents/episode", params={"task": TASK, "agent": "oracle", "id": "toy-fork-0"}
    ).json()
    assert data["instruction"].startswith("Go east, turn right")
    assert len(data["steps"]) == len(row["actions"]) + 1
    assert [s["action"] for s in data["steps"][:-1]] == row["actions"]
    assert data["steps"][0]["node"] == "X4" and data["steps"][0]["text"].startswith("")
    assert [v["label"] for v in data["steps"][0]["views"]] == ["left", "ahead", "right"]
    assert data["reference"] == ["X4", "E1", "T3", "Y3", "YL"] and data["path"] == row["path"]
    assert set(data["map"]["nodes"]) >= set(data["reference"]) and data["map"]["segments"]
    missing = client.get("/api/runs/agents/episode", params={"task": TASK, "agent": "x", "id": "y"})
    assert missing.status_code == 404


def test_views_are_png_and_checked(client):
    response = client.get("/api/view", params={"task": TASK, "node": "X4", "heading": "90"})
    assert response.status_code == 200 and response.content[:8] == b"\x89PNG\r\n\x1a\n"
    again = client.get("/api/view", params={"task": TASK, "node": "X4", "heading": "90"})
    assert again.content == response.content
    assert (
        client.get("/api/view", params={"task": TASK, "node": "X4", "fov": "500"}).status_code
        == 400
    )
    assert (
        client.get("/api/view", params={"task": TASK, "node": "X4", "heading": "a"}).status_code
        == 400
    )
    assert client.get("/api/view", params={"task": TASK, "node": "nowhere"}).status_code == 404
    assert client.get("/api/view", params={"task": "/etc/passwd", "node": "X4"}).status_code == 404


def test_live_stream_sends_rows_progress_and_done(client):
    with client.stream("GET", "/api/runs/second/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    assert text.count("event: row") == 10 and text.count("event: done") == 1
    progress = [
        json.loads(line[6:]) for line in text.splitlines() if line.startswith('data: {"rows')
    ]
    assert progress[-1]["rows"] == 10 and progress[-1]["success_rate"] == 1.0
    assert "records" not in text  # rows are sent as briefs


def test_a_run_being_written_is_live(client, served, tmp_path):
    from flaneur.web.runs import is_live

    assert is_live(served / "agents") is False
    folder = tmp_path / "partial"
    folder.mkdir()
    (folder / "episodes.jsonl").write_text('{"task": "t", "agent": "a", "episode_id": "1"}\n')
    assert is_live(folder) is True


def test_tasks_and_episodes(client):
    tasks = {t["id"]: t for t in client.get("/api/tasks").json()}
    assert tasks[TASK]["scheme"] == "turns" and "helsinki-needs-v1" in tasks
    episodes = client.get("/api/episodes", params={"task": TASK, "player": "Ada"}).json()
    assert len(episodes) == 10 and not any(e["played"] for e in episodes)
    assert client.get("/api/episodes", params={"task": "../x"}).status_code == 404


def test_bad_json_bodies_get_one_line_errors(client):
    response = client.post(
        "/api/play", content=b"not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400 and "JSON object" in response.json()["error"]
    assert client.post("/api/play", json=[1, 2]).status_code == 400
    assert client.post("/api/play/nosuch", json={"slot": 1}).status_code == 404


def test_a_bad_tiles_template_is_one_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from flaneur.web.app import security_headers, tile_origin

    assert tile_origin("https://tile.example.org:8443/{z}/{x}/{y}.png?k=1") == (
        "https://tile.example.org:8443"
    )
    assert security_headers() == security_headers(None)
    assert (
        "img-src 'self' data: https://t.example;"
        in (security_headers("https://t.example/{z}/{x}/{y}.png")["Content-Security-Policy"])
    )
    script = Path(sys.executable).parent / "flaneur"
    for bad in ("ftp://x/{z}/{x}/{y}", "https://t.example/{z}/{x}.png", "{z}/{x}/{y}"):
        out = subprocess.run(
            [str(script), "serve", str(tmp_path), "--tiles", bad],
            capture_output=True,
            text=True,
            check=False,
        )
        assert out.returncode != 0 and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "--tiles must be" in out.stderr

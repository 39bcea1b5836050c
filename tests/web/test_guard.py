"""The web app refuses what another site, a rebinding name or a careless client sends, and
one play session cannot hang the server: cross-origin and token-less writes, foreign Host
headers, oversized bodies, path traversal, bad numbers, concurrent steps, and SIGTERM with
an event stream open."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from flaneur.web import create_app
from flaneur.web.guard import MAX_BODY_BYTES, TOKEN_HEADER, host_name
from flaneur.web.server import free_port, serve_in_thread
from harness.web_client import local_client

TASK = "web-toy-v1"  # the task set of conftest.py

NOTE = {"task": TASK, "episode_id": "", "instruction": "Walk to the end.", "file": "n"}


@pytest.fixture()
def app(served, tmp_path):
    return create_app([served], play_dir=tmp_path / "play", cache_dir=tmp_path / "views")


def _note(toy_task) -> dict:
    _, episodes = toy_task
    return {**NOTE, "episode_id": episodes[0].id}


def test_a_same_origin_write_with_the_token_is_taken(app, toy_task, tmp_path):
    with local_client(app) as client:
        settings = client.get("/api/settings").json()
        assert settings["token"] == app.state.token and len(settings["token"]) >= 24
        headers = {"Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin"}
        saved = client.post("/api/annotate", json=_note(toy_task), headers=headers)
    assert saved.status_code == 200, saved.text
    assert saved.json()["path"] == "annotations/n.jsonl"  # relative: no server path echoed
    assert (tmp_path / "play" / "annotations" / "n.jsonl").is_file()


@pytest.mark.parametrize(
    "headers, says",
    [
        ({"Origin": "http://evil.example"}, "another origin"),
        ({"Origin": "null"}, "another origin"),
        ({"Origin": "http://127.0.0.1:9"}, "another origin"),
        ({"Sec-Fetch-Site": "cross-site"}, "cross-site"),
        ({"Sec-Fetch-Site": "same-site"}, "cross-site"),
        ({TOKEN_HEADER: ""}, "token"),
        ({TOKEN_HEADER: "guess"}, "token"),
    ],
)
def test_a_cross_origin_or_token_less_write_is_refused_and_nothing_is_written(
    app, toy_task, tmp_path, headers, says
):
    with local_client(app) as client:
        for url, body in [("/api/annotate", _note(toy_task)), ("/api/play", {"task": TASK})]:
            answer = client.post(url, json=body, headers=headers)
            assert answer.status_code == 403 and says in answer.json()["error"]
    assert not (tmp_path / "play").exists() or not any((tmp_path / "play").rglob("*.jsonl"))
    assert not app.state.sessions


@pytest.mark.parametrize("host", ["evil.example", "rebind.attacker.test:8000", "127.0.0.2", ""])
def test_a_foreign_host_header_is_refused_on_every_route(app, host):
    with local_client(app) as client:
        for url in ["/", "/api/runs", "/api/settings", "/static/common.js"]:
            answer = client.get(url, headers={"Host": host})
            assert answer.status_code == 400 and "address" in answer.json()["error"]
            assert app.state.token not in answer.text


def test_host_names_parse_with_ports_and_brackets():
    assert host_name("127.0.0.1:8000") == "127.0.0.1"
    assert host_name("[::1]:8000") == "::1" and host_name("LocalHost") == "localhost"
    assert host_name("a:b:c") is None and host_name("") is None


def test_an_oversized_body_is_refused_whatever_its_length_header_says(app, tmp_path):
    big = b'{"instruction": "' + b"x" * MAX_BODY_BYTES + b'"}'
    with local_client(app) as client:
        told = client.post("/api/annotate", content=big, headers={"Content-Type": "text/json"})
        assert told.status_code == 413 and "over" in told.json()["error"]

        def chunks():  # no Content-Length: counted as it arrives
            for start in range(0, len(big), 65536):
                yield big[start : start + 65536]

        streamed = client.post("/api/annotate", content=chunks())
        assert streamed.status_code == 413 and "over" in streamed.json()["error"]
    assert not (tmp_path / "play" / "annotations").exists()


@pytest.mark.parametrize(
    "url",
    [
        "/api/runs/..%2F..%2Fetc",
        "/api/runs/%2e%2e/episode?agent=a&id=b",
        "/api/view?run=../../etc&task=web-toy-v1&node=X4",
        "/static/..%2F..%2Fpyproject.toml",
        "/static/../app.py",
    ],
)
def test_paths_out_of_the_served_folders_are_refused(app, url, served):
    with local_client(app) as client:
        answer = client.get(url)
    assert answer.status_code in (400, 404)
    assert "[project]" not in answer.text and "create_app" not in answer.text
    assert str(served) not in answer.text


@pytest.mark.parametrize(
    "raw, says",
    [
        (b'{"slot": 1.9}', "slot must be an integer"),
        (b'{"slot": 1e400}', "slot must be an integer"),
        (b'{"slot": "1"}', "slot must be an integer"),
        (b'{"slot": true}', "slot must be an integer"),
        (b'{"stop": "yes"}', "stop must be true or false"),
    ],
)
def test_a_play_step_takes_only_an_integer_slot(app, raw, says):
    with local_client(app) as client:
        session = client.post("/api/play", json={"task": TASK, "player": "p"}).json()
        url = f"/api/play/{session['session']}"
        answer = client.post(url, content=raw, headers={"Content-Type": "application/json"})
        assert answer.status_code == 400 and says in answer.json()["error"]
        assert client.get(url).json()["steps"] == 0  # the player did not move


def test_bad_numbers_and_types_are_one_line_errors(app, toy_task):
    with local_client(app) as client:
        for heading in ("nan", "inf", "-inf"):
            view = client.get("/api/view", params={"task": TASK, "node": "X4", "heading": heading})
            assert view.status_code == 400 and "finite" in view.json()["error"]
        note = {**_note(toy_task), "instruction": {"text": "go"}}
        answer = client.post("/api/annotate", json=note)
        assert (
            answer.status_code == 400 and "instruction must be a string" in answer.json()["error"]
        )


def test_twenty_concurrent_steps_and_stops_on_one_session_leave_the_server_answering(app):
    with serve_in_thread(app) as base:
        headers = {TOKEN_HEADER: app.state.token}
        start = httpx.post(f"{base}/api/play", json={"task": TASK, "player": "p"}, headers=headers)
        url = f"{base}/api/play/{start.json()['session']}"
        bodies = [{"stop": True} if k % 2 else {"slot": 1} for k in range(20)]

        def post(body: dict) -> int:
            return httpx.post(url, json=body, headers=headers, timeout=30).status_code

        with ThreadPoolExecutor(20) as pool:
            codes = list(pool.map(post, bodies))
        assert set(codes) <= {200, 400} and 200 in codes
        began = time.monotonic()
        after = httpx.get(f"{base}/api/runs", timeout=5)
        assert after.status_code == 200 and time.monotonic() - began < 1.0
        assert httpx.get(url, timeout=5).json()["done"] is True


def test_sigterm_stops_the_server_with_an_event_stream_open(served, tmp_path):
    port = free_port()
    flaneur = Path(sys.executable).with_name("flaneur")
    args = [str(flaneur), "serve", str(served), "--port", str(port)]
    args += ["--play-dir", str(tmp_path / "play")]
    env = {**os.environ, "FLANEUR_CACHE_DIR": str(tmp_path / "cache")}
    server = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                runs = httpx.get(f"{base}/api/runs", timeout=1).json()
                break
            except httpx.TransportError:
                time.sleep(0.05)
        key = runs[0]["key"] if isinstance(runs, list) else next(iter(runs))
        opened = threading.Event()

        def listen() -> None:
            with httpx.stream("GET", f"{base}/api/runs/{key}/events", timeout=30) as stream:
                opened.set()
                for _ in stream.iter_lines():
                    pass

        threading.Thread(target=listen, daemon=True).start()
        assert opened.wait(10)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=6)  # graceful shutdown gives open streams 2 s
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode is not None
    assert "Traceback" not in (server.stderr.read() if server.stderr else "")


def test_settings_hold_nothing_but_the_tiles_and_the_token(app):
    with local_client(app) as client:
        assert set(json.loads(client.get("/api/settings").text)) == {"tiles", "token"}


@pytest.mark.parametrize("content, says", [(None, "not found"), (b"\x00\x01bin", "task format")])
def test_serve_refuses_a_missing_or_binary_task_file_before_it_starts(tmp_path, content, says):
    task_file = tmp_path / "tasks.jsonl"
    if content is not None:
        task_file.write_bytes(content)
    flaneur = Path(sys.executable).with_name("flaneur")
    args = [str(flaneur), "serve", str(tmp_path), "--tasks", str(task_file), "--port", "9"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert str(task_file) in line and says in line


def test_every_page_declares_a_viewport_for_phones(app):
    with local_client(app) as client:
        for page in ("/", "/replay", "/live", "/play", "/annotate"):
            assert 'name="viewport"' in client.get(page).text

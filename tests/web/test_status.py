"""A run's state as the web app shows it (:func:`flaneur.web.runs.run_status`): running while
its process lives, finished, failed with the reason, or interrupted with the command that
finishes it, from real run folders changed the way each state leaves them."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from flaneur.evaluate.summary import MANIFEST
from flaneur.web import create_app
from flaneur.web.runs import run_status
from harness.web_client import local_client

COMMAND = "flaneur run --agent forward,oracle --tasks web-toy-v1 --out agents"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture()
def run(served, tmp_path) -> Path:
    """A copy of a finished run folder, its manifest naming a dead console-script process."""
    folder = tmp_path / "runs" / "run"
    shutil.copytree(served / "agents", folder)
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["pid"] == os.getpid() and manifest["host"] == socket.gethostname()
    manifest.update(pid=_dead_pid(), command=COMMAND)
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return folder


def _touch_log(folder: Path) -> None:
    log = folder / "episodes.jsonl"
    later = (
        (folder / "summary.json").stat().st_mtime + 5
        if (folder / "summary.json").exists()
        else None
    )
    if later:
        os.utime(log, (later, later))


def test_a_finished_run_is_finished(run):
    assert run_status(run) == {"status": "finished"}


def test_a_run_whose_process_died_without_a_summary_is_interrupted_with_its_command(run):
    (run / "summary.json").unlink()
    assert run_status(run) == {"status": "interrupted", "resume": f"{COMMAND} --resume"}


def test_a_log_newer_than_the_summary_of_a_dead_process_is_interrupted(run):
    _touch_log(run)
    assert run_status(run)["status"] == "interrupted"


def test_a_run_whose_process_lives_is_running(run):
    manifest = json.loads((run / MANIFEST).read_text())
    (run / MANIFEST).write_text(json.dumps({**manifest, "pid": os.getpid()}))
    (run / "summary.json").unlink()
    assert run_status(run) == {"status": "running"}


def test_a_summary_of_a_run_stopped_part_way_is_interrupted(run):
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**summary, "partial": True}))
    manifest = json.loads((run / MANIFEST).read_text())
    (run / MANIFEST).write_text(json.dumps({**manifest, "command": f"{COMMAND} --resume"}))
    assert run_status(run) == {"status": "interrupted", "resume": f"{COMMAND} --resume"}


def test_a_run_without_its_command_is_interrupted_with_no_command(run):
    manifest = json.loads((run / MANIFEST).read_text())
    (run / MANIFEST).write_text(json.dumps({**manifest, "command": None}))
    (run / "summary.json").unlink()
    assert run_status(run) == {"status": "interrupted", "resume": None}


def test_a_run_whose_rows_all_errored_failed_with_the_reason(run):
    summary = json.loads((run / "summary.json").read_text())
    summary["by_termination"] = {"error": 4}
    (run / "summary.json").write_text(json.dumps(summary))
    status = run_status(run)
    assert status["status"] == "failed" and "every row of the run errored" in status["reason"]


def test_the_runs_list_and_the_run_view_carry_the_state(run):
    (run / "summary.json").unlink()
    with local_client(create_app([run.parent])) as client:
        (listed,) = client.get("/api/runs").json()
        assert listed["status"] == "interrupted" and listed["live"] is False
        assert listed["resume"] == f"{COMMAND} --resume"
        shown = client.get(f"/api/runs/{listed['key']}").json()
        assert shown["status"] == "interrupted" and shown["resume"] == listed["resume"]
        assert shown["live"] is False  # no "watch live" link for a run nobody writes

"""Interrupted offline runs through the installed ``flaneur`` command keep what they did.

A 1,200-episode offline run (random and forward on a grid city in the map2seq layout) is
stopped about half-way by Ctrl-C (SIGINT) or SIGKILL; the rows finished before stay in
``episodes.jsonl`` and ``--resume`` ends with the rows of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helper modules beside the tests
from grid_data import write_grid_data

from flaneur.evaluate.runlog import read_rows
from flaneur.web.runs import run_status

FLANEUR = Path(sys.executable).parent / "flaneur"
ROUTES = 600
EPISODES = 2 * ROUTES  # random and forward
TIMING = ("started_at", "duration_s")


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("grid")
    data = write_grid_data(root / "data", routes=ROUTES)
    env = {**os.environ, "FLANEUR_CACHE_DIR": str(root / "cache"), "COLUMNS": "200"}
    env.pop("FLANEUR_DATA", None)
    setup = {"root": root, "data": data, "env": env}
    done = flaneur_run(setup, root / "full", "--progress", "none")
    assert done.returncode == 0, done.stderr
    setup["full"] = row_contents(root / "full")
    assert len(setup["full"]) == EPISODES
    return setup


def flaneur_args(grid: dict, out: Path, *extra: str) -> list[str]:
    return [
        str(FLANEUR),
        "run",
        "--agent",
        "random,forward",
        "--tasks",
        "map2seq-unseen-dev-v1",
        "--data-dir",
        str(grid["data"]),
        "--out",
        str(out),
        *extra,
    ]


def flaneur_run(grid: dict, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        flaneur_args(grid, out, *extra),
        env=grid["env"],
        capture_output=True,
        text=True,
        timeout=300,
    )


def row_contents(folder: Path) -> list[str]:
    """Rows without their timing fields, as sorted JSON texts (order-independent)."""
    rows, _ = read_rows(folder / "episodes.jsonl")
    return sorted(
        json.dumps({k: v for k, v in r.items() if k not in TIMING}, sort_keys=True) for r in rows
    )


def start_and_wait_half(grid: dict, out: Path) -> subprocess.Popen:
    """Start a run and return once about half of its rows are in ``episodes.jsonl``."""
    proc = subprocess.Popen(
        flaneur_args(grid, out, "--progress", "plain"),
        env=grid["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = out / "episodes.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and log.read_bytes().count(b"\n") >= EPISODES // 2:
            break
        time.sleep(0.002)
    # the rows were written while the run went on, not at its end
    assert proc.poll() is None, "the run ended before half of its rows were in the log"
    return proc


def test_ctrl_c_keeps_rows_writes_partial_summary_exits_130_and_resume_completes(grid):
    out = grid["root"] / "interrupted"
    proc = start_and_wait_half(grid, out)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert took < 10, f"Ctrl-C took {took:.1f} s to end the run"
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("interrupted:")]
    assert len(lines) == 1 and "--resume" in lines[0] and str(out) in lines[0]
    kept = row_contents(out)
    assert 0.4 * EPISODES <= len(kept) < EPISODES
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True and summary["interrupted"] is True
    assert summary["episodes"] == len(kept) and summary["stopped_early"].startswith("interrupted")
    assert sum(run["missing"] for run in summary["runs"]) == EPISODES - len(kept)
    assert set(kept) <= set(grid["full"])  # what was kept equals the uninterrupted rows

    done = flaneur_run(grid, out, "--progress", "none", "--resume", "--json")
    assert done.returncode == 0, done.stderr
    assert row_contents(out) == grid["full"]
    summary = json.loads(done.stdout)
    assert summary["partial"] is False and summary["interrupted"] is False
    assert summary["ran_this_invocation"] == EPISODES - len(kept)


def test_sigkill_keeps_finished_rows_and_resume_gives_identical_rows(grid):
    out = grid["root"] / "killed"
    proc = start_and_wait_half(grid, out)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    kept = row_contents(out)
    assert len(kept) >= 0.4 * EPISODES
    assert set(kept) <= set(grid["full"])
    status = run_status(out)  # what the web app shows: not "running", and how to go on
    assert status["status"] == "interrupted"
    assert status["resume"].startswith("flaneur run ") and status["resume"].endswith(" --resume")
    done = flaneur_run(grid, out, "--progress", "none", "--resume")
    assert done.returncode == 0, done.stderr
    assert row_contents(out) == grid["full"]


def test_resume_with_fewer_agents_is_refused_and_nothing_is_lost(grid):
    out = grid["root"] / "full"
    before = (out / "episodes.jsonl").read_bytes()
    args = flaneur_args(grid, out, "--resume", "--progress", "none")
    args[args.index("random,forward")] = "random"
    done = subprocess.run(args, env=grid["env"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "'forward'" in done.stderr and "does not name" in done.stderr
    assert (out / "episodes.jsonl").read_bytes() == before

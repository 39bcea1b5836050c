"""Reliability of the command line and the runner: hostile input, interrupts, dead servers.

Usage::

    python benchmarks/reliability.py --json [--quick] [--skip-runs]

* ``hostile_cases``, ``tracebacks``, ``hostile_failures``: every command line of
  :mod:`harness.runner` through the installed console script ``flaneur`` (4 at a
  time) plus every Python API case in this process. ``tracebacks`` counts outcomes showing a
  traceback or an ``internal error``; ``hostile_failures`` any broken promise (exit code,
  not exactly one error line naming the problem, files left behind), listed in
  ``failed_cases``.
* ``kill_rows_kept_fraction``: an offline run of random and forward on 1,140 Helsinki need
  episodes (helsinki-needs-v1 repeated under new ids; 190 with ``--quick``) in a child
  process is timed once, then run again and killed with SIGKILL at half that time (counted
  from the first episode); the fraction of all rows found complete in ``episodes.jsonl``.
  About 0.5 means rows are written as episodes finish.
* ``sigint_exit_s``: ``flaneur run --agent random,forward --tasks FILE`` (the same 1,140
  episodes as a task file) gets SIGINT 0.3 s after its run folder appears; seconds until
  the process ends (``sigint_exit_code``, 130 expected), capped at 60 s (then it is killed
  and ``sigint_timed_out`` is true).
* ``dead_server_exit_s``: ``flaneur run --agent velma`` with ``--llm-base-url`` pointing at a
  closed port on 127.0.0.1; seconds until the command ends (``dead_server_exit_code``; a
  fail-fast run exits non-zero with one error line), capped at 120 s.
* ``cli_startup_s``: ``flaneur --help``, median of 7 runs.

Prints one JSON object. Absolute times are reported, never gated; ``--check`` exits 1 when a
hostile case shows a traceback or breaks its promise (CI runs ``--skip-runs --check``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FLANEUR = str(Path(sys.executable).with_name("flaneur"))
TASKS = "helsinki-needs-v1"
HARNESS = Path(__file__).resolve().parents[1] / "tests"
"""The hostile-input harness lives with the tests (``tests/harness``), not in the package."""

CHILD = """
import sys, time
from dataclasses import replace
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.registry import load_task
city, base = load_task({tasks!r})
episodes = [replace(e, id=f"{{e.id}}~{{k}}") for k in range({copies}) for e in base]
config = RunConfig(agents=("random", "forward"), tasks=({tasks!r},), concurrency=8)
print("START", len(episodes), flush=True)
run_benchmark(config, sys.argv[1], progress="none", loaded={{{tasks!r}: (city, episodes)}})
print("DONE", flush=True)
"""


def sample_cases(cases: list, per_group: int) -> list:
    """The first ``per_group`` cases of every (command, class) pair (0: every case); the
    test suite runs every case in process, this samples the console script's handling."""
    if per_group <= 0:
        return list(cases)
    seen: dict[tuple[str, str], int] = {}
    out = []
    for case in cases:
        key = (" ".join(case.argv[:2]), case.kind)
        if seen.get(key, 0) < per_group:
            seen[key] = seen.get(key, 0) + 1
            out.append(case)
    return out


def hostile(workers: int = 4, per_group: int = 0) -> dict:
    """The hostile cases (all, or a sample per command and class) through the console
    script: counts of cases, tracebacks and broken promises."""
    sys.path.insert(0, str(HARNESS))
    from harness.runner import (
        API_CASES,
        CLI_CASES,
        build_workspace,
        is_traceback,
        problems_of,
        run_api_case,
        run_in_subprocess,
    )

    failed: dict[str, list[str]] = {}
    tracebacks = 0
    cases = sample_cases(CLI_CASES, per_group)
    with tempfile.TemporaryDirectory() as tmp:
        ws = build_workspace(Path(tmp) / "ws")
        cache = Path(tmp) / "cache"
        with ThreadPoolExecutor(workers) as pool:
            outcomes = list(pool.map(lambda c: run_in_subprocess(c, ws, cache, exe=FLANEUR), cases))
    for case, outcome in zip(cases, outcomes, strict=True):
        tracebacks += is_traceback(outcome)
        problems = problems_of(case, outcome)
        if problems:
            failed[case.id] = problems
    for api_case in API_CASES:
        problems = run_api_case(api_case)
        tracebacks += any(p.startswith("leaked") for p in problems)
        if problems:
            failed[f"api:{api_case.id}"] = problems
    return {
        "hostile_cases": len(cases) + len(API_CASES),
        "hostile_cli_cases": len(cases),
        "hostile_api_cases": len(API_CASES),
        "tracebacks": tracebacks,
        "hostile_failures": len(failed),
        "failed_cases": failed,
    }


def _rows(path: Path) -> int:
    """Complete JSON rows at the start of ``path`` (a cut last line is not counted)."""
    if not path.is_file():
        return 0
    count = 0
    for raw in path.read_bytes().splitlines(keepends=True):
        if not raw.endswith(b"\n"):
            break
        try:
            json.loads(raw)
        except ValueError:
            break
        count += 1
    return count


def _start_child(folder: Path, copies: int) -> tuple[subprocess.Popen, float, int]:
    code = CHILD.format(tasks=TASKS, copies=copies)
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("START"):
        proc.kill()
        raise RuntimeError(f"the child run did not start: {line!r}")
    return proc, time.perf_counter(), int(line.split()[1])


def kill_test(copies: int) -> dict:
    """SIGKILL an offline run at half its duration; the fraction of rows kept."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, started, episodes = _start_child(Path(tmp) / "full", copies)
        proc.wait()
        full_s = time.perf_counter() - started
        total = _rows(Path(tmp) / "full" / "episodes.jsonl")
        proc, started, _ = _start_child(Path(tmp) / "killed", copies)
        time.sleep(max(0.0, started + full_s / 2 - time.perf_counter()))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kept = _rows(Path(tmp) / "killed" / "episodes.jsonl")
    return {
        "kill_episodes": episodes,
        "kill_rows_total": total,
        "kill_rows_kept": kept,
        "kill_run_s": round(full_s, 3),
        "kill_at_s": round(full_s / 2, 3),
        "kill_rows_kept_fraction": round(kept / total, 4) if total else None,
    }


def _task_file(path: Path, copies: int) -> Path:
    """helsinki-needs-v1 repeated ``copies`` times under new ids, as an episodes file."""
    from dataclasses import replace

    from flaneur.tasks.episode import write_episodes
    from flaneur.tasks.registry import load_task

    _, base = load_task(TASKS)
    return write_episodes([replace(e, id=f"{e.id}~{k}") for k in range(copies) for e in base], path)


def sigint_test(copies: int = 6, cap_s: float = 60.0) -> dict:
    """SIGINT a CLI run (a task file of ``copies`` x helsinki-needs-v1) a moment into its
    episodes; seconds until it ends."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        tasks = _task_file(Path(tmp) / "tasks.jsonl", copies)
        cmd = [
            FLANEUR,
            "run",
            "--agent",
            "random,forward",
            "--tasks",
            str(tasks),
            "--city",
            "helsinki",
            "--out",
            str(out),
            "--progress",
            "none",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.perf_counter() + 300
        while not out.exists() and proc.poll() is None and time.perf_counter() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        if proc.poll() is not None:
            return {"sigint_exit_s": None, "sigint_note": "the run ended before the signal"}
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        timed_out = False
        try:
            _, err = proc.communicate(timeout=cap_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.kill()
            _, err = proc.communicate()
        seconds = time.perf_counter() - sent
        rows = _rows(out / "episodes.jsonl")
    return {
        "sigint_exit_s": round(seconds, 3),
        "sigint_exit_code": proc.returncode,
        "sigint_timed_out": timed_out,
        "sigint_rows_kept": rows,
        "sigint_traceback": "Traceback" in (err or ""),
    }


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def dead_server_test(cap_s: float = 120.0) -> dict:
    """A language-model run against a closed port: seconds until the command ends."""
    port = _closed_port()
    env = {**os.environ, "OPENAI_API_KEY": "sk-reliability-benchmark"}
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            FLANEUR,
            "run",
            "--agent",
            "velma",
            "--tasks",
            TASKS,
            "--out",
            f"{tmp}/run",
            "--llm",
            "openai/fake-model",
            "--llm-base-url",
            f"http://127.0.0.1:{port}/v1",
            "--scheme",
            "turns",
            "--limit",
            "20",
            "--progress",
            "none",
            "--cache",
            "off",
        ]
        start = time.perf_counter()
        timed_out = False
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=cap_s)
            code, err = done.returncode, done.stderr
        except subprocess.TimeoutExpired as exc:
            timed_out, code, err = True, None, str(exc.stderr or "")
        seconds = time.perf_counter() - start
    lines = [line for line in err.splitlines() if line.strip()]
    return {
        "dead_server_exit_s": round(seconds, 3),
        "dead_server_exit_code": code,
        "dead_server_timed_out": timed_out,
        "dead_server_stderr_last": lines[-1][:200] if lines else "",
    }


def startup(repeats: int = 7) -> dict:
    """Median wall time of ``flaneur --help``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([FLANEUR, "--help"], capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return {
        "cli_startup_s": round(statistics.median(times), 3),
        "cli_startup_min_s": round(min(times), 3),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="190 episodes for the kill test")
    parser.add_argument(
        "--skip-runs", action="store_true", help="only hostile cases and start-up (no runs)"
    )
    parser.add_argument(
        "--hostile-sample",
        type=int,
        default=0,
        metavar="K",
        help="only the first K hostile cases of every (command, class) through the console "
        "script (0: all; the test suite runs every case in process)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 on a traceback or a broken hostile-input promise",
    )
    args = parser.parse_args(argv)
    result: dict = {"quick": args.quick}
    result.update(startup())
    result.update(hostile(per_group=args.hostile_sample))
    if not args.skip_runs:
        subprocess.run([FLANEUR, "city", "info", "helsinki"], capture_output=True)  # build once
        result.update(kill_test(1 if args.quick else 6))
        result.update(sigint_test(1 if args.quick else 6))
        result.update(dead_server_test())
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 1 if args.check and (result["tracebacks"] or result["hostile_failures"]) else 0


if __name__ == "__main__":
    sys.exit(main())

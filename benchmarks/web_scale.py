"""The web app at the size of a real comparison: a run of 1,600 rows among ten runs, and the
server's memory with the built-in city loaded.

Usage::

    python benchmarks/web_scale.py --json [--repeats 5] [--runs 10]

1. Runs ``random`` and ``forward`` on 800 episodes (``helsinki-needs-v1``'s 190, repeated
   under new ids) into one run folder of 1,600 rows, and copies it to ``--runs`` folders.
2. Starts ``flaneur serve`` on them (the console script, its own process) and times,
   medians of ``--repeats``: ``GET /api/runs`` (the runs list), ``GET /api/runs/<key>`` (one
   run's tables; the first answer of each, which reads the logs, apart as ``*_cold_ms``),
   ``GET /api/runs/<key>/episodes`` with two filters, the CSV export of the whole run, and
   in Chromium (Playwright, Debian's ``/usr/bin/chromium``)
   the runs page opened on that run until its 1,600-row episode table is drawn
   (``performance.now()`` after navigation).
3. Loads the built-in Helsinki city through a street view request and reads the server's
   resident memory (``VmRSS`` and its peak ``VmHWM`` from ``/proc``).

Figures only: no ``--check`` gate (wall times depend on the machine).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import httpx

from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.registry import load_task
from flaneur.web.server import free_port

TASK = "helsinki-needs-v1"
ROWS_PER_AGENT = 800


def make_runs(root: Path, runs: int) -> None:
    """``runs`` copies of one run folder of 2 x 800 rows under ``root``."""
    city, base = load_task(TASK)
    episodes = [replace(e, id=f"{e.id}~{k}") for k in range(5) for e in base][:ROWS_PER_AGENT]
    first = root / "run-00"
    config = RunConfig(agents=("random", "forward"), tasks=(TASK,))
    run_benchmark(config, first, progress="none", loaded={TASK: (city, episodes)})
    for k in range(1, runs):
        shutil.copytree(first, root / f"run-{k:02d}")


def _rss_mb(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {k: round(int(fields[k].split()[0]) / 1024, 1) for k in ("VmRSS", "VmHWM")}


def _median_ms(call, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        call()
        times.append((time.perf_counter() - began) * 1000)
    return round(statistics.median(times), 1)


def page_ms(base: str, key: str, repeats: int) -> list[float]:
    """Times (ms) from navigation to the run's 1,600-row episode table drawn."""
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("FLANEUR_CHROMIUM", "/usr/bin/chromium")
    rows = 2 * ROWS_PER_AGENT
    count = "document.querySelectorAll('#episodes tbody tr').length"
    out = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        for _ in range(repeats):
            page = browser.new_page()
            page.goto(f"{base}/?run={key}")
            deadline = time.monotonic() + 120
            while page.evaluate(count) < rows:  # polled: the pages' CSP forbids eval
                if time.monotonic() > deadline:
                    raise RuntimeError("the run's episode table was not drawn in 120 s")
                time.sleep(0.01)
            out.append(round(page.evaluate("performance.now()"), 1))
            page.close()
        browser.close()
    return out


def measure(root: Path, repeats: int) -> dict:
    """Start ``flaneur serve`` on ``root`` and take the figures."""
    port = free_port()
    flaneur = Path(sys.executable).with_name("flaneur")
    server = subprocess.Popen(
        [str(flaneur), "serve", str(root), "--port", str(port)], stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                httpx.get(f"{base}/api/settings", timeout=5).raise_for_status()
                break
            except httpx.TransportError:
                time.sleep(0.05)
        started_mb = _rss_mb(server.pid)
        client = httpx.Client(base_url=base, timeout=120)
        key = "run-00"
        began = time.perf_counter()  # the first answers read every log (cold)
        client.get("/api/runs").raise_for_status()
        cold_runs_ms = round((time.perf_counter() - began) * 1000, 1)
        began = time.perf_counter()
        client.get(f"/api/runs/{key}").raise_for_status()
        cold_run_ms = round((time.perf_counter() - began) * 1000, 1)
        figures = {
            "runs": len(client.get("/api/runs").json()),
            "rows_per_run": client.get("/api/runs").json()[0]["rows"],
            "api_runs_cold_ms": cold_runs_ms,
            "api_run_cold_ms": cold_run_ms,
            "api_runs_ms": _median_ms(lambda: client.get("/api/runs").raise_for_status(), repeats),
            "api_run_ms": _median_ms(
                lambda: client.get(f"/api/runs/{key}").raise_for_status(), repeats
            ),
            "api_episodes_filtered_ms": _median_ms(
                lambda: client.get(
                    f"/api/runs/{key}/episodes", params={"agent": "forward", "success": "no"}
                ).raise_for_status(),
                repeats,
            ),
            "api_export_csv_ms": _median_ms(
                lambda: client.get(f"/api/runs/{key}/export").raise_for_status(), repeats
            ),
            "runs_page_drawn_ms": page_ms(base, key, repeats),
        }
        figures["runs_page_drawn_ms_median"] = statistics.median(figures["runs_page_drawn_ms"])
        start = load_task(TASK)[1][0].start_node
        client.get("/api/view", params={"task": TASK, "node": start}).raise_for_status()
        figures["server_rss_mb"] = {"started": started_mb, "city_loaded": _rss_mb(server.pid)}
        return figures
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats (median)")
    parser.add_argument("--runs", type=int, default=10, help="run folders served")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="flaneur-web-scale-") as tmp:
        make_runs(Path(tmp), args.runs)
        out = {"task": TASK, **measure(Path(tmp), args.repeats)}
    out["seconds"] = round(time.perf_counter() - began, 1)
    print(json.dumps(out) if args.json else json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()

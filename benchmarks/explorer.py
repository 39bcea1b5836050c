"""The offline explorer against the random and forward baselines on Helsinki need tasks.

Usage::

    python benchmarks/explorer.py --json [--tasks helsinki-needs-v1] [--check]
    python benchmarks/explorer.py --seeds 126,127,128,129 [--option w_cover=2 --option tau=0.6]

Runs ``random``, ``forward`` and ``explorer`` (map perception, no model) on every episode
of the task set through :func:`flaneur.evaluate.runner.run_benchmark` and prints, per agent,
TCP with its Wilson 95 % interval, TCC and mean steps; per pair of agents, the paired
comparison (wins, losses, difference with Newcombe's interval, exact McNemar p); how many
of the explorer's successes came from recognising the place and how many from its
end-of-budget guess; and the wall time. ``--check`` exits with status 1 unless the
explorer's TCP interval lies above both baselines' intervals and the paired tests give
p < 0.05. Everything is deterministic (seed 0), so the figures repeat exactly.

``--seeds`` runs instead on need tasks generated on Helsinki with those generator seeds
(``generate_need_tasks(city, seed=s, per_template=2)``, pooled): the calibration sets of
``docs/agents.md``, which never include the registered set's seed 0. ``--option KEY=VALUE``
passes options to the explorer (values read as JSON), to try other settings there.
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


def generated_tasks(seeds: list[int]) -> tuple[str, dict]:
    """A pooled task set of need tasks generated on Helsinki with ``seeds``."""
    from flaneur.tasks.generate import generate_need_tasks
    from flaneur.world.builtin import load_city

    city = load_city("helsinki")
    episodes = []
    for seed in seeds:
        report = generate_need_tasks(city, seed=seed, per_template=2, set_name=f"needs-s{seed}")
        episodes += report.episodes
    task = "helsinki-needs-seeds-" + "-".join(map(str, seeds))
    return task, {task: (city, episodes)}


def figures(
    task: str, folder: Path, *, loaded: dict | None = None, options: dict | None = None
) -> dict:
    """Run the three agents on ``task`` in ``folder`` and collect the figures."""
    started = time.perf_counter()
    config = RunConfig(agents=AGENTS, tasks=(task,), per_agent_options={"explorer": options or {}})
    summary = run_benchmark(config, folder, progress="none", loaded=loaded)
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
            "steps": round(
                sum(r["steps"] for r in rows if r["agent"] == run["agent"])
                / max(1, out["episodes"]),
                1,
            ),
        }
    out["agents"] = agents
    out["paired"] = [
        {k: _rounded(k, v) for k, v in pair.items()} for pair in compare_agents(rows, tcp_of)
    ]
    how = {"recognised": 0, "guessed": 0}
    for row in rows:
        if row["agent"] == "explorer" and tcp_of(row):
            last = (row["records"][-1].get("thoughts") or "") if row["records"] else ""
            guess = "likeliest spot" in last or "a visited node" in last  # either budget rule
            how["guessed" if guess else "recognised"] += 1
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
    parser.add_argument("--seeds", default=None, help="generated sets instead, e.g. 126,127")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an explorer option (repeatable)",
    )
    args = parser.parse_args(argv)
    options = {}
    for text in args.option:
        key, sep, value = text.partition("=")
        if not sep or not key:
            parser.error(f"option {text!r}: expected KEY=VALUE")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    task, loaded = args.tasks, None
    if args.seeds:
        task, loaded = generated_tasks([int(s) for s in args.seeds.split(",")])
    with tempfile.TemporaryDirectory() as folder:
        out = figures(task, Path(folder) / "run", loaded=loaded, options=options)
    out["explorer_options"] = options
    out["clearly_above_baselines"] = passes(out)
    if args.json:
        print(json.dumps(out))
    else:
        for name, agent in out["agents"].items():
            print(f"{name:10s} TCP {agent['tcp']:.3f} {agent['tcp_ci95']} TCC {agent['tcc']:.3f}")
        for pair in out["paired"]:
            print(
                f"{pair['a']} vs {pair['b']}: {pair['wins']}-{pair['losses']}, "
                f"p = {pair['p_value']:.2g}"
            )
        print("explorer successes", out["explorer_successes"], "seconds", out["seconds"])
    if args.check and not out["clearly_above_baselines"]:
        sys.exit(1)
    return out


if __name__ == "__main__":
    main()

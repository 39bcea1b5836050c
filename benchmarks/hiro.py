"""Hiro (V-IRL's intentional explorer) beside the explorer and the baselines on need tasks.

Usage::

    python benchmarks/hiro.py --json --limit 60          # the first 60 episodes
    python benchmarks/hiro.py --json                     # all 190 (slow with a cold cache)
    python benchmarks/hiro.py --quick --check            # CI: 2 episodes, sanity checks
    python benchmarks/hiro.py --json --limit 30 --agents hiro,hiro-passive
    python benchmarks/hiro.py --json --hiro-options enter_min=6.5

One run of the project's runner (as ``flaneur run --tasks helsinki-needs-v1 --agent random
--agent forward --agent explorer --agent hiro --views synthetic --landmarks ocr``) on the
same episodes for every agent: ``hiro`` (synthetic views, OCR storefront detector with
active detection, no model), ``hiro-passive`` (the same Hiro with ``active=false``: one
detection pass), ``explorer`` with the same perception (OCR of synthetic views), ``random``
and ``forward``. It prints, per agent, TCP with its Wilson 95 % interval, TCC, mean steps
and mean seconds per episode, and the paired comparisons of each Hiro against the other,
the explorer and forward (wins, losses, difference with Newcombe's interval, exact McNemar
p; :mod:`flaneur.metrics.paired`, as ``flaneur report`` shows them), with each Hiro's views
per episode (detection views, of which zoomed) and how often he entered a place.

``--agents`` runs a subset (a later run into the same folder may add the others: finished
rows are kept, so running ``--agents hiro`` first times Hiro alone). ``--hiro-options
KEY=VALUE`` (repeatable; values read as JSON when they parse) passes options to both Hiro
rows (``hiro-passive`` always gets ``active=false``); options enter the run's config hash.

OCR of a view costs about 0.15 s on an idle core, so a cold cache makes a full run long;
the run folder (``--out``, default ``$FLANEUR_CACHE_DIR/bench-hiro/<task>``) and the OCR
caches persist, so an interrupted run resumes and a second run is fast. ``--quick`` runs
only ``forward`` and ``hiro`` on the first 2 episodes (about a minute with a cold cache):
a sanity run for CI, with ``--check``, which exits 1 unless every agent has a row for every
episode, no row errored, and Hiro never read the goal (no row of his is marked privileged;
the unit tests also run him with goal fields that raise when read).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.metrics import compare_agents
from flaneur.metrics.summary import wilson_interval

AGENTS = ("random", "forward", "explorer", "hiro", "hiro-passive")
QUICK_AGENTS = ("forward", "hiro")
QUICK_EPISODES = 2
PASSIVE = "hiro-passive"
"""Hiro without active detection (``--option hiro.active=false``), a row of its own."""
HIROS = ("hiro", PASSIVE)
PAIR_ORDER = ("hiro", PASSIVE, "explorer", "forward", "random")
"""Rows are paired in this order (``a`` is the earlier agent: Hiro first)."""


def tcp_of(row: dict) -> bool:
    """Success of a row by CitySeeker's TCP."""
    return bool((row.get("metrics") or {}).get("tcp"))


def _rounded(key: str, value: object) -> object:
    return round(value, 4) if isinstance(value, float) and key != "p_value" else value


def parse_options(items: list[str]) -> dict:
    """``["KEY=VALUE", ...]`` as a dict, each value read as JSON when it parses."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--hiro-options takes KEY=VALUE, not {item!r}")
        try:
            out[key.strip()] = json.loads(text)
        except json.JSONDecodeError:
            out[key.strip()] = text
    return out


def agent_factory(config: RunConfig):
    """The runner's agents, and ``hiro-passive``: Hiro with his run options and
    ``active=false``."""
    from flaneur.agents.hiro import HiroAgent, HiroOptions
    from flaneur.evaluate.runner import default_agent_factory
    from flaneur.options import check_options

    default = default_agent_factory(config)
    passive = check_options("hiro", HiroOptions, config.options_for(PASSIVE))

    def factory(name: str):
        return HiroAgent(**passive) if name == PASSIVE else default(name)

    return factory


def hiro_figures(rows: list[dict]) -> dict:
    """Views per episode (detection views including zoomed ones, and zoomed ones), stops,
    parse failures and mean seconds per episode of one Hiro's rows."""
    records = [rec for r in rows for rec in r.get("records") or []]
    views = sum(int(rec.get("views") or 0) for rec in records)
    zoomed = sum(int(rec.get("zoom_views") or 0) for rec in records)
    n = max(1, len(rows))
    return {
        "detection_views_per_episode": round(views / n, 1),
        "zoom_views_per_episode": round(zoomed / n, 1),
        "stopped": sum(1 for r in rows if r.get("termination") == "stopped"),
        "parse_failures": sum(int(rec.get("parse_failures") or 0) for rec in records),
        "seconds_per_episode": round(sum(r.get("duration_s") or 0.0 for r in rows) / n, 1),
    }


def figures(rows: list[dict], episode_ids: list[str], names: tuple[str, ...] = AGENTS) -> dict:
    """Per-agent TCP (Wilson 95 %), TCC, steps, and the paired tests, on ``episode_ids``."""
    wanted = set(episode_ids)
    rows = [r for r in rows if r.get("episode_id") in wanted and r["agent"] in names]
    order = {name: k for k, name in enumerate(PAIR_ORDER)}
    rows.sort(key=lambda r: order.get(r["agent"], len(order)))  # Hiro is ``a`` of his pairs
    agents: dict = {}
    for name in names:
        mine = [r for r in rows if r["agent"] == name]
        wins = sum(tcp_of(r) for r in mine)
        low, high = wilson_interval(wins, len(mine)) if mine else (0.0, 0.0)
        tcc = [bool((r.get("metrics") or {}).get("tcc")) for r in mine]
        agents[name] = {
            "episodes": len(mine),
            "tcp": round(wins / max(1, len(mine)), 4),
            "tcp_ci95": [round(low, 4), round(high, 4)],
            "tcc": round(sum(tcc) / max(1, len(tcc)), 4),
            "steps": round(sum(r.get("steps", 0) for r in mine) / max(1, len(mine)), 1),
            "seconds_per_episode": round(
                sum(r.get("duration_s") or 0.0 for r in mine) / max(1, len(mine)), 1
            ),
            "errors": sum(1 for r in mine if r.get("error")),
            "privileged": sum(1 for r in mine if r.get("privileged")),
        }
    pairs = [
        {k: _rounded(k, v) for k, v in pair.items()}
        for pair in compare_agents(rows, tcp_of)
        if pair["a"] in HIROS and pair["b"] in (PASSIVE, "explorer", "forward")
    ]
    out = {"agents": agents, "paired": pairs}
    for name in HIROS:
        if name in names:
            out[name] = hiro_figures([r for r in rows if r["agent"] == name])
    return out


def problems(out: dict, n: int) -> list[str]:
    """What the sanity check finds wrong (empty: all good)."""
    found = []
    for name, agent in out["agents"].items():
        if agent["episodes"] != n:
            found.append(f"{name}: {agent['episodes']} of {n} rows")
        if agent["errors"]:
            found.append(f"{name}: {agent['errors']} errored rows")
    for name in HIROS:
        if out["agents"].get(name, {}).get("privileged"):
            found.append(f"{name}: rows marked privileged (read the goal)")
    return found


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default="helsinki-needs-v1", help="a need-task set id")
    parser.add_argument("--limit", type=int, default=None, help="the first N episodes only")
    parser.add_argument(
        "--quick", action="store_true", help=f"forward and hiro on {QUICK_EPISODES} episodes (CI)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--check", action="store_true", help="exit 1 unless rows are sane")
    parser.add_argument("--out", default=None, help="run folder (kept; a rerun resumes)")
    parser.add_argument("--concurrency", type=int, default=4, help="episodes at a time")
    parser.add_argument(
        "--agents", default=None, help=f"comma-separated subset of {','.join(AGENTS)}"
    )
    parser.add_argument(
        "--hiro-options",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of both Hiro rows (repeatable), e.g. active=false or enter_min=6.5",
    )
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be at least 1, not {args.limit}")
    limit = QUICK_EPISODES if args.quick else args.limit
    names = QUICK_AGENTS if args.quick else AGENTS
    if args.agents:
        names = tuple(a.strip() for a in args.agents.split(",") if a.strip())
        unknown = [a for a in names if a not in AGENTS]
        if unknown or not names:
            parser.error(f"--agents: choose from {', '.join(AGENTS)}, not {args.agents!r}")
    try:
        hiro_options = parse_options(args.hiro_options)
    except ValueError as err:
        parser.error(str(err))
    from flaneur.paths import cache_dir

    default = cache_dir("bench-hiro") / (args.tasks + ("-quick" if args.quick else ""))
    folder = Path(args.out) if args.out else default
    config = RunConfig(
        agents=names,
        tasks=(args.tasks,),
        views="synthetic",
        landmarks="ocr",
        limit=limit,
        concurrency=args.concurrency,
        per_agent_options={
            "hiro": {"active": True, **hiro_options},
            PASSIVE: {**hiro_options, "active": False},
        },
    )
    started = time.perf_counter()
    resume = (folder / "episodes.jsonl").exists()
    try:
        factory = agent_factory(config)
    except FlaneurError as err:
        parser.error(str(err))
    run_benchmark(
        config,
        folder,
        resume=resume,
        progress="none" if args.json else "rich",
        agent_factory=factory,
    )
    seconds = time.perf_counter() - started
    rows, _ = read_rows(folder / "episodes.jsonl")
    from flaneur.tasks.registry import load_task

    _, episodes = load_task(args.tasks)
    ids = [e.id for e in episodes][:limit]  # the episodes this run covers, in task order
    out = {
        "task": args.tasks,
        "episodes": len(ids),
        "agents_run": list(names),
        "hiro_options": hiro_options,
        "seconds": round(seconds, 1),
    }
    out.update(figures(rows, ids, names))
    out["problems"] = problems(out, len(ids))
    out["run_folder"] = str(folder)
    if args.json:
        print(json.dumps(out))
    else:
        for name, agent in out["agents"].items():
            print(
                f"{name:12s} TCP {agent['tcp']:.3f} {agent['tcp_ci95']} TCC {agent['tcc']:.3f} "
                f"steps {agent['steps']} s/episode {agent['seconds_per_episode']}"
            )
        for pair in out["paired"]:
            print(
                f"{pair['a']} vs {pair['b']}: {pair['wins']}-{pair['losses']} of "
                f"{pair['paired']}, diff {pair['diff']}, p = {pair['p_value']:.2g}"
            )
        for name in HIROS:
            if name in out:
                print(name, out[name])
        print("seconds", out["seconds"], "problems", out["problems"])
    if args.check and out["problems"]:
        sys.exit(1)
    return out


if __name__ == "__main__":
    main()

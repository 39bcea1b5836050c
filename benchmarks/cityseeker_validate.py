"""Validate the CitySeeker agent end to end on real task data with a scripted fake model.

Usage::

    python benchmarks/cityseeker_validate.py --data /work/shared/data [--episodes 20]
        [--strategies b1,b2,r3] [--rounds 2] [--views none,synthetic] [--json]

Runs ``--episodes`` episodes of ``cityseeker-shanghai2-v1`` and of ``map2seq-unseen-dev-v1``
(both in the ``headings`` scheme) through :func:`flaneur.evaluate.runner.run_benchmark`,
each without views and with ``--views synthetic``, against a fake OpenAI-compatible server
answering with :class:`harness.cityseeker_policies.ScriptedCitySeeker` (about 5 % of
its replies are deliberately unparseable). For every run it reports episodes, terminations,
steps, model calls, images sent, parse failures, whether every prompt sent can be read back
from the run log, and wall time.

Shanghai's graph has 10 nodes without coordinates (``node_sets["unlocated"]``), on which
the synthetic renderer's scene builder fails; unless ``--no-locate-unlocated`` is given, the
views runs use a copy of the city whose unlocated nodes are placed by dead reckoning from a
located neighbour (edge heading and length from the data) or, where a whole component has
no located node (Shanghai: one component of 10 nodes), dropped. No episode uses them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.geo import destination
from flaneur.tasks import load_task
from flaneur.testing import FakeOpenAIServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/harness
from harness.cityseeker_policies import ScriptedCitySeeker

TASKS = ("cityseeker-shanghai2-v1", "map2seq-unseen-dev-v1")


def locate_unlocated(city):
    """A copy of ``city`` whose nodes without coordinates are placed from a located
    neighbour along the edge's heading and length."""
    g = city.graph
    lat, lng = g.lat.copy(), g.lng.copy()
    sources = g.edge_sources
    missing = set(np.flatnonzero(np.isnan(lat)).tolist())
    while missing:
        placed = False
        for e in range(g.n_edges):
            u, v = int(sources[e]), int(g.targets[e])
            if v in missing and u not in missing:
                la, ln = destination(lat[u], lng[u], g.headings[e], g.lengths[e])
                lat[v], lng[v] = float(la), float(ln)
                missing.discard(v)
                placed = True
        if not placed:
            break
    graph = type(g).from_edges(
        g.ids.tolist(),
        lat,
        lng,
        sources,
        g.targets,
        headings=g.headings,
        lengths=g.lengths,
        pano_yaw=g.pano_yaw,
    )
    keep = ~np.isnan(lat)  # components with no located node at all are dropped
    if not keep.all():
        graph = graph.subgraph(mask=keep)
    node_sets = {name: mask[keep] for name, mask in city.node_sets.items()}
    return dataclasses.replace(city, graph=graph, node_sets=node_sets)


def validate(
    data: str,
    task: str,
    views: str | None,
    *,
    episodes: int,
    strategies: str,
    out: Path,
    seed: int = 0,
    locate: bool = True,
    rnd: int = 0,
    memory: Path | None = None,
) -> dict:
    """One run; its figures."""
    loaded = None
    if views and locate:
        city, eps = load_task(task, data)
        if np.isnan(city.graph.lat).any():
            loaded = {task: (locate_unlocated(city), eps)}
    options: dict = {"strategies": strategies} if strategies else {}
    if rnd:
        options["round"] = rnd
    if memory is not None:
        options["memory_path"] = str(memory)
    with FakeOpenAIServer(ScriptedCitySeeker(seed=seed)) as srv:
        config = RunConfig(
            agents=("cityseeker",),
            tasks=(task,),
            data_dir=data,
            scheme="headings",
            llm="fake-model",
            llm_base_url=srv.base_url,
            views=views,
            limit=episodes,
            cache_mode="off",
            agent_options=options,
        )
        started = time.perf_counter()
        summary = run_benchmark(config, out, progress="none", loaded=loaded)
        wall = time.perf_counter() - started
        sent = [r.last_user_text for r in srv.requests]
        images = sum(r.image_count for r in srv.requests)
        calls = srv.chat_count
    rows = read_rows(out / "episodes.jsonl")[0]
    records = [rec for r in rows for rec in r.get("records", [])]
    logged = {rec.get("prompt", "") for rec in records}
    logged_text = "\n".join(logged)
    missing = sum(1 for text in sent if text not in logged_text)
    events = Counter(e.split(":")[0] for rec in records for e in rec.get("strategy_events", []))
    return {
        "task": task,
        "views": (views or "none") + (" (unlocated nodes placed or dropped)" if loaded else ""),
        "strategies": strategies or "none",
        "round": rnd,
        "episodes": summary["episodes"],
        "by_termination": summary["by_termination"],
        "errors": [r.get("error") for r in rows if r.get("error")][:3],
        "steps_mean": round(sum(r.get("steps", 0) for r in rows) / max(1, len(rows)), 1),
        "model_calls": calls,
        "images_sent": images,
        "parse_failures": sum(rec.get("parse_failures", 0) for rec in records),
        "prompts_sent": len(sent),
        "prompts_missing_from_log": missing,
        "strategy_events": dict(events),
        "success": sum(1 for r in rows if r.get("success")),
        "wall_s": round(wall, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="/work/shared/data")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--strategies", default="")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--views", default="none,synthetic")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per task (memory)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-locate-unlocated", dest="locate", action="store_false")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for task in args.tasks.split(","):
            for views in args.views.split(","):
                memory = Path(tmp) / f"memory-{views}.sqlite"
                for rnd in range(args.rounds):
                    out = Path(tmp) / f"{task}-{views}-{rnd}"
                    result = validate(
                        args.data,
                        task,
                        None if views == "none" else views,
                        episodes=args.episodes,
                        strategies=args.strategies,
                        out=out,
                        locate=args.locate,
                        rnd=rnd,
                        memory=memory,
                    )
                    results.append(result)
                    if not args.json:
                        print(json.dumps(result), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    bad = [r for r in results if r["errors"] or r["prompts_missing_from_log"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

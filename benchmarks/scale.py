"""Scaling figures: the Ray executor, a model-bound sweep, a 1,000,000-node city.

Usage::

    python benchmarks/scale.py --json                  # the issue's sizes (long: see below)
    python benchmarks/scale.py --json --quick --check  # CI
    python benchmarks/scale.py --json --quick --sweep-full --skip explorer,grid
    python benchmarks/scale.py --json --quick --explorer-full --skip sweep,grid

The machine may be shared (here: 2 cores, several jobs), so every timed part reports wall
times and CPU times: CPU times say what an idle machine would show.

* ``ray_speedup_2_workers`` (and ``_1_worker``): the explorer with OCR (``--views synthetic
  --landmarks ocr``) on the first ``--episodes`` episodes of ``helsinki-needs-v1`` (40;
  ``--quick`` 4), cold OCR cache, each variant in a fresh process: local executor wall
  time over Ray's with 1 and 2 workers (``--concurrency 1`` per worker; each worker's OCR
  runs on as many threads as Ray gave it CPUs, one, while the local run's OCR uses every
  core). ``ray_speedup_2_over_1_worker``: the 1-worker run's wall time over the 2-worker
  run's (how the executor scales with workers).
  ``ray_speedup_2_workers_cpu``: the local run's CPU time over the least wall the 2-worker
  run could take on 2 idle cores (``explorer_ray2_idle_floor_s``: the larger of its
  busiest worker's CPU time plus the workers' start-up, and half the CPU time of all its
  processes: driver, Ray's own, workers); ``ray_cpu_overhead``: that total over the local
  run's. ``ray_rows_identical``: the rows of the three runs, without their timing fields,
  are equal.
* ``sweep_wall_over_ideal``: ``--sweep-episodes`` episodes (10,000; ``--quick`` 600) split
  between ``--sweep-agents`` harness agents (16) that make ``CALLS`` model calls per
  episode against flaneur's fake OpenAI-compatible server (``flaneur fake-llm``, its own
  process, 100 ms per reply), run through Ray with 2 workers and one global limit of 64
  calls in flight: wall time (from the workers' start) over ``calls x 0.1 s / 64``.
  ``sweep_cpu_ms_per_call``: the CPU time of every process of the run (driver, Ray's
  processes, workers, the fake server) after start-up, per call;
  ``sweep_cpu_wall_over_ideal``: the wall that CPU time allows on this machine's cores
  over the ideal (1.0: the cores keep up with 640 calls a second), with the workers' and
  the server's shares. ``sweep_peak_in_flight`` (the workers' count) and
  ``sweep_server_peak_in_flight`` (what the server saw) must not exceed 64;
  ``sweep_driver_rss_mb``, Ray's and the workers' start-up times.
* ``grid_1m_*``: a synthetic ``--grid`` x ``--grid`` street grid (1,000 x 1,000 nodes,
  two-way streets) saved as a city pack: ``grid_1m_pack_load_s`` (median of 3 loads),
  ``grid_1m_pack_load_cpu_s`` (its CPU time), ``grid_1m_rss_mb`` (the loading process's
  peak memory, queries included), ``grid_1m_nearest_us`` (per query of 10,000 random
  points, index built), ``grid_1m_nearest_index_s`` (building it) and ``grid_1m_hops_s``
  (hop distances from one goal to every node).

The harness agents of the sweep are a measurement harness, not flaneur agents.
``--quick`` (CI): 4 explorer episodes, 600 sweep episodes, the grid at full size;
``--explorer-full`` and ``--sweep-full`` run that part at the issue's size anyway.
``--check`` gates correctness (identical rows, the sweep within its limit, the grid
within 1 GB), never wall times. ``--landmarks map`` runs the explorer without views (map
perception); ``--skip`` leaves parts out.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

CALLS = 4
"""Model calls per episode of the sweep."""
AGENTS = 16
"""Agents of the sweep (its episodes are split evenly between them)."""
LIMIT = 64
"""The sweep's global limit on model calls in flight."""
LATENCY = 0.1
VOLATILE = ("started_at", "duration_s")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux ``/proc``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(root: int | None = None, *, exclude: tuple[int, ...] = ()) -> float:
    """CPU seconds used so far by process ``root`` (this one) and its live descendants but
    ``exclude``: the driver, and with a local Ray instance its GCS, raylet, helpers and
    workers (Ray's killed workers leave no trace: count those from their own figures)."""
    root = os.getpid() if root is None else root
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parent[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
                )
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, ppid in parent.items() if ppid in tree} - tree
        tree |= more
        grew = bool(more)
    return sum(_cpu_s(pid) for pid in tree - set(exclude))


# ---------------------------------------------------------------- explorer with OCR
def explorer_child(variant: str, episodes: int, out: str, landmarks: str = "ocr") -> None:
    """One explorer run in this (fresh) process; prints its wall and CPU times as JSON."""
    from flaneur.evaluate.runner import RunConfig, run_benchmark
    from flaneur.paths import cache_dir

    shutil.rmtree(cache_dir("explorer-ocr"), ignore_errors=True)  # cold OCR cache
    views = "synthetic" if landmarks == "ocr" else None
    config = RunConfig(
        agents=("explorer",),
        tasks=("helsinki-needs-v1",),
        views=views,
        landmarks=landmarks,
        limit=episodes,
        concurrency=1,
    )
    executor = None
    cpu0, t0 = tree_cpu_s(), time.perf_counter()
    if variant.startswith("ray"):  # started here (not by the executor) to read its CPU time
        from flaneur.evaluate.executors_ray import RayExecutor, init_local_ray

        init_local_ray(2, log_to_driver=False)
        executor = RayExecutor(workers=int(variant[3:]))
    driver0 = time.process_time()
    summary = run_benchmark(config, out, progress="none", executor=executor)
    wall = time.perf_counter() - t0
    pids = tuple(executor.worker_pids) if executor is not None else ()
    cpu = tree_cpu_s(exclude=pids) - cpu0  # Ray still up: its own processes are counted
    stats = summary.get("executor") or {}
    cpu += sum(stats.get("worker_cpu_s") or [])
    driver = time.process_time() - driver0
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": cpu,
                "driver_cpu_s": driver,
                "worker_cpu_s": stats.get("worker_cpu_s"),
                "startup_s": stats.get("startup_s"),
            }
        )
    )


def explorer_figures(episodes: int, landmarks: str = "ocr") -> dict:
    """Local vs Ray with 1 and 2 workers (see the module docstring)."""
    from flaneur.evaluate.runlog import read_rows

    runs, rows = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for variant in ("local", "ray1", "ray2"):
            out = str(Path(tmp) / variant)
            proc = subprocess.run(
                [sys.executable, __file__, "--child", variant, str(episodes), out, landmarks],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                raise SystemExit(f"{variant} run failed: {proc.stderr.strip()[-2000:]}")
            runs[variant] = json.loads(proc.stdout.strip().splitlines()[-1])
            got = read_rows(Path(out) / "episodes.jsonl")[0]
            rows[variant] = {
                (r["task"], r["agent"], r["episode_id"]): {
                    k: v for k, v in r.items() if k not in VOLATILE
                }
                for r in got
            }
    local = runs["local"]
    local_cpu = local["cpu_s"]
    ray2 = runs["ray2"]["worker_cpu_s"] or []
    # on 2 idle cores the 2-worker run takes at least its busiest worker's CPU time (plus
    # the workers' start-up) and at least half the CPU time of all its processes
    ray2_floor = max(
        max(ray2, default=0.0) + (runs["ray2"]["startup_s"] or 0.0), runs["ray2"]["cpu_s"] / 2
    )
    return {
        "explorer_episodes": episodes,
        "explorer_landmarks": landmarks,
        "explorer_local_s": round(local["wall_s"], 2),
        "explorer_ray1_s": round(runs["ray1"]["wall_s"], 2),
        "explorer_ray2_s": round(runs["ray2"]["wall_s"], 2),
        "ray_speedup_1_worker": round(local["wall_s"] / runs["ray1"]["wall_s"], 3),
        "ray_speedup_2_workers": round(local["wall_s"] / runs["ray2"]["wall_s"], 3),
        "ray_speedup_2_over_1_worker": round(runs["ray1"]["wall_s"] / runs["ray2"]["wall_s"], 3),
        "explorer_local_cpu_s": round(local_cpu, 2),
        "explorer_ray1_cpu_s": round(runs["ray1"]["cpu_s"], 2),
        "explorer_ray2_cpu_s": round(runs["ray2"]["cpu_s"], 2),
        "explorer_ray2_worker_cpu_s": [round(c, 2) for c in ray2],
        "explorer_ray2_idle_floor_s": round(ray2_floor, 2),
        "ray_speedup_2_workers_cpu": round(local_cpu / ray2_floor, 3) if ray2 else None,
        "ray_cpu_overhead": round(runs["ray2"]["cpu_s"] / local_cpu, 3),
        "ray_rows_identical": bool(rows["local"]) and rows["local"] == rows["ray1"] == rows["ray2"],
    }


# ---------------------------------------------------------------- simulated sweep
@contextlib.contextmanager
def fake_server(latency: float = LATENCY):
    """``flaneur fake-llm`` in its own process, ``latency`` s per reply: yields its base
    URL and process id."""
    cmd = [
        sys.executable,
        "-c",
        "from flaneur.cli import main; main()",
        "fake-llm",
        "--port",
        "0",
        "--policy",
        "constant:FORWARD",
        "--latency",
        str(latency),
        "--json",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        yield json.loads(proc.stdout.readline())["base_url"], proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def harness_factory(name: str):
    """The sweep's agents (``caller-00`` ...): ``CALLS`` model calls each, then stop
    (defined here, sent to the workers)."""
    from flaneur.agents import Action, Agent, step_record

    class Caller(Agent):
        def reset(self, episode, env_info):
            super().reset(episode, env_info)
            self.calls = 0

        async def act(self, observation):
            self.calls += 1
            text = f"{self.name}: {observation['instruction']} call {self.calls}"
            model = self.env_info.model
            completion = await model.complete([{"role": "user", "content": text}])
            slot = 0 if self.calls >= CALLS else 2  # stop after CALLS calls, else turn
            record = step_record(raw_output=completion.text)
            return Action(slot, "stop" if slot == 0 else "turn", record)

    agent = Caller()
    agent.name = name
    return agent


def sweep_figures(
    episodes: int, agents: int = AGENTS, workers: int = 2, latency: float = LATENCY
) -> dict:
    """The simulated sweep through Ray (see the module docstring)."""
    import httpx

    from flaneur.env.toy import toy_city, toy_episodes
    from flaneur.evaluate.executors_ray import RayExecutor, import_ray, init_local_ray
    from flaneur.evaluate.runner import RunConfig, run_benchmark

    base = toy_episodes()
    per_agent = -(-episodes // agents)
    chosen = [
        replace(base[i % len(base)], id=f"{base[i % len(base)].id}-{i}") for i in range(per_agent)
    ]
    names = tuple(f"caller-{k:02d}" for k in range(agents))
    with fake_server(latency) as (url, server_pid), tempfile.TemporaryDirectory() as tmp:
        server0 = _cpu_s(server_pid)
        cpu0, t0 = tree_cpu_s(), time.perf_counter()
        init_local_ray(os.cpu_count() or 2, log_to_driver=False)
        ray_start_cpu, ray_start_s = tree_cpu_s() - cpu0, time.perf_counter() - t0
        t0 = time.perf_counter()  # the sweep's wall: from here (its workers' start-up in)
        try:
            config = RunConfig(
                agents=names,
                tasks=("toy",),
                llm="fake-model",
                llm_base_url=url,
                cache_mode="off",
                concurrency=LIMIT,
            )
            executor = RayExecutor(workers=workers, model_in_flight=LIMIT)
            summary = run_benchmark(
                config,
                Path(tmp) / "sweep",
                progress="none",
                executor=executor,
                agent_factory=harness_factory,
                loaded={"toy": (toy_city(), chosen)},
            )
            wall = time.perf_counter() - t0
            # the fake server is a child of this process too; the workers count by their
            # own CPU figures (read just before they were stopped)
            cpu = tree_cpu_s(exclude=tuple(executor.worker_pids)) - cpu0
            cpu += sum(summary["executor"]["worker_cpu_s"])
        finally:
            import_ray().shutdown()
        server_cpu = _cpu_s(server_pid) - server0
        seen = httpx.get(url.removesuffix("/v1") + "/_fake/stats", timeout=10).json()
    calls = summary["usage"]["run"]["calls"]
    ideal = calls * latency / LIMIT
    cores = os.cpu_count() or 2
    stats = summary["executor"]
    worker_cpu = sum(stats["worker_cpu_s"]) - sum(stats["worker_startup_cpu_s"])
    run_cpu = cpu - ray_start_cpu - sum(stats["worker_startup_cpu_s"])  # after start-up
    return {
        "sweep_latency_s": latency,
        "sweep_agents": agents,
        "sweep_episodes": summary["episodes"],
        "sweep_calls": calls,
        "sweep_wall_s": round(wall, 2),
        "sweep_ideal_s": round(ideal, 2),
        "sweep_wall_over_ideal": round(wall / ideal, 3),
        "sweep_cpu_s": round(cpu, 2),
        "sweep_start_cpu_s": round(cpu - run_cpu, 2),
        "sweep_cpu_ms_per_call": round(run_cpu / max(calls, 1) * 1000, 3),
        "sweep_worker_cpu_ms_per_call": round(worker_cpu / max(calls, 1) * 1000, 3),
        "sweep_server_cpu_ms_per_call": round(server_cpu / max(calls, 1) * 1000, 3),
        "sweep_cpu_wall_over_ideal": round(max(ideal, run_cpu / cores) / ideal, 3),
        "sweep_peak_in_flight": stats["model_slots"]["peak"],
        "sweep_server_peak_in_flight": seen["peak"],
        "sweep_ray_start_s": round(ray_start_s, 2),
        "sweep_worker_startup_s": stats["startup_s"],
        "sweep_worker_cpu_s": stats["worker_cpu_s"],
        "sweep_driver_rss_mb": round(_rss_mb(), 1),
    }


# ---------------------------------------------------------------- a 1,000,000-node grid
def grid_child(side: int, pack: str) -> None:
    """Load the grid pack in this fresh process and time its queries; prints JSON."""
    import numpy as np

    from flaneur.world.city import City

    loads, cpus = [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        city = City.load(pack)
        loads.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    graph = city.graph
    rng = np.random.default_rng(0)
    lat = rng.uniform(graph.lat.min(), graph.lat.max(), 10_000)
    lng = rng.uniform(graph.lng.min(), graph.lng.max(), 10_000)
    t0 = time.perf_counter()
    graph.nearest_node(lat[:1], lng[:1])
    index_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    graph.nearest_node(lat, lng)
    nearest_us = (time.perf_counter() - t0) / len(lat) * 1e6
    t0 = time.perf_counter()
    hops = graph.hop_distances_to([0])
    hops_s = time.perf_counter() - t0
    assert int(hops.max()) == 2 * (side - 1)
    print(
        json.dumps(
            {
                "nodes": graph.n_nodes,
                "load_s": sorted(loads)[1],
                "load_cpu_s": sorted(cpus)[1],
                "rss_mb": _rss_mb(),
                "index_s": index_s,
                "nearest_us": nearest_us,
                "hops_s": hops_s,
            }
        )
    )


def write_grid_pack(side: int, folder: Path) -> Path:
    """A ``side`` x ``side`` grid of two-way streets about 10 m apart, as a city pack."""
    import numpy as np

    from flaneur.world.city import City
    from flaneur.world.graph import StreetGraph

    n = side * side
    r, c = np.divmod(np.arange(n), side)
    lat = 60.1 + r * 9e-5
    lng = 24.9 + c * 1.8e-4
    right = np.flatnonzero(c < side - 1)
    up = np.flatnonzero(r < side - 1)
    src = np.concatenate([right, right + 1, up, up + side])
    dst = np.concatenate([right + 1, right, up + side, up])
    ids = np.char.add("g", np.arange(n).astype(str))
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst)
    return City(f"grid-{side}x{side}", graph, source="synthetic grid").save(folder)


def grid_figures(side: int) -> dict:
    """The grid pack's figures (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        pack = write_grid_pack(side, Path(tmp) / "grid")
        write_s = time.perf_counter() - t0
        proc = subprocess.run(
            [sys.executable, __file__, "--grid-child", str(side), str(pack)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"grid load failed: {proc.stderr.strip()[-2000:]}")
        got = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "grid_nodes": got["nodes"],
        "grid_write_s": round(write_s, 2),
        "grid_1m_pack_load_s": round(got["load_s"], 3),
        "grid_1m_pack_load_cpu_s": round(got["load_cpu_s"], 3),
        "grid_1m_rss_mb": round(got["rss_mb"], 1),
        "grid_1m_nearest_index_s": round(got["index_s"], 3),
        "grid_1m_nearest_us": round(got["nearest_us"], 2),
        "grid_1m_hops_s": round(got["hops_s"], 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Without --quick the issue's full sizes run (40 OCR episodes x 3 runs, a "
        "10,000-episode sweep); --explorer-full / --sweep-full run one part at full size "
        "with --quick for the rest.",
    )
    ap.add_argument("--json", action="store_true", help="Print one JSON object.")
    ap.add_argument("--quick", action="store_true", help="Small sizes (CI).")
    ap.add_argument(
        "--explorer-full",
        action="store_true",
        help="The explorer at the issue's size: 40 episodes with OCR (even with --quick).",
    )
    ap.add_argument(
        "--sweep-full",
        action="store_true",
        help="The sweep at the issue's size: 10,000 episodes (even with --quick).",
    )
    ap.add_argument("--episodes", type=int, default=None, help="Explorer episodes (40; quick 4).")
    ap.add_argument(
        "--sweep-episodes", type=int, default=None, help="Sweep episodes (10000; quick 600)."
    )
    ap.add_argument(
        "--sweep-agents", type=int, default=AGENTS, help="Agents the sweep's episodes go to."
    )
    ap.add_argument("--sweep-workers", type=int, default=2, help="Ray workers of the sweep.")
    ap.add_argument(
        "--sweep-latency",
        type=float,
        default=LATENCY,
        help="Seconds per fake reply (0.1; longer ones need fewer calls a second, to tell "
        "the executor's own delays from a busy machine's).",
    )
    ap.add_argument("--grid", type=int, default=1000, help="Grid side (nodes = side^2).")
    ap.add_argument(
        "--check",
        action="store_true",
        help="Exit 1 unless the rows are identical, the sweep kept to its limit (as its "
        "workers counted and as the server saw) and the grid fits in 1 GB (correctness, "
        "not wall times).",
    )
    ap.add_argument("--skip", default="", help="Parts to skip: explorer,sweep,grid.")
    ap.add_argument(
        "--landmarks",
        default=None,
        choices=("ocr", "map"),
        help="Explorer perception (ocr, the default: synthetic views read by OCR; map: no views).",
    )
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--grid-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        explorer_child(args.child[0], int(args.child[1]), args.child[2], args.child[3])
        return
    if args.grid_child:
        grid_child(int(args.grid_child[0]), args.grid_child[1])
        return
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise SystemExit("benchmarks/scale.py needs Ray: pip install 'flaneur[ray]'")
    small = args.quick
    episodes = args.episodes or (40 if args.explorer_full or not small else 4)
    landmarks = args.landmarks or "ocr"
    if args.explorer_full and landmarks != "ocr":
        raise SystemExit("--explorer-full runs the explorer with OCR: leave out --landmarks map")
    sweep = args.sweep_episodes or (10_000 if args.sweep_full or not small else 600)
    skip = set(filter(None, args.skip.split(",")))
    out: dict = {}
    if "sweep" not in skip:  # first: its driver memory is this process's peak so far
        out.update(sweep_figures(sweep, args.sweep_agents, args.sweep_workers, args.sweep_latency))
    if "grid" not in skip:
        out.update(grid_figures(args.grid))
    if "explorer" not in skip:
        out.update(explorer_figures(episodes, landmarks))
    print(json.dumps(out, indent=None if args.json else 2))
    if args.check:
        failed = [
            name
            for name, ok in (
                ("ray_rows_identical", out.get("ray_rows_identical", True)),
                ("sweep_peak_in_flight", out.get("sweep_peak_in_flight", 0) <= LIMIT),
                (
                    "sweep_server_peak_in_flight",
                    out.get("sweep_server_peak_in_flight", 0) <= LIMIT,
                ),
                ("sweep_calls", out.get("sweep_calls", CALLS) > 0),
                ("grid_1m_rss_mb", out.get("grid_1m_rss_mb", 0) <= 1024),
            )
            if not ok
        ]
        if failed:
            raise SystemExit(f"scale check failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()

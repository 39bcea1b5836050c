"""Benchmark the evaluation runner: cheap agents at the speed of the environment, a slow
model server, and resume after a kill.

Usage::

    python benchmarks/runner.py --json [--quick] [--data-dir ../shared/data]

* ``concurrency_ratio``: 100 episodes whose agent asks a fake OpenAI-compatible server (on
  127.0.0.1, 100 ms per reply) for every action, at concurrency 16; wall time over the ideal
  ``calls x 0.1 s / 16``.
* ``resume_identical``: the same run in a child process, killed with SIGKILL halfway and
  resumed with the same response cache, gives one row per episode and the same metrics and
  paths as an uninterrupted run.
* ``baselines_1600_s`` (with the map2seq dev files under ``--data-dir`` or
  ``$FLANEUR_DATA``): random and forward on the 1,600 map2seq dev episodes (3,200 runs),
  wall time of loading the two task sets (city pack cached) and running them, median of the
  repeats; ``baselines_1600_cpu_s`` is the process's CPU time over the same span (the wall
  time on an idle machine), ``load_s`` the loading part. ``runner_step_overhead_ms`` is the
  runner's own time per agent step: the run's wall time minus the time spent inside the
  agents' ``act``, over the number of steps (environment, scoring, writing rows). Without
  the data these fields are ``null``.

The agent of the concurrency test is a measurement harness, not one of flaneur's agents: it
sends the instruction and the valid actions and maps the reply (a turns action word) to a
slot.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ACTIONS = ("stop", "forward", "left", "right", "turn_around")

CHILD = """
import sys
sys.path.insert(0, {bench!r})
from runner import run_once
run_once(sys.argv[1], sys.argv[2], resume=sys.argv[3] == "resume", cache=sys.argv[4])
"""


def policy(request) -> str:
    """Deterministic reply from the prompt text: the same prompt always gets the same action."""
    digest = hashlib.sha256(request.last_user_text.encode()).digest()
    return ("FORWARD", "FORWARD", "LEFT", "RIGHT", "STOP")[digest[0] % 5]


@contextlib.contextmanager
def fake_server(*, latency: float):
    """``flaneur fake-llm`` in its own process (not competing with the runner for the GIL)."""
    bench = str(Path(__file__).resolve().parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([bench, *sys.path])}
    cmd = [
        sys.executable,
        "-c",
        "from flaneur.cli import main; main()",
        "fake-llm",
        "--port",
        "0",
        "--policy",
        "runner:policy",
        "--latency",
        str(latency),
        "--json",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    try:
        announce = json.loads(proc.stdout.readline())
        yield announce["base_url"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:  # a loaded machine; the figures are already taken
            proc.kill()
            proc.wait()


def make_agent_class():
    """A model-driven agent (defined lazily so that the child process can import it)."""
    from flaneur.agents import Action, Agent, step_record
    from flaneur.models import ModelConfig
    from flaneur.models.scoring import parse_literal

    class ModelDriven(Agent):
        name = "model-driven"
        model = None

        def reset(self, episode, env_info):
            super().reset(episode, env_info)
            self.steps = 0

        async def act(self, observation):
            self.steps += 1
            mask = observation["action_mask"]
            valid = [a for a, ok in zip(ACTIONS, mask, strict=False) if ok]
            text = (
                f"{observation['instruction']}\nstep {self.steps} at node {observation['node']} "
                f"heading {float(observation['heading'][0]):.0f}\nvalid: {', '.join(valid)}"
            )
            completion = await ModelDriven.model.complete([{"role": "user", "content": text}])
            word = parse_literal(completion.text, tuple(a.upper() for a in ACTIONS))
            slot = ACTIONS.index(word.lower()) if word else 1
            if self.steps >= 8:
                slot = 0
            return Action(slot, ACTIONS[slot], step_record(raw_output=completion.text))

    return ModelDriven, ModelConfig


def run_once(
    base_url: str, out: str, *, resume: bool, cache: str, concurrency: int = 16, copies: int = 20
) -> dict:
    """One runner invocation on ``copies x 5`` toy episodes with the model-driven agent."""
    from flaneur.env.toy import toy_city, toy_episodes
    from flaneur.evaluate.runner import RunConfig, run_benchmark

    agent_cls, model_config = make_agent_class()
    mode = "off" if cache == "off" else "use"
    agent_cls.model = model_config(
        model="fake-model",
        base_url=base_url,
        cache_mode=mode,
        cache_path=None if cache == "off" else cache,
        max_in_flight=concurrency,
    ).build()
    episodes = [replace(e, id=f"{e.id}-{k}") for k in range(copies) for e in toy_episodes()]
    config = RunConfig(agents=("model-driven",), tasks=("toy",), concurrency=concurrency)
    return run_benchmark(
        config,
        out,
        resume=resume,
        progress="none",
        agent_factory=lambda name: agent_cls(),
        loaded={"toy": (toy_city(), episodes)},
    )


def rows_by_key(folder: Path) -> dict:
    from flaneur.evaluate.runlog import read_rows

    rows, _ = read_rows(folder / "episodes.jsonl")
    return {r["episode_id"]: r for r in rows}


BASELINE_TASKS = ("map2seq-unseen-dev-v1", "map2seq-seen-dev-v1")


def timed_factory(config, spent: list[float]):
    """The runner's agent factory, with each agent's ``act`` timed into ``spent``
    (``[seconds, steps]``)."""
    try:
        from flaneur.evaluate.runner import default_agent_factory

        make = default_agent_factory(config)
    except ImportError:  # a runner from before the factory existed (for before/after figures)
        from flaneur.agents import make_agent

        def make(name):
            return make_agent(name, **config.options_for(name))

    def factory(name):
        agent = make(name)
        act = agent.act

        async def timed(observation):
            start = time.perf_counter()
            action = await act(observation)
            spent[0] += time.perf_counter() - start
            spent[1] += 1
            return action

        agent.act = timed
        return agent

    return factory


BASELINE_CHILD = """
import json, sys
sys.path.insert(0, {bench!r})
from runner import baselines_once
print(json.dumps(baselines_once(sys.argv[1], None if sys.argv[2] == "all" else int(sys.argv[2]))))
"""


def baselines_once(data_dir: str, limit: int | None) -> dict:
    """One run of random + forward on the map2seq dev sets in this (fresh) process."""
    from flaneur.evaluate.runner import RunConfig, run_benchmark
    from flaneur.tasks.registry import load_task

    config = RunConfig(
        agents=("random", "forward"), tasks=BASELINE_TASKS, limit=limit, data_dir=data_dir
    )
    spent = [0.0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        loaded = {task: load_task(task, data_dir) for task in BASELINE_TASKS}
        load = time.perf_counter() - wall0
        run0 = time.perf_counter()
        factory = timed_factory(config, spent)
        summary = run_benchmark(
            config, Path(tmp) / "run", progress="none", agent_factory=factory, loaded=loaded
        )
        run_wall = time.perf_counter() - run0
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    overhead_ms = (run_wall - spent[0]) / max(1, spent[1]) * 1000
    return {
        "wall": wall,
        "cpu": cpu,
        "load": load,
        "episodes": summary["episodes"],
        "steps": spent[1],
        "overhead_ms": overhead_ms,
    }


def baselines(data_dir: str, repeats: int, limit: int | None = None) -> dict:
    """random + forward on the map2seq dev sets, each repeat in a fresh process (so nothing
    is warm but the city pack on disk, as for ``flaneur run``); medians."""
    from flaneur.tasks.registry import load_task

    for task in BASELINE_TASKS:  # build the city pack outside the timing (a first use)
        load_task(task, data_dir)
    script = BASELINE_CHILD.format(bench=str(Path(__file__).resolve().parent))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", script, data_dir, str(limit or "all")],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))

    def median(key: str) -> float:
        return sorted(r[key] for r in runs)[len(runs) // 2]

    episodes = runs[0]["episodes"]
    return {
        "baselines_1600_s": round(median("wall"), 3),
        "baselines_1600_cpu_s": round(median("cpu"), 3),
        "baselines_episodes": episodes,
        "baselines_steps": runs[0]["steps"],
        "baselines_per_episode_ms": round(median("wall") / max(1, episodes) * 1000, 3),
        "load_s": round(median("load"), 3),
        "runner_step_overhead_ms": round(median("overhead_ms"), 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer repeats (CI)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of the concurrency test (median)"
    )
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("FLANEUR_DATA"),
        help="folder holding map2seq/ and touchdown/ (default $FLANEUR_DATA); without it the "
        "baselines figures are null",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="baselines on the first N episodes of each map2seq set only (for slow runners)",
    )
    args = parser.parse_args()
    result: dict = {"latency_s": 0.1, "concurrency": 16, "episodes": 100, "server": "subprocess"}
    repeats = 1 if args.quick else args.repeats
    data = Path(args.data_dir) if args.data_dir else None
    if data is not None and all(
        (data / "map2seq" / s / "dev.json").is_file() for s in ("seen", "unseen")
    ):
        result.update(baselines(str(data), repeats, args.limit))
    else:
        result.update(
            baselines_1600_s=None, baselines_1600_cpu_s=None, runner_step_overhead_ms=None
        )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ratios, walls = [], []
        with fake_server(latency=0.1) as base_url:
            # warm-up: imports and the HTTP client's first connections are not the runner
            run_once(base_url, str(tmp / "warm"), resume=False, cache="off", copies=2)
            for i in range(repeats):
                start = time.perf_counter()
                run_once(base_url, str(tmp / f"conc{i}"), resume=False, cache="off")
                wall = time.perf_counter() - start
                calls = sum(len(r["actions"]) for r in rows_by_key(tmp / f"conc{i}").values())
                ideal = calls * 0.1 / 16
                walls.append(wall)
                ratios.append(wall / ideal)
        result.update(
            calls=calls,
            concurrency_wall_s=sorted(walls)[len(walls) // 2],
            concurrency_ideal_s=ideal,
            concurrency_ratio=sorted(ratios)[len(ratios) // 2],
        )

        # resume after SIGKILL with the same response cache
        with fake_server(latency=0.05) as base_url:
            cache = str(tmp / "llm.sqlite")
            run_once(base_url, str(tmp / "full"), resume=False, cache=cache)
            script = tmp / "child.py"
            script.write_text(CHILD.format(bench=str(Path(__file__).resolve().parent)))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
            killed = tmp / "killed"
            proc = subprocess.Popen(
                [sys.executable, str(script), base_url, str(killed), "new", cache + ".2"], env=env
            )
            log = killed / "episodes.jsonl"
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                if log.exists() and len(log.read_bytes().splitlines()) >= 50:
                    break
                time.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            before = len(rows_by_key(killed))
            subprocess.run(
                [sys.executable, str(script), base_url, str(killed), "resume", cache + ".2"],
                env=env,
                check=True,
            )
        full, resumed = rows_by_key(tmp / "full"), rows_by_key(killed)
        lines = len((killed / "episodes.jsonl").read_bytes().splitlines())
        same = full.keys() == resumed.keys() and all(
            full[k]["metrics"] == resumed[k]["metrics"] and full[k]["path"] == resumed[k]["path"]
            for k in full
        )
        result.update(
            killed_after_rows=before,
            rows_after_resume=lines,
            resume_identical=bool(same and lines == len(full)),
        )
    result["goals_met"] = {
        "concurrency_ratio<=1.3": result["concurrency_ratio"] <= 1.3,
        "resume_identical": result["resume_identical"],
    }
    if result["baselines_1600_s"] is not None:
        result["goals_met"]["baselines_1600_s<=10"] = result["baselines_1600_s"] <= 10
        result["goals_met"]["baselines_1600_cpu_s<=10"] = result["baselines_1600_cpu_s"] <= 10
        result["goals_met"]["runner_step_overhead_ms<=1"] = result["runner_step_overhead_ms"] <= 1
    print(json.dumps(result) if args.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

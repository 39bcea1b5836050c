"""The Ray executor: the same rows as the local executor, retried episodes after a worker
dies, one model limit across workers, and a clear error without Ray."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from flaneur.env.toy import toy_city, toy_episodes
from flaneur.evaluate.executors_ray import import_ray
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark

if importlib.util.find_spec("ray") is None:
    pytest.skip("Ray is not installed (pip install 'flaneur[ray]')", allow_module_level=True)
ray = import_ray(local=True)  # before anything else imports it (its authentication mode)

VOLATILE = ("started_at", "duration_s")


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    """One small local Ray instance for the module (start-up takes seconds)."""
    from flaneur.evaluate.executors_ray import init_local_ray

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # test agents go to workers
    init_local_ray(2, object_store_memory=80 * 1024**2, log_to_driver=False)
    yield
    ray.shutdown()


def episodes(copies: int = 4):
    return [replace(e, id=f"{e.id}-{k}") for k in range(copies) for e in toy_episodes()]


def content(rows):
    """Rows keyed by (task, agent, episode), without their timing fields."""
    return {
        (r["task"], r["agent"], r["episode_id"]): {k: v for k, v in r.items() if k not in VOLATILE}
        for r in rows
    }


def run(out, executor=None, *, agents=("random", "forward", "oracle"), resume=False):
    from flaneur.evaluate.executors_ray import RayExecutor

    config = RunConfig(agents=agents, tasks=("toy",), seed=3)
    ex = RayExecutor(workers=2) if executor == "ray" else executor
    summary = run_benchmark(
        config,
        out,
        resume=resume,
        progress="none",
        executor=ex,
        loaded={"toy": (toy_city(), episodes())},
    )
    return summary, read_rows(out / "episodes.jsonl")[0]


def test_ray_rows_and_summary_equal_the_local_executor(tmp_path):
    local, local_rows = run(tmp_path / "local")
    remote, remote_rows = run(tmp_path / "ray", "ray")
    assert len(remote_rows) == len(local_rows) == 60
    assert content(remote_rows) == content(local_rows)
    stats = remote["executor"]
    assert len(stats.pop("worker_cpu_s")) == 2 and stats.pop("startup_s") > 0
    assert len(stats.pop("worker_startup_cpu_s")) == 2
    assert stats == {
        "kind": "ray",
        "address": "local",
        "workers": 2,
        "retried": 0,
        "worker_deaths": 0,
        "model_slots": None,
    }
    for key in ("episodes", "results", "reportable", "errors"):
        assert remote.get(key) == local.get(key), key


def test_resume_with_ray_finishes_a_local_run(tmp_path):
    out = tmp_path / "run"
    run(out, agents=("random",))
    summary, rows = run(out, "ray", agents=("random", "forward"), resume=True)
    assert summary["episodes"] == 40 and len(rows) == 40
    _, local_rows = run(tmp_path / "local", agents=("random", "forward"))
    assert content(rows) == content(local_rows)


class DiesOnce:
    """An agent whose worker process dies on the first episode ending in ``-1`` that any
    worker starts (a marker file, created atomically, records it), then behaves like
    ``forward``."""

    def __init__(self, marker):
        self.marker = marker

    def __call__(self, name):
        from flaneur.agents import ForwardAgent

        marker = self.marker

        class Dying(ForwardAgent):
            name = "forward"

            def reset(self, episode, env_info):
                if episode.id.endswith("-1"):  # several episodes do, maybe on two workers
                    try:  # created atomically: exactly one worker wins and dies
                        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                    except FileExistsError:
                        pass
                    else:
                        os._exit(1)  # the whole worker process goes, as if killed
                return super().reset(episode, env_info)

        return Dying()


def test_a_dead_worker_loses_no_row_and_its_episodes_are_retried(tmp_path):
    from flaneur.evaluate.executors_ray import RayExecutor

    config = RunConfig(agents=("forward",), tasks=("toy",), seed=3, concurrency=2)
    loaded = {"toy": (toy_city(), episodes())}
    executor = RayExecutor(workers=2)
    summary = run_benchmark(
        config,
        tmp_path / "ray",
        progress="none",
        executor=executor,
        agent_factory=DiesOnce(str(tmp_path / "died")),
        loaded=loaded,
    )
    rows = read_rows(tmp_path / "ray" / "episodes.jsonl")[0]
    assert os.path.exists(tmp_path / "died")
    assert summary["executor"]["worker_deaths"] == 1
    assert 1 <= summary["executor"]["retried"] <= 3  # the dead worker held 2 running + 1 ready
    _, local_rows = run(tmp_path / "local", agents=("forward",))
    assert content(rows) == content(local_rows)


def test_model_calls_share_one_limit_across_workers(tmp_path):
    from flaneur.agents import Action, Agent, step_record
    from flaneur.evaluate.executors_ray import RayExecutor
    from flaneur.testing import FakeOpenAIServer

    class Asker(Agent):
        name = "asker"

        async def act(self, observation):
            completion = await self.env_info.model.complete(
                [{"role": "user", "content": observation["instruction"]}]
            )
            return Action(0, "stop", step_record(raw_output=completion.text))

    with FakeOpenAIServer("constant:STOP", latency=0.05) as server:
        config = RunConfig(
            agents=("asker",),
            tasks=("toy",),
            llm="fake-model",
            llm_base_url=server.base_url,
            cache_mode="off",
            concurrency=8,
        )
        executor = RayExecutor(workers=2, model_in_flight=3)
        summary = run_benchmark(
            config,
            tmp_path / "run",
            progress="none",
            executor=executor,
            agent_factory=lambda name: Asker(),
            loaded={"toy": (toy_city(), episodes(4))},
        )
        assert server.chat_count == 20
        assert server.peak_in_flight <= 3  # what the server saw: never above the limit
    assert summary["usage"]["run"]["calls"] == 20
    slots = summary["executor"]["model_slots"]
    assert slots["limit"] == 3 and slots["granted"] == 20 and 2 <= slots["peak"] <= 3


def test_executor_ray_without_ray_is_one_line(tmp_path):
    hide = tmp_path / "hide"
    (hide / "ray").mkdir(parents=True)
    (hide / "ray" / "__init__.py").write_text("raise ImportError('no ray here')\n")
    flaneur = os.path.join(os.path.dirname(sys.executable), "flaneur")
    env = {**os.environ, "PYTHONPATH": str(hide)}
    proc = subprocess.run(
        [
            flaneur,
            "run",
            "--agent",
            "random",
            "--tasks",
            "helsinki-needs-v1",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "out"),
            "--executor",
            "ray",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "pip install 'flaneur[ray]'" in lines[0], proc.stderr
    assert not (tmp_path / "out" / "episodes.jsonl").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--executor", "dask"], "--executor must be local or ray"),
        (["--workers", "2"], "--ray-address and --workers need --executor ray"),
    ],
)
def test_executor_options_misused_are_one_line(tmp_path, args, message):
    flaneur = os.path.join(os.path.dirname(sys.executable), "flaneur")
    proc = subprocess.run(
        [
            flaneur,
            "run",
            "--agent",
            "random",
            "--tasks",
            "helsinki-needs-v1",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "out"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and message in lines[0], proc.stderr


def test_batch_size_is_a_quarter_of_a_workers_episodes_and_one_when_cpu_bound():
    from flaneur.evaluate.executors_ray import batch_size

    assert [batch_size(n) for n in (1, 2, 3, 4, 8, 64)] == [1, 1, 1, 1, 2, 16]


def test_a_local_ray_start_prints_no_token_notice(tmp_path):
    code = (
        "from flaneur.evaluate.executors_ray import init_local_ray\n"
        "init_local_ray(1, object_store_memory=80 * 1024**2, log_to_driver=False)\n"
        "import ray\n"
        "ray.shutdown()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Token authentication" not in proc.stderr + proc.stdout


def test_a_worker_runs_its_ocr_on_the_cpus_ray_gave_it():
    from flaneur.evaluate.ray_worker import pin_perception_threads

    def pinned(preset: str | None) -> tuple[int, str]:
        os.environ.pop("FLANEUR_OCR_THREADS", None)
        if preset is not None:
            os.environ["FLANEUR_OCR_THREADS"] = preset
        return pin_perception_threads(), os.environ["FLANEUR_OCR_THREADS"]

    one = ray.remote(num_cpus=1)(pinned)
    two = ray.remote(num_cpus=2)(pinned)
    assert ray.get(one.remote(None)) == (1, "1")  # not one ONNX thread per core
    assert ray.get(two.remote(None)) == (2, "2")
    assert ray.get(one.remote("3")) == (3, "3")  # the node's own setting is kept

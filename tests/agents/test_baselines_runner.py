"""Baseline agents, episodes through the runner and the ``flaneur run`` / ``validate gold`` commands."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from flaneur.agents import AGENTS, Action, Agent, ForwardAgent, RandomAgent, make_agent
from flaneur.cli import main
from flaneur.env import NavigationEnv, toy_city, toy_episodes
from flaneur.errors import DataError, FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.evaluate.gold import replay_gold
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.registry import TaskSpec, register_task

TOY_TASK = "toy-baselines-v1"


@pytest.fixture(scope="module", autouse=True)
def toy_task():
    register_task(
        TaskSpec(id=TOY_TASK, description="toy", build=lambda _: (toy_city(), toy_episodes())),
        replace=True,
    )


def run(env, agent, episode, seed=0, **info):
    return asyncio.run(run_episode(env, agent, episode, seed=seed, task_id="toy", **info))


def test_agent_registry():
    assert set(AGENTS) >= {"random", "forward", "oracle"}
    assert isinstance(make_agent("forward"), ForwardAgent)
    with pytest.raises(FlaneurError, match="unknown agent"):
        make_agent("genius")


@pytest.mark.parametrize("scheme", ["turns", "headings", "nodes"])
def test_forward_agent_walks_straight(city, scheme):
    env = NavigationEnv(city, toy_episodes(), scheme=scheme)
    row = run(env, ForwardAgent(), toy_episodes()[0])  # W1 facing east, dead end D ahead
    assert row["path"] == ["W1", "X4", "E1", "T3", "E3", "D"]
    assert row["termination"] == "stopped" and row["success"]


def test_forward_agent_stops_at_the_average_reference_length(city):
    env = NavigationEnv(city, toy_episodes())
    row = run(env, ForwardAgent(), toy_episodes()[0], avg_reference_length=3)
    assert row["path"] == ["W1", "X4", "E1"] and row["actions"][-1] == "stop"


@pytest.mark.parametrize("scheme", ["turns", "headings", "nodes"])
def test_random_agent_is_deterministic_per_seed(city, scheme):
    env = NavigationEnv(city, toy_episodes(), scheme=scheme)
    ep = toy_episodes()[2]
    a = run(env, RandomAgent(), ep, seed=1)
    b = run(env, RandomAgent(), ep, seed=1)
    assert a["trajectory"] == b["trajectory"] and a["actions"] == b["actions"]
    others = {tuple(run(env, RandomAgent(), ep, seed=s)["actions"]) for s in range(2, 12)}
    assert len(others) > 1
    assert not a["invalid_actions"]


@pytest.mark.parametrize("scheme", ["turns", "headings", "nodes"])
def test_oracle_agent_succeeds(city, scheme):
    env = NavigationEnv(city, toy_episodes(), scheme=scheme)
    for ep in toy_episodes():
        row = run(env, make_agent("oracle"), ep)
        assert row["success"] and row["termination"] == "stopped", (scheme, ep.id)
        assert row["records"][0]["thoughts"] == "teacher"


class Broken(Agent):
    name = "broken"

    async def act(self, observation):
        if observation["step"] >= 1:
            raise RuntimeError("model exploded")
        return Action(1, "forward")


def test_runner_records_errors_and_goes_on(city, tmp_path):
    bad = dataclasses.replace(toy_episodes()[0], id="bad", start_node="nowhere")
    env = NavigationEnv(city, toy_episodes())
    row = run(env, make_agent("forward"), bad)
    assert row["termination"] == "task_error" and "nowhere" in row["error"]
    row = run(env, Broken(), toy_episodes()[0])
    assert row["termination"] == "agent_error" and "model exploded" in row["error"]
    summary = run_benchmark(
        RunConfig(agents=("forward",), tasks=("toy",)),
        tmp_path / "out",
        progress="none",
        loaded={"toy": (city, [bad, *toy_episodes()])},
    )
    assert summary["by_termination"] == {"task_error": 1, "stopped": 5}
    rows = [json.loads(x) for x in (tmp_path / "out/episodes.jsonl").read_text().splitlines()]
    assert "metrics" not in rows[0] and rows[1]["metrics"]["tc"] is True


def _without_timing(text):
    rows = [json.loads(x) for x in text.splitlines()]
    return [{k: v for k, v in r.items() if k not in ("started_at", "duration_s")} for r in rows]


def test_runner_files_metrics_and_determinism(city, tmp_path):
    config = RunConfig(agents=("random", "oracle"), tasks=(TOY_TASK,), seed=5)
    kw = {"loaded": {TOY_TASK: (city, toy_episodes())}, "progress": "none"}
    first = run_benchmark(config, tmp_path / "a", **kw)
    run_benchmark(config, tmp_path / "b", **kw)
    a = (tmp_path / "a/episodes.jsonl").read_text()
    rows = _without_timing(a)
    assert rows == _without_timing((tmp_path / "b/episodes.jsonl").read_text())
    assert len(rows) == 10 and {r["agent"] for r in rows} == {"random", "oracle"}
    keys = {
        "task",
        "episode_id",
        "agent",
        "scheme",
        "termination",
        "trajectory",
        "actions",
        "metrics",
        "path",
        "invalid_actions",
        "records",
    }
    assert keys <= set(rows[0])
    oracle = next(r for r in first["runs"] if r["agent"] == "oracle")
    overall = oracle["summary"]["overall"]["metrics"]
    assert overall["tc"]["mean"] == 1.0 and overall["kpa"]["mean"] == 1.0
    assert "category" in oracle["summary"]["by"]
    assert json.loads((tmp_path / "a/summary.json").read_text())["episodes"] == 10


def test_replay_gold_all_schemes(city):
    for scheme in ("turns", "headings", "nodes"):
        result = replay_gold(city, toy_episodes()[:4], scheme)
        assert result["tc"] == 1.0 and result["exact_paths"] == 4 and not result["mismatches"]
    # a reference path that skips a node cannot be followed: reported, not a crash
    broken = dataclasses.replace(toy_episodes()[0], id="bad", reference_path=("W1", "E1"))
    result = replay_gold(city, [broken], "turns")
    assert result["mismatches"] == ["bad"] and result["by_termination"] == {"teacher_error": 1}


def test_cli_run_and_validate_gold(tmp_path, capsys):
    out = tmp_path / "out"
    args = [
        "run",
        "--agent",
        "forward,oracle",
        "--tasks",
        TOY_TASK,
        "--data-dir",
        str(tmp_path),
        "--out",
        str(out),
        "--json",
        "--limit",
        "3",
    ]
    main(args)
    summary = json.loads(capsys.readouterr().out)
    assert summary["episodes"] == 6 and (out / "episodes.jsonl").is_file()
    main(["validate", "gold", "--tasks", TOY_TASK, "--data-dir", str(tmp_path), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] and len(result["results"]) == 3
    assert {(r["with_reference"], r["exact_paths"], r["tc"]) for r in result["results"]} == {
        (4, 4, 1.0)
    }


def test_cli_bad_input_is_a_one_line_error(tmp_path, capsys):
    def broken(_):
        raise DataError("bad row", path=tmp_path / "dev.json", line=3)

    register_task(TaskSpec(id="toy-broken-v1", description="", build=broken), replace=True)
    for args in (
        ["run", "--agent", "forward", "--tasks", "toy-broken-v1"],
        ["run", "--agent", "nobody", "--tasks", TOY_TASK],
        ["run", "--agent", "forward", "--tasks", TOY_TASK, "--scheme", "teleport"],
        ["validate", "gold", "--tasks", TOY_TASK, "--schemes", "teleport"],
    ):
        with pytest.raises(SystemExit) as exit_:
            main(
                [
                    *args,
                    "--data-dir",
                    str(tmp_path),
                    *(["--out", str(tmp_path / "o")] if args[0] == "run" else []),
                ]
            )
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and len(err.strip().splitlines()) == 1

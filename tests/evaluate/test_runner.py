"""The evaluation runner: concurrency, append-only log, resume after a kill, summary."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from flaneur.env.toy import toy_city, toy_episodes
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import average_reference_length
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark, select_episodes

SCRIPT = """
import asyncio, sys
from dataclasses import replace
from flaneur.agents import RandomAgent, register_agent
from flaneur.env.toy import toy_city, toy_episodes
from flaneur.evaluate.runner import RunConfig, run_benchmark

class SlowRandom(RandomAgent):
    name = "slow-random"
    async def act(self, observation):
        await asyncio.sleep(float(sys.argv[3]))
        return await super().act(observation)

register_agent("slow-random", SlowRandom)
episodes = [replace(e, id=f"{e.id}-{k}") for k in range(8) for e in toy_episodes()]
config = RunConfig(agents=("slow-random",), tasks=("toy",), concurrency=2, seed=7)
run_benchmark(config, sys.argv[1], resume=sys.argv[2] == "resume", progress="none",
              loaded={"toy": (toy_city(), episodes)})
"""


def many_episodes(copies: int = 4):
    return [replace(e, id=f"{e.id}-{k}") for k in range(copies) for e in toy_episodes()]


def run(out, *, agents=("random", "forward", "oracle"), copies=4, resume=False, **options):
    config = RunConfig(agents=agents, tasks=("toy",), **options)
    return run_benchmark(
        config,
        out,
        resume=resume,
        progress="none",
        loaded={"toy": (toy_city(), many_episodes(copies))},
    )


def by_key(rows):
    return {(r["task"], r["agent"], r["episode_id"]): r for r in rows}


def test_rows_summary_and_oracle(tmp_path):
    summary = run(tmp_path / "run", concurrency=4)
    rows, _ = read_rows(tmp_path / "run" / "episodes.jsonl")
    assert len(rows) == 3 * 20 and len(by_key(rows)) == 60
    assert summary["episodes"] == 60 and summary["reportable"] is True
    assert summary["by_termination"] == {"stopped": 60}
    oracle = next(r for r in summary["runs"] if r["agent"] == "oracle")
    assert oracle["summary"]["overall"]["metrics"]["tc"]["mean"] == 1.0
    row = rows[0]
    for key in (
        "config_hash",
        "trajectory",
        "actions",
        "metrics",
        "termination",
        "usage",
        "records",
    ):
        assert key in row
    on_disk = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert on_disk["versions"]["flaneur"] and "git_commit" in on_disk


def test_same_results_at_any_concurrency(tmp_path):
    run(tmp_path / "a", concurrency=1, seed=3)
    run(tmp_path / "b", concurrency=8, seed=3)
    a = by_key(read_rows(tmp_path / "a" / "episodes.jsonl")[0])
    b = by_key(read_rows(tmp_path / "b" / "episodes.jsonl")[0])
    assert a.keys() == b.keys()
    for key in a:
        assert a[key]["metrics"] == b[key]["metrics"] and a[key]["path"] == b[key]["path"]


def test_existing_run_is_not_overwritten(tmp_path):
    run(tmp_path / "run", agents=("forward",))
    before = (tmp_path / "run" / "episodes.jsonl").read_bytes()
    with pytest.raises(FlaneurError, match="pass --resume"):
        run(tmp_path / "run", agents=("forward",))
    assert (tmp_path / "run" / "episodes.jsonl").read_bytes() == before
    with pytest.raises(FlaneurError, match="another configuration"):
        run(tmp_path / "run", agents=("forward",), resume=True, seed=99)


def test_resume_reruns_errors_and_drops_a_cut_line(tmp_path):
    out = tmp_path / "run"
    run(out, agents=("forward",))
    path = out / "episodes.jsonl"
    rows, _ = read_rows(path)
    rows[0]["termination"] = "model_error"
    text = "".join(json.dumps(r) + "\n" for r in rows) + '{"task": "toy", "agent": "forw'
    path.write_text(text)
    summary = run(out, agents=("forward",), resume=True)
    again, size = read_rows(path)
    assert size == path.stat().st_size  # the cut line is gone
    assert len(again) == 20 and len(by_key(again)) == 20
    assert summary["ran_this_invocation"] == 1 and summary["errored_rows_rerun"] == 1
    assert all(r["termination"] == "stopped" for r in again)


def test_limit_and_ids_are_not_reportable(tmp_path):
    summary = run(tmp_path / "a", agents=("forward",), limit=3)
    assert summary["episodes"] == 3 and summary["reportable"] is False
    ids = ("toy-fork-1", "toy-east-0")
    assert [e.id for e in select_episodes(many_episodes(), limit=None, ids=ids)] == list(ids)
    with pytest.raises(FlaneurError, match="unknown episode id"):
        select_episodes(many_episodes(), limit=None, ids=("nope",))


def test_selected_episodes_run_exactly_as_in_the_full_run(tmp_path):
    # agents get the task set's average reference length over the whole set (5.0 here),
    # not over the selection (6.0 for toy-east alone): rows of a --ids run equal the full run's
    assert average_reference_length(many_episodes()) == 5.0
    assert average_reference_length(toy_episodes()[-1:]) is None  # toy-goal has no path
    run(tmp_path / "full", agents=("forward", "random"))
    run(tmp_path / "one", agents=("forward", "random"), ids=("toy-east-0",))
    full = by_key(read_rows(tmp_path / "full" / "episodes.jsonl")[0])
    for row in read_rows(tmp_path / "one" / "episodes.jsonl")[0]:
        same = full[(row["task"], row["agent"], row["episode_id"])]
        assert (row["path"], row["actions"]) == (same["path"], same["actions"])


def test_unknown_agent_fails_before_writing(tmp_path):
    with pytest.raises(FlaneurError, match="unknown agent"):
        run(tmp_path / "run", agents=("nobody",))
    assert not (tmp_path / "run" / "episodes.jsonl").exists()


def test_sigkill_halfway_then_resume_matches_an_uninterrupted_run(tmp_path):
    script = tmp_path / "run_script.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run(
        [sys.executable, str(script), str(tmp_path / "full"), "new", "0"], env=env, check=True
    )
    killed = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, str(script), str(killed), "new", "0.02"], env=env)
    log = killed / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_bytes().splitlines()) >= 8:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = len(read_rows(log)[0])
    assert 8 <= done_before < 40
    subprocess.run([sys.executable, str(script), str(killed), "resume", "0"], env=env, check=True)
    resumed = read_rows(log)[0]
    full = by_key(read_rows(tmp_path / "full" / "episodes.jsonl")[0])
    assert len(resumed) == 40 and by_key(resumed).keys() == full.keys()
    for key, row in by_key(resumed).items():
        assert row["metrics"] == full[key]["metrics"] and row["path"] == full[key]["path"]
    summary = json.loads((killed / "summary.json").read_text())
    assert summary["episodes"] == 40 and summary["ran_this_invocation"] == 40 - done_before


def test_budget_exhausted_stops_cleanly_and_resume_finishes(tmp_path):
    from flaneur.agents import ForwardAgent
    from flaneur.models.errors import BudgetExceeded

    calls = {"n": 0}

    class Spender(ForwardAgent):
        name = "spender"

        async def act(self, observation):
            calls["n"] += 1
            if calls["n"] > 12:
                raise BudgetExceeded(1200, 1000)
            return await super().act(observation)

    def factory(name):
        return Spender() if name == "spender" else ForwardAgent()

    config = RunConfig(agents=("spender",), tasks=("toy",), concurrency=1)
    loaded = {"toy": (toy_city(), many_episodes())}
    out = tmp_path / "run"
    summary = run_benchmark(config, out, progress="none", agent_factory=factory, loaded=loaded)
    rows = read_rows(out / "episodes.jsonl")[0]
    assert 0 < len(rows) < 20 and "1000" in summary["stopped_early"]
    assert all(r["termination"] == "stopped" for r in rows)  # no half-run episode is written
    calls["n"] = -1000
    summary = run_benchmark(
        config, out, resume=True, progress="none", agent_factory=factory, loaded=loaded
    )
    assert summary["episodes"] == 20 and summary["stopped_early"] is None


def test_llm_agents_get_the_run_model_and_usage_is_recorded(tmp_path):
    from flaneur.agents import Action, Agent, step_record
    from flaneur.testing import FakeOpenAIServer

    class Asker(Agent):
        name = "asker"

        async def act(self, observation):
            model = self.env_info.model
            completion = await model.complete(
                [{"role": "user", "content": observation["instruction"]}]
            )
            return Action(0, "stop", step_record(raw_output=completion.text))

    with FakeOpenAIServer("constant:STOP") as server:
        config = RunConfig(
            agents=("asker",),
            tasks=("toy",),
            llm="fake-model",
            llm_base_url=server.base_url,
            cache_mode="off",
        )
        summary = run_benchmark(
            config,
            tmp_path / "run",
            progress="none",
            agent_factory=lambda name: Asker(),
            loaded={"toy": (toy_city(), many_episodes(1))},
        )
        assert server.chat_count == 5
    rows = read_rows(tmp_path / "run" / "episodes.jsonl")[0]
    assert all(r["usage"]["calls"] == 1 and r["usage"]["total_tokens"] > 0 for r in rows)
    assert all(r["records"][0]["raw_output"] == "STOP" for r in rows)
    assert summary["usage"]["run"]["calls"] == 5 and summary["usage"]["token_budget"] is None

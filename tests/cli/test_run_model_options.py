"""``flaneur run`` model options (--llm-timeout, --llm-retries, --llm-max-in-flight,
--llm-max-tokens, --llm-failures, --api-key-env, --llm-n-ctx/--llm-threads) and a run against a
dead model server: one clear error, exit 1, finished rows kept, --resume finishes."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from flaneur.agents import AGENTS, Action, Agent, step_record
from flaneur.cli import main
from flaneur.env import toy_city, toy_episodes
from flaneur.env.schemes.base import STOP
from flaneur.tasks.registry import TaskSpec, register_task
from flaneur.testing import FakeOpenAIServer

TOY_TASK = "toy-model-options-v1"
FLANEUR = Path(sys.executable).with_name("flaneur")


class AskOnce(Agent):
    """Asks the run's model once per episode (max_tokens 400), then stops."""

    name = "ask-once"

    def reset(self, episode: Any, env_info: Mapping[str, Any]) -> None:
        super().reset(episode, env_info)
        self.model = env_info.model

    async def act(self, observation: Mapping[str, Any]) -> Action:
        reply = await self.model.complete(
            [{"role": "user", "content": observation["instruction"]}], max_tokens=400
        )
        return Action(STOP, "stop", step_record(raw_output=reply.text))


@pytest.fixture(scope="module", autouse=True)
def toy_task() -> None:
    register_task(
        TaskSpec(id=TOY_TASK, description="toy", build=lambda _: (toy_city(), toy_episodes())),
        replace=True,
    )


@pytest.fixture(autouse=True)
def ask_agent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(AGENTS, "ask-once", AskOnce)
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))


def _args(tmp_path: Path, out: str, base_url: str, *extra: str) -> list[str]:
    return [
        "run",
        "--agent",
        "ask-once",
        "--tasks",
        TOY_TASK,
        "--data-dir",
        str(tmp_path),
        "--out",
        str(tmp_path / out),
        "--json",
        "--progress",
        "none",
        "--concurrency",
        "1",
        "--llm",
        "fake-model",
        "--llm-base-url",
        base_url,
        *extra,
    ]


def _rows(folder: Path) -> list[dict]:
    lines = (folder / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_options_reach_the_model(tmp_path, capsys):
    with FakeOpenAIServer("constant:ok") as server:
        main(
            _args(
                tmp_path,
                "run",
                server.base_url,
                "--llm-max-tokens",
                "32",
                "--llm-timeout",
                "9",
                "--llm-retries",
                "1",
                "--llm-max-in-flight",
                "2",
            )
        )
        sent = [r.body["max_tokens"] for r in server.requests]
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert sent == [32] * 5  # the agent's 400 capped
    options = summary["config"]["llm_options"]
    assert options == {
        "timeout_s": 9.0,
        "max_retries": 1,
        "max_in_flight": 2,
        "max_tokens": 32,
        "failure_threshold": 3,
    }
    assert summary["server_down"] is None
    rows = _rows(tmp_path / "run")
    assert all(r["termination"] != "model_error" for r in rows)
    for r in rows:  # success is the task's own metric; the environment's flag is kept aside
        assert r["success"] is bool(r["metrics"][r["success_metric"]]) and "env_success" in r


def test_dead_server_mid_run_stops_with_one_line_and_resume_finishes(tmp_path, capsys):
    faults = {i: "500" for i in range(2, 40)}
    with FakeOpenAIServer("constant:ok", faults=faults) as server:
        with pytest.raises(SystemExit) as exit_:
            main(
                _args(tmp_path, "run", server.base_url, "--llm-retries", "0", "--llm-failures", "2")
            )
        chats, port = server.chat_count, server.port
    assert exit_.value.code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "failed 2 calls in a row" in err and "--resume" in err
    assert chats == 4  # two good calls, two failures, then nothing more was sent
    rows = _rows(tmp_path / "run")
    assert [r["termination"] for r in rows].count("model_error") == 2
    assert len(rows) == 4  # the fifth episode was never started
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert "failed 2 calls" in summary["server_down"]
    with FakeOpenAIServer("constant:ok", port=port) as server:  # the server is back
        main([*_args(tmp_path, "run", server.base_url, "--llm-retries", "0"), "--resume"])
        assert server.chat_count == 3  # the two errored rows and the unstarted one
    assert all(r["termination"] != "model_error" for r in _rows(tmp_path / "run"))


def test_first_prompt_too_long_for_the_server_is_one_line_before_any_request(tmp_path, capsys):
    with FakeOpenAIServer("constant:ok", n_ctx=60, slots=1) as server:
        with pytest.raises(SystemExit) as exit_:
            main(_args(tmp_path, "run", server.base_url, "--concurrency", "3"))
        chats, tokenized, port = server.chat_count, server.counts["/tokenize"], server.port
    assert exit_.value.code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not fit the context" in err
    assert "+ 400 for the reply > 60" in err and "--llm-max-tokens" in err and "--resume" in err
    assert chats == 0 and tokenized == 1  # checked once, by the preflight, before any call
    with FakeOpenAIServer("constant:ok", n_ctx=4096, slots=1, port=port) as server:  # larger
        main([*_args(tmp_path, "run", server.base_url, "--concurrency", "3"), "--resume"])
        assert server.chat_count == 5
    assert all(r["termination"] != "model_error" for r in _rows(tmp_path / "run"))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SCRIPT = """
import sys
from flaneur.cli import main
from flaneur.env import toy_city, toy_episodes
from flaneur.tasks.registry import TaskSpec, register_task
register_task(TaskSpec(id="toy-dead", description="toy",
                       build=lambda _: (toy_city(), toy_episodes())))
main(sys.argv[1:])
"""


def test_unreachable_server_is_one_line_and_quick(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            "run",
            "--agent",
            "velma",
            "--tasks",
            "toy-dead",
            "--scheme",
            "turns",
            "--out",
            str(tmp_path / "r"),
            "--llm",
            "fake-model",
            "--llm-base-url",
            url,
            "--llm-retries",
            "1",
            "--progress",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"FLANEUR_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1, done.stderr
    lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
    assert lines[-1].startswith("error: model server") and "is it running?" in lines[-1]
    assert "Traceback" not in done.stderr
    assert time.perf_counter() - started < 60


def test_model_option_without_llm_through_the_console_script(tmp_path):
    done = subprocess.run(
        [
            str(FLANEUR),
            "run",
            "--agent",
            "random",
            "--tasks",
            "helsinki-needs-v1",
            "--out",
            str(tmp_path / "r"),
            "--api-key-env",
            "MY_KEY",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={"FLANEUR_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr
    assert "need --llm" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--llm-timeout", "5"], "need --llm"),
        (["--llm", "openai/gpt-4o-mini", "--llm-n-ctx", "4096"], "llamacpp/ models only"),
    ],
)
def test_model_option_misuse_is_one_line(tmp_path, capsys, extra, message):
    args = ["run", "--agent", "random", "--tasks", TOY_TASK, "--out", str(tmp_path / "x"), *extra]
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err

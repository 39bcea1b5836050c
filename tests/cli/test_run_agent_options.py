"""``flaneur run --option/--option AGENT.KEY=VALUE``: agent options from the command line."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from flaneur.agents import AGENTS, Action, Agent, make_agent, step_record
from flaneur.cli import main
from flaneur.cli.run import parse_agent_options
from flaneur.env import toy_city, toy_episodes
from flaneur.env.schemes.base import STOP
from flaneur.env.schemes.turns import FORWARD
from flaneur.errors import FlaneurError
from flaneur.tasks.registry import TaskSpec, register_task

TOY_TASK = "toy-agent-options-v1"


class ProbeAgent(Agent):
    """Walks ``walk`` steps forward, then stops; every record shows the options it got."""

    name = "probe"

    def __init__(
        self, *, walk: int = 0, label: str = "", weights: list[float] | None = None
    ) -> None:
        self.options = {"walk": walk, "label": label, "weights": weights}

    def reset(self, episode: Any, env_info: Mapping[str, Any]) -> None:
        super().reset(episode, env_info)
        self.moves = 0

    async def act(self, observation: Mapping[str, Any]) -> Action:
        seen = json.dumps(self.options, sort_keys=True)
        if self.moves < self.options["walk"] and observation["action_mask"][FORWARD]:
            self.moves += 1
            return Action(FORWARD, "forward", step_record(parsed_action="forward", thoughts=seen))
        return Action(STOP, "stop", step_record(parsed_action="stop", thoughts=seen))


@pytest.fixture(scope="module", autouse=True)
def toy_task() -> None:
    register_task(
        TaskSpec(id=TOY_TASK, description="toy", build=lambda _: (toy_city(), toy_episodes())),
        replace=True,
    )


@pytest.fixture(autouse=True)
def probe_agent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(AGENTS, "probe", ProbeAgent)
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))


def run(tmp_path: Path, out: str, agents: str, *options: str, limit: int = 3) -> dict:
    """``flaneur run --json`` on the toy task; the printed summary."""
    args = [
        "run",
        "--agent",
        agents,
        "--tasks",
        TOY_TASK,
        "--data-dir",
        str(tmp_path),
        "--out",
        str(tmp_path / out),
        "--json",
        "--limit",
        str(limit),
        "--progress",
        "none",
    ]
    for option in options:
        args += ["--option", option]
    main(args)
    return json.loads((tmp_path / out / "summary.json").read_text(encoding="utf-8"))


def rows(folder: Path) -> list[dict]:
    lines = (folder / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def one_line_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1, err
    return err


def test_values_are_read_as_json_else_as_text():
    specs = [
        "k_shot=0",
        "probe.tau=0.6",
        "probe.on=true",
        "probe.none=null",
        "probe.ws=[1, 2.5]",
        "probe.extract=rules",
        'probe.quoted="0"',
        "probe.expr=a=b",
        "probe.empty=",
        "probe.tau=0.7",
    ]
    shared, own = parse_agent_options(specs, ("probe", "forward"))
    assert shared == {"k_shot": 0}
    assert own == {
        "probe": {
            "tau": 0.7,
            "on": True,
            "none": None,
            "ws": [1, 2.5],
            "extract": "rules",
            "quoted": "0",
            "expr": "a=b",
            "empty": "",
        }
    }
    assert parse_agent_options([], ("probe",)) == ({}, {})


def test_options_reach_the_agent_and_go_into_the_config(tmp_path, capsys):
    plain = run(tmp_path, "plain", "probe,forward")
    summary = run(
        tmp_path,
        "opts",
        "probe,forward",
        "probe.walk=2",
        "probe.label=rules",
        "probe.weights=[1, 0.5]",
    )
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    want = {"probe": {"walk": 2, "label": "rules", "weights": [1, 0.5]}}
    assert summary["config"]["per_agent_options"] == want == printed["config"]["per_agent_options"]
    assert summary["config"]["agent_options"] == {}
    assert plain["config"]["per_agent_options"] == {}
    # the agent got the typed values and acts on them: two steps forward, then stop
    before = {r["episode_id"]: r for r in rows(tmp_path / "plain") if r["agent"] == "probe"}
    after = {r["episode_id"]: r for r in rows(tmp_path / "opts") if r["agent"] == "probe"}
    assert len(after) == 3
    for eid, row in after.items():
        assert json.loads(row["records"][0]["thoughts"]) == want["probe"]
        assert before[eid]["steps"] == 1 and row["steps"] == 3
        assert len(row["path"]) > len(before[eid]["path"])
        assert row["config_hash"] != before[eid]["config_hash"]
    # the forward agent's own configuration (and so its hash) is untouched
    hashes = [
        {r["config_hash"] for r in rows(tmp_path / d) if r["agent"] == "forward"}
        for d in ("plain", "opts")
    ]
    assert hashes[0] == hashes[1] and len(hashes[0]) == 1


def test_an_option_for_every_agent_and_a_per_agent_override(tmp_path, capsys):
    summary = run(tmp_path, "o", "probe", "label=all", "walk=1", "probe.label=mine", limit=1)
    capsys.readouterr()
    assert summary["config"]["agent_options"] == {"label": "all", "walk": 1}
    row = rows(tmp_path / "o")[0]
    assert json.loads(row["records"][0]["thoughts"]) == {
        "walk": 1,
        "label": "mine",
        "weights": None,
    }


def test_a_real_agent_changes_behaviour_with_an_option(tmp_path, capsys):
    default = run(tmp_path, "s0", "random", limit=5)
    seeded = run(tmp_path, "s7", "random", "random.seed=7", limit=5)
    capsys.readouterr()
    assert seeded["config"]["per_agent_options"] == {"random": {"seed": 7}}
    assert default["config"]["per_agent_options"] == {}
    paths = [{r["episode_id"]: r["path"] for r in rows(tmp_path / d)} for d in ("s0", "s7")]
    assert paths[0] != paths[1]


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("velma.k_shot", "expected AGENT.KEY=VALUE"),
        ("velma.=0", "option name '' is empty"),
        ("=0", "option name '' is empty"),
        ("velma.k-shot=0", "not a name"),
        ("mapgpt.mode=auto", "agent 'mapgpt' is not among --agent (velma, explorer)"),
        (".k_shot=0", "agent '' is not among --agent"),
    ],
)
def test_bad_syntax_is_a_one_line_error(tmp_path, capsys, spec, why):
    args = [
        "run",
        "--agent",
        "velma,explorer",
        "--tasks",
        TOY_TASK,
        "--data-dir",
        str(tmp_path),
        "--out",
        str(tmp_path / "out"),
        "--option",
        "velma.k_shot=0",
        "--option",
        spec,
    ]
    err = one_line_error(capsys, args)
    assert f"--option {spec!r}" in err and why in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("agents", "spec", "names"),
    [
        ("velma", "velma.kshot=0", ("'velma'", "kshot", "k_shot")),  # lists its real options
        ("explorer", "explorer.tua=0.6", ("explorer", "tua")),  # the explorer's own check
        ("random,forward", "forward.seed=1", ("'forward'", "seed", "takes none")),
        ("random,forward", "seed=1", ("'forward'", "seed")),  # random takes it, forward not
        ("velma", "velma.k_shot=many", ("'velma'", "k_shot='many'")),  # a value it rejects
        ("velma", "velma.extract=regex", ("'velma'", "extract", "'regex'")),
    ],
)
def test_an_option_the_agent_does_not_take_fails_before_running(
    tmp_path, capsys, agents, spec, names
):
    args = [
        "run",
        "--agent",
        agents,
        "--tasks",
        TOY_TASK,
        "--data-dir",
        str(tmp_path),
        "--out",
        str(tmp_path / "out"),
        "--option",
        spec,
    ]
    err = one_line_error(capsys, args)
    assert all(name in err for name in names), err
    assert not (tmp_path / "out").exists()  # no episode ran, no run folder


def test_make_agent_names_unknown_options():
    with pytest.raises(FlaneurError, match=r"agent 'velma' has no option k_shots, tau \(its"):
        make_agent("velma", k_shots=0, tau=0.5)
    assert make_agent("random", seed=3).seed == 3

"""The agent protocol: declared needs and typed options checked up front, the typed
:class:`EnvInfo`, privileged access recorded and marked, and the agent registry."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from pathlib import Path

import pytest

from flaneur.agents import (
    AGENTS,
    EnvInfo,
    ForwardAgent,
    OracleAgent,
    check_options,
    env_info_for,
    make_agent,
    options_schema,
)
from flaneur.cli import main
from flaneur.env import NavigationEnv, toy_city, toy_episodes
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.report.tables import agent_label
from flaneur.tasks.registry import TaskSpec, register_task

TOY_TASK = "toy-agent-protocol-v1"
BUILT_IN = ("random", "forward", "oracle", "cityseeker", "mapgpt", "velma", "explorer")


@pytest.fixture(scope="module", autouse=True)
def toy_task() -> None:
    register_task(
        TaskSpec(id=TOY_TASK, description="toy", build=lambda _: (toy_city(), toy_episodes())),
        replace=True,
    )


def cli_error(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> str:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--tasks", TOY_TASK, "--out", str(out), *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1, err
    assert not out.exists()  # nothing ran
    return err


# ---------------------------------------------------------------- declarations
@pytest.mark.parametrize("name", BUILT_IN)
def test_every_option_is_a_constructor_parameter_with_the_same_default(name):
    cls = AGENTS[name]
    schema = options_schema(cls)
    assert dataclasses.is_dataclass(schema)
    params = inspect.signature(cls).parameters
    takes_more = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for field in dataclasses.fields(schema):
        if field.name in params:
            default = params[field.name].default
            want = tuple(default) if isinstance(default, list | tuple) else default
            assert field.default == want, (name, field.name)
        else:
            assert takes_more, f"{name}: option {field.name} is not a constructor parameter"
    schema()  # the defaults pass the schema's own checks


def test_declared_needs():
    assert AGENTS["velma"].schemes == ("turns",) and AGENTS["velma"].needs_model
    assert AGENTS["mapgpt"].schemes == ("nodes",) and AGENTS["cityseeker"].schemes == ("headings",)
    assert AGENTS["explorer"].schemes == ("headings",) and not AGENTS["explorer"].needs_model
    assert ForwardAgent.schemes == () and not ForwardAgent.needs_views


# ---------------------------------------------------------------- typed options
@pytest.mark.parametrize(
    ("name", "given", "converted"),
    [
        ("random", {"seed": 3}, {"seed": 3}),
        ("random", {"seed": None}, {"seed": None}),
        ("random", {"seed": 4.0}, {"seed": 4}),
        (
            "cityseeker",
            {"strategies": "b1,r3", "round": 2},
            {"strategies": ("b1", "r3"), "round": 2},
        ),
        ("cityseeker", {"strategies": ["b2"]}, {"strategies": ("b2",)}),
        (
            "cityseeker",
            {"view_size": [320, 240], "theta": 1},
            {"view_size": (320, 240), "theta": 1.0},
        ),
        ("mapgpt", {"mode": "one-stage"}, {"mode": "one-stage"}),
        ("explorer", {"tau": 0.6, "expand_k": 2}, {"tau": 0.6, "expand_k": 2}),
    ],
)
def test_values_are_converted_to_the_declared_types(name, given, converted):
    assert check_options(name, options_schema(AGENTS[name]), given) == converted


@pytest.mark.parametrize(
    ("name", "given", "message"),
    [
        ("random", {"seed": "abc"}, "agent 'random': option seed='abc' must be an integer or null"),
        ("random", {"seed": True}, "option seed=True must be an integer or null"),
        (
            "mapgpt",
            {"mode": "three-stage"},
            "option mode='three-stage' must be 'auto' or 'two-stage' or 'one-stage'",
        ),
        ("cityseeker", {"strategies": "b9"}, "unknown CitySeeker strategy 'b9'"),
        ("cityseeker", {"view_size": [1, 2, 3]}, "must be a list of 2 (an integer, an integer)"),
        ("explorer", {"look_sides": "yes"}, "option look_sides='yes' must be true/false"),
        ("forward", {"seed": 1}, "agent 'forward' has no option seed (it takes none)"),
    ],
)
def test_bad_values_are_one_line_errors(name, given, message):
    with pytest.raises(FlaneurError) as err:
        make_agent(name, **given)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_bad_option_fails_before_the_first_episode(capsys, tmp_path):
    err = cli_error(capsys, tmp_path, "--agent", "random", "--option", "random.seed=abc")
    assert err == "error: agent 'random': option seed='abc' must be an integer or null"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--agent", "velma", "--llm", "fake"), "agent 'velma' acts in the turns scheme"),
        (
            ("--agent", "velma", "--scheme", "turns"),
            "agent 'velma' needs a language model: add --llm",
        ),
        (
            ("--agent", "forward,mapgpt", "--scheme", "nodes"),
            "agent 'mapgpt' needs a language model",
        ),
        (("--agent", "explorer"), "agent 'explorer' acts in the headings scheme, not 'turns'"),
    ],
)
def test_unmet_needs_fail_before_the_first_episode(capsys, tmp_path, args, message):
    if "velma" in args and "--llm" in args:
        args = (*args, "--scheme", "nodes")
    assert message in cli_error(capsys, tmp_path, *args)


def test_deprecated_flags_are_aliases_of_options(capsys, tmp_path):
    err = cli_error(capsys, tmp_path, "--agent", "cityseeker", "--strategy", "b7")
    assert "unknown CitySeeker strategy 'b7'" in err
    err = cli_error(capsys, tmp_path, "--agent", "mapgpt", "--mapgpt-mode", "magic")
    assert "--mapgpt-mode must be one of" in err and "'magic'" in err
    main(
        [
            "run",
            "--agent",
            "random",
            "--tasks",
            TOY_TASK,
            "--limit",
            "1",
            "--progress",
            "none",
            "--out",
            str(tmp_path / "r"),
            "--json",
            "--option",
            "seed=2",
        ]
    )
    assert "note: deprecated" not in capsys.readouterr().err


# ---------------------------------------------------------------- EnvInfo and privileged
def run(env, agent, episode, **info):
    return asyncio.run(run_episode(env, agent, episode, seed=0, task_id="toy", **info))


def test_env_info_is_typed_and_frozen():
    env = NavigationEnv(toy_city(), toy_episodes())
    env.reset()
    info = env_info_for(env, seed=4, task_id="toy", avg_reference_length=3.0, llm="m")
    assert isinstance(info, EnvInfo)
    assert (info.scheme, info.seed, info.task_id, info.llm) == ("turns", 4, "toy", "m")
    assert info.action_names[0] == "stop" and info.max_steps == env.step_limit
    assert info.city is env.city and info.env.state is env.state
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.seed = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        env_info_for(env, colour="red")
    assert not hasattr(info.env, "teacher") and not hasattr(info.env, "episode")


def test_privileged_use_is_recorded_and_marks_the_row():
    city, episodes = toy_city(), toy_episodes()
    env = NavigationEnv(city, episodes)
    oracle = run(env, OracleAgent(), episodes[0])
    forward = run(env, ForwardAgent(), episodes[0])
    assert oracle["privileged"] == ["env"]
    assert forward["privileged"] == []
    env.reset(options={"episode": episodes[0]})
    info = env_info_for(env)
    assert not info.privileged.used
    dist = info.privileged.goal_distances_m()
    goal = city.graph.index(episodes[0].goal_nodes[0])
    assert dist[goal] == 0.0 and dist.max() > 0.0
    assert info.privileged.uses == {"goal_distance"}


def test_privileged_rows_are_flagged_in_summaries_and_tables(tmp_path, capsys):
    main(
        [
            "run",
            "--agent",
            "forward,oracle",
            "--tasks",
            TOY_TASK,
            "--progress",
            "none",
            "--out",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    flags = {r["agent"]: r["privileged"] for r in summary["runs"]}
    assert flags == {"forward": False, "oracle": True}
    labels = [agent_label(r) for r in summary["runs"]]
    assert labels == ["forward", "oracle (privileged)"]


def test_a_deprecated_flag_still_works_with_a_note(tmp_path, capsys):
    from flaneur.testing import FakeOpenAIServer

    with FakeOpenAIServer("constant:STOP") as server:
        main(
            [
                "run",
                "--agent",
                "cityseeker",
                "--tasks",
                TOY_TASK,
                "--scheme",
                "headings",
                "--llm",
                "fake-model",
                "--llm-base-url",
                server.base_url,
                "--cache",
                "off",
                "--limit",
                "1",
                "--progress",
                "none",
                "--out",
                str(tmp_path / "r"),
                "--json",
                "--strategy",
                "b1",
                "--round",
                "1",
            ]
        )
    captured = capsys.readouterr()
    assert (
        "note: deprecated flag; use --option cityseeker.strategies=b1 --option cityseeker.round=1"
        in captured.err
    )
    summary = json.loads(captured.out)
    assert summary["config"]["per_agent_options"] == {
        "cityseeker": {"strategies": "b1", "round": 1}
    }
    assert summary["runs"][0]["rows"] == 1
    with pytest.raises(SystemExit):  # mapgpt is not among --agent: a clear one-line error
        main(
            [
                "run",
                "--agent",
                "forward",
                "--tasks",
                TOY_TASK,
                "--out",
                str(tmp_path / "x"),
                "--mapgpt-mode",
                "two-stage",
            ]
        )
    assert "agent 'mapgpt' is not among --agent" in capsys.readouterr().err


def test_flaneur_agents_lists_needs_and_typed_options(capsys):
    main(["agents", "--json"])
    listed = {a["name"]: a for a in json.loads(capsys.readouterr().out)["agents"]}
    assert set(BUILT_IN) <= set(listed)
    velma = listed["velma"]
    assert velma["schemes"] == ["turns"] and velma["needs_model"] and not velma["needs_views"]
    k_shot = velma["options"]["k_shot"]
    assert (k_shot["type"], k_shot["default"]) == ("an integer", 2)
    assert listed["forward"]["options"] == {} and listed["forward"]["schemes"] == ["any"]
    main(["agents", "mapgpt"])
    shown = capsys.readouterr().out  # a table: its cells wrap with the terminal's width
    assert all(choice in shown for choice in ("'auto'", "'two-stage'", "'one-stage'"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (
                "--agent",
                "mapgpt",
                "--scheme",
                "nodes",
                "--llm",
                "m",
                "--option",
                "mapgpt.mode=one-stage",
            ),
            "agent 'mapgpt': mapgpt in one-stage mode needs --views",
        ),
        (
            ("--agent", "explorer", "--scheme", "headings", "--landmarks", "ocr"),
            "agent 'explorer': the explorer's OCR perception needs views",
        ),
    ],
)
def test_needs_that_depend_on_options_fail_before_the_first_episode(
    capsys, tmp_path, args, message
):
    assert message in cli_error(capsys, tmp_path, *args)

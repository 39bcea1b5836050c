"""VELMA under ``--protocol paper``: its prompt and numbering, first action, reply reading,
in-context examples, landmarks, and the "no image" ablation said under both protocols
(toy city, fake OpenAI server; no real data). docs/fidelity.md names these tests.

VELMA's prompt texts are not part of flaneur: the tests that pin how they are used write a
stand-in folder in the layout of VELMA's ``llm/prompts`` (their own text, VELMA's file names
and ``{}`` fields) and give it as ``prompts_dir``."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import random
from collections.abc import Iterator

import pytest

from flaneur.agents import ablations
from flaneur.agents.prompts import load_prompt
from flaneur.agents.velma import VelmaAgent
from flaneur.agents.velma.paper import (
    PaperTrajectory,
    example_draws,
    paper_observation,
    parse_landmarks,
    read_reply,
    validate,
)
from flaneur.env import NavigationEnv, toy_city, toy_episodes
from flaneur.env.toy import toy_graph
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.models import make_model
from flaneur.testing import FakeOpenAIServer
from flaneur.world.city import City

LANDMARKS = "Landmarks:"
BLOCK = 'Navigation Instructions:\n"{}"\nAction Sequence:\n'
NAV_HEADS = {
    "map2seq": "Stand-in map2seq task line.\n\nMoves: forward, left, right, turn_around, stop\n\n",
    "touchdown": "Stand-in touchdown task line.\n\nMoves: forward left right turn_around stop\n\n",
}
LANDMARK_SHOTS = {
    "map2seq": "Pass the test bakery.\nLandmarks:\n1. the test bakery\n\n{}\nLandmarks:",
    "touchdown": "Look for the test kiosk.\nLandmarks:\n1. the test kiosk\n\n{}\nLandmarks:",
}
TRAIN_ROWS = [
    {
        "id": 901,
        "navigation_text": "Go to the cafe.",
        "route_panoids": ["N2", "N1", "X4"],
        "start_heading": 180,
    },
    {
        "id": 902,
        "navigation_text": "Walk west.",
        "route_panoids": ["X4", "W1", "W2"],
        "start_heading": 270,
    },
]


def as_dataset(episodes, dataset):
    return [dataclasses.replace(e, metadata={**e.metadata, "dataset": dataset}) for e in episodes]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer("echo") as srv:
        yield srv


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(ablations, "_SAID", set())  # say-once warnings, said again per test


@pytest.fixture
def velma_prompts(tmp_path):
    """A stand-in for VELMA's ``llm/prompts`` folder: its layout, text written here."""
    root = tmp_path / "VELMA" / "llm" / "prompts"
    for dataset, head in NAV_HEADS.items():
        navigation = root / dataset / "navigation" / "2shot.txt"
        navigation.parent.mkdir(parents=True)
        navigation.write_text(head + (BLOCK + "{}\n\n") * 2 + BLOCK)
        shots = root / dataset / "landmarks" / "5shot.txt"
        shots.parent.mkdir(parents=True)
        shots.write_text(LANDMARK_SHOTS[dataset])
    return root


def write_train(tmp_path):
    train = tmp_path / "train.json"
    train.write_text("".join(json.dumps(r) + "\n" for r in TRAIN_ROWS))
    return train


def extracting(req):
    """Whether a request extracts landmarks (VELMA's prompt or flaneur's)."""
    text = req.texts()[-1]
    return text.endswith(LANDMARKS) or text.startswith("Instruction: ")


def navigate(reply="forward", landmarks="\n1. cafe\n2. Sea Museum"):
    """A policy: VELMA's landmark prompt gets ``landmarks`` (flaneur's gets them as a JSON
    list), the navigation prompt ``reply`` (a string, or a callable of the request's text)."""

    def policy(req):
        text = req.texts()[-1]
        if extracting(req):
            if text.endswith(LANDMARKS):
                return landmarks
            return json.dumps(parse_landmarks(landmarks))
        return reply(text) if callable(reply) else reply

    return policy


def run(server, city, episode, pool, policy, protocol="paper", **agent_kw):
    server.configure(policy)

    async def go():
        model = make_model("fake-model", base_url=server.base_url, supports_logprobs=False)
        env = NavigationEnv(city, [episode], scheme="turns")
        row = await run_episode(
            env,
            VelmaAgent(**agent_kw),
            episode,
            seed=0,
            task_id="toy",
            model=model,
            task_episodes=pool,
            protocol=protocol,
        )
        await model.aclose()
        return row

    return asyncio.run(go())


# ---------------------------------------------------------------------- prompt and numbering
def test_paper_prompt_numbers_actions_only_as_velma(server, city, velma_prompts, tmp_path):
    eps = as_dataset(toy_episodes(), "touchdown")
    train = str(write_train(tmp_path))
    folder = str(velma_prompts)
    row = run(server, city, eps[1], eps, navigate(), examples_file=train, prompts_dir=folder)
    requests = [r for r in server.requests if not extracting(r)]
    assert all(len(r.messages) == 1 and r.messages[0]["role"] == "user" for r in requests)
    first, prompt = row["records"][0], row["records"][2]["prompt"]
    assert first["prompt_from"] == "velma prompts_dir" and first["examples"] == ["902", "901"]
    episode = (
        "There is a 4-way intersection. Cafe slightly left.\n"
        "1. forward\n2. forward\nThere is a 3-way intersection.\n3."
    )
    stand_in = NAV_HEADS["touchdown"] + (BLOCK + "{}\n\n") * 2 + BLOCK
    filled = stand_in.format(  # as VELMA fills it: the examples in draw order, the instruction
        "Walk west.",
        "There is a 4-way intersection.\n1. forward\n2. forward\n3. stop",
        "Go to the cafe.",
        "1. forward\nCafe slightly left.\n2. forward\nThere is a 4-way intersection.\n3. stop",
        eps[1].instruction,
    )
    assert prompt == filled + episode
    assert row["records"][2]["prompt_id"].startswith("velma:touchdown/navigation/2shot.txt:")
    assert first["prompt"].endswith(
        "Action Sequence:\nThere is a 4-way intersection. Cafe slightly left.\n1."
    )
    ours = run(server, city, eps[1], eps, navigate(), examples_file=train)
    theirs = ours["records"][2]["prompt"]
    assert ours["records"][0]["prompt_from"] == "flaneur template"
    assert theirs.startswith(load_prompt("velma", "paper_navigate").text.split("{")[0])
    layout = theirs[theirs.index("Navigation Instructions:") :]
    assert prompt == NAV_HEADS["touchdown"] + layout  # the same layout, VELMA's header
    trajectory = PaperTrajectory()
    trajectory.observe("")
    trajectory.act("TURN_AROUND")
    assert trajectory.render() == "1. turn_around\n2." and trajectory.actions == ["turn_around"]


def test_paper_prompts_dir_names_a_missing_file_or_a_k_shot_it_cannot_fill(
    server, city, velma_prompts
):
    eps = as_dataset(toy_episodes(), "touchdown")
    (velma_prompts / "touchdown" / "navigation" / "2shot.txt").unlink()
    with pytest.raises(FlaneurError, match=r"cannot read touchdown/navigation/2shot\.txt") as err:
        run(server, city, eps[0], eps, navigate(), prompts_dir=str(velma_prompts))
    assert "\n" not in str(err.value)
    m2s = as_dataset(toy_episodes(), "map2seq")
    with pytest.raises(FlaneurError, match=r"k_shot=0 fills 1: give --option velma\.k_shot=2"):
        run(server, city, m2s[0], m2s, navigate(), k_shot=0, prompts_dir=str(velma_prompts))
    with pytest.raises(FlaneurError, match=r"prompts_dir .*: no such folder"):
        VelmaAgent.check_setup({"prompts_dir": str(velma_prompts / "none")}, None)
    VelmaAgent.check_setup({"prompts_dir": str(velma_prompts)}, None)


def test_paper_without_prompts_dir_uses_flaneur_template_and_says_so_once(server, city, caplog):
    eps = as_dataset(toy_episodes(), "map2seq")
    with caplog.at_level(logging.WARNING, logger="flaneur.agents.velma"):
        rows = [run(server, city, e, eps, navigate("stop"), k_shot=0) for e in eps[:2]]
    said = [r.getMessage() for r in caplog.records if "prompts_dir" in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0] and "flaneur's template" in said[0]
    for row in rows:
        first = row["records"][0]
        assert first["prompt_from"] == "flaneur template"
        extraction = first["landmark_extraction"]
        assert extraction["method"] == "model (flaneur's prompt)"
        assert first["landmarks"] == ["cafe", "Sea Museum"]
    prompt = rows[0]["records"][1]["prompt"]
    template = load_prompt("velma", "paper_navigate")
    assert rows[0]["records"][1]["prompt_id"].startswith("velma-paper-nav-2:")
    assert prompt.startswith(template.text.split("{")[0])
    assert prompt.endswith(
        f'Navigation Instructions:\n"{eps[0].instruction}"\nAction Sequence:\n'
        "Cafe ahead.\n1. forward\nThere is a 4-way intersection. Cafe slightly left.\n2."
    )


def test_paper_observations_group_landmarks_by_direction_every_step():
    seen = [("a bank", 0), ("Starbucks", 2), ("a church", 0)]
    assert paper_observation(4, True, seen) == (
        "There is a 4-way intersection. A bank and a church on your left. Starbucks ahead."
    )
    assert paper_observation(4, False, seen).startswith("A bank and a church on your left.")
    assert paper_observation(2, True, []) == ""


# ---------------------------------------------------------------------- first action
def test_paper_map2seq_begins_with_forward_unqueried(server, city):
    m2s = as_dataset(toy_episodes(), "map2seq")
    row = run(server, city, m2s[1], m2s, navigate("stop"), k_shot=0)
    first = row["records"][0]
    assert row["actions"] == ["forward", "stop"] and "prompt" not in first
    assert "begin with forward" in first["thoughts"]
    assert row["records"][1]["prompt"].endswith(
        "There is a 4-way intersection. Cafe slightly left.\n1. forward\n2."
    )
    navigation = [r for r in server.requests if not extracting(r)]
    assert len(navigation) == 1  # the forced forward asks nothing
    td = as_dataset(toy_episodes(), "touchdown")
    assert run(server, city, td[1], td, navigate("stop"), k_shot=0)["actions"] == ["stop"]
    ours = run(server, city, m2s[1], m2s, navigate("STOP"), protocol="flaneur", k_shot=0)
    assert ours["actions"] == ["stop"]  # flaneur: the first action is the model's


def test_paper_map2seq_forward_is_forced_even_at_a_dead_end(server, city):
    goal = as_dataset(toy_episodes(), "map2seq")[4]  # starts on W2, a dead end
    row = run(server, city, goal, [goal], navigate("stop"), k_shot=0)
    assert row["actions"] == ["forward", "stop"] and row["path"][:2] == ["W2", "W1"]


# ---------------------------------------------------------------------- reply
def test_paper_reply_is_the_first_word_through_validate_action():
    assert read_reply(" forward\n3. left") == ("forward", False)
    assert read_reply("Turn around.") == ("turn_around", False)
    assert read_reply("LEFT") == ("left", False)
    assert read_reply("Right, then stop") == ("right", False)
    assert read_reply("I think forward") == ("forward", True)
    assert read_reply("") == ("forward", True)
    assert read_reply("turn") == ("forward", True)
    assert validate("left", 2) == "forward" and validate("forward", 1) == "stop"
    assert validate("turn_around", 1) == "turn_around" and validate("left", 4) == "left"


def test_paper_unknown_reply_walks_forward_and_counts_a_parse_failure(server, city):
    eps = as_dataset(toy_episodes(), "touchdown")
    replies = iter(["left", "hmm", "stop"])
    row = run(server, city, eps[0], eps, navigate(lambda _t: next(replies)), k_shot=0)
    assert row["actions"] == ["forward", "forward", "stop"]  # W1 is a 2-way node: left
    assert [r.get("parse_failures", 0) for r in row["records"]] == [0, 1, 0]
    assert "validate_action" in row["records"][0]["thoughts"]
    assert row["records"][1]["thoughts"].startswith("no action word in the reply")


# ---------------------------------------------------------------------- in-context examples
def test_paper_examples_two_per_episode_drawn_as_velma(server, city, tmp_path):
    pool = as_dataset(toy_episodes(), "touchdown")
    rng = random.Random(1)
    expected = [rng.sample(range(5), 2) for _ in range(3)]
    draws = [example_draws(pool[::-1], pool[:3], i, 2, 1) for i in (2, 0, 1)]
    assert draws == [expected[2], expected[0], expected[1]]  # one stream, in file order
    own = [example_draws(pool, pool, i, 2, 1) for i in range(5)]
    assert all(i not in picks and len(picks) == 2 for i, picks in enumerate(own))
    train = write_train(tmp_path)
    row = run(server, city, pool[1], pool, navigate("stop"), examples_file=str(train))
    first = row["records"][0]
    assert sorted(first["examples"]) == ["901", "902"]
    assert first["examples_from"] == f"train file {train}"
    walk_west = "There is a 4-way intersection.\n1. forward\n2. forward\n3. stop\n\n"
    assert f'"Walk west."\nAction Sequence:\n{walk_west}Navigation' in first["prompt"]
    assert first["prompt"].count("Navigation Instructions:") == 3
    with pytest.raises(FlaneurError, match="no such file"):
        VelmaAgent.check_setup({"examples_file": str(tmp_path / "none.json")}, None)


# ---------------------------------------------------------------------- landmarks
def test_paper_landmarks_from_velma_prompt_or_released_file(server, city, tmp_path, velma_prompts):
    eps = as_dataset(toy_episodes(), "map2seq")
    reply = "\n1. the cafe\n2. an intersection\n3. Sea Museum"
    folder = str(velma_prompts)
    row = run(server, city, eps[0], eps, navigate("stop", reply), prompts_dir=folder)
    extraction = row["records"][0]["landmark_extraction"]
    assert extraction["method"] == "model (VELMA's prompt)"
    assert extraction["prompt"] == LANDMARK_SHOTS["map2seq"].format(eps[0].instruction)
    assert extraction["prompt_id"].startswith("velma:map2seq/landmarks/5shot.txt:")
    assert row["records"][0]["landmarks"] == ["the cafe", "Sea Museum"]
    td = as_dataset(toy_episodes(), "touchdown")
    row = run(server, city, td[0], td, navigate("stop", "None"), prompts_dir=folder)
    prompt = row["records"][0]["landmark_extraction"]["prompt"]
    assert prompt == LANDMARK_SHOTS["touchdown"].format(td[0].instruction)
    assert row["records"][0]["landmarks"] == []
    released = tmp_path / "gpt3_5shot_unfiltered.json"
    unfiltered = ["the museum", "traffic lights", "a side street", "the museum"]
    released.write_text(json.dumps({"instances": {"toy-east": {"unfiltered": unfiltered}}}))
    row = run(server, city, eps[0], eps, navigate("stop"), k_shot=0, landmarks_file=str(released))
    assert row["records"][0]["landmarks"] == ["the museum"]
    assert row["records"][0]["landmark_extraction"]["method"] == "released"
    assert not any(extracting(r) for r in server.requests)
    assert parse_landmarks(" \n1. a bank\n2. 3-way intersection\nfoo\n3. a park") == [
        "a bank",
        "a park",
    ]


# ---------------------------------------------------------------------- no image
@pytest.mark.parametrize("protocol", ["paper", "flaneur"])
def test_no_image_ablation_is_said_in_rows_summary_and_once(server, protocol, tmp_path, caplog):
    bare = City(name="toy-bare", graph=toy_graph())  # no places, no views
    episodes = as_dataset(toy_episodes(), "touchdown")
    server.configure(navigate("stop"))
    config = RunConfig(
        agents=("velma",),
        tasks=("toy",),
        llm="fake-model",
        llm_base_url=server.base_url,
        cache_mode="off",
        protocol=protocol,
        agent_options={"k_shot": 0},
    )
    with caplog.at_level(logging.WARNING, logger="flaneur.agents.velma"):
        summary = run_benchmark(
            config, tmp_path / "run", progress="none", loaded={"toy": (bare, episodes)}
        )
    said = [r.getMessage() for r in caplog.records if "'no image'" in r.getMessage()]
    assert len(said) == 1 and "toy-bare" in said[0] and "\n" not in said[0]
    rows, _ = read_rows(tmp_path / "run" / "episodes.jsonl")
    assert rows and all(r["ablations"] == ["no image"] for r in rows)
    assert summary["runs"][0]["ablations"] == ["no image"]
    assert summary["runs"][0]["perception"] == "none"  # every row ran blind
    eps = as_dataset(toy_episodes(), "touchdown")  # the toy city has places: no ablation
    assert "ablations" not in run(server, toy_city(), eps[0], eps, navigate("stop"), protocol)

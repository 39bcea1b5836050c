"""The VELMA agent, its verbalization, the prompt loader, the oracle-fake policy and the
fine-tuning export (toy city, fake OpenAI server; no real data)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Iterator

import pytest

from flaneur.agents import AGENTS, env_info_for, make_agent
from flaneur.agents.prompts import Prompt, PromptError, list_prompts, load_prompt
from flaneur.agents.velma import (
    MapLandmarkObserver,
    ObservationTracker,
    Trajectory,
    VelmaAgent,
    ViewLandmarkObserver,
    select_examples,
)
from flaneur.agents.velma.examples import examples_text, gold_trajectory
from flaneur.agents.velma.finetune import episode_records, export_finetune, gold_prompts
from flaneur.agents.velma.verbalize import landmarks_text, sector_of
from flaneur.cli import main
from flaneur.env import NavigationEnv, toy_city, toy_episodes
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.models import make_model
from flaneur.tasks.registry import TaskSpec, register_task
from flaneur.testing import FakeOpenAIServer, FakeReply
from harness.oracle_policies import NO_ANSWER, VelmaOraclePolicy, velma_oracle_policy

TOY_TASK = "toy-velma-v1"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer("echo") as srv:
        yield srv


pytestmark = pytest.mark.usefixtures("isolated_model")


def run_toy(server, city, episodes, policy, *, agent_kw=None, model_kw=None, **info):
    """Run a VelmaAgent on every toy episode against ``policy``; the rows."""
    server.configure(policy)

    async def go():
        model = make_model("fake-model", base_url=server.base_url, **(model_kw or {}))
        rows = []
        for ep in info.pop("only", episodes):
            env = NavigationEnv(city, [ep], scheme="turns")
            agent = VelmaAgent(**(agent_kw or {}))
            extra = {"views": None, "landmarks": None, **info}
            row = await run_episode(
                env, agent, ep, seed=0, task_id="toy", model=model, task_episodes=episodes, **extra
            )
            rows.append(row)
        await model.aclose()
        return rows

    return asyncio.run(go())


# ---------------------------------------------------------------------- prompt loader
def test_load_prompt_version_and_fill():
    prompt = load_prompt("velma", "navigate")
    assert isinstance(prompt, Prompt) and prompt.version == "velma-nav-1"
    assert prompt.id.startswith("velma-nav-1:") and len(prompt.id.split(":")[1]) == 10
    assert set(prompt.fields) == {"examples", "instructions", "trajectory"}
    text, pid = prompt.fill(examples="", instructions="Go.", trajectory="1.")
    assert text.endswith('Navigation instructions: "Go."\nAction sequence:\n1.')
    _, pid2 = prompt.fill(examples="", instructions="Stop.", trajectory="1.")
    assert pid != pid2 and pid.split(":")[0] == pid2.split(":")[0] == "velma-nav-1"
    assert set(list_prompts("velma")) >= {"navigate", "system", "example"}
    with pytest.raises(PromptError, match="no value"):
        prompt.fill(examples="")
    with pytest.raises(PromptError, match="no prompt"):
        load_prompt("velma", "missing")
    with pytest.raises(PromptError, match="version"):
        Prompt.from_text("no version line\nbody")


# ---------------------------------------------------------------------- verbalization
def test_trajectory_and_tracker_follow_velma_rules(city):
    graph = city.graph
    tracker = ObservationTracker(graph.degree)
    x4, e1 = graph.index("X4"), graph.index("E1")
    assert tracker.text(x4, "") == "There is a 4-way intersection."  # at the start
    assert tracker.text(x4, "") == ""  # rotated in place: not again
    assert tracker.text(x4, "There is a cafe ahead of you.") == "There is a cafe ahead of you."
    assert tracker.text(x4, "There is a cafe ahead of you.") == ""  # unchanged
    assert tracker.text(e1, "") == ""  # a 2-way node
    traj = Trajectory()
    traj.observe("There is a 3-way intersection.")
    traj.act("FORWARD")
    traj.observe("")
    traj.act("LEFT")
    assert traj.render() == "1. There is a 3-way intersection.\n2. FORWARD\n3. LEFT\n4."
    assert traj.render(cue=False).endswith("3. LEFT") and traj.actions == ["FORWARD", "LEFT"]
    assert [sector_of(a) for a in (-90, -40, 0, 30, 100, 150)] == [0, 1, 2, 3, 4, None]
    text = landmarks_text([("Sea Museum", 4), ("apple store", 0)])
    assert text == "There is an apple store on your left. There is a Sea Museum on your right."


def test_map_observer_uses_instruction_landmarks_and_categories(city):
    obs = MapLandmarkObserver(city)
    w1 = city.graph.index("W1")
    assert obs.seen(w1, 90.0, ["cafe", "Harbour Bank"]) == [("cafe", 2)]
    assert obs.seen(w1, 270.0, ["cafe"]) == []  # behind the agent
    assert obs.seen(city.graph.index("X4"), 90.0, ["Cafe Aalto"]) == [("Cafe Aalto", 1)]
    every = MapLandmarkObserver(city, landmarks_from="all")
    assert ("Cafe Aalto", 1) in every.seen(city.graph.index("X4"), 90.0, [])
    with pytest.raises(FlaneurError):
        MapLandmarkObserver(city, landmarks_from="some")


def test_examples_are_other_episodes_chosen_with_a_fixed_seed(city, episodes):
    for ep in episodes:
        chosen = select_examples(episodes, ep, 2, seed=0)
        assert ep.id not in [e.id for e in chosen]
        assert chosen == select_examples(list(reversed(episodes)), ep, 2, seed=0)
    scheme = TurnsScheme(city.graph)
    text, ids = examples_text(scheme, city, episodes, episodes[0], 2)
    assert len(ids) == 2 and episodes[0].id not in ids
    assert text.count("\nExample ") == 2 and text.count("STOP") == 2
    traj, actions = gold_trajectory(
        scheme, city, episodes[0], lambda n, h: MapLandmarkObserver(city).seen(n, h, ["cafe"])
    )
    assert traj.actions[-1] == "STOP" and len(traj.actions) == len(actions)
    assert examples_text(scheme, city, [episodes[0]], episodes[0], 2)[1] == []


# ---------------------------------------------------------------------- the agent
def test_agent_is_registered_and_checks_its_setup(city, episodes):
    assert AGENTS["velma"] is VelmaAgent
    env = NavigationEnv(city, episodes[:1], scheme="turns")
    env.reset()
    agent = make_agent("velma")
    with pytest.raises(FlaneurError, match="needs --llm"):
        agent.reset(episodes[0], env_info_for(env, model=None))
    headings = NavigationEnv(city, episodes[:1], scheme="headings")
    headings.reset()
    with pytest.raises(FlaneurError, match="--scheme turns"):
        agent.reset(episodes[0], env_info_for(headings, model=object()))
    with pytest.raises(FlaneurError, match="extract"):
        VelmaAgent(extract="magic")


def test_oracle_policy_makes_velma_succeed_and_prompts_are_logged(server, city, episodes):
    policy = velma_oracle_policy(city, episodes)
    rows = run_toy(server, city, episodes, policy)
    assert all(r["success"] and r["termination"] == "stopped" for r in rows), rows
    assert policy.unknown == 0
    requests = [r.last_user_text for r in server.requests]
    logged = {rec["prompt"] for r in rows for rec in r["records"]}
    extraction = [rec["landmark_extraction"] for r in rows for rec in r["records"][:1]]
    nav = [t for t in requests if not t.startswith("Instruction: ")]
    assert set(nav) <= logged and len(nav) == sum(len(r["records"]) for r in rows)
    assert all(e["method"] == "model" and "Instruction:" in e["prompt"] for e in extraction)
    first = rows[0]["records"][0]
    assert first["prompt_id"].startswith("velma-nav-1:") and first["method"] == "logprobs"
    assert first["landmarks"] == ["cafe", "museum"] and first["landmark_source"] == "map"
    assert len(first["examples"]) == 2 and rows[0]["episode_id"] not in first["examples"]
    assert first["observation"] == "There is a cafe ahead of you."
    assert 0.5 < first["confidence"] <= 1.0 and first["system_prompt"]
    assert first["prompt"].endswith("Action sequence:\n1. There is a cafe ahead of you.\n2.")


def test_malformed_replies_are_counted_never_fatal(server, city, episodes):
    replies = iter(["[]", "FORWARD", "hmm, not sure", "", "Turn around.", "STOP"] * 50)
    rows = run_toy(
        server,
        city,
        episodes,
        lambda req: next(replies),
        only=episodes[:1],
        model_kw={"supports_logprobs": False},
    )
    row = rows[0]
    assert row["termination"] == "stopped" and "error" not in row
    records = row["records"]
    assert [r.get("parse_failures", 0) for r in records] == [0, 1, 1, 0, 0]
    assert records[1]["thoughts"].startswith("no action in the reply: fallback FORWARD")
    assert row["actions"] == ["forward", "forward", "forward", "turn_around", "stop"]
    assert records[0]["landmark_extraction"]["method"] == "model"  # "[]" parsed: no landmarks
    assert records[3]["method"] == "text"
    replies = iter(["no list here", "STOP"])
    row = run_toy(server, city, episodes, lambda req: next(replies), only=episodes[:1])[0]
    first = row["records"][0]
    assert first["parse_failures"] == 1 and first["landmarks"] == ["cafe", "museum"]
    assert first["landmark_extraction"]["method"] == "rules (unparseable reply)"


def test_invalid_choices_become_allowed_actions(server, city, episodes):
    ep = episodes[0]  # starts on W1, a 2-way node: LEFT is not allowed there
    scored = lambda req: FakeReply("LEFT", first_token_probs={"LEFT": 0.7, "STOP": 0.3})  # noqa: E731
    row = run_toy(server, city, episodes, scored, only=[ep])[0]
    assert row["actions"] == ["stop"] and "best allowed STOP" in row["records"][0]["thoughts"]
    replies = iter(["[]", "LEFT", "STOP"])
    row = run_toy(
        server,
        city,
        episodes,
        lambda req: next(replies),
        only=[ep],
        model_kw={"supports_logprobs": False},
    )[0]
    assert row["actions"] == ["forward", "stop"]  # VELMA's remapping on a 2-way node
    assert "remapped to FORWARD" in row["records"][0]["thoughts"]
    assert not row["invalid_actions"]


def test_rules_extraction_makes_no_extra_call(server, city, episodes):
    policy = velma_oracle_policy(city, episodes)
    rows = run_toy(
        server,
        city,
        episodes,
        policy,
        agent_kw={"extract": "rules", "k_shot": 0},
        only=episodes[:2],
    )
    assert server.chat_count == sum(len(r["records"]) for r in rows)
    assert rows[0]["records"][0]["landmark_extraction"] == {"method": "rules"}
    assert "Example 1" not in rows[0]["records"][0]["prompt"]


def test_views_with_a_vlm_scorer_send_images(server, city, episodes):
    from flaneur.views import SyntheticViews

    oracle = velma_oracle_policy(city, episodes)

    def policy(req):
        if req.image_count:  # the VLM landmark question: "A" = the first landmark
            return "A"
        return oracle(req)

    rows = run_toy(
        server,
        city,
        episodes,
        policy,
        only=episodes[:1],
        views=SyntheticViews(city),
        landmarks="vlm",
    )
    row = rows[0]
    assert row["success"] and row["records"][0]["landmark_source"] == "vlm"
    assert sum(r.image_count for r in server.requests) >= 5
    assert "There is a cafe on your left." in row["records"][0]["observation"]
    asked = {r.last_user_text for r in server.requests if r.image_count}
    assert asked and asked <= set(row["records"][0]["landmark_prompts"])
    assert row["records"][0]["view_headings"] == [0.0, 45.0, 90.0, 135.0, 180.0]


@pytest.mark.skipif(
    importlib.util.find_spec("rapidocr_onnxruntime") is None, reason="rapidocr not installed"
)
def test_ocr_observer_reads_signs_in_synthetic_views(city):
    from flaneur.perception.landmarks.registry import make_landmark_scorer
    from flaneur.views import SyntheticViews

    observer = ViewLandmarkObserver(SyntheticViews(city), city, make_landmark_scorer("ocr"))
    seen = asyncio.run(observer.aseen(city.graph.index("W1"), 90.0, ["Cafe Aalto"]))
    assert seen and seen[0][0] == "Cafe Aalto" and seen[0][1] in (1, 2, 3)


def test_runner_integration_with_agent_factory(server, city, episodes, tmp_path):
    server.configure(velma_oracle_policy(city, episodes))
    config = RunConfig(
        agents=("velma",),
        tasks=("toy",),
        llm="fake-model",
        llm_base_url=server.base_url,
        landmarks="map",
        cache_mode="off",
    )
    summary = run_benchmark(
        config,
        tmp_path / "run",
        progress="none",
        agent_factory=lambda name: VelmaAgent(examples_from=episodes),
        loaded={"toy": (city, episodes)},
    )
    assert summary["by_termination"] == {"stopped": len(episodes)}
    rows, _ = read_rows(tmp_path / "run" / "episodes.jsonl")
    assert all(r["metrics"]["tc"] == 1 for r in rows)
    assert all("prompt" in rec for r in rows for rec in r["records"])


# ---------------------------------------------------------------------- oracle policy
def test_oracle_policy_reads_prompts(city, episodes):
    policy = VelmaOraclePolicy([(city, episodes)])
    prompt = load_prompt("velma", "navigate")
    text, _ = prompt.fill(
        examples="",
        instructions=episodes[1].instruction,
        trajectory="1. There is a 4-way intersection.\n2. FORWARD\n3.",
    )
    assert policy.parse(text) == (episodes[1].instruction, ["FORWARD"])
    assert policy.answer(episodes[1].instruction, ["FORWARD", "FORWARD"]) == "RIGHT"
    assert policy.answer("unknown instruction", []) is None

    class Req:
        def __init__(self, system, user):
            self._t = {"system": [system], "user": [user]}

        def texts(self, role=None):
            return self._t[role]

        @property
        def last_user_text(self):
            return self._t["user"][-1]

    assert policy(Req("", "What now?")) == NO_ANSWER and policy.unknown == 1
    from flaneur.perception.extraction import SYSTEM

    assert json.loads(policy(Req(SYSTEM, "Instruction: Walk past the Sea Museum."))) == [
        "Sea Museum"
    ]


# ---------------------------------------------------------------------- fine-tuning export
def test_export_matches_what_the_agent_sends(server, city, episodes):
    scheme = TurnsScheme(city.graph)
    policy = velma_oracle_policy(city, episodes)
    for k in (0, 2):
        rows = run_toy(
            server,
            city,
            episodes,
            policy,
            agent_kw={"extract": "rules", "k_shot": k},
            only=episodes[:4],
        )
        for row, ep in zip(rows, episodes[:4], strict=True):
            sent = [rec["prompt"] for rec in row["records"]]
            gold = list(gold_prompts(scheme, city, ep, pool=episodes, k_shot=k))
            assert sent == [g[0] for g in gold]
            assert [a.upper() for a in row["actions"]] == [g[2] for g in gold]


def test_episode_format_and_cli(city, episodes, tmp_path):
    scheme = TurnsScheme(city.graph)
    [record] = episode_records(scheme, city, episodes[1], fmt="episode", metadata=True)
    roles = [m["role"] for m in record["messages"]]
    assert roles[0] == "system" and roles[1::2] == ["user"] * (len(roles) // 2)
    assert record["messages"][-1] == {"role": "assistant", "content": "STOP"}
    assert record["metadata"]["episode_id"] == episodes[1].id
    assert record["messages"][3]["content"].endswith(".")  # next lines + cue
    stats = export_finetune([("toy", city, episodes)], tmp_path / "a.jsonl", limit=2)
    lines = (tmp_path / "a.jsonl").read_text().splitlines()
    assert stats.records == len(lines) == stats.steps and stats.episodes == 2
    register_task(
        TaskSpec(id=TOY_TASK, description="toy", build=lambda _: (toy_city(), toy_episodes())),
        replace=True,
    )
    out = tmp_path / "ft" / "b.jsonl"
    main(
        ["export", "finetune", "--tasks", TOY_TASK, "-o", str(out), "--format", "episode", "--json"]
    )
    data = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(data) == len(episodes) and all("messages" in d for d in data)
    with pytest.raises(SystemExit) as bad:
        main(["export", "finetune", "--tasks", TOY_TASK, "-o", str(out), "--format", "bad"])
    assert bad.value.code == 2

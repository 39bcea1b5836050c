"""The CitySeeker agent: prompts, parsing, views, step limit and the runner (fake server)."""

from __future__ import annotations

import asyncio
import json

import pytest

from flaneur.agents import AGENTS, make_agent
from flaneur.agents.cityseeker import (
    CitySeekerAgent,
    build_options,
    coarse_label,
    parse_choice,
    parse_stop,
    parse_strategies,
)
from flaneur.env import NavigationEnv, toy_episodes
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.models import make_model
from flaneur.tasks.episode import Episode
from flaneur.testing import FakeOpenAIServer
from harness.cityseeker_policies import (
    ScriptedCitySeeker,
    option_headings,
    options_of,
    prompt_kind,
    reply,
)


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer(ScriptedCitySeeker()) as srv:
        yield srv


@pytest.fixture
def fake(server):
    server.configure(ScriptedCitySeeker())
    return server


def run(city, srv, episode, agent, *, views=None):
    model = make_model("fake-model", base_url=srv.base_url)
    env = NavigationEnv(city, [episode], scheme="headings")
    return asyncio.run(
        run_episode(env, agent, episode, seed=0, task_id="toy", model=model, views=views)
    )


def texts(srv, kind):
    return [r.last_user_text for r in srv.requests if prompt_kind(r.last_user_text) == kind]


# ---------------------------------------------------------------------- parsing
def test_parse_stop_is_lenient():
    assert parse_stop('{"decision": "stop", "confidence": 0.9}').stop
    got = parse_stop(
        'Sure!\n```json\n{"thought": "a cafe", "decision": "Continue", "confidence": "80%"}\n```'
    )
    assert got.ok and not got.stop and got.confidence == 0.8 and got.thought == "a cafe"
    assert parse_stop("{'decision': 'stop', 'confidence': 95,}").confidence == 0.95
    assert parse_stop('"decision": "stop", "confid').stop  # cut-off JSON, pattern fallback
    bad = parse_stop("I would keep walking.")
    assert not bad.ok and not bad.stop and bad.confidence is None


def test_parse_choice_letters_labels_numbers_and_fallback():
    labels = ["FRONT", "LEFT", "RIGHT"]
    assert parse_choice('{"choice": "B", "confidence": 0.7}', labels).index == 1
    assert parse_choice('{"choice": "Option C."}', labels).index == 2
    assert parse_choice('{"option": "left"}', labels).index == 1
    assert parse_choice('{"answer": 3}', labels).index == 2
    assert parse_choice('blah "choice": "b" blah', labels).index == 1
    for bad in ("no idea", '{"choice": "Z"}', '{"choice": "UP"}', ""):
        got = parse_choice(bad, labels)
        assert not got.ok and got.index == 0 and got.confidence is None  # option A = action 0


def test_strategy_switches():
    assert parse_strategies("b1, R3") == ("b1", "r3")
    assert parse_strategies(["c1", "c1", "r2"]) == ("c1", "r2")
    assert parse_strategies(None) == () and parse_strategies("") == ()
    with pytest.raises(FlaneurError, match="unknown CitySeeker strategy 'b9'"):
        CitySeekerAgent("b1,b9")


# ---------------------------------------------------------------------- options
def test_options_are_lettered_from_the_front(city):
    x4 = city.graph.index("X4")
    opts = build_options(city, x4, 90.0)  # facing east at the 4-way crossing
    assert [o.letter for o in opts] == ["A", "B", "C", "D"]
    assert next(o.coarse for o in opts) == "FRONT" and opts[-1].coarse == "BACK"
    assert {o.coarse for o in opts[1:3]} == {"LEFT", "RIGHT"}
    assert city.graph.ids[opts[0].target] == "E1" and city.graph.ids[opts[-1].target] == "W1"
    assert (
        coarse_label(-100) == "LEFT" and coarse_label(45) == "FRONT" and coarse_label(170) == "BACK"
    )


def test_registered_and_needs_a_model_and_the_headings_scheme(city):
    assert AGENTS["cityseeker"] is CitySeekerAgent
    agent = make_agent("cityseeker", strategies="b1,r3", round=2)
    assert agent.strategy_codes == ("b1", "r3") and agent.round == 2
    ep = toy_episodes()[0]
    env = NavigationEnv(city, [ep], scheme="headings")
    env.reset(options={"episode": ep})
    from flaneur.agents import env_info_for

    with pytest.raises(FlaneurError, match="needs --llm"):
        agent.reset(ep, env_info_for(env, model=None))
    turns = NavigationEnv(city, [ep], scheme="turns")
    turns.reset(options={"episode": ep})
    with pytest.raises(FlaneurError, match="--scheme headings"):
        agent.reset(ep, env_info_for(turns, model=object()))


# ---------------------------------------------------------------------- the loop
def test_text_prompts_describe_each_heading_from_the_map(city, fake):
    ep = toy_episodes()[0]  # W1 facing east; Cafe Aalto lies ahead beyond X4
    row = run(city, fake, ep, CitySeekerAgent())
    assert row["termination"] in ("stopped", "step_limit")
    stop, choice = texts(fake, "stop")[0], texts(fake, "choice")[0]
    assert "Task: Walk east past the cafe" in stop and "You stand at a street" in stop
    assert options_of(choice) == [("A", "FRONT"), ("B", "BACK")]
    front_line = next(line for line in choice.splitlines() if line.startswith("A. FRONT"))
    assert "Cafe Aalto" in front_line and "intersection with 4 streets" in front_line
    assert option_headings(choice) == {"A": 90.0, "B": 270.0}
    assert all(r.image_count == 0 for r in fake.requests)


def test_views_attach_one_image_per_heading(city, fake):
    from flaneur.views import SyntheticViews

    ep = toy_episodes()[1]  # starts on X4: four streets
    fake.configure(
        lambda req: (
            reply(prompt_kind(req.last_user_text), decision="stop")
            if "Step 2 " in req.last_user_text
            else reply(prompt_kind(req.last_user_text))
        )
    )
    row = run(city, fake, ep, CitySeekerAgent(view_size=(160, 92)), views=SyntheticViews(city))
    counts = [(prompt_kind(r.last_user_text), r.image_count) for r in fake.requests]
    assert counts == [("stop", 1), ("choice", 4), ("stop", 1)]
    assert row["path"] == ["X4", "E1"] and row["termination"] == "stopped"
    first = row["records"][0]
    assert first["prompt"].count("[image ") == 5 and "see image 4" in first["prompt"]
    assert [c["images"] for c in first["calls"]] == [1, 4]


def test_parse_failures_are_counted_never_fatal(city, fake):
    fake.configure(lambda req: "Hmm, hard to say.")
    ep = toy_episodes()[0]
    row = run(city, fake, ep, CitySeekerAgent())
    assert row["termination"] == "step_limit" and "error" not in row
    assert all(r["parse_failures"] == 2 for r in row["records"])
    assert all(r["parsed_action"].startswith("A:") for r in row["records"])  # fallback: option A
    assert row["path"][:6] == ["W1", "X4", "E1", "T3", "E3", "D"]


def test_agent_stops_itself_after_35_steps(city, fake):
    fake.configure(lambda req: reply(prompt_kind(req.last_user_text), confidence=0.9))
    ep = Episode(
        id="long",
        city="toy",
        instruction="Wander.",
        start_node="W2",
        start_heading=90.0,
        goal_nodes=("D",),
        max_steps=60,
    )
    row = run(city, fake, ep, CitySeekerAgent())
    assert row["termination"] == "stopped" and row["steps"] == 36
    assert row["records"][-1]["thoughts"] == "step limit (35) reached"
    assert "Step 35 of at most 35" in texts(fake, "choice")[-1]


def test_model_stop_decision_ends_the_episode(city, fake):
    fake.configure(
        lambda req: reply(prompt_kind(req.last_user_text), decision="stop", confidence=0.6)
    )
    row = run(city, fake, toy_episodes()[0], CitySeekerAgent())
    assert row["steps"] == 1 and row["actions"] == ["stop"] and fake.chat_count == 1
    assert row["records"][0]["confidence"] == 0.6


def test_runner_end_to_end_and_prompts_read_back_from_the_log(city, tmp_path):
    from flaneur.views import SyntheticViews  # noqa: F401 - the runner builds it by name

    eps = [e for e in toy_episodes()]
    with FakeOpenAIServer(ScriptedCitySeeker(seed=5, garbage_rate=0.2)) as srv:
        for views in (None, "synthetic"):
            out = tmp_path / f"run-{views}"
            config = RunConfig(
                agents=("cityseeker",),
                tasks=("toy",),
                scheme="headings",
                llm="fake-model",
                llm_base_url=srv.base_url,
                cache_mode="off",
                views=views,
                agent_options={"strategies": "b1,r3", "view_size": (160, 92)},
            )
            before = srv.chat_count
            summary = run_benchmark(config, out, progress="none", loaded={"toy": (city, eps)})
            sent = [r.last_user_text for r in list(srv.requests)[before:]]
            rows = read_rows(out / "episodes.jsonl")[0]
            assert summary["episodes"] == len(eps)
            assert all(r["termination"] in ("stopped", "step_limit") for r in rows)
            logged = "\n".join(rec.get("prompt", "") for r in rows for rec in r["records"])
            assert sent and all(text in logged for text in sent)
            failures = sum(rec.get("parse_failures", 0) for r in rows for rec in r["records"])
            assert failures > 0
            assert all(rec["strategies"] == "b1,r3" for r in rows for rec in r["records"])
            images = sum(r.image_count for r in list(srv.requests)[before:])
            assert (images > 0) == (views is not None)
    json.dumps(rows)  # rows are plain JSON


def test_missing_imagery_falls_back_to_map_text(city, fake):
    from flaneur.views import NoImageryError

    class NoImagery:
        name = "none"

        def view(self, node, heading, **kw):
            raise NoImageryError("no imagery near this node", provider="test")

    fake.configure(
        lambda req: (
            reply(prompt_kind(req.last_user_text), decision="stop")
            if "Step 2 " in req.last_user_text
            else reply(prompt_kind(req.last_user_text))
        )
    )
    row = run(city, fake, toy_episodes()[0], CitySeekerAgent(), views=NoImagery())
    assert row["termination"] == "stopped" and all(r.image_count == 0 for r in fake.requests)
    assert "Cafe Aalto" in texts(fake, "choice")[0]
    assert any(e.startswith("views: unavailable") for e in row["records"][0]["strategy_events"])

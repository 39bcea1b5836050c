"""The MapGPT agent: prompt building, lenient parsing, stop gating, backtracking, one-stage
images, captions, run-log read-back and the oracle-fake policy (toy city, fake server)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from flaneur.agents import AGENTS, env_info_for, make_agent
from flaneur.agents.mapgpt import MapGPTAgent, Option, option_letters, parse_reply
from flaneur.agents.mapgpt.describe import PlaceDescriber, intersection_kind
from flaneur.agents.mapgpt.prompt_builder import (
    advance_map,
    history_text,
    map_lines,
    move_phrase,
    trajectory_text,
)
from flaneur.agents.prompts import list_prompts, load_prompt
from flaneur.env import NavigationEnv
from flaneur.env.online_map import OnlineMap
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.models import make_model
from flaneur.testing import FakeOpenAIServer
from harness.oracle_policies_mapgpt import MapGPTOraclePolicy, read_prompt

TASK = "toy-mapgpt"
OPTION_LINE = re.compile(r"^([A-Z]{1,2})\. (.*)$", re.MULTILINE)


pytestmark = pytest.mark.usefixtures("isolated_model")


def options_of(text: str) -> dict[str, str]:
    """``{letter: option text}`` of a MapGPT prompt."""
    return dict(OPTION_LINE.findall(text.split("Action options", 1)[1]))


def run(city, episodes, policy, out, *, ids=None, views=None, landmarks=None, **options):
    with FakeOpenAIServer(policy) as srv:
        config = RunConfig(
            agents=("mapgpt",),
            tasks=(TASK,),
            llm="fake-model",
            llm_base_url=srv.base_url,
            scheme="nodes",
            ids=ids,
            views=views,
            landmarks=landmarks,
            cache_mode="off",
            agent_options=options,
            concurrency=2,
        )
        summary = run_benchmark(config, out, progress="none", loaded={TASK: (city, episodes)})
        requests = list(srv.requests)
    rows, _ = read_rows(out / "episodes.jsonl")
    return summary, {r["episode_id"]: r for r in rows}, requests


def toy_options() -> list[Option]:
    return [
        Option("A", 0, -1, -1, "stop"),
        Option("B", 1, 11, 4, "turn left to Place 4"),
        Option("C", 2, 12, 2, "go forward to Place 2"),
        Option("D", 3, 13, 0, "turn around to Place 0"),
    ]


# ---------------------------------------------------------------- parsing
@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("Thought: go on.\nNew Planning: left at Place 4.\nAction: B", "B"),
        ("Action: B.", "B"),
        ("Action: (C)", "C"),
        ("**Thought:** hmm\n**New Planning:** x\n**Action:** **D**", "D"),
        ('{"Thought": "t", "New Planning": "p", "Action": "C"}', "C"),
        ('```json\n{"thought": "t", "action": "B. turn left to Place 4"}\n```', "B"),
        ("Thought: x\nAction: turn left to Place 4", "B"),
        ("Thought: x\nAction: go to Place 2", "C"),
        ("Thought: x\nAction: stop", "A"),
        ("Thought: I think so.\nI choose option C.", "C"),
        ("b", "B"),
        ("C", "C"),
        ("Action: I pick D because it is straight", "D"),
        ("### Action: A", "A"),
    ],
)
def test_parse_reply_is_lenient(reply, letter):
    parsed = parse_reply(reply, toy_options())
    assert parsed.ok and parsed.option.letter == letter, parsed


def test_parse_reply_fields_and_failures():
    parsed = parse_reply(
        "Thought: at the corner\nNew Planning: Place 4 then stop\nAction: B", toy_options()
    )
    assert parsed.thought == "at the corner" and parsed.planning == "Place 4 then stop"
    assert parsed.method == "field"
    for bad in ("", "I am not sure what to do here.", "{not json", "Action: Z", "Action: maybe"):
        out = parse_reply(bad, toy_options())
        assert not out.ok and out.method == "none"
    no_stop = [o for o in toy_options() if not o.is_stop]
    assert not parse_reply("Action: stop", no_stop).ok  # stop not offered: no match
    assert parse_reply("A left turn to Place 4 looks right.", toy_options()).option.letter == "B"


def test_letters_phrases_and_kinds():
    assert option_letters(3) == ["A", "B", "C"]
    assert option_letters(28)[-3:] == ["Z", "AA", "AB"]
    assert move_phrase(0) == "go forward" and move_phrase(-90) == "turn left"
    assert move_phrase(45) == "turn slightly right" and move_phrase(170) == "turn around"
    assert intersection_kind(4) == "4-way intersection" and intersection_kind(1) == "dead end"
    assert set(list_prompts("mapgpt")) >= {"system", "system_vision", "step", "caption"}
    assert load_prompt("mapgpt", "step").version == "mapgpt-step-1"


def test_place_numbering_map_and_jump_routes(city):
    graph = city.graph
    m = OnlineMap(graph)
    x4, n1, e1 = (graph.index(i) for i in ("X4", "N1", "E1"))
    advance_map(m, x4)
    advance_map(m, n1)
    assert m.number(x4) == 0 and trajectory_text(m) == "Place 0, Place 1"
    lines = map_lines(m)
    assert lines[0] == "Place 0 is connected with Places 1, 2, 3, 4."
    assert lines[1].startswith("Place 1 is connected with Places 0, ")
    advance_map(m, e1)  # not adjacent to N1: the route over explored nodes is filled in
    assert [graph.ids[v] for v in m.trail] == ["X4", "N1", "X4", "E1"]
    assert history_text([]).startswith("none") and history_text(["a", "b"], window=1) == "step 2: b"


def test_describer_map_text(city):
    d = PlaceDescriber(city)
    x4 = city.graph.index("X4")
    assert d.map_description(x4).startswith("4-way intersection; near Cafe Aalto")
    with pytest.raises(FlaneurError, match="needs --views"):
        PlaceDescriber(city, source="ocr")
    with pytest.raises(FlaneurError, match="landmarks"):
        PlaceDescriber(city, source="clip")


# ---------------------------------------------------------------- set-up errors
def test_registry_and_reset_errors(city, episodes):
    assert AGENTS["mapgpt"] is MapGPTAgent and isinstance(make_agent("mapgpt"), MapGPTAgent)
    with pytest.raises(FlaneurError, match="mode"):
        MapGPTAgent(mode="three-stage")
    agent = MapGPTAgent()
    env = NavigationEnv(city, episodes, scheme="turns")
    env.reset(options={"episode": episodes[0]})
    with pytest.raises(FlaneurError, match="needs --llm"):
        agent.reset(episodes[0], env_info_for(env, model=None))
    with pytest.raises(FlaneurError, match="--scheme nodes"):
        agent.reset(episodes[0], env_info_for(env, model=object()))
    nodes_env = NavigationEnv(city, episodes, scheme="nodes")
    nodes_env.reset(options={"episode": episodes[0]})
    with pytest.raises(FlaneurError, match="needs --views"):
        MapGPTAgent(mode="one-stage").reset(episodes[0], env_info_for(nodes_env, model=object()))


# ---------------------------------------------------------------- runs
def test_oracle_policy_runs_and_prompts_are_logged(city, episodes, tmp_path):
    policy = MapGPTOraclePolicy(city, episodes, style="mixed")
    summary, rows, requests = run(city, episodes, policy, tmp_path)
    assert summary["by_termination"] == {"stopped": len(episodes)}
    assert all(r["success"] for r in rows.values()) and policy.unmatched == 0
    records = [rec for r in rows.values() for rec in r["records"]]
    assert len(records) == len(requests) and not any(rec.get("parse_failures") for rec in records)
    logged = {rec["prompt"] for rec in records}
    for req in requests:  # every prompt sent can be read back from the run log
        system, user = req.texts("system")[0], req.last_user_text
        assert f"[system]\n{system}\n\n[user]\n{user}" in logged
    rec = rows["toy-fork"]["records"][1]
    assert rec["prompt_id"].startswith("mapgpt-step-1:") and rec["thoughts"] and rec["planning"]
    assert rec["parsed_action"] in {"T3", "E1", "X4"} and rec["tokens"][0] > 0
    assert "Trajectory: Place 0, Place " in rec["prompt"] and "is connected with" in rec["prompt"]


def test_scripted_letters(city, episodes, tmp_path):
    # toy-east starts on W1 facing east; options follow the candidates' heading order and
    # stop (A) comes first from step 3: W1 -> A (X4), X4 -> B (E1), E1 -> B (T3), stop
    script = ["Action: A", "Thought: on\nAction: B", "Action: (B)", "Action: A"]
    _, rows, requests = run(city, episodes, script, tmp_path, ids=("toy-east",))
    row = rows["toy-east"]
    assert row["path"] == ["W1", "X4", "E1", "T3"] and row["termination"] == "stopped"
    assert [rec["letter"] for rec in row["records"]] == ["A", "B", "B", "A"]
    assert "A. stop" not in requests[0].last_user_text


def test_malformed_replies_are_counted_with_fallback(city, episodes, tmp_path):
    _, rows, _ = run(
        city, episodes, ["I am not sure.", "{not json", ""], tmp_path, ids=("toy-east",)
    )
    row = rows["toy-east"]
    assert row["termination"] == "step_limit" and not row.get("error")
    fails = [rec.get("parse_failures", 0) for rec in row["records"]]
    assert fails == [1] * len(row["records"])
    assert row["path"][:6] == ["W1", "X4", "E1", "T3", "E3", "D"]  # fallback: straight ahead
    assert all(rec.get("letter") is None for rec in row["records"])


def test_stop_gating(city, episodes, tmp_path):
    def always_stop(req):
        return "Thought: done\nAction: stop"

    _, rows, requests = run(city, episodes, always_stop, tmp_path / "a", ids=("toy-east",))
    row = rows["toy-east"]  # stop is not offered at steps 1 and 2: two fallback moves
    assert row["path"] == ["W1", "X4", "E1"] and row["actions"][-1] == "stop"
    texts = [r.last_user_text for r in requests]
    assert ["A. stop" in t for t in texts] == [False, False, True]
    assert "Action options (step 3):" in texts[2]
    _, rows, _ = run(city, episodes, always_stop, tmp_path / "b", ids=("toy-east",), stop_after=1)
    assert rows["toy-east"]["path"] == ["W1"]


def test_backtracking_through_jumps(city, episodes):
    """With allow_jumps the options include observed unvisited places ("go back to")."""
    seen: list[str] = []

    def policy(req):
        text = req.last_user_text
        seen.append(text)
        opts = options_of(text)
        if len(seen) == 1:  # at X4 facing north: go north to N1
            return "Action: " + next(k for k, v in opts.items() if v.startswith("go forward"))
        if len(seen) == 2:  # at N1: jump back to the place east of X4 (E1)
            return "Action: " + next(
                k for k, v in opts.items() if v.startswith("go back to") and "right" in v
            )
        return "Action: A"

    async def go():
        with FakeOpenAIServer(policy) as srv:
            model = make_model("fake-model", base_url=srv.base_url)
            env = NavigationEnv(
                city, episodes, scheme="nodes", scheme_options={"allow_jumps": True}
            )
            ep = episodes[3]  # toy-back: X4 facing north
            row = await run_episode(
                env,
                MapGPTAgent(stop_after=1),
                ep,
                seed=0,
                task_id="t",
                model=model,
                views=None,
                landmarks=None,
            )
            await model.aclose()
            return row

    row = asyncio.run(go())
    assert row["path"] == ["X4", "N1", "X4", "E1"] and row["termination"] == "stopped"
    assert row["steps"] == 4  # the jump walked two edges, one step each
    assert re.search(r"go back to Place \d+ \(2 steps, ", seen[1])
    assert "Trajectory: Place 0, Place 1, Place 0, Place " in seen[2]


def test_one_stage_attaches_images(city, episodes, tmp_path):
    counts: list[tuple[int, int]] = []

    def policy(req):
        text = req.last_user_text
        counts.append((req.image_count, len(re.findall(r"\(Image \d+\)", text))))
        return "Action: B"

    _, rows, requests = run(city, episodes, policy, tmp_path, ids=("toy-five",), views="synthetic")
    assert counts and all(n > 0 and n == k for n, k in counts)
    assert all(r.texts("system")[0].startswith("You are a navigation agent") for r in requests)
    assert "images attached" in requests[0].texts("system")[0]
    rec = rows["toy-five"]["records"][0]
    assert rec["images"] == counts[0][0] and "[image 1] view towards Place" in rec["prompt"]


def test_two_stage_captions_from_a_vlm(city, episodes, tmp_path):
    def policy(req):
        if req.image_count:  # the caption question
            return "A narrow street with a blue sign reading CAFE."
        return "Action: B"

    _, rows, requests = run(
        city, episodes, policy, tmp_path, ids=("toy-east",), views="synthetic", landmarks="vlm"
    )
    nav = [r for r in requests if not r.image_count]
    assert nav and "reading CAFE" in nav[0].last_user_text
    recs = rows["toy-east"]["records"]
    captions = [c for rec in recs for c in rec.get("captions", [])]
    assert len(captions) == len(requests) - len(nav)
    assert captions[0]["prompt"] == requests[0].last_user_text
    assert all(rec.get("images", 0) == 0 for rec in recs)


def test_read_prompt_and_oracle_choice(city, episodes, tmp_path):
    policy = MapGPTOraclePolicy(city, episodes)
    _, rows, requests = run(city, episodes, policy, tmp_path, ids=("toy-back",))
    instruction, trajectory, options = read_prompt(requests[1].last_user_text)
    assert instruction == episodes[3].instruction and trajectory == [0, 1]
    assert [o.letter for o in options] == ["A", "B"] and options[1].phrase.startswith("turn around")
    assert rows["toy-back"]["path"] == ["X4", "N1", "X4", "E1"]
    with pytest.raises(ValueError):
        MapGPTOraclePolicy(city, episodes, style="fancy")


def test_letter_not_offered_is_a_failure(city, episodes, tmp_path):
    # toy-goal starts on the dead end W2: the only option at step 1 is A (W1)
    _, rows, requests = run(city, episodes, ["Action: B"], tmp_path, ids=("toy-goal",))
    row = rows["toy-goal"]
    json.dumps(row)  # records (prompt, planning, tokens) serialise
    assert list(options_of(requests[0].last_user_text)) == ["A"]
    first = row["records"][0]
    assert first["parse_method"] == "none" and first["parse_failures"] == 1
    assert row["path"][:2] == ["W2", "W1"] and row["records"][1]["letter"] == "B"


def test_two_stage_ocr_descriptions_use_the_view_towards_the_option(city):
    from PIL import Image

    from flaneur.perception import TextBox
    from flaneur.views import View

    asked: list[tuple[int, float]] = []

    class Views:
        name = "stub"

        def view(self, node, heading, **kw):
            asked.append((node, heading))
            return View(Image.new("RGB", (64, 36)), str(city.graph.ids[node]), heading)

    class Reader:
        def read(self, view):
            box = ((0, 0), (9, 0), (9, 9), (0, 9))
            return [TextBox("CAFE AALTO", box, 0.9)] if view.heading < 180 else []

    d = PlaceDescriber(city, source="ocr", views=Views())
    d._ocr = Reader()
    x4, e1, w1 = (city.graph.index(i) for i in ("X4", "E1", "W1"))
    east, west = asyncio.run(d.describe_many(x4, [(e1, 90.0), (w1, 270.0)]))
    assert east == 'street; signs: "CAFE AALTO"' and west == "street; no readable signs"
    assert sorted(asked) == [(x4, 90.0), (x4, 270.0)]
    assert asyncio.run(d.describe(x4, e1, None)).startswith("street")  # not in view: map text

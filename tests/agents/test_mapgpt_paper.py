"""MapGPT under ``--protocol paper``: each setting where MapGPT's released code differs from
flaneur's rules, pinned against both protocols (toy city, fake server; ``docs/fidelity.md``
names these tests)."""

from __future__ import annotations

import re

import pytest

from flaneur.agents.mapgpt import MapGPTAgent, Option
from flaneur.agents.mapgpt.paper import (
    NO_PLAN_READ,
    move_phrase_paper,
    parse_reply_paper,
    read_action,
    read_planning,
    stop_offered,
)
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.options import describe_options
from flaneur.testing import FakeOpenAIServer, constant_policy
from harness.oracle_policies_mapgpt import MapGPTOraclePolicy, read_prompt

TASK = "toy-mapgpt"
OPTION_LINE = re.compile(r"^([A-Z]{1,2})\. (.*)$", re.MULTILINE)
PLACE = re.compile(r"Place (\d+)")
UNSURE = "I am not sure where to go from here."
V = "synthetic"


pytestmark = pytest.mark.usefixtures("isolated_model")


def run(city, episodes, policy, out, *, protocol, ids=None, views=None, **options):
    """One MapGPT run on the toy task set: ``(rows by id, requests)``; a string policy is
    the constant reply."""
    if isinstance(policy, str):
        policy = constant_policy(policy)
    with FakeOpenAIServer(policy) as srv:
        config = RunConfig(
            agents=("mapgpt",),
            tasks=(TASK,),
            llm="fake-model",
            llm_base_url=srv.base_url,
            scheme="nodes",
            ids=ids,
            views=views,
            cache_mode="off",
            agent_options=options,
            concurrency=1,
            protocol=protocol,
        )
        run_benchmark(config, out, progress="none", loaded={TASK: (city, episodes)})
        requests = list(srv.requests)
    rows, _ = read_rows(out / "episodes.jsonl")
    return {r["episode_id"]: r for r in rows}, requests


def options_of(text: str) -> dict[str, str]:
    """``{letter: option text}`` of a MapGPT prompt."""
    return dict(OPTION_LINE.findall(text.split("Action options", 1)[1]))


def section(text: str, head: str, end: str) -> str:
    """The lines of a prompt between ``head`` and ``end``."""
    return text.split(f"\n{head}\n", 1)[1].split(f"\n{end}", 1)[0]


def toy_options(with_stop: bool = True) -> list[Option]:
    moves = [Option("B", 1, 11, 4, "turn left to Place 4"), Option("C", 2, 12, 2, "go forward")]
    if not with_stop:
        return [Option("A", 1, 11, 4, "turn left to Place 4"), Option("B", 2, 12, 2, "go on")]
    return [Option("A", 0, -1, -1, "stop"), *moves]


# ---------------------------------------------------------------- when stop is offered
def test_paper_offers_stop_after_three_moves_as_mapgpt(city, episodes, tmp_path):
    """MapGPT (``t >= stop_after``, t from 0, ``--stop_after 3``) makes three moves before
    stop is offered; flaneur's prompt counts from 1 and offers it after two."""
    assert [stop_offered(t, 3, paper=True) for t in range(5)] == [False] * 3 + [True] * 2
    assert [stop_offered(t, 3, paper=False) for t in range(5)] == [False] * 2 + [True] * 3
    rows, requests = run(city, episodes, "Action: A", tmp_path / "p", protocol="paper")
    for row in rows.values():  # A is a move until stop is offered, then stop
        assert row["termination"] == "stopped" and len(row["path"]) == 4, row["path"]
    texts = [r.last_user_text for r in requests if "Walk east past the cafe" in r.last_user_text]
    assert ["A. stop" in t for t in texts] == [False, False, False, True]
    assert [re.search(r"Action options \(step (\d+)\)", t).group(1) for t in texts] == list("0123")
    assert "History: step 0: " in texts[1] and "step 2: " in texts[3]
    rows, requests = run(city, episodes, "Action: A", tmp_path / "f", protocol="flaneur")
    assert all(len(row["path"]) == 3 for row in rows.values())
    east = [r.last_user_text for r in requests if "Walk east past" in r.last_user_text]
    assert "Action options (step 3):" in east[2] and "A. stop" in east[2]
    assert "History: step 1: " in east[1]


# ---------------------------------------------------------------- unreadable replies
def test_paper_unsure_model_stops_exactly_when_mapgpt_would(city, episodes, tmp_path):
    """An unreadable reply is MapGPT's option 0: the first move before stop is offered
    (``parse_action`` adds 1), stop from then on; flaneur never stops on one."""
    rows, requests = run(city, episodes, UNSURE, tmp_path / "p", protocol="paper")
    for row in rows.values():
        assert row["termination"] == "stopped" and row["actions"][-1] == "stop"
        assert len(row["path"]) == 4 and [r["parse_failures"] for r in row["records"]] == [1] * 4
        assert all(r["parse_method"] == "none" and r.get("letter") is None for r in row["records"])
    row = rows["toy-east"]  # each move was option A of its prompt
    east = [r.last_user_text for r in requests if "Walk east past" in r.last_user_text]
    firsts = [PLACE.search(options_of(t)["A"]).group(1) for t in east[:3]]
    later = [read_prompt(t)[1] for t in east[1:]]
    assert [traj[-1] for traj in later] == [int(n) for n in firsts]
    assert row["path"][0] == "W1"
    rows, _ = run(city, episodes, UNSURE, tmp_path / "f", protocol="flaneur", ids=("toy-east",))
    assert rows["toy-east"]["termination"] == "step_limit"


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("Thought: on.\nNew Planning: east.\nAction: B", "B"),
        ("Action:C", "C"),
        ("Action:   B because it is straight", "B"),
        ("**Action:** B", None),  # no letter right after "Action:"
        ('{"Thought": "t", "Action": "B"}', None),  # str format: "Action" then a quote
        ("Action: B\nI weighed the Action options.", None),  # read from the last "Action"
        ("I choose option B.", None),  # no "Action" at all (MapGPT's code raises)
        ("action: b", None),
        ("Action: D", None),  # not offered
    ],
)
def test_paper_reads_replies_as_mapgpt_parse_action(reply, letter):
    found = read_action(reply, toy_options())
    assert (found.letter if found else None) == letter
    parsed = parse_reply_paper(reply, toy_options())
    assert parsed.method == ("mapgpt" if letter else "none")


# ---------------------------------------------------------------- planning
def test_paper_plan_is_replaced_as_mapgpt_parse_planning(city, episodes, tmp_path):
    """MapGPT keeps the text between ``New Planning:`` and ``Action:`` with ``new`` written
    ``previous``, and a reply without it leaves no plan; flaneur keeps the previous plan."""
    reply = "Thought: x\nNew Planning: find the new square, then stop.\nAction: B"
    assert read_planning(reply) == "find the previous square, then stop."
    assert read_planning("New Planning: a\nAction: B") == ""  # needs a line before it
    assert read_planning("Thought: x\nAction: B\nNew Planning: late") == ""
    script = [reply, "Thought: y\nAction: A", "Thought: z\nAction: A"]
    for protocol, shown in (("paper", NO_PLAN_READ), ("flaneur", "find the new square")):
        _, requests = run(
            city, episodes, script, tmp_path / protocol, protocol=protocol, ids=("toy-east",)
        )
        texts = [r.last_user_text for r in requests]
        plan = texts[1].split("Previous Planning: ", 1)[1]
        assert plan.startswith("find the previous square" if protocol == "paper" else shown)
        assert texts[2].split("Previous Planning: ", 1)[1].startswith(shown)


def test_no_planning_ablation_drops_planning_from_the_prompt(city, episodes, tmp_path):
    """``planning=False`` (the paper's ablation) removes ``Previous Planning`` from the step
    and ``New Planning`` from the reply format, under either protocol."""
    described = describe_options(MapGPTAgent)["planning"]
    assert described["default"] is True and "ablation" in described["help"]
    for protocol in ("paper", "flaneur"):
        script = ["Thought: a\nNew Planning: go east\nAction: A"]
        _, requests = run(
            city, episodes, script, tmp_path / protocol, protocol=protocol, ids=("toy-east",)
        )
        assert "Previous Planning" in requests[0].last_user_text
        _, requests = run(
            city,
            episodes,
            script,
            tmp_path / f"{protocol}-no",
            protocol=protocol,
            ids=("toy-east",),
            planning=False,
        )
        for req in requests:
            assert "Planning" not in req.last_user_text
            assert "Planning" not in req.texts("system")[0]
            assert "Action: <the letter of one option>" in req.texts("system")[0]


# ---------------------------------------------------------------- supplementary map
def test_paper_supplementary_lists_every_place_without_distances(city, episodes, tmp_path):
    """MapGPT's Supplementary Info names every observed, unvisited place that is not an
    option, in number order, with no direction or distance."""
    _, requests = run(city, episodes, "Action: B", tmp_path / "p", protocol="paper")
    checked = 0
    for req in requests:
        text = req.last_user_text
        supp = section(text, "Supplementary Info:", "Previous Planning:")
        assert " m away" not in supp and "behind you" not in supp and "ahead" not in supp
        mapped = {int(n) for n in re.findall(r"\d+", section(text, "Map:", "Supplementary"))}
        _, trajectory, options = read_prompt(text)
        expected = sorted(mapped - set(trajectory) - {o.place for o in options})
        listed = [int(n) for n in PLACE.findall(supp)]
        assert listed == expected, text
        checked += bool(listed)
        for line in supp.splitlines() if listed else ():
            assert re.fullmatch(r"Place \d+: (\d-way intersection|street|dead end).*", line)
    assert checked
    _, requests = run(city, episodes, "Action: B", tmp_path / "f", protocol="flaneur")
    assert any(" m away" in r.last_user_text for r in requests)


# ---------------------------------------------------------------- one-stage views
def test_paper_one_stage_shows_the_view_of_every_place_seen(city, episodes, tmp_path):
    """MapGPT attaches an image of every observed place (``Image N:`` then the view towards
    ``Place N`` from where it was last an option), before the text; flaneur attaches the
    views towards the adjacent options only."""
    rows, requests = run(
        city, episodes, "Action: A", tmp_path / "p", protocol="paper", ids=("toy-five",), views=V
    )
    for k, req in enumerate(requests):
        parts = req.messages[-1]["content"]
        labels = [p["text"] for p in parts if p["type"] == "text"][:-1]
        assert parts[-1]["type"] == "text" and parts[-1]["text"].startswith("Instruction:")
        assert [p["type"] for p in parts[:-1]] == ["text", "image_url"] * len(labels)
        text = req.last_user_text
        seen = {int(n) for n in re.findall(r"\d+", section(text, "Map:", "Supplementary"))}
        expected = sorted(seen - {0}) if k == 0 else sorted(seen)  # Place 0: once an option
        assert [int(re.match(r"Image (\d+):", t).group(1)) for t in labels] == expected
        for line in options_of(text).values():
            if line != "stop":
                assert re.search(r"to Place (\d+) \(Image \1\)", line), line
        supp = section(text, "Supplementary Info:", "Previous Planning:")
        for line in supp.splitlines() if supp != "none" else ():
            assert re.fullmatch(r"Place (\d+) \(Image \1\)", line), line
    assert len(labels) > len(options_of(requests[-1].last_user_text))
    assert "show the places you have seen" in requests[0].texts("system")[0]
    rec = rows["toy-five"]["records"][1]
    assert rec["images"] == requests[1].image_count
    assert re.search(r"\[image 1\] Image 0: view from Place \d+ towards Place 0", rec["prompt"])
    _, requests = run(
        city, episodes, "Action: A", tmp_path / "f", protocol="flaneur", ids=("toy-five",), views=V
    )
    for req in requests:
        moves = [v for v in options_of(req.last_user_text).values() if v != "stop"]
        assert req.image_count == len(moves)
        assert req.messages[-1]["content"][0]["text"].startswith("Instruction:")


# ---------------------------------------------------------------- move words
def test_paper_names_moves_with_mapgpt_words(city, episodes, tmp_path):
    """MapGPT's ``get_action_concept``: the agent's own 30-degree sector is ``go forward``,
    up to 90 degrees ``turn left/right``, beyond ``turn around``."""
    words = {
        0: "go forward",
        14: "go forward",
        -14: "go forward",
        16: "turn right",
        45: "turn right",
        90: "turn right",
        -60: "turn left",
        -100: "turn left",
        110: "turn around",
        180: "turn around",
        -170: "turn around",
    }
    assert {a: move_phrase_paper(a) for a in words} == words
    _, requests = run(city, episodes, "Action: B", tmp_path, protocol="paper")
    phrases = [v for r in requests for v in options_of(r.last_user_text).values()]
    assert phrases and not any("slightly" in p for p in phrases)
    assert {p.split(" to Place")[0] for p in phrases if p != "stop"} <= set(words.values())


def test_paper_oracle_follows_every_route(city, episodes, tmp_path):
    """Prompts built under ``paper`` lose nothing: the oracle-fake policy reaches every goal
    (it reads MapGPT's move words too)."""
    policy = MapGPTOraclePolicy(city, episodes)
    rows, _ = run(city, episodes, policy, tmp_path, protocol="paper")
    assert all(r["success"] for r in rows.values()) and policy.unmatched == 0
    assert all(r["protocol"] == "paper" for r in rows.values())


def test_read_action_without_stop_maps_letters_to_moves():
    no_stop = toy_options(with_stop=False)
    assert read_action("Action: A", no_stop).slot == 1
    assert read_action("Action: C", no_stop) is None

"""CitySeeker's BCR strategies: each one changes what the agent does in a test built for it."""

from __future__ import annotations

import asyncio
import re

import pytest

from flaneur.agents.cityseeker import CitySeekerAgent, GraphMemory
from flaneur.agents.cityseeker.memory import resolve_memory_path
from flaneur.env import NavigationEnv, toy_episodes
from flaneur.evaluate.episode import run_episode
from flaneur.models import make_model
from flaneur.tasks.episode import Episode
from flaneur.testing import FakeOpenAIServer
from harness.cityseeker_policies import hinted_option, option_headings, prompt_kind, reply, toward


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer("echo") as srv:
        yield srv


def play(city, srv, policy, episode, task="toy", **options):
    """Run one episode with ``policy`` answering; return the row and the prompts sent."""
    srv.configure(policy)
    model = make_model("fake-model", base_url=srv.base_url)
    env = NavigationEnv(city, [episode], scheme="headings")
    agent = CitySeekerAgent(**options)
    row = asyncio.run(run_episode(env, agent, episode, seed=0, task_id=task, model=model))
    assert "error" not in row, row.get("error")
    return row, [r.last_user_text for r in srv.requests]


def policy(choose=lambda text: "A", confidence=0.9, stop_at=None):
    """Continue (or stop at step ``stop_at``), pick ``choose(prompt)``, fixed confidence."""

    def answer(req):
        text = req.last_user_text
        kind = prompt_kind(text)
        if kind == "stop":
            stop = stop_at is not None and f"Step {stop_at} of" in text
            return reply("stop", decision="stop" if stop else "continue", confidence=confidence)
        return reply("choice", choice=choose(text), confidence=confidence)

    return answer


def backtracks(row):
    return [r for r in row["records"] if (r.get("thoughts") or "").startswith("backtracking to")]


def events(row, prefix):
    return [e for r in row["records"] for e in r.get("strategy_events", []) if e.startswith(prefix)]


EAST = toy_episodes()[0]  # W1 facing east, goal D at the end of the street


# ---------------------------------------------------------------------- backtracking
def test_b1_backtracks_after_low_confidence(city, server):
    low = policy(confidence=0.3)
    plain, _ = play(city, server, low, EAST)
    assert plain["path"][:6] == ["W1", "X4", "E1", "T3", "E3", "D"] and not backtracks(plain)
    row, _ = play(city, server, low, EAST, strategies="b1")
    assert row["path"][:7] == ["W1", "X4", "E1", "T3", "E1", "X4", "W1"]
    walks = backtracks(row)
    assert walks and walks[0]["thoughts"].startswith("backtracking to W1")
    assert events(row, "b1: mean confidence 0.30 over the last 3 decisions")
    assert all("prompt" not in r for r in walks)  # walking back asks no model


def test_b1_returns_to_the_last_trusted_node(city, server):
    confident_first = policy()

    def answer(req):
        text = req.last_user_text
        if prompt_kind(text) == "choice" and "Step 1 of" not in text:
            return reply("choice", choice="A", confidence=0.2)
        return confident_first(req)

    row, _ = play(city, server, answer, EAST, strategies="b1")
    assert backtracks(row)[0]["thoughts"].startswith("backtracking to X4")  # reached at 0.9
    assert row["path"][:6] == ["W1", "X4", "E1", "T3", "E1", "X4"]


def test_b1_is_quiet_when_confident(city, server):
    row, _ = play(city, server, policy(confidence=0.8), EAST, strategies="b1")
    assert not backtracks(row) and row["path"][:6] == ["W1", "X4", "E1", "T3", "E3", "D"]


def test_b2_backtracks_when_the_goal_distance_rises(city, server):
    ep = Episode(
        id="south",
        city="toy",
        instruction="Find the museum.",
        start_node="N2",
        start_heading=180.0,
        goal_nodes=("D",),
        max_steps=12,
    )
    south = policy(choose=toward(180.0))  # walks N2 > N1 > X4 > S1 > F5 > F5S, away from D
    plain, _ = play(city, server, south, ep)
    assert plain["path"][:6] == ["N2", "N1", "X4", "S1", "F5", "F5S"] and not backtracks(plain)
    row, _ = play(city, server, south, ep, strategies="b2")
    assert row["path"][:9] == ["N2", "N1", "X4", "S1", "F5", "F5S", "F5", "S1", "X4"]
    assert backtracks(row)[0]["thoughts"].startswith("backtracking to X4")
    assert events(row, "b2: distance to the goal rose 3 moves in a row")
    assert row["privileged"] == ["goal_distance"] and plain["privileged"] == []  # oracle distance


def test_b3_hints_the_best_option_after_backtracking(city, server):
    def choose(text):
        return hinted_option(text) or toward(90.0)(text)  # east unless hinted

    low = policy(choose=choose, confidence=0.3)
    b1, _ = play(city, server, low, EAST, strategies="b1")
    row, prompts = play(city, server, low, EAST, strategies="b3")
    hinted = [p for p in prompts if "Hint (after backtracking)" in p]
    assert hinted and all("Hint" not in p for p in prompts if p not in hinted)
    assert option_headings(hinted[0])[hinted_option(hinted[0])] == pytest.approx(270.0, abs=1)
    assert "From here you already tried option B (toward the east)" in hinted[0]
    at = row["path"].index("W1", 1)  # back at the start: B1 goes east again, B3 west
    assert b1["path"][at + 1] == "X4" and row["path"][at + 1] == "W2"


def test_b3_oracle_hint_names_the_teacher_option(city, server):
    ep = toy_episodes()[1]  # X4 facing east -> E1, T3, Y3, YL
    low = policy(choose=lambda t: hinted_option(t) or toward(0.0)(t), confidence=0.3)
    row, prompts = play(city, server, low, ep, strategies="b3", b3_oracle=True)
    assert row["privileged"] == ["env"]  # the teacher's option
    hinted = [p for p in prompts if "best option from here is option" in p]
    assert hinted and option_headings(hinted[0])[hinted_option(hinted[0])] == pytest.approx(
        90.0, abs=1
    )


# ---------------------------------------------------------------------- rounds: C and R
def two_rounds(city, server, tmp_path, strategies, round2_policy, round1_policy=None, ep=EAST):
    path = tmp_path / "memory.sqlite"
    first = round1_policy or policy(stop_at=3)  # W1 > X4 > E1, 67 m short of D: a failure
    r1, p1 = play(city, server, first, ep, strategies=strategies, round=1, memory_path=str(path))
    r2, p2 = play(
        city, server, round2_policy, ep, strategies=strategies, round=2, memory_path=str(path)
    )
    return r1, p1, r2, p2


def remembers_failure(text):
    return "A" if "outcome: failure" not in text else "B"


def test_c1_topology_map_summarises_round_one(city, server, tmp_path):
    r1, p1, r2, p2 = two_rounds(city, server, tmp_path, "c1", policy(remembers_failure, stop_at=3))
    assert r1["path"] == ["W1", "X4", "E1"] and not any("Cognitive graph" in p for p in p1)
    first = p2[0]
    assert "Cognitive graph of your 1 earlier round(s)" in first
    assert "Round 1: P1 > P2 > P3; outcome: failure (stopped)." in first
    assert "P1 (start; a street (no side streets))" in first and "P1-P2 (east, 22 m)" in first
    assert "You are now at P1." in first
    assert r2["path"][:2] == ["W1", "W2"]  # the map changed the first choice


def test_c2_position_map_summarises_round_one(city, server, tmp_path):
    def west_if_east_failed(text):
        return (
            "B"
            if re.search(r"Round 1 ended at P3 \(45 m east, 0 m north\); outcome: failure", text)
            else "A"
        )

    r1, _, r2, p2 = two_rounds(city, server, tmp_path, "c2", policy(west_if_east_failed, stop_at=3))
    first = p2[0]
    assert "Relative position map of your 1 earlier round(s)" in first
    assert "P1 0 m east, 0 m north" in first and "You are now 0 m east, 0 m north" in first
    assert r2["path"][:2] == ["W1", "W2"] and r1["path"][:2] == ["W1", "X4"]


def test_c1_can_be_built_by_the_model(city, server, tmp_path):
    mapped = "MODEL MAP: P1 start, east failed."

    def answer(req):
        if prompt_kind(req.last_user_text) == "cognition":
            return mapped
        return policy(lambda t: "B" if "MODEL MAP" in t else "A", stop_at=3)(req)

    path = tmp_path / "m.sqlite"
    play(city, server, policy(stop_at=3), EAST, strategies="c1", round=1, memory_path=str(path))
    row, prompts = play(
        city,
        server,
        answer,
        EAST,
        strategies="c1",
        round=2,
        memory_path=str(path),
        cognition_model=True,
    )
    assert prompt_kind(prompts[0]) == "cognition" and "Round 1: P1 > P2" in prompts[0]
    assert mapped in prompts[1] and row["path"][:2] == ["W1", "W2"]
    assert row["records"][0]["cognition"][0]["raw_output"] == mapped


def test_r1_retrieves_what_round_one_wrote(city, server, tmp_path):
    def avoid_failed_way(text):
        return (
            "B"
            if "- here, a street (no side streets): visited 1x (round 1); went east" in text
            else "A"
        )

    r1, p1, r2, p2 = two_rounds(city, server, tmp_path, "r1", policy(avoid_failed_way, stop_at=3))
    assert "nothing remembered around here" in p1[0]
    assert "Memory of places within 2 streets of you (R1" in p2[0]
    assert "outcome: failure (stopped) (round 1)" in p2[0]
    assert "went east (now your front) 1x" in p2[0]
    assert "- 22 m front (1 street away), an intersection with 4 streets" in p2[0]  # X4
    assert (
        "- 45 m front (2 streets away), a street (no side streets): visited 1x (round 1); stopped 1x"
        in p2[0]
    )
    assert r1["path"][:2] == ["W1", "X4"] and r2["path"][:2] == ["W1", "W2"]
    assert events(r2, "r1: ")


def test_r2_retrieves_memory_within_50_m(city, server, tmp_path):
    def avoid(text):
        return "B" if "(R2, spatial retrieval):\n- here" in text and "round 1" in text else "A"

    far = policy(stop_at=4)  # round 1 reaches T3, 67 m from W1
    r1, _, r2, p2 = two_rounds(city, server, tmp_path, "r2", policy(avoid, stop_at=3), far)
    assert r1["path"] == ["W1", "X4", "E1", "T3"]
    block = p2[0].split("(R2, spatial retrieval):")[1].split("\n\n")[0]
    assert "- here" in block and "- 22 m front" in block and "- 45 m front" in block
    assert " m front" not in block.replace("- 22 m front", "").replace("- 45 m front", "")
    assert r2["path"][:2] == ["W1", "W2"]


def test_r3_recent_history_changes_the_choice(city, server):
    def alternate(text):
        block = text.split("(R3, recent history):")[-1]
        last = [line for line in block.splitlines() if line.startswith("- step")]
        return "B" if last and "chose A:" in last[-1] else "A"

    ep = toy_episodes()[1]  # X4: A = east, B = left/right
    plain, _ = play(city, server, policy(alternate), ep)
    row, prompts = play(city, server, policy(alternate), ep, strategies="r3")
    assert "Your last 3 steps (R3, recent history):\n- none yet" in prompts[0]
    assert (
        "- step 1 at an intersection with 4 streets: chose A:FRONT (toward the east), confidence 0.90"
        in prompts[2]
    )
    assert plain["path"][:3] == ["X4", "E1", "T3"] and row["path"][:3] != plain["path"][:3]


def test_strategies_combine(city, server, tmp_path):
    path = str(tmp_path / "all.sqlite")
    low = policy(confidence=0.3, stop_at=9)
    row, prompts = play(
        city, server, low, EAST, strategies="b1,b2,c1,c2,r1,r2,r3", round=0, memory_path=path
    )
    assert backtracks(row) and "(R3, recent history)" in prompts[0] and "(R1" in prompts[0]
    _row2, prompts2 = play(
        city, server, low, EAST, strategies="b3,c1,c2,r1,r2,r3", round=1, memory_path=path
    )
    assert "Cognitive graph" in prompts2[0] and "Relative position map" in prompts2[0]


# ---------------------------------------------------------------------- the memory store
def test_memory_is_keyed_by_task_and_episode_and_queried_not_loaded(tmp_path):
    path = resolve_memory_path(tmp_path, "toy-task")
    assert path.name == "cityseeker-toy-task.sqlite"
    with GraphMemory(path, "toy-task", "ep1") as mem:
        mem.start_round(1)
        for step, (node, x) in enumerate([("a", 0.0), ("b", 20.0), ("c", 40.0), ("d", 80.0)]):
            mem.add_visit(1, step, node, (x, 0.0), decision="A:FRONT", target="z", confidence=0.5)
        mem.finish_round(1, "failure (stopped)", success=False, steps=4, end_node="d")
    with GraphMemory(path, "toy-task", "ep2") as other:
        assert other.count() == 0 and other.visits_at(["a"]) == []
    with GraphMemory(path, "other-task", "ep1") as other:
        assert other.count() == 0
    with GraphMemory(path, "toy-task", "ep1") as mem:
        assert [v.node for v in mem.visits_at(["b", "d"])] == ["b", "d"]
        assert [(v.node, d) for v, d in mem.visits_within((10.0, 0.0), 15.0)] == [
            ("a", 10.0),
            ("b", 10.0),
        ]
        assert mem.visits_at(["a"], before_round=1) == []
        assert mem.visits_at(["a"])[0].outcome == "failure (stopped)"
        assert mem.round_outcomes() == {
            1: {"outcome": "failure (stopped)", "success": False, "steps": 4, "end_node": "d"}
        }
        assert list(mem.trajectories()) == [1] and len(mem.trajectories()[1]) == 4
        mem.start_round(1)  # a rerun of round 1 replaces it
        assert mem.count() == 0


def test_memory_defaults_to_the_cache_dir_and_is_only_written_when_needed(city, server, tmp_path):
    _plain, _ = play(city, server, policy(stop_at=3), EAST)
    assert not list((tmp_path / "cache").rglob("*.sqlite"))
    play(city, server, policy(stop_at=3), EAST, strategies="r1")
    files = list((tmp_path / "cache" / "memory").glob("*.sqlite"))
    assert [f.name for f in files] == ["cityseeker-toy.sqlite"]
    play(city, server, policy(stop_at=3), EAST, memory=True, task="toy2")
    assert (tmp_path / "cache" / "memory" / "cityseeker-toy2.sqlite").is_file()

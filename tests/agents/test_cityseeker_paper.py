"""CitySeeker under ``--protocol paper``: each setting of docs/fidelity.md's CitySeeker table
that differs from flaneur's default, pinned on toy cities (offline, fake model)."""

from __future__ import annotations

import asyncio
import itertools
import json
import re

import pytest
from PIL import Image

from flaneur.agents import ForwardAgent, RandomAgent
from flaneur.agents.baselines import cityseeker_episode
from flaneur.agents.cityseeker import CitySeekerAgent
from flaneur.agents.cityseeker.options import (
    build_options,
    paper_direction,
    paper_forward,
    walkable_options,
)
from flaneur.agents.cityseeker.state import EpisodeRun
from flaneur.agents.cityseeker.strategies.backtrack import _oracle_option, paper_way_back
from flaneur.agents.cityseeker.strategies.retrieval import paper_retrieves, this_cycle
from flaneur.env import NavigationEnv, toy_city, toy_episodes
from flaneur.evaluate.episode import run_episode
from flaneur.models import make_model
from flaneur.tasks.cityseeker_questions import load_cityseeker_questions
from flaneur.tasks.episode import Episode
from flaneur.testing import FakeOpenAIServer
from flaneur.world import City, StreetGraph
from flaneur.world.sources.cityseeker import city_from_cityseeker
from harness.cityseeker_city import write_walkable_city
from harness.cityseeker_policies import hinted_option, option_headings, prompt_kind, reply, toward


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer("echo") as srv:
        yield srv


def play(city, srv, answer, episode, protocol, views=None, **options):
    """Run one episode of the CitySeeker agent; the row and the requests sent."""
    srv.configure(answer)
    model = make_model("fake-model", base_url=srv.base_url)
    env = NavigationEnv(city, [episode], scheme="headings")
    agent = CitySeekerAgent(**options)
    row = asyncio.run(
        run_episode(
            env, agent, episode, seed=0, task_id="toy", model=model, views=views, protocol=protocol
        )
    )
    assert "error" not in row, row.get("error")
    return row, list(srv.requests)


def answers(choose=lambda text: "A", confidence=0.9):
    """Always continue; pick ``choose(prompt)`` with a fixed confidence."""

    def answer(req):
        text = req.last_user_text
        if prompt_kind(text) == "stop":
            return reply("stop", decision="continue", confidence=confidence)
        return reply("choice", choice=choose(text), confidence=confidence)

    return answer


def of_kind(requests, kind):
    return [r.last_user_text for r in requests if prompt_kind(r.last_user_text) == kind]


def backtracks(row):
    return [r for r in row["records"] if (r.get("thoughts") or "").startswith("backtracking to")]


def short(episode, steps):
    return Episode(**{**episode.__dict__, "max_steps": steps})


# ---------------------------------------------------------------------- baselines
def cityseeker_like(episode: Episode) -> Episode:
    """A toy episode carrying what the CitySeeker loader records (35 steps, question fields)."""
    meta = {"question_idx": 7, "category_name": "basic POI", "target_kind": "place"}
    return Episode(**{**episode.__dict__, "max_steps": 35, "metadata": meta})


def test_cityseeker_questions_are_recognised(tmp_path):
    route = [
        {"filename": f"0000000{k}.jpg", "latitude": 31.2 + k * 1e-4, "longitude": 121.5}
        for k in (1, 2)
    ]
    question = {
        "folder": "bank",
        "question_idx": 0,
        "question": "Please find a bank.",
        "from": route[0]["filename"],
        "to": route[1]["filename"],
        "complete_route": route,
        "category": "question1",
    }
    path = tmp_path / "questions.json"
    path.write_text(json.dumps([question]), encoding="utf-8")
    assert cityseeker_episode(load_cityseeker_questions(path)[0])
    assert not cityseeker_episode(toy_episodes()[0])


@pytest.mark.parametrize("agent", [ForwardAgent, RandomAgent])
def test_paper_baselines_walk_the_35_step_budget(city, agent):
    ep = cityseeker_like(toy_episodes()[0])  # W1 facing east; D, a dead end, 5 streets ahead
    env = NavigationEnv(city, [ep], scheme="headings")

    def go(protocol):
        return asyncio.run(
            run_episode(
                env, agent(), ep, seed=0, task_id="t", avg_reference_length=3, protocol=protocol
            )
        )

    paper, flaneur = go("paper"), go("flaneur")
    assert len(paper["path"]) == 36 and paper["termination"] == "step_limit"
    assert "stop" not in paper["actions"]
    assert len(flaneur["path"]) == 3 and flaneur["actions"][-1] == "stop"  # the AS rule
    if agent is ForwardAgent:  # turns back at the dead end instead of stopping there
        assert paper["path"][:8] == ["W1", "X4", "E1", "T3", "E3", "D", "E3", "T3"]
    plain = toy_episodes()[0]  # not a CitySeeker question: the flaneur rule under paper too
    other = asyncio.run(
        run_episode(
            NavigationEnv(city, [plain], scheme="headings"),
            agent(),
            plain,
            seed=0,
            task_id="t",
            avg_reference_length=3,
            protocol="paper",
        )
    )
    assert len(other["path"]) == 3


# ---------------------------------------------------------------------- prompts and views
def test_paper_prompts_reveal_no_step_budget(city, server):
    ep = short(toy_episodes()[0], 4)
    _, requests = play(city, server, answers(), ep, "paper")
    sent = [r.last_user_text for r in requests]
    assert len(sent) == 8 and not any(re.search(r"Step \d|of at most \d", t) for t in sent)
    _, requests = play(city, server, answers(), ep, "flaneur")
    assert "Step 1 of at most 4." in requests[0].last_user_text
    assert "Step 1 of at most 4. You stand at" in requests[1].last_user_text


class RecordingViews:
    """A view provider that records what it is asked for."""

    name = "recording"

    def __init__(self) -> None:
        self.asked: list[tuple[int, float, float, tuple[int, int]]] = []

    def view(self, node, heading, *, pitch=0.0, fov=60.0, size=(800, 460)):
        self.asked.append((int(node), round(float(heading), 1), float(fov), tuple(size)))
        return type("View", (), {"image": Image.new("RGB", tuple(size))})()


class PanoramaViews(RecordingViews):
    def __init__(self) -> None:
        super().__init__()
        self.panoramas: list[str] = []

    def panorama(self, node_id):
        self.panoramas.append(node_id)
        return Image.new("RGB", (64, 32))


def test_paper_stop_prompt_shows_the_panorama_and_options_are_wide_views(city, server):
    ep = short(toy_episodes()[1], 1)  # X4 facing east, four streets
    views = RecordingViews()
    row, requests = play(city, server, answers(), ep, "paper", views=views)
    x4 = city.graph.index("X4")
    stitched = [(x4, h, 90.0, (512, 512)) for h in (315.0, 45.0, 135.0, 225.0)]
    assert views.asked[:4] == stitched  # 360 degrees centred on the heading (east)
    assert {a[2:] for a in views.asked[4:]} == {(120.0, (1024, 512))} and len(views.asked) == 8
    assert [r.image_count for r in requests] == [1, 4]
    assert "[image 1: 360° panorama at node X4 centred on 90°]" in row["records"][0]["prompt"]
    own = PanoramaViews()
    play(city, server, answers(), ep, "paper", views=own)
    assert own.panoramas == ["X4"] and len(own.asked) == 4  # its panorama, as CitySeeker
    flaneur = RecordingViews()
    play(city, server, answers(), ep, "flaneur", views=flaneur)
    assert flaneur.asked[0] == (x4, 90.0, 60.0, (800, 460)) and len(flaneur.asked) == 5
    given = RecordingViews()
    play(city, server, answers(), ep, "paper", views=given, view_fov=75.0)
    assert {a[2] for a in given.asked[4:]} == {75.0}  # an explicit option wins


def test_paper_unparseable_choice_has_confidence_one_half(city, server):
    ep = short(toy_episodes()[0], 3)
    row, _ = play(city, server, lambda req: "Hmm.", ep, "paper")
    assert [r["confidence"] for r in row["records"]] == [0.5, 0.5, 0.5]
    row, _ = play(city, server, lambda req: "Hmm.", ep, "flaneur")
    assert all("confidence" not in r for r in row["records"])  # None: counts 0 in B1


# ---------------------------------------------------------------------- backtracking
def ladder_city() -> City:
    """c0 - c1 - c2 - c3 eastward (10 m streets); G north of c0, linked to c0 and c3.

    G is 1 street from c0 and c3, but in metres 30 m from c0 and 100 m from c3, so walking
    east the metre distance rises (30, 40, 50, 60) while the street count does not (1, 2, 2,
    1).
    """
    ids = ["c0", "c1", "c2", "c3", "G"]
    lat = [0.0, 0.0, 0.0, 0.0, 0.0003]
    lng = [0.0, 0.0001, 0.0002, 0.0003, 0.0]
    edges = [(0, 1, 10.0), (1, 2, 10.0), (2, 3, 10.0), (0, 4, 30.0), (3, 4, 100.0)]
    src = [a for a, b, _ in edges] + [b for a, b, _ in edges]
    dst = [b for a, b, _ in edges] + [a for a, b, _ in edges]
    lengths = [d for *_, d in edges] * 2
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst, lengths=lengths)
    return City(name="ladder", graph=graph)


def test_paper_b2_counts_streets_to_the_goal(server):
    ladder = ladder_city()
    ep = Episode(
        id="east",
        city="ladder",
        instruction="Find the goal.",
        start_node="c0",
        start_heading=90.0,
        goal_nodes=("G",),
        max_steps=5,
    )
    east = answers(toward(90.0))
    flaneur, _ = play(ladder, server, east, ep, "flaneur", strategies="b2")
    assert flaneur["path"][:4] == ["c0", "c1", "c2", "c3"]  # metres rose 3 times: back to c0
    assert backtracks(flaneur)[0]["thoughts"].startswith("backtracking to c0")
    paper, _ = play(ladder, server, east, ep, "paper", strategies="b2")
    assert paper["path"][:5] == ["c0", "c1", "c2", "c3", "G"]  # streets 2, 2, 1: on to G
    assert not backtracks(paper) and paper["privileged"] == ["env"]


def test_paper_b2_event_counts_streets(city, server):
    ep = Episode(
        id="south",
        city="toy",
        instruction="Find the museum.",
        start_node="N2",
        start_heading=180.0,
        goal_nodes=("D",),
        max_steps=12,
    )
    row, _ = play(city, server, answers(toward(180.0)), ep, "paper", strategies="b2")
    events = [e for r in row["records"] for e in r.get("strategy_events", [])]
    # N2 (6 streets from D) -> N1 5 -> X4 4 -> S1 5 -> F5 6: decided on N2, N1, X4, S1
    assert events[0] == (
        "b2: streets to the goal over the last 3 moves never fell (4, 5, 6); going back the "
        "last 3 nodes to N2"
    )


def comb_city() -> City:
    """p0 - p1 - ... - p7 eastward along the equator (10 m streets); G north of p3 and p4,
    linked to p0, p3 and p4 (10 m each).

    Streets from p0 ... p7 to G: 1, 2, 2, 1, 1, 2, 3, 4; metres: ten times as many.
    """
    ids = [*(f"p{k}" for k in range(8)), "G"]
    lat = [0.0] * 8 + [0.0003]
    lng = [k * 1e-4 for k in range(8)] + [0.00035]
    pairs = [(k, k + 1) for k in range(7)] + [(0, 8), (3, 8), (4, 8)]
    src = [a for a, b in pairs] + [b for a, b in pairs]
    dst = [b for a, b in pairs] + [a for a, b in pairs]
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst, lengths=[10.0] * len(src))
    return City(name="comb", graph=graph)


def test_paper_b2_fires_when_three_street_counts_never_fall_and_goes_back_as_b1(server):
    comb = comb_city()
    ep = Episode(id="east", city="comb", instruction="Find the goal.", start_node="p0",
                 start_heading=90.0, goal_nodes=("G",), max_steps=14)  # fmt: skip
    east = answers(toward(90.0))
    paper, _ = play(comb, server, east, ep, "paper", strategies="b2")
    # reached p1 2, p2 2 (with p0's 1 it would fire here), p3 1, p4 1, p5 2: 1, 1, 2 never
    # fell; decided on p0 .. p4, so trajectory[-4:-1] = p1, p2, p3: back through p4 to p1.
    # The window starts afresh: p2 2, p3 1, p4 1, p5 2 fires again (kept, p2 would fire)
    assert paper["path"] == ["p0", "p1", "p2", "p3", "p4", "p5", "p4", "p3", "p2", "p1",
                             "p2", "p3", "p4", "p5", "p4"]  # fmt: skip
    events = [e for r in paper["records"] for e in r.get("strategy_events", [])]
    assert [e for e in events if e.startswith("b2:")] == [
        "b2: streets to the goal over the last 3 moves never fell (1, 1, 2); going back the "
        "last 3 nodes to p1"
    ] * 2
    assert len(backtracks(paper)) == 5  # p5 -> p1 (4 streets), then p5 -> p4
    flaneur, _ = play(comb, server, east, ep, "flaneur", strategies="b2")
    # metres 10 (p4), 20, 30, 40 (p7): three strict rises, back to p4 along a shortest path
    assert flaneur["path"] == ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p6", "p5",
                               "p4", "p5", "p6", "p7", "p6"]  # fmt: skip
    events = [e for r in flaneur["records"] for e in r.get("strategy_events", [])]
    assert events[0] == "b2: distance to the goal rose 3 moves in a row (10 m -> 40 m); " \
        "returning to p4"  # fmt: skip


def test_paper_b3_hint_is_the_oracle(city, server):
    ep = toy_episodes()[1]  # X4 facing east -> E1, T3, Y3, YL
    low = answers(lambda t: hinted_option(t) or toward(0.0)(t), confidence=0.3)
    row, requests = play(city, server, low, ep, "paper", strategies="b3")
    assert row["privileged"] == ["env"]  # the teacher's option, without b3_oracle=True
    hinted = [t for t in of_kind(requests, "choice") if "best option from here is option" in t]
    assert hinted and option_headings(hinted[0])[hinted_option(hinted[0])] == pytest.approx(
        90.0, abs=1
    )
    plain, requests = play(city, server, low, ep, "flaneur", strategies="b3")
    assert plain["privileged"] == []
    assert any("most promising option now is" in t for t in of_kind(requests, "choice"))


def line_city() -> City:
    """p0 - p1 - ... - p7 eastward along the equator, 0.0001 degrees (11 m) apart, two-way."""
    ids = [f"p{k}" for k in range(8)]
    src = [k for k in range(7)] + [k + 1 for k in range(7)]
    dst = [k + 1 for k in range(7)] + [k for k in range(7)]
    graph = StreetGraph.from_edges(ids, [0.0] * 8, [k * 1e-4 for k in range(8)], src, dst)
    return City(name="line", graph=graph)


def confidences(*values):
    """Always continue and walk east; the k-th choice reply has confidence ``values[k]`` (the
    last one repeated)."""
    told = itertools.count()

    def answer(req):
        text = req.last_user_text
        if prompt_kind(text) == "stop":
            return reply("stop", decision="continue", confidence=0.9)
        k = next(told)
        return reply(
            "choice", choice=toward(90.0)(text), confidence=values[min(k, len(values) - 1)]
        )

    return answer


def test_paper_way_back_slices_the_last_three_nodes_as_released():
    # Map._backtrack: trajectory[-backtrack_steps - 1 : -1], the first is where it goes back to
    assert paper_way_back([0, 1, 2, 3, 4], 3) == [1, 2, 3]
    assert paper_way_back([0, 1, 2], 3) == [0, 1]  # three steps taken: back to the start
    assert paper_way_back([0, 1], 3) == [0]
    assert paper_way_back([0], 3) == []  # nothing before the last position: it stays


def test_paper_b1_goes_back_the_last_three_nodes_along_its_trail(server):
    line = line_city()
    ep = Episode(id="east", city="line", instruction="Find the museum.", start_node="p0",
                 start_heading=90.0, goal_nodes=("p7",), max_steps=10)  # fmt: skip
    dips = confidences(0.9, 0.9, 0.9, 0.9, 0.3)  # mean of the last 3 decisions: 0.70 at p5
    paper, _ = play(line, server, dips, ep, "paper", strategies="b1")
    path = ["p0", "p1", "p2", "p3", "p4", "p5", "p4", "p3", "p2", "p1", "p2"]
    assert paper["path"] == path  # decided on p0..p4; re-recorded p3, p2, p1; on p1
    events = [e for r in paper["records"] for e in r.get("strategy_events", [])]
    assert "b1: mean confidence 0.70 over the last 3 decisions is below 0.75; going back the " \
        "last 3 nodes to p1" in events  # fmt: skip
    assert len(backtracks(paper)) == 4  # one step of the budget per street walked
    flaneur, _ = play(line, server, confidences(0.9, 0.9, 0.9, 0.9, 0.3), ep, "flaneur",
                      strategies="b1")  # fmt: skip
    assert flaneur["path"][:8] == ["p0", "p1", "p2", "p3", "p4", "p5", "p4", "p5"]  # trusted p4
    low = confidences(0.3)  # from the start: three decisions, then back to the start, twice
    paper, _ = play(line, server, low, short(ep, 13), "paper", strategies="b1")
    assert paper["path"] == ["p0", "p1", "p2", "p3", "p2", "p1", "p0",
                             "p1", "p2", "p3", "p2", "p1", "p0", "p1"]  # fmt: skip
    # recorded p0 p1 p2 | p1 p0 (re-recorded) | p0 p1 p2: the last 3 before p2 are p0 p0 p1
    events = [e for r in paper["records"] for e in r.get("strategy_events", [])]
    assert [e.rsplit("; ", 1)[1] for e in events if e.startswith("b1:")] == [
        "going back the last 2 nodes to p0",
        "going back the last 3 nodes to p0",
    ]


# ---------------------------------------------------------------------- directions
@pytest.mark.parametrize(
    ("forward", "heading", "label"),
    [
        (0.0, 0.0, "FRONT"),
        (0.0, 22.4999, "FRONT"),
        (0.0, 22.5, "FRONT_LEFT"),  # each bin's lower edge belongs to it
        (0.0, 67.4999, "FRONT_LEFT"),
        (0.0, 67.5, "LEFT"),  # 90 degrees clockwise (on the right) is LEFT in the released code
        (0.0, 112.5, "BACK_LEFT"),
        (0.0, 157.4999, "BACK_LEFT"),
        (0.0, 157.5, "BACK"),
        (0.0, 202.5, "BACK_RIGHT"),
        (0.0, 247.5, "RIGHT"),
        (0.0, 292.5, "FRONT_RIGHT"),
        (0.0, 337.4999, "FRONT_RIGHT"),
        (0.0, 337.5, "FRONT"),
        (350.0, 12.5, "FRONT_LEFT"),  # (12.5 - 350 + 360) % 360 = 22.5
        (-90.0, 0.0, "LEFT"),  # a geodesic azimuth in (-180, 180]: -90 is 270
        (90.0, -90.0, "BACK"),
    ],
)
def test_paper_directions_bin_as_the_released_code(forward, heading, label):
    assert paper_direction(forward, heading) == label


def test_paper_options_carry_the_eight_directions(city, server):
    ep = short(toy_episodes()[1], 1)  # X4 facing east: N1 0°, E1 90°, S1 180°, W1 270°
    _, requests = play(city, server, answers(), ep, "paper")
    lines = re.findall(r"^([A-D]\. [^:]*):", of_kind(requests, "choice")[0], re.M)
    assert lines == [
        "A. FRONT (toward the east, 90°)",
        "B. RIGHT (toward the north, 0°)",  # as the released code: anticlockwise is RIGHT
        "C. LEFT (toward the south, 180°)",
        "D. BACK (toward the west, 270°)",
    ]
    _, requests = play(city, server, answers(), ep, "flaneur")
    assert "B. LEFT (left, toward the north, 0°)" in of_kind(requests, "choice")[0]


def test_paper_forward_is_the_last_decided_move_even_after_backtracking():
    #     e          a - b east, b - c - d - e north, 0.0001 degrees apart on the equator
    #     d
    #     c          decided a -> b -> c -> d -> e, then walked back e -> d -> c -> b -> a
    # a - b
    lat = [0.0, 0.0, 1e-4, 2e-4, 3e-4]
    lng = [0.0, 1e-4, 1e-4, 1e-4, 1e-4]
    pairs = [(0, 1), (1, 2), (2, 3), (3, 4)]
    src = [a for a, b in pairs] + [b for a, b in pairs]
    dst = [b for a, b in pairs] + [a for a, b in pairs]
    ell = City(name="ell", graph=StreetGraph.from_edges(list("abcde"), lat, lng, src, dst))
    decided = [(0, False), (1, False), (2, False), (3, False)]
    assert paper_forward(ell, 4, 0.0, decided) == 0.0  # on e: the heading the move gave
    assert paper_forward(ell, 0, 90.0, []) == 90.0  # no move yet: the start heading
    back = [*decided, (4, True), (3, True), (2, True), (1, True)]
    # from d (last decided move's start) to a: 0.0001 deg west (11,131.95 m per degree of
    # longitude at the equator, WGS84) and 0.0002 deg south (110,574.27 m per degree of
    # latitude): azimuth -(180 - atan(11.132 / 22.115)) = -153.28, not the 270 it faces
    assert paper_forward(ell, 0, 270.0, back) == pytest.approx(-153.28, abs=0.02)
    assert paper_direction(-153.28, 90.0) == "BACK_RIGHT"  # relative 243.3; 270: BACK


# ---------------------------------------------------------------------- retrieval
EAST = toy_episodes()[0]  # W1 facing east


def rounds(city, server, tmp_path, protocol, strategies, last, **options):
    """Rounds 1 .. ``last`` of EAST (3 steps each) with one memory; the last round's row and
    requests."""
    path = str(tmp_path / "memory.sqlite")
    ep = short(EAST, 3)
    for rnd in range(1, last):
        play(city, server, answers(), ep, protocol, strategies=strategies, round=rnd,
             memory_path=path, **options)  # fmt: skip
    return play(city, server, answers(), ep, protocol, strategies=strategies, round=last,
                memory_path=path, **options)  # fmt: skip


def test_paper_r1_looks_one_street_around_in_the_final_round_only(city, server, tmp_path):
    head = "Memory of places within 1 street of you (R1, topology retrieval)"
    _, second = rounds(city, server, tmp_path / "a", "paper", "r1", 2)
    assert not any("Memory of places" in r.last_user_text for r in second)
    _, third = rounds(city, server, tmp_path / "b", "paper", "r1", 3)
    assert all(head in t for t in of_kind(third, "choice"))
    assert not any("Memory of places" in t for t in of_kind(third, "stop"))
    first_choice = of_kind(third, "choice")[0]  # at W1: W1 and X4 remembered, not E1
    assert "- here, a street (no side streets): visited 2x (round 1, round 2)" in first_choice
    assert "2 streets away" not in first_choice and first_choice.count("\n- ") == 2
    _, flaneur = rounds(city, server, tmp_path / "c", "flaneur", "r1", 2)
    both = "Memory of places within 2 streets of you (R1, topology retrieval)"
    assert all(both in r.last_user_text for r in flaneur)  # every prompt, any round
    _, given = rounds(city, server, tmp_path / "d", "paper", "r1", 3, hops=2)
    assert both in of_kind(given, "choice")[0]  # an explicit option wins


def test_paper_retrieval_cycle_and_memory():
    run = EpisodeRun(
        city=toy_city(), episode=EAST, task="t", round=6, privileged=None, memory=None,
        node=0, heading=0.0, paper=True, rounds=3,
    )  # fmt: skip
    assert paper_retrieves(run)
    visits = [type("V", (), {"round": r})() for r in range(1, 7)]
    assert [v.round for v in this_cycle(run, visits)] == [4, 5, 6]  # rounds 1-3 forgotten
    for rnd, retrieves in ((0, False), (1, False), (2, False), (3, True), (4, False)):
        run.round = rnd
        assert paper_retrieves(run) is retrieves, rnd


def test_paper_r3_goes_to_the_choice_prompt_after_three_steps(city, server):
    ep = short(EAST, 5)
    _, requests = play(city, server, answers(), ep, "paper", strategies="r3")
    choices = of_kind(requests, "choice")
    has = ["Your last 3 steps (R3, recent history)" in t for t in choices]
    assert has == [False, False, False, True, True]  # from the 4th step (current_step > 3)
    assert not any("Your last 3 steps" in t for t in of_kind(requests, "stop"))
    _, requests = play(city, server, answers(), ep, "flaneur", strategies="r3")
    assert "Your last 3 steps" in requests[0].last_user_text  # the first stop prompt


# ---------------------------------------------------------------------- walkable headings
@pytest.fixture(scope="module")
def walk_city(tmp_path_factory):
    """The walkable-heading city of ``harness.cityseeker_city`` and its questions."""
    folder = write_walkable_city(tmp_path_factory.mktemp("walkcity"))
    return city_from_cityseeker(folder), load_cityseeker_questions(folder / "questions.json")


def test_paper_options_are_the_walkable_headings(walk_city, server):
    city, questions = walk_city
    at_c = short(questions[0], 1)  # at c facing north; c's walkable: 95, 185, 5, 350, 10
    for letter, reached in (("A", "e"), ("C", "n"), ("D", "w"), ("E", "n")):
        row, requests = play(city, server, answers(lambda text, k=letter: k), at_c, "paper")
        shown = option_headings(of_kind(requests, "choice")[0])
        assert shown == {"A": 95, "B": 185, "C": 5, "D": 350, "E": 10}  # the data's order
        assert row["path"] == ["c", reached]  # D (350) takes w at 270: no wrap at north
    row, requests = play(city, server, answers(lambda text: "D"), at_c, "flaneur")
    shown = option_headings(of_kind(requests, "choice")[0])
    assert shown == {"A": 0, "B": 270, "C": 90, "D": 180}  # the graph's edges, most frontal first
    assert row["path"] == ["c", "s"]
    at_n = short(questions[2], 1)  # n: one walkable heading (170, to c); n2 is not offered
    _, requests = play(city, server, answers(), at_n, "paper")
    assert option_headings(of_kind(requests, "choice")[0]) == {"A": 170}
    _, requests = play(city, server, answers(), at_n, "flaneur")
    assert option_headings(of_kind(requests, "choice")[0]) == {"A": 0, "B": 180}


def baseline_walk(agent, city, episode, protocol):
    env = NavigationEnv(city, [episode], scheme="headings")
    return asyncio.run(
        run_episode(
            env, agent, episode, seed=0, task_id="t", avg_reference_length=3, protocol=protocol
        )
    )


def test_paper_forward_takes_the_first_walkable_heading(walk_city):
    city, questions = walk_city
    paper = baseline_walk(ForwardAgent(), city, questions[0], "paper")
    assert len(paper["path"]) == 36  # c's first heading 95 -> e, e's first 10 -> c (its one edge)
    assert paper["path"][:5] == ["c", "e", "c", "e", "c"]
    flaneur = baseline_walk(ForwardAgent(), city, questions[0], "flaneur")
    assert flaneur["path"] == ["c", "n", "n2"]  # straight on (north), the AS rule


def test_paper_random_draws_among_the_walkable_headings(walk_city):
    city, questions = walk_city
    at_n = questions[2]

    def moves(protocol):
        rows = [baseline_walk(RandomAgent(seed=s), city, at_n, protocol) for s in range(4)]
        return [step for row in rows for step in itertools.pairwise(row["path"])]

    paper = moves("paper")
    assert {b for a, b in paper if a == "n"} == {"c"}  # n's one walkable heading leads to c
    assert {b for a, b in paper if a == "c"} == {"n", "e", "s", "w"}
    assert ("n", "n2") in moves("flaneur")  # the graph's edges: n2 may be drawn


def test_paper_b3_oracle_names_the_closest_walkable_heading(walk_city):
    city, questions = walk_city
    at_n = city.graph.index("n")  # streets: n2 (0°, slot 1), c (180°, slot 2); walkable: 170

    class Teacher:  # the oracle wants n2, which no walkable heading of n leads to
        def act(self, state):
            return 1

    env = type("Env", (), {"scheme": type("S", (), {"name": "headings"}), "state": None})()
    env.teacher = Teacher
    run = EpisodeRun(
        city=city, episode=questions[2], task="t", round=0, memory=None, node=at_n,
        heading=0.0, privileged=type("P", (), {"env": env})(), paper=True,
    )  # fmt: skip
    walkable = walkable_options(city, at_n, 0.0)
    assert [(o.letter, o.heading) for o in walkable] == [("A", 170.0)]
    assert _oracle_option(run, walkable) is walkable[0]  # as find_closest_value: |170 - 0|
    streets = build_options(city, at_n, 0.0)
    assert _oracle_option(run, streets).target == city.graph.index("n2")

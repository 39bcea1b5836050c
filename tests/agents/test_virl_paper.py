"""V-IRL's Local and Ling under ``--protocol paper`` (docs/fidelity.md, V-IRL): instructions
without distances, ``turn_direction`` that moves, the whole walk in the model's prompt,
routes asked for by bicycle, category questions answered with the nearest such place, the
map as V-IRL's oracle; and ``flaneur`` unchanged beside each. On a hand-made grid city."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from flaneur.agents.base import SolveInfo
from flaneur.agents.envinfo import env_info_for
from flaneur.agents.virl.common import walking_env
from flaneur.agents.virl.ling import LingAgent, follow_offline
from flaneur.agents.virl.local import (
    LocalAgent,
    give_directions,
    nearest_match,
    template_direction,
)
from flaneur.agents.virl.sight import Sight
from flaneur.agents.virl.thinking import Thinker
from flaneur.bench.vln_metrics import row_outcome, score_route
from flaneur.evaluate.protocol import protocol_episodes
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.geo import LocalProjection
from flaneur.models.completion import Completion
from flaneur.services.errors import UnknownPlaceError
from flaneur.services.geocode import geocode_one
from flaneur.tasks.generators import generate_set
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph
from flaneur.world.places import Places

PROJ = LocalProjection(60.17, 24.94)
SIDE, STEP = 4, 50.0  # a 4 x 4 grid of junctions 50 m apart, node "n<row><col>"
WORDS = "Amber Birch Cedar Dune Ember Fjord Grove Heath Iris Juniper Kelp Lumen Moss Nook Opal Pine"
PLACES = [  # name, x, y, category
    ("Cafe Kuu", 96, 96, "cafe"),
    ("Bar Tahti", 46, 146, "bar"),
    ("Bistro Meri", 146, 46, "restaurant"),
    ("Pankki Etela", 54, 46, "bank"),  # the bank nearest to n00
    ("Pankki Pohjoinen", 154, 146, "bank"),
    ("Apteekki Kulma", 104, 4, "pharmacy"),
    ("Kahvila Nurkka", 46, 4, "cafe"),
]
DISTANCE = re.compile(r"\d+\s*m\b")


def grid_city() -> City:
    """Streets along every row and column; a gallery 3 m north-east of every junction (the
    landmarks), a cafe, a bar, a bistro, two banks and a pharmacy."""
    ids, xs, ys, src, dst = [], [], [], [], []
    for r in range(SIDE):
        for c in range(SIDE):
            ids.append(f"n{r}{c}")
            xs.append(c * STEP)
            ys.append(r * STEP)
            a = r * SIDE + c
            for b in ([a + 1] if c + 1 < SIDE else []) + ([a + SIDE] if r + 1 < SIDE else []):
                src += [a, b]
                dst += [b, a]
    lat, lng = PROJ.inverse(np.array(xs), np.array(ys))
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst)
    galleries = [
        (f"{w} Gallery", (k % SIDE) * STEP + 3, (k // SIDE) * STEP + 3, "museum")
        for k, w in enumerate(WORDS.split())
    ]
    records = []
    for k, (label, x, y, category) in enumerate(galleries + PLACES):
        plat, plng = PROJ.inverse(float(x), float(y))
        records.append(
            {
                "id": f"p{k}",
                "name": label,
                "lat": float(plat),
                "lng": float(plng),
                "categories": [category],
            }
        )
    return City(
        name="papergrid",
        graph=graph,
        places=Places.from_records(records),
        source="test",
        edge_streets=np.full(graph.n_edges, ""),
    )


@pytest.fixture(scope="module")
def city() -> City:
    return grid_city()


@pytest.fixture(scope="module")
def routes(city):
    episodes = generate_set("virl-vln", city, city_spec="x").items
    assert len(episodes) >= 2
    return episodes


def _run(city, episodes, folder, agent="ling", **config):
    summary = run_benchmark(
        RunConfig(agents=(agent,), tasks=("grid",), concurrency=1, cache_mode="off", **config),
        folder,
        progress="none",
        loaded={"grid": (city, episodes)},
    )
    rows = [json.loads(x) for x in (Path(folder) / "episodes.jsonl").read_text().splitlines()]
    return summary["runs"][0], rows


# ------------------------------------------------------------------ 1. no exact distances
def test_paper_vln_instructions_give_no_distance(city, routes):
    paper = protocol_episodes(None, list(routes), "paper")
    for cached, read in zip(routes, paper, strict=True):
        assert DISTANCE.search(cached.instruction)  # the cached item keeps flaneur's text
        assert not DISTANCE.search(read.instruction), read.instruction
        assert read.metadata == cached.metadata and read.id == cached.id
        landmarks = [m["landmark"] for m in cached.metadata["milestones"] if "landmark" in m]
        assert all(f"with {name} on your" in read.instruction for name in landmarks)
    assert protocol_episodes(None, list(routes), "flaneur") == list(routes)


def test_paper_local_instruction_gives_no_distance(city):
    goal = geocode_one(city, "Cafe Kuu")
    start = city.graph.index("n00")
    flaneur = template_direction(city, goal, start, "How do I get to Cafe Kuu?")
    paper = template_direction(city, goal, start, "How do I get to Cafe Kuu?", protocol="paper")
    assert DISTANCE.search(flaneur.instruction) and not DISTANCE.search(paper.instruction)
    assert [m["distance_m"] for m in paper.milestones] == [
        m["distance_m"] for m in flaneur.milestones
    ]  # the milestones Local reads keep them, as V-IRL's
    end = follow_offline(
        city,
        paper.instruction,
        start,
        0.0,
        protocol="paper",
        keys=paper.route.key_positions,
        destination="Cafe Kuu",
    )
    assert str(city.graph.ids[end]) == "n22"  # Ling still gets there


class ScriptedModel:
    """A :class:`~flaneur.models.ChatModel` stand-in: keeps every prompt, answers with
    ``reply(prompt)``."""

    def __init__(self, reply) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    async def complete(self, messages, **params) -> Completion:
        self.prompts.append(messages[-1].text)
        return Completion(self.reply(messages[-1].text))


def test_paper_local_model_is_asked_for_no_distances(city):
    model = ScriptedModel(lambda _: "Face east, walk to Lumen Gallery and turn north.")
    start, goal = city.graph.index("n00"), geocode_one(city, "Cafe Kuu")
    versions = []
    for protocol in ("flaneur", "paper"):
        thinker = Thinker(model, "local")
        asyncio.run(
            give_directions(city, thinker, "Cafe?", start, destination=goal, protocol=protocol)
        )
        versions.append(thinker.records[-1]["prompt_id"].split(":")[0])
    assert versions == ["local-instruction-1", "local-instruction-paper-1"]
    assert "exact distances" not in model.prompts[0] and "exact distances" in model.prompts[1]


# ------------------------------------------------------------------ 2. turn_direction moves
def _first_action(city, protocol, instruction="Face east and walk straight on."):
    start = city.graph.index("n00")
    env = walking_env(city, "t", instruction, start, start, steps=10, heading=0.0)
    obs, info = env.reset()
    agent = LingAgent()
    agent.reset(env.episode, env_info_for(env, protocol=protocol))
    return asyncio.run(agent.act({**obs, "info": info})), env


def test_paper_turn_direction_turns_and_moves(city):
    flaneur, env = _first_action(city, "flaneur")
    assert flaneur.name == "forward()" and flaneur.record["moves"] == ["turn_direction(east)"]
    paper, env = _first_action(city, "paper")
    assert paper.name == "turn_direction(east)" and paper.record["moves"] == []
    assert paper.record["parsed_action"] == "turn_direction(east)"
    env.step(paper.slot)
    assert str(city.graph.ids[env.state.node]) == "n01"  # the turn took her one step east


def test_paper_forward_keeps_the_turned_way_and_may_go_back(city):
    graph = city.graph
    n11 = graph.index("n11")
    targets, _ = graph.adjacency
    ways = {str(graph.ids[t]): k + 1 for k, t in enumerate(targets[n11])}
    picked = {}
    for protocol in ("flaneur", "paper"):
        _, env = _first_action(city, protocol)
        agent = LingAgent()
        agent.reset(env.episode, env_info_for(env, protocol=protocol))
        agent.node, agent.came_from = n11, graph.index("n10")  # walked east into n11
        agent.facing, agent.target = 90.0, 0.0  # along the street; last turned north
        north = agent._forward_slot()
        agent.facing, agent.target = 290.0, 290.0  # faces back, west-north-west
        back = agent._forward_slot()
        picked[protocol] = (north, back)
    assert picked["flaneur"] == (ways["n12"], ways["n21"])  # the street ahead, never back
    assert picked["paper"] == (ways["n21"], ways["n10"])  # V-IRL's target heading, back too


def test_paper_turns_read_as_one_vln_action(city, routes, tmp_path):
    for protocol in ("flaneur", "paper"):
        entry, rows = _run(city, routes, tmp_path / protocol, protocol=protocol)
        assert entry["task_metrics"]["success"]["value"] == 1.0
        assert entry["task_metrics"]["start_reaction"]["value"] == 1.0
        outcome = row_outcome(city.graph, routes[0], rows[0])
        assert outcome is not None and score_route(outcome).success
        first = outcome.actions[0]
        assert first == f"turn_direction({routes[0].metadata['milestones'][0]['heading_words']})"
        steps = len(rows[0]["records"])
        turns = sum(a.startswith("turn_direction(") for a in outcome.actions)
        # flaneur: a turn in place before a forward(); paper: the turn is the step itself
        assert len(outcome.actions) == steps + (turns if protocol == "flaneur" else 0)


# ------------------------------------------------------------------ 3. the whole walk
def test_paper_ling_model_sees_the_whole_walk(city):
    instruction = "Face north and walk straight on. Bar Tahti will be on your front-left."
    seen = {}
    for protocol in ("flaneur", "paper"):
        model = ScriptedModel(
            lambda t: '["Bar Tahti"]' if "List every landmark" in t else "forward()"
        )
        start = city.graph.index("n00")
        env = walking_env(city, "h", instruction, start, start, steps=20, heading=0.0)
        obs, info = env.reset()
        agent = LingAgent(max_steps_away=0)
        agent.reset(env.episode, env_info_for(env, model=model, protocol=protocol))
        for _ in range(8):
            action = asyncio.run(agent.act({**obs, "info": info}))
            assert action.name == "forward()"
            obs, _, _, _, info = env.step(action.slot)
        seen[protocol] = model.prompts[-1]
    recent = re.search(r"Your recent actions: (.*)", seen["flaneur"])
    assert recent is not None and recent.group(1).count("forward()") == 5  # the last five
    walk = re.findall(r"^([OA])_(\d+): ", seen["paper"], re.MULTILINE)
    assert walk == [(x, str(k)) for k in range(1, 8) for x in "OA"] + [("O", "8")]


# ------------------------------------------------------------------ 4. travel mode
def test_paper_local_routes_by_bicycle_on_the_one_street_graph(city):
    goal, start = geocode_one(city, "Cafe Kuu"), city.graph.index("n00")
    flaneur = template_direction(city, goal, start)
    paper = template_direction(city, goal, start, protocol="paper")
    assert (flaneur.route.mode, paper.route.mode) == ("walking", "bicycling")
    assert paper.route.nodes == flaneur.route.nodes  # one walking network for every mode
    assert paper.route.duration_s == pytest.approx(flaneur.route.duration_s / 3.0)


# ------------------------------------------------------------------ 5. category questions
@pytest.mark.parametrize(
    ("question", "place"),
    [
        ("Where is a bank?", "Pankki Etela"),
        ("Is there a pharmacy nearby?", "Apteekki Kulma"),
        ("Where's the nearest bank?", "Pankki Etela"),
        ("How do I get to Bar Tahti?", "Bar Tahti"),
    ],
)
def test_paper_local_answers_category_questions_with_the_nearest_place(city, question, place):
    start = city.graph.index("n00")
    answer = asyncio.run(
        give_directions(city, Thinker(None, "local"), question, start, protocol="paper")
    )
    assert answer.destination.name == place
    assert not DISTANCE.search(answer.instruction)


def test_paper_local_searches_within_2000_m(city):
    far = city.graph.index("n33")
    assert nearest_match(city, "bank", far).name == "Pankki Pohjoinen"  # the nearer bank
    assert nearest_match(city, "bank", far, radius_m=3.0) is None
    with pytest.raises(UnknownPlaceError) as err:
        asyncio.run(
            give_directions(city, Thinker(None, "local"), "Where is a zoo?", far, protocol="paper")
        )
    assert str(err.value) == "no place matches 'a zoo' within 2000 m of the start"


def test_the_protocol_reaches_local_through_the_runner(city, tmp_path):
    item = TaskItem(
        "q1",
        "virl-local",
        {
            "name": "Ling",
            "city": "papergrid",
            "start": "Amber Gallery",
            "background": "a visitor",
            "intention": "money",
            "question": "Where is a bank?",
        },
    )
    info = SolveInfo(task_id="t", city=city, items=[item], seed=0, protocol="paper")
    result = asyncio.run(LocalAgent().solve(item, info))
    assert result["destination"]["name"] == "Pankki Etela" and result["protocol"] == "paper"
    assert SolveInfo(task_id="t", city=city, items=[], seed=0).protocol == "flaneur"
    pack = city.save(tmp_path / "pack")
    made = generate_set("virl-local", city, city_spec=str(pack), size=2)
    path = made.write(tmp_path / "local.jsonl")
    for protocol in ("flaneur", "paper"):
        config = RunConfig(
            agents=("local",),
            tasks=(str(path),),
            city=str(pack),
            cache_mode="off",
            protocol=protocol,
        )
        run_benchmark(config, tmp_path / protocol, progress="none")
        text = (tmp_path / protocol / "episodes.jsonl").read_text().splitlines()
        rows = [json.loads(x) for x in text]
        for row in rows:
            result = row["result"]
            assert bool(DISTANCE.search(result["instruction"])) == (protocol == "flaneur")
            assert result["route"]["mode"] == ("bicycling" if protocol == "paper" else "walking")
            assert row["metrics"]["followed"] and row["metrics"]["destination_correct"]


# ------------------------------------------------------------------ the map as V-IRL's oracle
def test_paper_map_sees_route_landmarks_only_at_key_positions(city):
    sight = Sight(city, radius_m=20.0, fov=90.0)
    n01, n02 = city.graph.index("n01"), city.graph.index("n02")
    names = ["Birch Gallery", "Kahvila Nurkka", "Cedar Gallery"]
    assert set(asyncio.run(sight.seen(n01, 0.0, names))) == {"Birch Gallery", "Kahvila Nurkka"}
    sight.as_oracle([n02], "Birch Gallery")  # n02 a key position, Birch Gallery the goal
    assert set(asyncio.run(sight.seen(n01, 0.0, names))) == {"Birch Gallery"}
    assert set(asyncio.run(sight.seen(n02, 0.0, names))) == {"Cedar Gallery"}
    sight.as_oracle([], "")
    assert set(asyncio.run(sight.seen(n01, 0.0, names))) == {"Birch Gallery", "Kahvila Nurkka"}


def test_paper_ling_asks_local_as_v_irl(city, tmp_path):
    (trip,) = generate_set("virl-ling", city, city_spec="x", size=1).items
    trip = dataclasses.replace(trip, metadata={**trip.metadata, "question": "Where is a bank?"})
    start = city.graph.index(trip.start_node)
    bank = nearest_match(city, "bank", start)
    assert bank is not None
    _, rows = _run(city, [trip], tmp_path / "paper", protocol="paper")
    asked = [a for r in rows[0]["records"] for a in r.get("asked", [])]
    assert asked[0]["destination"] == bank.name
    assert not DISTANCE.search(asked[0]["instruction"])


def test_paper_ling_step_limit_is_the_benchmarks():
    # V-IRL's VLN benchmark gives Ling 40 actions; its single-trip configs say 30 and 35
    from flaneur.agents.virl.ling import LingOptions

    assert LingOptions().step_limit == 40
    assert LingOptions(step_limit=30).step_limit == 30

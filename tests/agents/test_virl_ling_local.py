"""Local and Ling on the one engine, on a small hand-made grid city: Ling through the runner on
VLN routes and on questions (re-asking bounded by max_asks), Local through the runner with
its scorer, the model path through the fake server, a persona run through the console
script, hostile options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flaneur.agents import make_agent
from flaneur.agents.virl.ling import follow_offline, parse_action
from flaneur.errors import FlaneurError
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.geo import LocalProjection
from flaneur.tasks.generators import generate_set
from flaneur.testing.fake_openai import FakeOpenAIServer
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph
from flaneur.world.places import Places

PROJ = LocalProjection(60.17, 24.94)
SIDE, STEP = 4, 50.0  # a 4 x 4 grid of junctions 50 m apart, node "n<row><col>"
WORDS = "Amber Birch Cedar Dune Ember Fjord Grove Heath Iris Juniper Kelp Lumen Moss Nook Opal Pine"
DESTINATIONS = [  # name, row, col, category (V-IRL types)
    ("Cafe Kuu", 2, 2, "cafe"),
    ("Bar Tahti", 3, 1, "bar"),
    ("Bistro Meri", 1, 3, "restaurant"),
]


def grid_city(name: str = "lingrid") -> City:
    """Streets along every row and column; a gallery 3 m north-east of every junction (the
    landmarks) and three destinations 4 m south-west of theirs."""
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
    records = []

    def place(pid: str, label: str, x: float, y: float, category: str) -> None:
        plat, plng = PROJ.inverse(x, y)
        records.append(
            {
                "id": pid,
                "name": label,
                "lat": float(plat),
                "lng": float(plng),
                "categories": [category],
            }
        )

    for k, word in enumerate(WORDS.split()):
        r, c = divmod(k, SIDE)
        place(f"g{k}", f"{word} Gallery", c * STEP + 3, r * STEP + 3, "museum")
    for k, (label, r, c, category) in enumerate(DESTINATIONS):
        place(f"d{k}", label, c * STEP - 4, r * STEP - 4, category)
    return City(
        name=name,
        graph=graph,
        places=Places.from_records(records),
        source="test",
        edge_streets=np.full(graph.n_edges, ""),
    )


@pytest.fixture(scope="module")
def city() -> City:
    return grid_city()


def _run(city, episodes, agent="ling", folder=None, **config):
    task = "grid-set"
    out = folder
    summary = run_benchmark(
        RunConfig(agents=(agent,), tasks=(task,), concurrency=2, cache_mode="off", **config),
        out,
        progress="none",
        loaded={task: (city, episodes)},
    )
    rows = [json.loads(line) for line in (Path(out) / "episodes.jsonl").read_text().splitlines()]
    return summary["runs"][0], rows


def test_ling_follows_vln_routes_with_map_landmarks(city, tmp_path):
    episodes = generate_set("virl-vln", city, city_spec="x").items
    assert len(episodes) >= 2 and all(e.metadata["landmarks"] for e in episodes)
    entry, rows = _run(city, episodes, folder=tmp_path / "ling")
    assert entry["by_termination"] == {"stopped": len(episodes)}
    figures = entry["task_metrics"]
    assert figures["success"]["value"] == 1.0 and figures["success"]["n"] == len(episodes)
    assert figures["start_reaction"]["value"] == 1.0 and len(figures["success"]["ci95"]) == 2
    assert all(row["success"] for row in rows)
    first = rows[0]["records"][0]
    assert first["moves"][0].startswith("turn_direction(") and first["parsed_action"] == "forward()"
    oracle, _ = _run(city, episodes, agent="oracle", folder=tmp_path / "oracle")
    assert oracle["task_metrics"]["success"]["value"] == 1.0  # actions derived from its moves


def test_ling_asks_local_and_asks_again_at_most_max_asks(city, tmp_path):
    episodes = generate_set("virl-ling", city, city_spec="x", size=2).items
    assert episodes[0].metadata["question"].startswith("How do I get to ")
    entry, rows = _run(city, episodes, folder=tmp_path / "asks")
    assert entry["task_metrics"]["success"]["value"] == 1.0
    asked = [a for r in rows[0]["records"] for a in r.get("asked", [])]
    assert len(asked) == 1 and asked[0]["after"] == "start" and asked[0]["instruction"]
    for max_asks in (0, 2):  # a turn is one too many: every attempt ends at once
        options = {"ling": {"max_turns_in_a_row": 1, "max_asks": max_asks}}
        _, rows = _run(city, episodes, folder=tmp_path / f"a{max_asks}", per_agent_options=options)
        for row in rows:
            asked = [a for r in row["records"] for a in r.get("asked", [])]
            assert len(asked) == 1 + max_asks
            assert [a["after"] for a in asked[1:]] == ["too_many_turns"] * max_asks
            assert row["records"][-1]["ended"] == "too_many_turns"


def test_local_through_the_runner_with_its_scorer(city, tmp_path):
    pack = city.save(tmp_path / "pack")
    made = generate_set("virl-local", city, city_spec=str(pack), size=3)
    path = made.write(tmp_path / "local.jsonl")
    summary = run_benchmark(
        RunConfig(agents=("local",), tasks=(str(path),), city=str(pack), cache_mode="off"),
        tmp_path / "run",
        progress="none",
    )
    entry = summary["runs"][0]
    rows = [json.loads(x) for x in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert entry["by_termination"] == {"completed": len(made.items)}
    for row in rows:
        metrics = row["metrics"]
        assert metrics["destination_correct"] and metrics["followed"] and row["success"]
        assert metrics["milestones"] == metrics["legs"] == len(row["result"]["milestones"])
        assert 0 < metrics["route_m"] <= 150 and metrics["followed_end_m"] <= 25


def test_follow_offline_reads_free_wording(city):
    start = city.graph.index("n00")
    end = follow_offline(city, "Head east for 100 metres, then turn left and walk 100 m.", start, 0)
    assert str(city.graph.ids[end]) == "n22"


class ScriptedVirl:
    """Local's and Ling's prompts: the destination, a useless instruction (the template
    answers), the landmarks, and actions of which every 4th is garbage."""

    def __init__(self) -> None:
        self.actions = 0

    def __call__(self, request) -> str:
        text = request.last_user_text
        if "Which place do they want" in text:
            return "Cafe Kuu"
        if "Write clear walking directions" in text:
            return "Sorry, I cannot help."
        if "List every landmark" in text:
            return '["Cafe Kuu"]'
        self.actions += 1
        return "no idea" if self.actions % 4 == 0 else "forward()"


def test_ling_and_local_with_a_model(city, tmp_path):
    episodes = generate_set("virl-ling", city, city_spec="x", size=1).items
    with FakeOpenAIServer(ScriptedVirl()) as server:
        entry, rows = _run(
            city,
            episodes,
            folder=tmp_path / "llm",
            llm="fake-model",
            llm_base_url=server.base_url,
            per_agent_options={"ling": {"max_asks": 0}},
        )
    calls = [c for r in rows[0]["records"] for c in r.get("calls", [])]
    ids = {c["prompt_id"].split(":")[0] for c in calls}
    assert ids == {
        "local-destination-1",
        "local-instruction-1",
        "ling-landmarks-1",
        "ling-action-1",
    }
    assert server.chat_count == len(calls) and entry["usage"]["calls"] == len(calls)
    assert rows[0]["records"][0]["asked"][0]["written_by"] == "template"  # counted fallback
    assert sum(r.get("parse_failures", 0) for r in rows[0]["records"]) >= 2


def test_parse_action():
    assert parse_action("I will turn_direction(north-east) now") == ("turn", "north-east")
    assert parse_action("turn_direction('southwest')") == ("turn", "south-west")
    assert parse_action("forward()") == ("forward", "")
    assert parse_action("stop ( )") == ("stop", "")
    assert parse_action("turn_direction(up)") is None and parse_action("") is None


@pytest.mark.parametrize(
    ("agent", "options", "needle"),
    [
        ("ling", {"max_asks": 99}, "max_asks"),
        ("ling", {"step_limit": 10**9}, "step_limit"),
        ("ling", {"landmark_radius_m": float("nan")}, "landmark_radius_m"),
        ("ling", {"wings": 2}, "wings"),
        ("local", {"writer": "poet"}, "writer"),
    ],
)
def test_hostile_options_are_one_line(agent, options, needle):
    with pytest.raises(FlaneurError) as err:
        make_agent(agent, **options)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_persona_run_through_the_console_script(city, tmp_path):
    pack = city.save(tmp_path / "pack")
    persona = tmp_path / "ling.toml"
    persona.write_text(
        'name = "Ling"\ncity = "pack"\nstart = "Amber Gallery"\n'
        'background = "A student."\nintention = "Coffee."\n'
        'question = "How do I get to Cafe Kuu?"\nheading = 90\nmax_asks = 1\n',
        encoding="utf-8",
    )
    flaneur = str(Path(sys.executable).with_name("flaneur"))
    done = subprocess.run(
        [flaneur, "virl", "ling", str(persona), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["success"] and result["scenario"]["question"] == "How do I get to Cafe Kuu?"
    page = (tmp_path / "out" / "map.html").read_text()
    assert "s route 1" in page and "s walk" in page and "Cafe Kuu" in page  # shown as text
    assert pack.is_dir()


def test_score_local_by_hand(city):
    from flaneur.bench.route_scenarios import score_local
    from flaneur.tasks.items import TaskItem

    item = TaskItem(
        "q1",
        "virl-local",
        {"destination_place_id": "d0", "destination_node": "n22", "heading": 0.0},
    )
    bar = city.places.index("d1")  # Bar Tahti: the wrong place
    result = {
        "start_node": "n00",
        "destination": {"name": "Bar Tahti", "place_row": bar},
        "route": {"distance_m": 150.0},
        "milestones": [{}, {}],
        "instruction": "Face east and walk about 100 m. Bar Tahti will be on your left.",
    }
    metrics = score_local(item, result, city)
    # Ling ends at n02 (100 m east); Cafe Kuu lies at (96, 96) m, 5.7 m from its viewpoint
    assert metrics == {
        "destination_correct": False,
        "route_m": 150.0,
        "milestones": 2,
        "legs": 1,
        "followed_end_m": round(float(np.hypot(4.0, 96.0)), 1),
        "followed": False,
    }


def test_scenarios_the_city_cannot_serve_are_one_line(city):
    from flaneur.services.errors import UnknownPlaceError
    from flaneur.tasks.generators import GENERATORS

    fields = {"start": "Amber Gallery", "question": "How do I get to Qqxzv Wwvvb?", "heading": 0}
    for kind in ("virl-local", "virl-ling"):
        with pytest.raises(UnknownPlaceError) as err:
            GENERATORS.get(kind)().from_fields(fields, city, item_id="x")
        assert "Qqxzv Wwvvb" in str(err.value) and "\n" not in str(err.value)

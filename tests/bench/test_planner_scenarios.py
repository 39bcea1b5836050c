"""The planner scenarios' generators on any city (a small hand-made one, Helsinki) and their
scorers by hand (flaneur.bench.scenarios)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from flaneur.bench.scenario_scores import score_aria, score_diego, score_peng, score_vivek
from flaneur.bench.scenarios import AriaScenarios, DiegoScenarios, VivekScenarios
from flaneur.errors import FlaneurError
from flaneur.geo import LocalProjection
from flaneur.tasks.generators import generate_set
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph
from flaneur.world.places import Places

# a street along x: S (0 m), A (100 m), B (200 m), C (300 m); places beside the nodes
PROJ = LocalProjection(60.17, 24.94)
NODES = {"S": (0.0, 0.0), "A": (100.0, 0.0), "B": (200.0, 0.0), "C": (300.0, 0.0)}
PLACES = [  # id, name, x, y, category
    ("p0", "Kahvila Aalto", 0.0, 5.0, "cafe"),
    ("p1", "Ravintola Bruno", 100.0, 5.0, "restaurant"),
    ("p2", "Baari Cedar", 200.0, 5.0, "bar"),
    ("p3", "Market Delta", 300.0, 5.0, "supermarket"),
    ("p4", "Sali Echo", 300.0, -5.0, "gym"),
]


def line_city(places=PLACES) -> City:
    names = list(NODES)
    xy = np.array([NODES[n] for n in names])
    lat, lng = PROJ.inverse(xy[:, 0], xy[:, 1])
    src, dst = [0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]
    graph = StreetGraph.from_edges(names, lat, lng, src, dst)
    records = []
    for pid, name, x, y, category in places:
        plat, plng = PROJ.inverse(x, y)
        records.append(
            {
                "id": pid,
                "name": name,
                "lat": float(plat),
                "lng": float(plng),
                "categories": [category],
            }
        )
    return City(name="line", graph=graph, places=Places.from_records(records), source="test")


@pytest.fixture(scope="module")
def city() -> City:
    return line_city()


# ---------------------------------------------------------------- Peng
def test_score_peng_by_hand(city):
    item = TaskItem("p", "x", {"places": ["Baari Cedar", "Market Delta"]})
    walk = {"node_ids": ["S", "A", "B", "C"]}
    found = [{"name": "market delta"}]
    # stops given S, C, A, B: 300 + 200 + 100 = 600 m; best S, A, B, C = 300 m
    best = {"stops": ["S", "C", "A", "B"], "order": [0, 2, 3, 1], "walk": walk, "places": found}
    assert score_peng(item, best, city) == {
        "optimal": True,
        "saving_pct": 50.0,
        "last_stop_reached": True,  # the walk ends at C, the last stop of S, A, B, C
        "places_found": 0.5,
        "stops": 3,
    }
    # S, B, A, C: 200 + 100 + 200 = 500 m, 100 x (600 - 500) / 600 = 16.67 %; ends at C
    worse = {**best, "order": [0, 3, 2, 1], "walk": {"node_ids": ["S", "A", "B"]}}
    metrics = score_peng(item, worse, city)
    assert not metrics["optimal"] and metrics["saving_pct"] == 16.67
    assert not metrics["last_stop_reached"]  # the walk ended at B, 100 m from C
    broken = score_peng(item, {**best, "order": [0, 1, 1, 2]}, city)
    assert broken["optimal"] is False and broken["saving_pct"] == 0.0
    assert score_peng(TaskItem("p"), best, city)["places_found"] is None


# ---------------------------------------------------------------- Aria
def test_score_aria_by_hand(city):
    item = TaskItem("a", "cafe", {"target_types": ["cafe"]})
    recs = [{"row": 1, "place_id": "p1"}, {"row": 0, "place_id": "p0"}, {"row": 2}]
    assert score_aria(item, {"recommendations": recs}, city) == {
        "top1_fits": False,
        "first_fit_rank": 2,
        "fit_in_top3": True,
        "recommendations": 3,
    }
    moved = [{"row": 3, "place_id": "p0"}]  # a row that is not the id's: the id counts
    assert score_aria(item, {"recommendations": moved}, city)["top1_fits"] is True
    none = score_aria(item, {"recommendations": recs[:1]}, city)
    assert none["first_fit_rank"] is None and none["fit_in_top3"] is False
    assert score_aria(TaskItem("a"), {"recommendations": recs}, city)["top1_fits"] is None


# ---------------------------------------------------------------- Vivek
def listing(x: float, price: float) -> dict:
    lat, lng = PROJ.inverse(x, 20.0)
    return {"formattedAddress": f"Street {x:g}", "price": price, "latitude": lat, "longitude": lng}


def test_score_vivek_by_hand(city):
    # the listing lies 20 m off C: the supermarket and the gym within 200 m, the cafe 300 m off
    near_c, near_s = listing(300.0, 1000.0), listing(0.0, 800.0)
    item = TaskItem(
        "v", "x", {"budget": 1200, "amenities": ["supermarket", "gym"], "listings": [near_c]}
    )
    assert score_vivek(item, {"ranked": [near_c]}, city) == {
        "top1_fits": True,
        "within_budget": True,
        "amenities_met": True,
        "amenities_met_frac": 1.0,
        "ranked": 1,
    }
    wants_cafe = TaskItem("v", "x", {**item.data, "amenities": ["supermarket", "cafe"]})
    metrics = score_vivek(wants_cafe, {"ranked": [near_c]}, city)
    assert not metrics["top1_fits"] and metrics["amenities_met_frac"] == 0.5
    poor = TaskItem("v", "x", {**item.data, "budget": 900})
    assert score_vivek(poor, {"ranked": [near_c]}, city)["within_budget"] is False
    assert score_vivek(item, {"ranked": [near_s]}, city)["top1_fits"] is False  # not offered
    assert score_vivek(item, {"ranked": []}, city)["top1_fits"] is False


# ---------------------------------------------------------------- Diego
def day(*activities: dict, unvisited=()) -> dict:
    return {"plan": list(activities), "unvisited": list(unvisited)}


LEG = {"type": "transport", "from_node_id": "S", "node_id": "C", "mode": "walking"}


def test_score_diego_by_hand(city):
    item = TaskItem("d", "x", {"budget": 30, "wishes": ["Market Delta", "Sali Echo"]})
    # 300 m walking at 5 km/h: 216 s = 3.6 min; guessed 15 min: error 11.4 min
    grounded = day(
        {**LEG, "minutes": 3.6, "cost": 0.0},
        {"type": "normal", "place": "Market Delta", "cost": 10.0},
        {"type": "eat", "place": "Baari Cedar", "cost": 18.0},
        {"type": "end", "start": "13:00", "content": "go home"},
        unvisited=[{"wish": "Sali Echo", "reason": "not reached: go home"}],
    )
    result = {"grounded_plan": grounded, "ungrounded_plan": day({**LEG, "minutes": 15.0})}
    assert score_diego(item, result, city) == {
        "feasible": True,
        "within_budget": True,
        "ends_the_day": True,
        "wishes_visited": 0.5,
        "travel_time_mae_min": pytest.approx(0.0, abs=0.01),  # the street: 300 m to a cm
        "travel_time_mae_ungrounded_min": pytest.approx(11.4, abs=0.01),
    }
    poor = TaskItem("d", "x", {**item.data, "budget": 20})  # 28 spent
    assert score_diego(poor, result, city)["feasible"] is False
    unexplained = {**result, "grounded_plan": {**grounded, "unvisited": []}}
    assert score_diego(item, unexplained, city)["feasible"] is False
    open_day = {**result, "grounded_plan": {**grounded, "plan": grounded["plan"][:3]}}
    metrics = score_diego(item, open_day, city)
    assert metrics["ends_the_day"] is False and metrics["feasible"] is False
    assert (
        score_diego(item, {"grounded_plan": grounded}, city)["travel_time_mae_ungrounded_min"]
        is None
    )


# ---------------------------------------------------------------- generators on any city
def test_generators_on_a_small_city_skip_what_it_lacks(city):
    made = generate_set("virl-aria", city, city_spec="line", seed=3, size=4)
    kinds = {i.category for i in made.items}
    assert kinds <= {"cafe", "restaurant", "bar", "supermarket", "gym"} and len(made.items) == 4
    assert "pharmacy" in made.report["skipped"]  # no place of the type: said why
    for item in made.items:
        fits = set(item["target_types"])
        start = city.places.names.tolist().index(item["start"])
        assert fits & set(city.places.categories[start]) or item["in_reach"] >= 1
    again = generate_set("virl-aria", city, city_spec="line", seed=3, size=4)
    assert [i.to_json() for i in again.items] == [i.to_json() for i in made.items]
    peng = generate_set("virl-peng", city, city_spec="line", seed=0, size=2, options={"stops": 2})
    assert all(len(i["places"]) == 2 and i["start"] not in i["places"] for i in peng.items)
    with pytest.raises(FlaneurError, match="cannot serve a single virl-diego scenario"):
        generate_set("virl-diego", city, city_spec="line", size=2)  # no sights
    empty = City(name="empty", graph=city.graph, places=Places.empty(), source="test")
    with pytest.raises(FlaneurError, match="empty cannot serve a single virl-peng") as err:
        generate_set("virl-peng", empty, city_spec="empty", size=2)
    assert "\n" not in str(err.value)
    with pytest.raises(FlaneurError, match="has no option stop "):
        generate_set("virl-peng", city, city_spec="line", options={"stop": 3})
    with pytest.raises(FlaneurError, match="stops=9 must be an integer from 2 to 7"):
        generate_set("virl-peng", city, city_spec="line", options={"stops": 9})


def test_generated_sets_on_helsinki_are_scored_scenarios(tmp_path):
    from flaneur.tasks.episode import read_episodes
    from flaneur.tasks.items import read_items
    from flaneur.world.builtin import load_city

    helsinki = load_city("helsinki")
    vivek = generate_set("virl-vivek", helsinki, city_spec="helsinki", size=2)
    header, items = read_items(vivek.write(tmp_path / "v.jsonl"))
    assert header["success_metric"] == "top1_fits" and header["kind"] == "virl-vivek"
    for item in items:  # a listing meets the search within the budget
        assert any(
            score_vivek(item, {"ranked": [x]}, helsinki)["top1_fits"] for x in item["listings"]
        )
    hiro = generate_set("virl-hiro", helsinki, city_spec="helsinki", options={"per_intention": 1})
    episodes = read_episodes(hiro.write(tmp_path / "h.jsonl"))
    assert len(episodes) >= 8 and all(e.metadata["scheme"] == "headings" for e in episodes)
    assert {e.metadata["success_metric"] for e in episodes} == {"tcp"}
    assert all(e.instruction.startswith(("Hiro", "It is")) for e in episodes)
    assert "hiro:ice_cream" in hiro.report["skipped"] or len(episodes) == 12


# ---------------------------------------------------------------- persona files
def test_persona_file_paths_resolve_next_to_the_file(tmp_path):
    from flaneur.world.builtin import load_city

    helsinki = load_city("helsinki")
    folder = tmp_path / "personas"
    folder.mkdir()
    (folder / "remarks.txt").write_text("I am tired\n\ngo home\n")
    home = {"formattedAddress": "M 1", "price": 1200, "latitude": 60.1695, "longitude": 24.939}
    (folder / "homes.json").write_text(json.dumps([home]))
    base = {"name": "T", "start": "Kiasma", "background": "b", "intention": "i"}
    source = folder / "p.toml"
    diego = DiegoScenarios().from_fields(
        {**base, "feedback": "remarks.txt"}, helsinki, item_id="d", source=source
    )
    assert diego["feedback"] == ["I am tired", "go home"]
    vivek = VivekScenarios().from_fields(
        {**base, "listings": "homes.json"}, helsinki, item_id="v", source=source
    )
    assert vivek["listings"][0]["price"] == 1200.0
    assert vivek["listings_source"] == str(folder / "homes.json")
    with pytest.raises(FlaneurError, match="closest names"):
        AriaScenarios().from_fields({**base, "start": "Qqxzv Wwvvb"}, helsinki, item_id="a")

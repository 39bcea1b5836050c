"""VLN route collection, the task episodes, what Ling sees and the command on a hand-made city."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import shapely

from flaneur.agents.virl.instructions import parse_instruction
from flaneur.agents.virl.sight import Sight
from flaneur.bench.vln_routes import best_start, collect_routes, route_episodes
from flaneur.services.region import Region, grid_regions
from flaneur.world import City, Places, StreetGraph

LAT0, LNG0 = 60.0, 25.0
DLAT, DLNG = 0.00045, 0.0009  # about 50 m both ways at 60 N
OFF = 0.04  # places about 2-4 m from their junction


def small_city() -> City:
    """A 3 x 3 grid of junctions 50 m apart (node ``r * 3 + c``); the cafe at the centre.

    Start A (south-west corner) reaches the cafe through one intersection with one landmark
    near it; Start B (north-east corner) through one with two landmarks near it.
    """
    ids, lat, lng = [], [], []
    for r in range(3):
        for c in range(3):
            ids.append(f"n{r}{c}")
            lat.append(LAT0 + r * DLAT)
            lng.append(LNG0 + c * DLNG)
    src, dst = [], []
    for r in range(3):
        for c in range(3):
            a = r * 3 + c
            for b in ([a + 1] if c < 2 else []) + ([a + 3] if r < 2 else []):
                src += [a, b]
                dst += [b, a]
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst)

    def place(pid, name, r, c, cat="museum"):
        return {
            "id": pid,
            "name": name,
            "lat": LAT0 + (r + OFF) * DLAT,
            "lng": LNG0 + (c + OFF) * DLNG,
            "categories": [cat],
            "tags": {},
        }

    places = Places.from_records(
        [
            place("goal", "Cafe Goal", 1, 1, "cafe"),
            place("a", "Start A", 0, 0),
            place("b", "Start B", 2, 2),
            place("l1", "Alpha", 0, 1),
            place("l2", "Beta", 1, 0),
            place("l3", "Gamma", 2, 1),
            place("l4", "Delta", 2, 1),
            place("l5", "Epsilon", 1, 2),
            place("l6", "Zeta", 1, 2),
        ]
    )
    return City(
        name="vlngrid",
        graph=graph,
        places=places,
        source="hand-made",
        licence="CC0",
        edge_streets=np.full(graph.n_edges, ""),
    )


@pytest.fixture(scope="module")
def city() -> City:
    return small_city()


def everything(city: City) -> Region:
    west, south, east, north = city.bbox
    return Region("all", shapely.box(west - 0.01, south - 0.01, east + 0.01, north + 0.01))


def test_best_start_takes_most_landmarks_not_the_first(city):
    route, count = best_start(city, 0, 4)
    assert route.nodes[0] == 8  # Start B (north-east), two landmarks; Start A has one
    assert count == 2 and len(route.key_positions) == 2 and route.distance_m < 150


def test_collect_routes_filters_and_episodes(city):
    routes = collect_routes(city, [everything(city)], seed=3)
    assert len(routes) == 1  # only the cafe is one of the 20 types
    item = routes[0]
    assert item.destination.name == "Cafe Goal" and item.start == 8
    assert len(item.intersections) == 1 and len(item.landmarks) == 1
    assert item.landmarks[0] in {"Gamma", "Delta", "Epsilon", "Zeta"}
    (episode,) = route_episodes(city, routes)
    assert episode.id == "virl-vln-all-001" and episode.start_heading == 0.0
    assert episode.goal_nodes == ("n11",) and episode.reference_path[0] == "n22"
    assert episode.metadata["landmarks"] == list(item.landmarks)
    assert collect_routes(city, [everything(city)], seed=3)[0].instruction == item.instruction
    legs = parse_instruction(item.instruction)
    assert [leg.landmark for leg in legs] == [item.landmarks[0], ""]


def test_region_without_viewpoints_is_skipped(city):
    far = Region("far", shapely.box(30.0, 70.0, 30.01, 70.01))
    assert collect_routes(city, [far]) == []
    assert len(collect_routes(city, [far, everything(city)])) == 1


def test_grid_regions_are_named_cells(city):
    regions = grid_regions(city)
    assert [r.name for r in regions] == ["r00c00"]


def _flaneur() -> str:
    return str(Path(sys.executable).with_name("flaneur"))


def test_cli_runs_a_route_file_through_the_runner(city, tmp_path):
    from flaneur.tasks.generators import generate_set

    pack = city.save(tmp_path / "pack")
    routes = generate_set("virl-vln", city, city_spec=str(pack), seed=1).write(tmp_path / "r.jsonl")
    ok = subprocess.run(
        [_flaneur(), "bench", "vln", str(routes), "--city", str(pack), "--json"],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["routes"] == 1 and data["figures"]["oracle"]["success"]["value"] == 1.0
    assert set(data["figures"]["oracle"]) == {
        "success",
        "start_reaction",
        "intersection_arrival",
        "intersection_reaction",
        "stop_arrival",
        "stop_reaction",
    }


def test_task_set_is_registered():
    from flaneur.tasks.registry import get_task

    spec = get_task("helsinki-virl-vln-v1")
    assert (spec.scheme, spec.success_metric, spec.city) == ("headings", "virl_success", "helsinki")
    assert spec.generator == "virl-vln" and not spec.needs_data_dir


class _FakeView:
    def __init__(self, heading):
        self.heading = heading


class _FakeViews:
    def __init__(self):
        self.asked = []

    def view(self, node, heading, fov):
        self.asked.append(round(heading))
        return _FakeView(heading)


class _FakeScorer:
    """Reads "Kiasma" only in the view looking east (90 degrees)."""

    async def ascore(self, view, names):
        from flaneur.perception.landmarks.base import LandmarkObservation

        seen = round(view.heading) == 90 and "Kiasma" in names
        return [LandmarkObservation("Kiasma", seen, 1.0, heading=100.0 if seen else None)]


async def test_view_sight_looks_where_told(city):
    views = _FakeViews()
    sight = Sight(city, _FakeScorer(), views, radius_m=20.0, fov=90.0)
    assert await sight.seen(0, 0.0, ["Kiasma"], "right") == {"Kiasma": "right"}
    assert views.asked == [90]
    assert await sight.seen(0, 0.0, ["Kiasma"], "left") == {}
    assert views.asked == [90, 270]
    views.asked.clear()
    assert await sight.seen(0, 0.0, ["Kiasma"]) == {"Kiasma": "right"}
    assert views.asked == [0, 90]  # stops looking once every landmark is found


async def test_map_sight_is_the_oracle_row(city):
    sight = Sight(city, radius_m=20.0, fov=90.0)
    assert await sight.seen(4, 0.0, ["Cafe Goal", "Alpha"]) == {"Cafe Goal": "front-right"}
    assert await sight.seen(4, 180.0, ["cafe goal"]) == {"cafe goal": "back-left"}


def test_vln_types_are_the_one_type_map():
    from flaneur.bench.types import TYPES_20, VIRL_TO_FLANEUR
    from flaneur.bench.vln_routes import VLN_TYPES

    assert list(VLN_TYPES) == list(TYPES_20)
    assert all(VLN_TYPES[t] == VIRL_TO_FLANEUR[t] for t in TYPES_20)
    assert VLN_TYPES["spa"] == ("massage", "sauna", "public_bath")


async def test_clip_and_vlm_scorers_in_sight(city):
    from flaneur.models import make_model
    from flaneur.perception.landmarks.clip import CLIPLandmarks, RandomProjectionBackend
    from flaneur.perception.landmarks.vlm import VLMLandmarks
    from flaneur.testing.fake_openai import FakeOpenAIServer
    from flaneur.views.synthetic import SyntheticViews

    views = SyntheticViews(city)
    backend = RandomProjectionBackend(dim=32, seed=1)
    refs = [views.view(n, 0.0, fov=90.0) for n in range(4)]
    sees_all = Sight(city, CLIPLandmarks(backend, refs, tau=-1e9), views, radius_m=20, fov=90)
    assert await sees_all.seen(4, 0.0, ["Gamma"]) == {"Gamma": "front"}  # the first view
    assert await sees_all.seen(4, 0.0, ["Gamma"], "left") == {"Gamma": "left"}

    def answer(req):
        return "A" if "Gamma" in req.last_user_text else "None of the above"

    with FakeOpenAIServer(answer) as server:
        model = make_model("fake-model", base_url=server.base_url)
        sight = Sight(city, VLMLandmarks(model), views, radius_m=20, fov=90)
        assert await sight.seen(4, 90.0, ["Gamma"]) == {"Gamma": "front"}
        assert await sight.seen(4, 90.0, ["Delta"]) == {}
        assert server.chat_count == 1 + 4
        prompt = server.requests[0].last_user_text
        assert "A. Gamma" in prompt and "B. None of the above" in prompt


def test_ling_view_landmarks_need_views_clip_weights_and_a_model():
    from flaneur.agents.options import check_requirements
    from flaneur.agents.virl.ling import LingAgent
    from flaneur.errors import FlaneurError

    def check(landmarks, views=True, llm=False, **options):
        check_requirements(
            "ling",
            LingAgent,
            scheme="headings",
            has_model=llm,
            has_views=views,
            options=options,
            landmarks=landmarks,
        )

    check("map", views=False)
    with pytest.raises(FlaneurError, match="add --views synthetic"):
        check("ocr", views=False)
    with pytest.raises(FlaneurError, match="clip_weights"):
        check("clip")
    with pytest.raises(FlaneurError, match="add --llm"):
        check("vlm")
    check("vlm", llm=True)

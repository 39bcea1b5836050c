"""VLN route collection, the task episodes, the tourist and the command on a hand-made city."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import shapely

from flaneur.bench.vln_eval import Leg, OCRRecogniser, OracleRecogniser, evaluate, parse_legs
from flaneur.bench.vln_routes import (
    best_start,
    collect_routes,
    route_episodes,
)
from flaneur.services.errors import RegionError
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
    legs = parse_legs(item.instruction)
    assert [leg.landmark for leg in legs] == [item.landmarks[0], ""]


def test_tourist_with_oracle_reaches_the_cafe(city):
    episodes = route_episodes(city, collect_routes(city, [everything(city)]))
    result = evaluate(city, episodes, OracleRecogniser(city))
    assert result["metrics"]["success"] == 1.0
    assert result["runs"][0]["actions"][0].startswith("turn_direction(")


def test_region_without_viewpoints_is_an_error(city):
    far = Region("far", shapely.box(30.0, 70.0, 30.01, 70.01))
    with pytest.raises(RegionError, match="region 'far' holds no viewpoint of vlngrid"):
        collect_routes(city, [far])


def test_grid_regions_are_named_cells(city):
    regions = grid_regions(city)
    assert [r.name for r in regions] == ["r00c00"]


def _flaneur() -> str:
    return str(Path(sys.executable).with_name("flaneur"))


def test_cli_json_and_empty_region(city, tmp_path):
    pack = city.save(tmp_path / "pack")
    region = tmp_path / "far.geojson"
    region.write_text(
        json.dumps(
            {
                "type": "Polygon",
                "coordinates": [[[30.0, 70.0], [30.01, 70.0], [30.01, 70.01], [30.0, 70.0]]],
            }
        )
    )
    bad = subprocess.run(
        [_flaneur(), "bench", "vln", "--city", str(pack), "--region", str(region)],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "holds no viewpoint" in bad.stderr
    assert "Traceback" not in bad.stderr
    ok = subprocess.run(
        [_flaneur(), "bench", "vln", "--city", str(pack), "--seed", "1", "--json"],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["routes"] == 1 and data["metrics"]["oracle"]["success"] == 1.0


def test_task_set_is_registered():
    from flaneur.tasks.registry import get_task

    spec = get_task("helsinki-virl-vln-v1")
    assert (spec.scheme, spec.success_metric, spec.city) == ("headings", "virl_success", "helsinki")
    assert spec.generator == "virl-vln" and not spec.needs_data_dir


def test_parse_legs_reads_landmark_and_side():
    text = (
        "Face north and walk about 40 m. At the intersection with Kiasma on your "
        "front-right, turn to face east and walk about 25 m. Then, turn to face south and "
        "walk about 30 m. Cafe X will be on your left."
    )
    assert parse_legs(text) == [
        Leg("north", 40.0, "Kiasma", "front-right"),
        Leg("east", 25.0),
        Leg("south", 30.0),
    ]
    assert parse_legs("Go somewhere nice.") == []


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

    def visible(self, view, names):
        from flaneur.perception.landmarks.base import LandmarkObservation

        if round(view.heading) == 90 and "Kiasma" in names:
            return [LandmarkObservation("Kiasma", True, 1.0, heading=100.0)]
        return []


def test_ocr_recogniser_looks_where_told(city):
    views = _FakeViews()
    rec = OCRRecogniser(city, views=views, scorer=_FakeScorer())
    assert rec.seen(0, 0.0, ["Kiasma"], "right") == {"Kiasma": "right"}
    assert views.asked == [90]
    assert rec.seen(0, 0.0, ["Kiasma"], "left") == {}
    assert views.asked == [90, 270]
    views.asked.clear()
    assert rec.seen(0, 0.0, ["Kiasma"]) == {"Kiasma": "right"}
    assert views.asked == [0, 90]  # stops looking once every landmark is found


def test_vln_types_are_the_one_type_map():
    from flaneur.bench.types import TYPES_20, VIRL_TO_FLANEUR
    from flaneur.bench.vln_routes import VLN_TYPES

    assert list(VLN_TYPES) == list(TYPES_20)
    assert all(VLN_TYPES[t] == VIRL_TO_FLANEUR[t] for t in TYPES_20)
    assert VLN_TYPES["spa"] == ("massage", "sauna", "public_bath")


def test_clip_recogniser_uses_clip_landmarks_with_its_threshold(city):
    from flaneur.bench.vln_recognisers import clip_recogniser
    from flaneur.perception.landmarks.clip import CLIPLandmarks, RandomProjectionBackend

    backend = RandomProjectionBackend(dim=32, seed=1)
    sees_all = clip_recogniser(city, backend, reference=4, tau=-1e9)
    assert isinstance(sees_all.scorer, CLIPLandmarks) and sees_all.name == "clip"
    assert sees_all.seen(4, 0.0, ["Gamma"]) == {"Gamma": "front"}  # the first view, ahead
    assert sees_all.seen(4, 0.0, ["Gamma"], "left") == {"Gamma": "left"}
    blind = clip_recogniser(city, backend, reference=4, tau=1e9)
    assert blind.seen(4, 0.0, ["Gamma"]) == {} and blind.calls == 4  # looked all around
    episodes = route_episodes(city, collect_routes(city, [everything(city)]))
    first = evaluate(city, episodes, clip_recogniser(city, backend, reference=4))
    again = evaluate(city, episodes, clip_recogniser(city, backend, reference=4))
    assert first["recogniser"] == "clip" and first["runs"] == again["runs"]


def test_vlm_recogniser_through_the_fake_server(city):
    from flaneur.bench.vln_recognisers import make_vln_recogniser
    from flaneur.models import make_model
    from flaneur.testing.fake_openai import FakeOpenAIServer

    def answer(req):
        return "A" if "Gamma" in req.last_user_text else "None of the above"

    with FakeOpenAIServer(answer) as server:
        model = make_model("fake-model", base_url=server.base_url)
        rec = make_vln_recogniser("vlm", city, model=model)
        assert rec.seen(4, 90.0, ["Gamma"]) == {"Gamma": "front"}
        assert rec.seen(4, 90.0, ["Delta"]) == {}
        assert server.chat_count == 1 + 4
        prompt = server.requests[0].last_user_text
        assert "A. Gamma" in prompt and "B. None of the above" in prompt
        episodes = route_episodes(city, collect_routes(city, [everything(city)]))
        result = evaluate(city, episodes, rec)
        assert result["recogniser"] == "vlm" and 0.0 <= result["metrics"]["success"] <= 1.0


def test_clip_and_vlm_need_their_weights_or_model(city):
    from flaneur.bench.vln_recognisers import make_vln_recogniser
    from flaneur.errors import FlaneurError

    with pytest.raises(FlaneurError, match="--clip-weights"):
        make_vln_recogniser("clip", city)
    with pytest.raises(FlaneurError, match="--vlm"):
        make_vln_recogniser("vlm", city)
    with pytest.raises(FlaneurError, match="expected oracle, ocr, clip, vlm"):
        make_vln_recogniser("sonar", city)

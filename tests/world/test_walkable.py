"""Walkable headings: kept from CitySeeker's data, mapped to edges as CitySeeker's released
code maps them, carried through city packs and the task-city cache."""

import json

import numpy as np
import pytest

from flaneur.errors import DataError
from flaneur.tasks.cities import load_city_spec
from flaneur.world.city import PACK_VERSION, City
from flaneur.world.graph import StreetGraph
from flaneur.world.sources.cityseeker import city_from_cityseeker
from flaneur.world.walkable import WalkableHeadings
from harness.cityseeker_city import MOVES, WALKABLE, write_walkable_city


@pytest.fixture()
def folder(tmp_path):
    return write_walkable_city(tmp_path / "walkcity")


def moves(city, node_id):
    graph = city.graph
    node = graph.index(node_id)
    start = int(graph.indptr[node])
    return [str(graph.ids[graph.targets[start + k]]) for k in city.walkable.edges(graph, node)]


def test_cityseeker_city_keeps_walkable_headings_in_the_data_order(folder):
    city = city_from_cityseeker(folder)
    for node_id, heads in WALKABLE.items():
        assert city.walkable.of(city.graph.index(node_id)).tolist() == heads
        assert moves(city, node_id) == MOVES[node_id]
    # c: 350 -> w (no wrap at north), 5 and 10 -> n; n: 170 -> c, n2 unreachable
    assert city.metadata["cityseeker"]["walkable_headings"] == {
        "nodes": 6,
        "count_differs": 3,
        "shared_edge": 2,
        "unreachable_edge": 1,
    }


def test_edges_take_the_closest_azimuth_without_wrap_or_tolerance():
    graph = StreetGraph.from_edges(
        ["a", "b", "c", "d"],
        [0.0, 0.001, 0.0, -0.001],
        [0.0, 0.0, 0.001, 0.0],
        [0, 0, 0, 1],
        [1, 2, 3, 0],
        headings=[1.0, 90.0, 200.0, 180.0],
    )
    walkable = WalkableHeadings.from_lists([[359.0, 100.0, 300.0, 45.5], [], [10.0], [5.0]])
    # 359 -> 200 (159 < 358), 300 -> 200 (100 away: no tolerance), 45.5 -> 1 (tie -> first)
    assert walkable.edges(graph, 0) == [2, 1, 2, 0]
    assert walkable.edges(graph, 1) == []  # no heading here
    assert walkable.edges(graph, 2) == []  # no out-edge here


def test_walkable_headings_go_through_packs(folder, tmp_path):
    city = city_from_cityseeker(folder)
    city.save(tmp_path / "pack")
    again = City.load(tmp_path / "pack")
    assert np.array_equal(again.walkable.indptr, city.walkable.indptr)
    assert np.array_equal(again.walkable.headings, city.walkable.headings)
    meta = json.loads((tmp_path / "pack" / "city.json").read_text())
    assert meta["format_version"] == PACK_VERSION and PACK_VERSION >= 4  # 4 added them
    plain = City(name="plain", graph=city.graph)
    plain.save(tmp_path / "pack")  # a city without them leaves no file behind
    assert not (tmp_path / "pack" / "walkable.npz").exists()
    assert City.load(tmp_path / "pack").walkable is None
    city.save(tmp_path / "bad")
    (tmp_path / "bad" / "walkable.npz").write_bytes(b"not a zip")
    with pytest.raises(DataError, match=r"walkable.npz: corrupt city pack file"):
        City.load(tmp_path / "bad")


def test_a_version_3_pack_is_read_without_walkable_headings(folder, tmp_path):
    city_from_cityseeker(folder).save(tmp_path / "pack")
    meta_path = tmp_path / "pack" / "city.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "format_version": 3}))
    (tmp_path / "pack" / "walkable.npz").unlink()  # what version 3 wrote
    old = City.load(tmp_path / "pack")
    assert old.walkable is None and old.graph.n_nodes > 0
    meta_path.write_text(json.dumps({**meta, "format_version": 2}))
    with pytest.raises(DataError, match=r"reads versions 3, 4, 5\); rebuild the pack"):
        City.load(tmp_path / "pack")


def test_cached_cityseeker_city_keeps_walkable_headings(folder, tmp_path, monkeypatch):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))
    built = load_city_spec(f"cityseeker:{folder}")
    packs = list((tmp_path / "cache" / "cities").glob("cityseeker-walkcity-*"))
    assert len(packs) == 1 and (packs[0] / "walkable.npz").is_file()
    loaded = City.load(packs[0])
    assert loaded.walkable.headings.tolist() == built.walkable.headings.tolist()


def test_bad_walkable_headings_are_named(folder):
    edges = json.loads((folder / "connections.json").read_text())
    edges[3]["end_walkable_headings"] = ["north"]
    (folder / "connections.json").write_text(json.dumps(edges))
    with pytest.raises(DataError, match=r"edge #3: end_walkable_headings must be a list"):
        city_from_cityseeker(folder)


def test_cities_without_walkable_headings_have_none(tmp_path):
    edges = [
        {"start_filename": a, "end_filename": b, "edge_azimuth": az, "edge_distance": 10.0}
        for a, b, az in (("a", "b", 0.0), ("b", "a", 180.0))
    ]
    route = [{"filename": "a", "latitude": 31.0, "longitude": 121.0}]
    (tmp_path / "connections.json").write_text(json.dumps(edges))
    (tmp_path / "questions.json").write_text(json.dumps([{"complete_route": route}]))
    city = city_from_cityseeker(tmp_path)
    assert city.walkable is None and "walkable_headings" not in city.metadata["cityseeker"]

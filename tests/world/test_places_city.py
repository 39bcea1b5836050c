import json

import numpy as np
import pytest

from flaneur.errors import DataError
from flaneur.world import City
from flaneur.world.city import PACK_VERSION


def test_places_table(city):
    places = city.places
    assert len(places) == 3 and places.n_named == 2
    assert places.with_category("atm").tolist() == [1]
    assert places.category_counts() == {"atm": 1, "bank": 1, "bench": 1, "cafe": 1}
    place = places[2]
    assert place.label == "bench" and place.rating == 4.5 and place.reviews == ("nice",)
    assert places[0].attributes == {"wheelchair": "yes"}
    assert places.index("p2") == 1


def test_places_within_radius_nearest_first(city):
    c = city.graph.index("C")
    rows, dist = city.places_near_node(c, radius_m=20)
    # p2: 2.22 m N, 11.12 m E (11.34 m); p3: 11.12 m S, 2.78 m W (11.46 m);
    # p1: 16.68 m N, 1.67 m E (16.76 m)
    assert rows.tolist() == [1, 2, 0]
    assert dist == pytest.approx([11.34, 11.46, 16.76], abs=0.05)
    rows, _ = city.places_near_node(c, radius_m=5)
    assert rows.tolist() == []


def test_places_in_view_sector(city):
    xy = city.graph.xy[city.graph.index("C")]
    rows, _dist, rel = city.places.in_view(xy, 0.0, fov=60, radius_m=30)
    assert rows.tolist() == [0]  # the cafe, 6 degrees right of north
    assert rel[0] == pytest.approx(5.7, abs=0.2)
    rows, _, rel = city.places.in_view(xy, 90.0, fov=60, radius_m=30)
    assert rows.tolist() == [1] and rel[0] == pytest.approx(
        -11.3, abs=0.1
    )  # atan(2.22 m N / 11.12 m E)
    rows, _, _ = city.places.in_view(xy, 180.0, fov=90, radius_m=30, named_only=True)
    assert rows.tolist() == []  # the bench behind is unnamed
    rows, _, _ = city.places.in_view(xy, 180.0, fov=90, radius_m=30)
    assert rows.tolist() == [2]


def test_pack_round_trip(city, tmp_path):
    city.save(tmp_path / "pack")
    again = City.load(tmp_path / "pack")
    assert again.name == "plus" and again.licence == "CC0"
    assert again.graph.ids.tolist() == city.graph.ids.tolist()
    assert np.array_equal(again.graph.headings, city.graph.headings)
    assert again.places.to_records() == city.places.to_records()
    assert np.array_equal(again.node_sets["north"], city.node_sets["north"])
    assert len(again.buildings) == 1 and again.buildings[0].equals(city.buildings[0])
    assert again.building_heights.tolist() == [12.0]
    assert again.summary()["degree_histogram"] == {1: 4, 2: 3, 4: 1}
    meta = json.loads((tmp_path / "pack" / "city.json").read_text())
    assert meta["format"] == "flaneur-city-pack" and meta["format_version"] == PACK_VERSION


def test_buildings_in_metres(city):
    footprint = city.buildings_xy[0]
    assert footprint.area == pytest.approx(11.12 * 5.56, rel=0.01)


def test_bad_packs_are_named(city, tmp_path):
    with pytest.raises(DataError, match="not a city pack"):
        City.load(tmp_path)
    city.save(tmp_path / "pack")
    meta_path = tmp_path / "pack" / "city.json"
    meta = json.loads(meta_path.read_text())
    meta["format_version"] = 99
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(DataError, match="version 99 is not supported"):
        City.load(tmp_path / "pack")
    meta_path.write_text("{broken")
    with pytest.raises(DataError, match=r"city.json, line 1: invalid JSON"):
        City.load(tmp_path / "pack")

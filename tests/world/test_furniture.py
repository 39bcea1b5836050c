"""Street furniture: OSM tag rules, the table, and its place in the city pack."""

from __future__ import annotations

import numpy as np
import pytest

from flaneur.errors import DataError
from flaneur.testing.street_scene import street_city
from flaneur.world.city import City
from flaneur.world.furniture import FURNITURE_KINDS, Furniture, furniture_kind
from flaneur.world.taxonomy import CATEGORIES, normalize_category


def test_osm_tags_make_kinds():
    assert furniture_kind({"amenity": "waste_basket"}) == "waste_basket"
    assert furniture_kind({"emergency": "fire_hydrant"}) == "fire_hydrant"
    assert furniture_kind({"amenity": "post_box"}) == "mailbox"
    assert furniture_kind({"highway": "bus_stop", "shelter": "yes"}) == "bus_shelter"
    assert furniture_kind({"highway": "bus_stop", "shelter": "no"}) is None
    assert furniture_kind({"amenity": "cafe"}) is None


def test_kinds_are_taxonomy_categories_and_labels_normalise():
    assert set(FURNITURE_KINDS) <= set(CATEGORIES)
    assert normalize_category("trash can") == "waste_basket"
    assert normalize_category("hydrant") == "fire_hydrant"
    assert normalize_category("street light") == "street_lamp"


def test_within_and_counts_hand_computed():
    city = street_city([("bench", 3.0, 0.0), ("bench", 3.0, 40.0), ("waste_basket", -3.0, 4.0)])
    rows, dist = city.furniture.within((0.0, 0.0), 10.0)
    assert rows.tolist() == [0, 2]
    assert dist == pytest.approx([3.0, 5.0], abs=0.01)
    assert city.furniture.counts()["bench"] == 2
    assert city.furniture.size[2].tolist() == [0.5, 0.9]


def test_pack_round_trip_and_corrupt_file(tmp_path):
    city = street_city([("fire_hydrant", 2.0, 10.0), ("mailbox", -2.0, -10.0)])
    city.save(tmp_path / "pack")
    back = City.load(tmp_path / "pack")
    assert back.furniture.ids.tolist() == ["obj0", "obj1"]
    assert np.allclose(back.furniture.xy, city.furniture.xy, atol=1e-6)
    assert back.summary()["furniture"]["fire_hydrant"] == 1
    (tmp_path / "pack" / "furniture.json").write_text('[{"id": "x", "kind": "tree"', "utf-8")
    with pytest.raises(DataError, match=r"furniture\.json"):
        City.load(tmp_path / "pack")
    (tmp_path / "pack" / "furniture.json").write_text('[{"id": "x", "kind": "tree"}]', "utf-8")
    with pytest.raises(DataError, match="bad furniture record"):
        City.load(tmp_path / "pack")


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown furniture kind 'tree'"):
        Furniture.from_records([{"id": "a", "kind": "tree", "lat": 0, "lng": 0}])

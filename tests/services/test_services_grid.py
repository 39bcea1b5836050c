"""Services on the hand-made grid city (values computed by hand in the comments)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import shapely

from flaneur.errors import DataError
from flaneur.services import (
    RegionError,
    UnknownPlaceError,
    UnreachableError,
    directions,
    geocode,
    geocode_one,
    nearby_search,
    optimize_order,
    place_overview,
    prominence,
)
from flaneur.services.directions import compass, maneuver, split_steps
from flaneur.services.geocode import normalize
from flaneur.services.optimize import brute_force_order, optimize_matrix, tour_length
from flaneur.services.persona import load_persona
from flaneur.services.region import load_polygon, polygon_from_latlng, sample_region
from flaneur.world import City, StreetGraph

LAT0, LNG0, DLAT, DLNG = 60.0, 25.0, 0.0009, 0.0018  # as in conftest.grid_city


def test_normalize_drops_case_diacritics_and_punctuation():
    assert normalize("Café  Kärpänen!") == "cafe karpanen"
    assert normalize("Töölönkatu 3-5") == "toolonkatu 3 5"
    assert normalize("南京东路 (Nanjing Road)") == "南京东路 nanjing road"


@pytest.mark.parametrize(
    ("query", "name", "kind"),
    [
        ("Stockmann", "Stockmann", "place"),
        ("stockman", "Stockmann", "place"),
        ("STOKCMANN", "Stockmann", "place"),
        ("cafe karpanen", "Café Kärpänen", "place"),
        ("Aleksanterink. 52", "Aleksanterinkatu 52", "address"),
        ("rivikatu 0 3", "Rivikatu 0 3", "address"),
        ("sarakatu 2", "Sarakatu 2", "street"),
    ],
)
def test_geocode_fuzzy(grid, query, name, kind):
    best = geocode(grid, query)[0]
    assert (best.name, best.kind) == (name, kind)


def test_geocode_street_position_is_on_the_street(grid):
    found = geocode_one(grid, "Sarakatu 2")
    # column 2 viewpoints are nodes 2, 6, 10, 14; the middle ones are 6 and 10
    assert found.node in (6, 10)


def test_unknown_place_names_three_closest(grid):
    with pytest.raises(UnknownPlaceError) as err:
        geocode_one(grid, "Qwxzyv Bvnm")
    message = str(err.value)
    assert "\n" not in message and "Qwxzyv Bvnm" in message
    assert len(err.value.suggestions) == 3 and message.count("'") >= 8


def test_nearby_dedupes_by_name_with_heading_and_distance(grid):
    origin = grid.graph.xy[0]
    found = nearby_search(grid, origin, radius_m=200, place_type="supermarket")
    assert [r.name for r in found] == ["Alepa"]
    # p2 is 0.3 DLAT north (30.0 m) and 0.2 DLNG east (20.0 m): 36.1 m at 33.7 degrees
    assert found[0].row == 2
    assert found[0].distance_m == pytest.approx(36.1, abs=0.3)
    assert found[0].heading == pytest.approx(33.7, abs=0.3)
    both = nearby_search(grid, origin, radius_m=200, place_type="supermarket", dedupe=False)
    assert [r.row for r in both] == [2, 3]


def test_nearby_prominence_ranking_and_keyword(grid):
    origin = grid.graph.xy[0]
    assert prominence({"wikidata": "Q1", "website": "x"}) == 4.0
    ranked = nearby_search(grid, origin, radius_m=400, rank_by="prominence")
    assert ranked[0].name == "Stockmann" and ranked[0].prominence == 4.0
    assert [r.name for r in nearby_search(grid, origin, radius_m=400, keyword="coffee")] == [
        "Café Kärpänen"
    ]
    with pytest.raises(ValueError, match="unknown place type"):
        nearby_search(grid, origin, place_type="spaceport")


def test_overview_is_built_from_tags(grid):
    text = place_overview(grid, 0)
    assert text == (
        "Café Kärpänen is a cafe. Cuisine: coffee shop. Open Mo-Fr 08-18. Outdoor seating. "
        "Wheelchair access: yes."
    )


def test_steps_split_at_turns_with_key_positions(grid):
    # east along Rivikatu 0 (nodes 0 -> 1 -> 2), then north on Sarakatu 2 (2 -> 6 -> 10)
    steps = split_steps(grid, [0, 1, 2, 6, 10], "walking")
    assert [s.end_node for s in steps] == [2, 10]
    assert [s.street for s in steps] == ["Rivikatu 0", "Sarakatu 2"]
    assert steps[0].instruction == "Head east on Rivikatu 0, 200 m"
    assert steps[1].instruction == "Turn left onto Sarakatu 2, 200 m"
    assert steps[1].duration_s == pytest.approx(steps[1].distance_m / (5 / 3.6))
    assert maneuver(-90) == "turn left" and maneuver(40) == "slight right"
    assert maneuver(180) == "turn around" and compass(100) == "east"


def test_directions_is_metre_shortest(grid):
    route = directions(grid, 0, 15, mode="bicycling")
    assert route.nodes[0] == 0 and route.nodes[-1] == 15
    assert route.distance_m == pytest.approx(grid.graph.path_length_m(route.nodes))
    assert route.distance_m == pytest.approx(3 * 100.08 + 3 * 100.19, abs=1.0)
    assert route.duration_s == pytest.approx(route.distance_m / (15 / 3.6))
    assert route.key_positions[-1] == 15
    with pytest.raises(ValueError, match="mode"):
        directions(grid, 0, 1, mode="teleport")


def test_optimizer_on_a_line():
    # stops on a line at x = 0, 30, 10, 20: the best open walk from 0 is 0, 10, 20, 30
    x = np.asarray([0.0, 30.0, 10.0, 20.0])
    matrix = np.abs(x[:, None] - x[None, :])
    result = optimize_matrix(matrix)
    assert result.order == (0, 2, 3, 1)
    assert result.length_m == 30.0 and result.given_length_m == 30 + 20 + 10
    assert result.saving_pct == pytest.approx(50.0)
    fixed = optimize_matrix(matrix, end=2)  # must end at x = 10: 0, 20, 30, 10 = 50
    assert fixed.order[-1] == 2 and fixed.length_m == 50.0


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_ortools_agrees_with_brute_force(n):
    """Up to 7 stops, OR-Tools (CP-SAT) must find the brute-force optimum every time."""
    rng = np.random.default_rng(n)
    for _ in range(6):
        points = rng.uniform(0, 1000, size=(n, 2))
        matrix = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
        matrix = matrix + rng.uniform(0, 50, size=(n, n))  # asymmetric, like one-way detours
        np.fill_diagonal(matrix, 0)
        for end in (None, n - 1):
            best = brute_force_order(matrix, end=end)[1]
            assert optimize_matrix(matrix, end=end).length_m == pytest.approx(best, abs=0.2)


def test_brute_force_is_exact_on_a_tiny_case():
    matrix = np.asarray([[0, 1, 5], [1, 0, 1], [5, 1, 0]], dtype=float)
    assert brute_force_order(matrix) == ([0, 1, 2], 2.0)
    assert tour_length(matrix, [0, 2, 1]) == 6.0
    assert list(itertools.pairwise([0, 1])) == [(0, 1)]


def test_optimize_order_unreachable_waypoint():
    graph = StreetGraph.from_edges(
        ["a", "b", "c"], [60, 60.001, 60.002], [25, 25, 25], [0, 1], [1, 0]
    )
    with pytest.raises(UnreachableError, match="'Island'"):
        optimize_order(graph, [0, 1, 2], labels=["Home", "Shop", "Island"])


def test_region_sampling_orders_inside_viewpoints(grid):
    # a box around the middle four junctions (rows 1-2, columns 1-2)
    polygon = polygon_from_latlng(
        [
            (LAT0 + 0.5 * DLAT, LNG0 + 0.5 * DLNG),
            (LAT0 + 2.5 * DLAT, LNG0 + 0.5 * DLNG),
            (LAT0 + 2.5 * DLAT, LNG0 + 2.5 * DLNG),
            (LAT0 + 0.5 * DLAT, LNG0 + 2.5 * DLNG),
        ]
    )
    sample = sample_region(grid, polygon, spacing_m=100)
    assert sorted(sample.nodes) == [5, 6, 9, 10]
    assert sample.grid_points == 4
    # visiting four corners of a 100 m square, open: three sides
    assert sample.route.distance_m == pytest.approx(300, abs=2)


def test_region_errors(grid, tmp_path):
    with pytest.raises(RegionError, match="Self-intersection"):
        polygon_from_latlng([(60.0, 25.0), (60.002, 25.004), (60.002, 25.0), (60.0, 25.004)])
    far = polygon_from_latlng([(50.0, 20.0), (50.1, 20.0), (50.1, 20.1)])
    with pytest.raises(RegionError, match="outside grid"):
        sample_region(grid, far)
    file = tmp_path / "region.geojson"
    file.write_text('{"type": "Point", "coordinates": [25, 60]}')
    with pytest.raises(DataError, match="expected a Polygon or MultiPolygon"):
        load_polygon(file)
    file.write_text(
        '{"type": "Feature", "geometry": {"type": "Polygon", "coordinates": '
        "[[[25.0, 60.0], [25.003, 60.0], [25.003, 60.002], [25.0, 60.0]]]}}"
    )
    assert isinstance(load_polygon(file), shapely.Polygon)


def test_persona_toml_yaml_and_errors(tmp_path):
    toml = tmp_path / "p.toml"
    toml.write_text(
        'name = "Aria"\ncity = "helsinki"\nstart = "Kiasma"\nbackground = "student"\n'
        'intention = "eat"\nbudget = 30\nplaces = ["a", "b"]\n[status]\nhunger = 20\n'
    )
    persona = load_persona(toml, ["status.hunger=80", "budget=12.5"])
    assert persona.status == {"hunger": 80.0} and persona.budget == 12.5
    assert persona.options == {"places": ["a", "b"]}
    yaml = tmp_path / "p.yaml"
    yaml.write_text("name: Vivek\ncity: helsinki\nstart: Kiasma\nbackground: x\nintention: y\n")
    assert load_persona(yaml).name == "Vivek"
    (tmp_path / "bad.toml").write_text('name = "A"\ncity = "h"\nstart = "s"\nbackground = "b"\n')
    with pytest.raises(DataError, match="field 'intention'") as err:
        load_persona(tmp_path / "bad.toml")
    assert "bad.toml" in str(err.value)
    with pytest.raises(DataError, match=r"status\.hunger"):
        load_persona(toml, ["status.hunger=150"])
    with pytest.raises(DataError, match="KEY=VALUE"):
        load_persona(toml, ["budget"])


def test_pack_keeps_street_names(grid, tmp_path):
    grid.save(tmp_path / "pack")
    loaded = City.load(tmp_path / "pack")
    assert loaded.edge_streets.tolist() == grid.edge_streets.tolist()


def test_large_sets_use_the_routing_solver():
    rng = np.random.default_rng(3)
    points = rng.uniform(0, 1000, size=(20, 2))
    matrix = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    result = optimize_matrix(matrix, time_limit_ms=100)
    assert sorted(result.order) == list(range(20)) and result.order[0] == 0
    assert result.length_m <= result.given_length_m


def test_google_reviews_need_the_key_from_the_environment(monkeypatch):
    from flaneur.errors import FlaneurError
    from flaneur.services.overview import GOOGLE_KEY_ENV, GooglePlacesReviews

    monkeypatch.delenv(GOOGLE_KEY_ENV, raising=False)
    with pytest.raises(FlaneurError, match=GOOGLE_KEY_ENV):
        GooglePlacesReviews()


def test_optimize_order_with_a_fixed_end(grid):
    # start at n00 (0), end fixed at n03 (3), visit n01 (1) and n02 (2): 0, 1, 2, 3
    ordered, result = optimize_order(grid.graph, [0, 2, 1, 3], fixed_end=True)
    assert ordered == [0, 1, 2, 3]
    assert result.length_m == pytest.approx(grid.graph.path_length_m([0, 1, 2, 3]), abs=0.1)
    free, _ = optimize_order(grid.graph, [0, 3, 1])
    assert free == [0, 1, 3]

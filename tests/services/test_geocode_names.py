"""Geocoding by every name of a place (languages, aliases, brands), ranked in tiers, and
``lat,lng`` queries that are refused rather than snapped or read as names."""

from __future__ import annotations

import numpy as np
import pytest

from flaneur.errors import ArgumentError, DataError
from flaneur.services import UnknownPlaceError, geocode, geocode_one, resolve_point
from flaneur.services.errors import CoordinateError, OffStreetError
from flaneur.services.geocode import MATCHES, OFF_STREET_M, Gazetteer, parse_point
from flaneur.world import City, Places
from flaneur.world.places import name_tag_rank, name_tags

LAT0, LNG0, DLAT, DLNG = 60.0, 25.0, 0.0009, 0.0018  # as in conftest.grid_city


def _place(pid: str, name: str, r: float, c: float, **tags: str) -> dict:
    """A place record at grid row ``r``, column ``c`` (fractions allowed)."""
    return {
        "id": pid,
        "name": name,
        "lat": LAT0 + r * DLAT,
        "lng": LNG0 + c * DLNG,
        "categories": [],
        "tags": {"name": name, **tags} if name else dict(tags),
    }


PLACES = [
    _place(
        "cathedral",
        "Helsingin tuomiokirkko",
        3,
        3,
        **{"name:en": "Helsinki Cathedral", "name:sv": "Helsingfors domkyrka"},
        int_name="Helsinki Cathedral",
        old_name="Suurkirkko",
        wikidata="Q738015",
    ),
    _place("sign", "Helsinki", 1.5, 1.5),
    _place(
        "oodi",
        "Helsingin keskustakirjasto Oodi",
        0,
        3,
        **{"name:en": "Helsinki Central Library Oodi", "name:sv": "Centrumbibliotek Ode"},
        short_name="Oodi",
    ),
    _place("bar", "BR", 1.5, 1.6, amenity="bar"),
    _place("national", "Kansalliskirjasto", 3, 0, **{"name:en": "The National Library"}),
    _place("cafe", "Café Kärpänen", 0, 0, amenity="cafe"),
    _place("suur", "Suurkirkko", 0, 2, amenity="cafe"),
    _place("alepa-far", "Alepa", 0, 0.2, shop="supermarket"),
    _place("alepa-near", "Alepa", 1.4, 1.4, shop="supermarket"),
    _place("alepa-known", "Alepa", 3, 0.2, shop="supermarket", website="x"),
    _place("lidl", "", 2, 2, shop="supermarket", brand="Lidl"),
    _place("stop-area", "Rautatieasema", 2, 1),
    _place("station", "Asema", 2, 1.2, official_name="Rautatieasema", wikidata="Q1"),
]


@pytest.fixture(scope="module")
def town(grid) -> City:
    """The grid city of conftest with places named in several tags."""
    return City(
        name="town",
        graph=grid.graph,
        places=Places.from_records(PLACES),
        source="hand-made",
        licence="CC0",
        edge_streets=grid.edge_streets,
    )


def ids(city: City, results) -> list[str]:
    return [str(city.places.ids[r.place_row]) if r.place_row >= 0 else r.name for r in results]


# ---------------------------------------------------------------- names of a place
def test_name_tags_reads_languages_and_aliases_once_each():
    tags = {
        "name": "Oodi",
        "name:fi": "OODI",  # the same name in another case: kept once
        "name:en": "Central Library Oodi",
        "name:zh-Hant": "頌歌",
        "alt_name": "Ode;Keskustakirjasto",
        "old_name": "Makasiini",
        "brand": "Helmet",
        "name:etymology:wikidata": "Q1",
        "addr:housename": "Oodi-talo",
    }
    assert name_tags(tags) == [
        ("name", "Oodi"),
        ("alt_name", "Ode"),
        ("alt_name", "Keskustakirjasto"),
        ("name:en", "Central Library Oodi"),
        ("name:zh-Hant", "頌歌"),
        ("old_name", "Makasiini"),
        ("brand", "Helmet"),
    ]
    ranks = [name_tag_rank(t) for t in ("name", "name:en", "int_name", "old_name", "brand")]
    assert ranks == [0, 1, 1, 2, 3]
    assert name_tags({"brand": "Lidl"}) == [("brand", "Lidl")]  # no main name: the brand


def test_the_pack_keeps_every_name(town, tmp_path):
    loaded = City.load(town.save(tmp_path / "town"))
    row = loaded.places.index("cathedral")
    assert loaded.places[row].all_names == (
        "Helsingin tuomiokirkko",
        "Helsinki Cathedral",
        "Helsingfors domkyrka",
        "Suurkirkko",
    )
    assert geocode_one(loaded, "Helsinki Cathedral").place_row == row


# ---------------------------------------------------------------- ranking
def test_a_name_in_another_language_is_an_exact_match(town):
    found = geocode(town, "Helsinki Cathedral")
    assert ids(town, found)[0] == "cathedral"
    assert (found[0].name, found[0].matched, found[0].match) == (
        "Helsingin tuomiokirkko",
        "Helsinki Cathedral",
        "exact",
    )
    assert found[0].score == 100.0 and found[0].to_dict()["matched"] == "Helsinki Cathedral"
    assert "sign" in ids(town, found)[1:]  # "Helsinki" is only a fuzzy match


def test_every_word_of_the_query_before_fuzzy_matches(town):
    found = geocode(town, "Library Oodi")
    assert ids(town, found)[0] == "oodi" and found[0].match == "words"
    assert "bar" not in ids(town, found)  # "BR" inside "library" is no match
    tiers = [MATCHES.index(r.match) for r in geocode(town, "library")]
    assert tiers == sorted(tiers) and ids(town, geocode(town, "library"))[:2] == [
        "national",  # "the national library": 2 other words
        "oodi",  # "helsinki central library oodi": 3 other words
    ]


def test_case_and_diacritics_do_not_matter(town):
    for query in ("HELSINGFORS DOMKYRKA", "helsingfors domkyrka", "Hëlsingfors Dómkyrka"):
        assert ids(town, geocode(town, query))[0] == "cathedral"
    best = geocode_one(town, "cafe karpanen")
    assert (best.name, best.match, best.matched) == ("Café Kärpänen", "exact", "")
    assert geocode_one(town, "OODI").match == "exact"  # its short_name


def test_each_place_once_however_many_names_match(town):
    rows = [r.place_row for r in geocode(town, "oodi", limit=10) if r.kind == "place"]
    assert len(rows) == len(set(rows))


def test_a_current_name_before_an_old_one(town):
    # the cathedral's old name is the cafe's name; the cathedral is more prominent
    assert ids(town, geocode(town, "Suurkirkko"))[:2] == ["suur", "cathedral"]


def test_a_main_name_before_another_places_alias(town):
    # the station is more prominent, but the query is the stop area's main name
    assert ids(town, geocode(town, "rautatieasema"))[:2] == ["stop-area", "station"]


def test_ties_break_by_prominence_then_distance_to_the_centre(town):
    first = ids(town, geocode(town, "alepa"))
    assert first[:3] == ["alepa-known", "alepa-near", "alepa-far"]
    again = Gazetteer(town).search("alepa")  # a fresh index ranks the same
    assert ids(town, again)[:3] == first[:3]


def test_a_brand_finds_an_unnamed_place(town):
    best = geocode_one(town, "lidl")
    assert ids(town, [best]) == ["lidl"] and best.name == "Lidl"


def test_unknown_names_still_name_the_closest(town):
    with pytest.raises(UnknownPlaceError, match="closest names"):
        geocode_one(town, "Qwxzyv Bvnm")


# ---------------------------------------------------------------- points
@pytest.mark.parametrize(
    ("text", "point"),
    [("60.1,24.9", (60.1, 24.9)), (" -33.5 , 151 ", (-33.5, 151.0)), ("60 25", (60.0, 25.0))],
)
def test_parse_point(text, point):
    assert parse_point(text) == point


def test_a_name_is_not_a_point():
    assert parse_point("Kiasma") is None and parse_point("Rivikatu 0 3") is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("nan,nan", "finite"),
        ("NaN, 25", "finite"),
        ("inf,25", "finite"),
        ("60,-Infinity", "finite"),
        ("95,25", "latitude must be in [-90, 90]"),
        ("60,200", "longitude must be in [-180, 180]"),
        ("nan", "expected latitude,longitude"),
        ("1,2,3", "expected latitude,longitude"),
    ],
)
def test_bad_points_are_one_line_errors_not_names(town, text, words):
    for call in (parse_point, lambda t: resolve_point(town, t), lambda t: geocode(town, t)):
        with pytest.raises(CoordinateError) as err:
            call(text)
        message = str(err.value)
        assert words in message and repr(text.strip()) in message and "\n" not in message
        assert isinstance(err.value, DataError)  # callers that catch DataError still do


def test_a_far_point_names_itself_and_the_distance(town):
    lat, lng = LAT0 - 10 * DLAT, LNG0  # about 1 km south of the grid's first row
    with pytest.raises(OffStreetError) as err:
        resolve_point(town, f"{lat},{lng}")
    far = err.value
    assert 950 < far.distance_m < 1050 and far.limit_m == OFF_STREET_M
    assert str(far).startswith(f"{lat:.5f},{lng:.5f} lies 1,0") and "outside the city" in str(far)
    node, label = resolve_point(town, f"{lat},{lng}", max_off_m=2000)
    assert node == 0 and label == f"{lat:.5f},{lng:.5f}"
    with pytest.raises(OffStreetError, match="more than 10 m"):
        geocode_one(town, f"{LAT0 + 0.5 * DLAT},{LNG0}", max_off_m=10)  # 50 m off


def test_a_point_inside_the_city_snaps_to_its_viewpoint(town):
    found = geocode_one(town, f"{LAT0 + 0.05 * DLAT},{LNG0 + 3 * DLNG}")
    assert (found.kind, found.match, found.node, found.place_row) == ("point", "point", 3, -1)


@pytest.mark.parametrize("limit", [float("nan"), float("inf"), -1.0])
def test_the_distance_limit_is_checked(town, limit):
    with pytest.raises(ArgumentError, match="max_off_m"):
        resolve_point(town, f"{LAT0},{LNG0}", max_off_m=limit)


def test_points_and_names_give_the_same_viewpoints(town):
    node, _ = resolve_point(town, "Helsinki Cathedral")
    place = town.places[town.places.index("cathedral")]
    assert node == int(town.graph.nearest_node(place.lat, place.lng)) == 15
    assert np.isclose(geocode_one(town, "Oodi").lat, LAT0)

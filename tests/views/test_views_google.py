"""GoogleStreetView against a local fake of the Street View Static API."""

from __future__ import annotations

import json

import pytest

from flaneur.views.base import MissingKeyError, NoImageryError, ProviderError, QuotaError
from flaneur.views.cache import ViewCache
from flaneur.views.google import GoogleStreetView

KEY = "test-key-123456"


def _metadata_ok(query, headers):
    body = {
        "status": "OK",
        "pano_id": "PANO_1",
        "date": "2021-06",
        "location": {
            "lat": float(query["location"].split(",")[0]) + 0.0001,
            "lng": float(query["location"].split(",")[1]),
        },
        "copyright": "© Google",
    }
    return 200, "application/json", json.dumps(body)


@pytest.fixture
def google(fake_http, toy, tmp_path, jpeg, monkeypatch):
    monkeypatch.setenv("GOOGLE_MAPS_API_KEY", KEY)
    fake_http.routes["/sv/metadata"] = _metadata_ok
    fake_http.routes["/sv"] = lambda q, h: (
        200,
        "image/jpeg",
        jpeg((int(q["size"].split("x")[0]), int(q["size"].split("x")[1]))),
    )
    provider = GoogleStreetView(
        toy.graph, base_url=f"{fake_http.url}/sv", cache=ViewCache(tmp_path / "cache")
    )
    yield provider
    provider.close()


def test_view_request_parameters_and_cache(google, fake_http):
    view = google.view("n100_100", 90.0, pitch=5.0, fov=75.0, size=(640, 368))
    assert view.source == "google" and view.capture_date == "2021-06"
    assert view.image.size == (640, 368) and view.metadata["pano_id"] == "PANO_1"
    assert 10 < view.metadata["distance_m"] < 13
    paths = [r[0] for r in fake_http.requests]
    assert paths == ["/sv/metadata", "/sv"]
    meta_q, img_q = fake_http.requests[0][1], fake_http.requests[1][1]
    assert meta_q["key"] == KEY and meta_q["source"] == "outdoor" and meta_q["radius"] == "50"
    assert img_q == {
        "size": "640x368",
        "pano": "PANO_1",
        "heading": "90.00",
        "pitch": "5.00",
        "fov": "75.00",
        "key": KEY,
    }
    again = google.view("n100_100", 90.0, pitch=5.0, fov=75.0, size=(640, 368))
    assert again.cached and len(fake_http.requests) == 2
    for path in (google.cache.folder).rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes()


def test_large_views_are_fetched_at_640(google, fake_http):
    view = google.view("n100_100", 0.0, size=(800, 460))
    assert view.image.size == (800, 460)
    assert fake_http.requests[-1][1]["size"] == "640x368"


def test_relocate(google):
    info = google.relocate("n100_100")
    assert info.pano_id == "PANO_1" and info.date == "2021-06"


@pytest.mark.parametrize(
    ("status", "error", "text"),
    [
        ("ZERO_RESULTS", NoImageryError, "no Street View imagery"),
        ("OVER_QUERY_LIMIT", QuotaError, "quota"),
        ("REQUEST_DENIED", ProviderError, "GOOGLE_MAPS_API_KEY"),
    ],
)
def test_metadata_statuses(google, fake_http, status, error, text):
    fake_http.routes["/sv/metadata"] = lambda q, h: (
        200,
        "application/json",
        json.dumps({"status": status, "error_message": f"bad {KEY}"}),
    )
    with pytest.raises(error, match=text) as info:
        google.view("n100_100", 0.0)
    assert KEY not in str(info.value)


@pytest.mark.parametrize(
    ("code", "error", "text"),
    [
        (403, ProviderError, "HTTP 403"),
        (404, NoImageryError, "HTTP 404"),
        (429, QuotaError, "429"),
        (500, ProviderError, "HTTP 500"),
    ],
)
def test_http_errors_never_poison_the_cache(google, fake_http, jpeg, code, error, text):
    fake_http.routes["/sv"] = lambda q, h: (code, "text/plain", f"denied for key {q['key']}")
    with pytest.raises(error, match=text) as info:
        google.view("n100_100", 0.0, size=(320, 200))
    assert KEY not in str(info.value)
    fake_http.routes["/sv"] = lambda q, h: (200, "image/jpeg", jpeg((320, 200)))
    view = google.view("n100_100", 0.0, size=(320, 200))
    assert not view.cached and view.image.size == (320, 200)


def test_not_an_image(google, fake_http):
    fake_http.routes["/sv"] = lambda q, h: (200, "text/html", "<html>oops</html>")
    with pytest.raises(ProviderError, match="not an image"):
        google.view("n100_100", 0.0)


def test_missing_key(toy, fake_http, tmp_path, monkeypatch):
    monkeypatch.delenv("GOOGLE_MAPS_API_KEY", raising=False)
    provider = GoogleStreetView(toy.graph, base_url=fake_http.url, cache=ViewCache(tmp_path))
    with pytest.raises(MissingKeyError, match="GOOGLE_MAPS_API_KEY"):
        provider.view("n100_100", 0.0)
    assert fake_http.requests == []
    assert KEY not in repr(GoogleStreetView(toy.graph, key=KEY, cache=ViewCache(tmp_path)))


def test_unreachable_server(toy, tmp_path):
    provider = GoogleStreetView(
        toy.graph, key=KEY, base_url="http://127.0.0.1:9", cache=ViewCache(tmp_path), timeout=2.0
    )
    with pytest.raises(ProviderError, match="failed") as info:
        provider.view("n100_100", 0.0)
    assert KEY not in str(info.value)

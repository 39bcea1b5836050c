"""Mapillary against a local fake of API v4."""

from __future__ import annotations

import json

import numpy as np
import pytest

from flaneur.views.base import MissingKeyError, NoImageryError, ProviderError, QuotaError
from flaneur.views.cache import ViewCache
from flaneur.views.mapillary import Mapillary, choose_image

TOKEN = "MLY|secret-token"


def _images(url, lat, lng):
    return [
        {
            "id": "east",
            "computed_compass_angle": 92.0,
            "is_pano": False,
            "captured_at": 1.6e12,
            "computed_geometry": {"type": "Point", "coordinates": [lng, lat + 0.00002]},
            "thumb_1024_url": f"{url}/img/east.jpg",
        },
        {
            "id": "north",
            "compass_angle": 2.0,
            "is_pano": False,
            "geometry": {"type": "Point", "coordinates": [lng, lat]},
            "thumb_1024_url": f"{url}/img/north.jpg",
        },
        {
            "id": "far",
            "computed_compass_angle": 181.0,
            "is_pano": False,
            "computed_geometry": {"type": "Point", "coordinates": [lng, lat + 0.0002]},
            "thumb_1024_url": f"{url}/img/far.jpg",
        },
    ]


@pytest.fixture
def mapillary(fake_http, toy, tmp_path, jpeg, monkeypatch):
    monkeypatch.setenv("MAPILLARY_ACCESS_TOKEN", TOKEN)
    lat, lng = float(toy.graph.lat[0]), float(toy.graph.lng[0])
    fake_http.routes["/images"] = lambda q, h: (
        200,
        "application/json",
        json.dumps({"data": _images(fake_http.url, lat, lng)}),
    )
    for name, colour in (("east", (250, 0, 0)), ("north", (0, 0, 250)), ("far", (0, 250, 0))):
        fake_http.routes[f"/img/{name}.jpg"] = lambda q, h, c=colour: (
            200,
            "image/jpeg",
            jpeg((400, 300), c),
        )
    provider = Mapillary(toy.graph, base_url=fake_http.url, cache=ViewCache(tmp_path / "c"))
    yield provider
    provider.close()


def test_chooses_by_compass_angle(mapillary, fake_http, toy):
    node = str(toy.graph.ids[0])
    view = mapillary.view(node, 80.0, size=(200, 100))
    assert view.metadata["image_id"] == "east" and view.heading == pytest.approx(92.0)
    assert view.metadata["requested_heading"] == 80.0 and view.capture_date == "2020-09-13"
    assert view.image.size == (200, 100) and np.asarray(view.image)[50, 100, 0] > 200
    path, query, headers = fake_http.requests[0]
    assert path == "/images" and headers["authorization"] == f"OAuth {TOKEN}"
    assert "access_token" not in query and "computed_compass_angle" in query["fields"]
    w, s, e, n = (float(v) for v in query["bbox"].split(","))
    assert w < float(toy.graph.lng[0]) < e and s < float(toy.graph.lat[0]) < n
    north = mapillary.view(node, 350.0, size=(200, 100))
    assert north.metadata["image_id"] == "north"
    n_requests = len(fake_http.requests)
    assert mapillary.view(node, 80.0, size=(200, 100)).cached
    assert len(fake_http.requests) == n_requests


def test_choose_image_prefers_near_and_aligned():
    imgs = [
        {"id": "a", "compass_angle": 10, "geometry": {"coordinates": [24.0, 60.0]}},
        {"id": "b", "compass_angle": 100, "geometry": {"coordinates": [24.0, 60.0]}},
        {"id": "p", "is_pano": True, "geometry": {"coordinates": [24.0, 60.001]}},
    ]
    assert choose_image(imgs, 60.0, 24.0, 95.0)[0]["id"] == "b"
    assert choose_image(imgs[:1], 60.0, 24.0, 200.0)[0]["id"] == "a"
    assert choose_image([], 60.0, 24.0, 0.0) is None


def test_no_images(mapillary, fake_http, toy):
    fake_http.routes["/images"] = lambda q, h: (200, "application/json", '{"data": []}')
    with pytest.raises(NoImageryError, match="no image within"):
        mapillary.view(str(toy.graph.ids[0]), 0.0)


@pytest.mark.parametrize(
    ("code", "error"),
    [(401, ProviderError), (403, ProviderError), (429, QuotaError), (404, NoImageryError)],
)
def test_errors_and_no_poisoning(mapillary, fake_http, toy, code, error):
    good = fake_http.routes["/images"]
    fake_http.routes["/images"] = lambda q, h: (
        code,
        "application/json",
        f'{{"error": "{h["authorization"]}"}}',
    )
    with pytest.raises(error) as info:
        mapillary.view(str(toy.graph.ids[0]), 80.0)
    assert TOKEN not in str(info.value)
    fake_http.routes["/images"] = good
    assert mapillary.view(str(toy.graph.ids[0]), 80.0).metadata["image_id"] == "east"


def test_failed_download_is_not_cached(mapillary, fake_http, toy, jpeg):
    fake_http.routes["/img/east.jpg"] = lambda q, h: (500, "text/plain", "boom")
    with pytest.raises(ProviderError, match="HTTP 500"):
        mapillary.view(str(toy.graph.ids[0]), 80.0)
    fake_http.routes["/img/east.jpg"] = lambda q, h: (200, "image/jpeg", jpeg((400, 300)))
    assert not mapillary.view(str(toy.graph.ids[0]), 80.0).cached


def test_panorama_images_are_cut(mapillary, fake_http, toy, jpeg):
    lat, lng = float(toy.graph.lat[0]), float(toy.graph.lng[0])
    pano = [
        {
            "id": "pano",
            "is_pano": True,
            "computed_compass_angle": 0.0,
            "computed_geometry": {"coordinates": [lng, lat]},
            "thumb_1024_url": f"{fake_http.url}/img/pano.jpg",
        }
    ]
    fake_http.routes["/images"] = lambda q, h: (200, "application/json", json.dumps({"data": pano}))
    fake_http.routes["/img/pano.jpg"] = lambda q, h: (200, "image/jpeg", jpeg((720, 360)))
    view = mapillary.view(str(toy.graph.ids[0]), 123.0, size=(160, 90))
    assert view.metadata["is_pano"] and view.heading == 123.0 and view.image.size == (160, 90)


def test_missing_token(toy, fake_http, tmp_path, monkeypatch):
    monkeypatch.delenv("MAPILLARY_ACCESS_TOKEN", raising=False)
    provider = Mapillary(toy.graph, base_url=fake_http.url, cache=ViewCache(tmp_path))
    with pytest.raises(MissingKeyError, match="MAPILLARY_ACCESS_TOKEN"):
        provider.view(str(toy.graph.ids[0]), 0.0)
    assert fake_http.requests == []

"""Place recognition: set construction on the toy city, evaluation, recognisers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from shapely.geometry import Point, box

from flaneur.bench.recognisers import CLIPRecogniser, VLMRecogniser, rank_from_reply
from flaneur.bench.recognition import build_recognition_set, evaluate_recognition
from flaneur.bench.types import TYPES_96
from flaneur.env.toy import toy_city
from flaneur.errors import DataError
from flaneur.models import make_model
from flaneur.services.errors import RegionError
from flaneur.services.region import Region, grid_regions, read_regions
from flaneur.testing.fake_openai import FakeOpenAIServer


def _everywhere() -> list[Region]:
    return [Region("all", box(-180, -90, 180, 90))]


def test_build_set_aims_at_named_places_deterministically() -> None:
    city = toy_city()
    items = build_recognition_set(city, _everywhere(), TYPES_96, seed=0)
    assert build_recognition_set(city, _everywhere(), TYPES_96, seed=0) == items
    by_id = {it["place_id"]: it for it in items}
    assert set(by_id) == {"cafe-aalto", "bank", "museum"}  # the unnamed kiosk is skipped
    assert by_id["bank"]["types"] == ["bank"] and by_id["museum"]["types"] == ["museum"]
    for it in items:
        assert 0 <= it["heading"] < 360 and it["distance_m"] <= 40
    assert len(build_recognition_set(city, _everywhere(), TYPES_96, per_region=1)) == 1
    assert build_recognition_set(city, [Region("sea", box(0, 0, 1, 1))], TYPES_96) == []


def test_grid_regions_cover_every_place() -> None:
    city = toy_city()
    regions = grid_regions(city, cell_m=200)
    union = [r.polygon for r in regions]
    for lat, lng in zip(city.places.lat, city.places.lng, strict=True):
        assert any(p.buffer(1e-9).contains(Point(lng, lat)) for p in union)
    with pytest.raises(RegionError):
        grid_regions(city, cell_m=0)


def test_geojson_regions_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "r.geojson"
    good.write_text(
        json.dumps(
            {
                "type": "FeatureCollection",
                "features": [
                    {
                        "type": "Feature",
                        "properties": {"name": "Kamppi"},
                        "geometry": {
                            "type": "Polygon",
                            "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]],
                        },
                    }
                ],
            }
        )
    )
    assert [r.name for r in read_regions(good)] == ["Kamppi"]
    bad = tmp_path / "bad.geojson"
    bad.write_text(
        json.dumps(
            {
                "type": "FeatureCollection",
                "features": [
                    {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}}
                ],
            }
        )
    )
    with pytest.raises(DataError, match="feature 0: expected a Polygon"):
        read_regions(bad)
    (tmp_path / "junk.geojson").write_text("{nope")
    with pytest.raises(DataError, match="not a JSON text file"):
        read_regions(tmp_path / "junk.geojson")


class _ByColour:
    """Reads the place type from the image colour (a perfect recogniser for red/green)."""

    name = "colour"

    def scores(self, image: Image.Image, labels: list[str]) -> np.ndarray:
        r, g, _ = image.getpixel((0, 0))
        want = "bank" if r > g else "cafe"
        return np.array([1.0 if label == want else 0.0 for label in labels])


def test_evaluate_recognition_hand_computed() -> None:
    types = ["bank", "cafe", "bar"]
    items = [
        {"place_id": "a", "types": ["bank"], "colour": "red"},  # right
        {"place_id": "b", "types": ["cafe", "bar"], "colour": "green"},  # right (cafe)
        {"place_id": "c", "types": ["bar"], "colour": "green"},  # wrong: says cafe
    ]
    images = {c: Image.new("RGB", (4, 4), c) for c in ("red", "green")}
    written: list[dict] = []
    r = evaluate_recognition(
        items, types, _ByColour(), lambda it: images[it["colour"]], on_result=written.append
    )
    assert r["top1"] == pytest.approx(2 / 3) and r["places"] == 3
    # bank 1/1; cafe 0.5/0.5; bar 0.5/1.5 -> mAcc (1 + 1 + 1/3) / 3
    assert r["macc"] == pytest.approx(7 / 9)
    assert r["top3"] == 1.0 and len(written) == 3
    assert r["results"][2]["predicted"][0] == "cafe"


def test_rank_from_reply() -> None:
    labels = ["store", "convenience store", "bank", "cafe"]
    s = rank_from_reply("1. Convenience store\n2. cafe\nthen maybe a bank", labels)
    assert list(np.argsort(-s)[:3]) == [1, 3, 2] and s[0] == 0  # "store" inside the longer one
    assert not rank_from_reply("no idea", labels).any()


class _FakeBackend:
    name = "fake"

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        return np.eye(len(texts), 4, dtype=np.float32)

    def embed_images(self, images: list[Image.Image]) -> np.ndarray:
        return np.array([[0.0, 1.0, 0.0, 0.0]], dtype=np.float32)


def test_clip_recogniser_softmax() -> None:
    probs = CLIPRecogniser(backend=_FakeBackend()).scores(Image.new("RGB", (2, 2)), ["a", "b"])
    assert probs.sum() == pytest.approx(1.0) and probs[1] > 0.99


def test_vlm_recogniser_through_fake_server() -> None:
    with FakeOpenAIServer(["bank\ncafe", "I do not know"]) as server:
        vlm = VLMRecogniser(make_model("fake-model", base_url=server.base_url))
        img = Image.new("RGB", (8, 8), "white")
        first = vlm.scores(img, ["cafe", "bank", "bar"])
        second = vlm.scores(img, ["cafe", "bank", "bar"])
        assert server.requests[0].image_count == 1
    assert list(np.argsort(-first)[:2]) == [1, 0] and not second.any() and vlm.unparsed == 1

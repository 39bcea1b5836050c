"""View requests, errors and the shared disk cache."""

from __future__ import annotations

import os

import pytest
from PIL import Image

from flaneur.errors import FlaneurError, UnknownNodeError
from flaneur.views.base import View, ViewError, check_request, parse_size
from flaneur.views.cache import ViewCache, request_key


def test_check_request_normalises(toy):
    index, heading, pitch, fov, size = check_request(toy.graph, "n100_100", -90, 5, 60, (64, 32))
    assert toy.graph.ids[index] == "n100_100"
    assert heading == 270.0 and pitch == 5.0 and fov == 60.0 and size == (64, 32)
    assert check_request(toy.graph, 3, 0, 0, 60, (64, 32))[0] == 3


@pytest.mark.parametrize("fov", [0, 180, -5, 200])
def test_bad_fov(toy, fov):
    with pytest.raises(ViewError, match=r"fov must be in \(0, 180\)"):
        check_request(toy.graph, "n100_100", 0, 0, fov, (64, 32))


def test_bad_node_pitch_size(toy):
    with pytest.raises(UnknownNodeError, match="nope"):
        check_request(toy.graph, "nope", 0, 0, 60, (64, 32))
    with pytest.raises(UnknownNodeError):
        check_request(toy.graph, 10_000, 0, 0, 60, (64, 32))
    with pytest.raises(ViewError, match="pitch"):
        check_request(toy.graph, "n100_100", 0, 95, 60, (64, 32))
    with pytest.raises(ViewError, match="size"):
        check_request(toy.graph, "n100_100", 0, 0, 60, (0, 32))
    with pytest.raises(ViewError):
        parse_size("800by460")
    assert parse_size("800x460") == (800, 460)
    assert issubclass(ViewError, FlaneurError)


def test_request_key_is_canonical():
    a = request_key({"b": 1.000001, "a": [1, 2]})
    b = request_key({"a": (1, 2), "b": 1.0})
    assert a == b and len(a) == 64
    assert request_key({"a": 1}) != request_key({"a": 2})


def test_cache_round_trip(tmp_path):
    cache = ViewCache(tmp_path, memory_items=0)
    img = Image.new("RGB", (8, 6), (10, 20, 30))
    key = request_key({"x": 1})
    assert cache.get(key) is None and key not in cache
    cache.put(key, img, {"pano": "p1"})
    assert key in cache
    again, meta = ViewCache(tmp_path).get(key)
    assert meta == {"pano": "p1"}
    assert again.getpixel((0, 0)) == (10, 20, 30)
    cache.put_json("k" * 64, {"a": 1})
    assert ViewCache(tmp_path).get_json("k" * 64) == {"a": 1}


def test_failed_write_leaves_no_entry(tmp_path, monkeypatch):
    cache = ViewCache(tmp_path, memory_items=0)
    key = request_key({"x": 2})

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        cache.put(key, Image.new("RGB", (4, 4)), {})
    monkeypatch.undo()
    assert cache.get(key) is None
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_memory_cache_lru():
    cache = ViewCache.in_memory(2)
    for k in "abc":
        cache.put(k, Image.new("RGB", (2, 2)), {"k": k})
    assert cache.get("a") is None and cache.get("c")[1] == {"k": "c"}
    assert not cache.disk


def test_view_geometry():
    view = View(Image.new("RGB", (800, 460)), "n", heading=350.0, fov=90.0)
    assert view.focal_px == pytest.approx(400.0)
    assert view.bearing_of_x(400) == pytest.approx(350.0)
    assert view.bearing_of_x(800) == pytest.approx(35.0)
    assert len(view.digest()) == 40
    assert view.to_dict()["size"] == [800, 460]

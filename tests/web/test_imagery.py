"""Replay with a run's real imagery: panorama cuts, cached Google views, never a fetch."""

from __future__ import annotations

import io
import json

import httpx
import numpy as np
import pytest
from PIL import Image

from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.views import GoogleStreetView, PanoramaFolder, ViewCache
from flaneur.web.world import VIEW_SIZE
from harness.web_client import local_client

TASK = "web-toy-v1"


def _panoramas(folder, ids):
    """One 128 x 64 equirectangular panorama per node: colour changes with yaw and node."""
    folder.mkdir()
    cols = np.linspace(0, 255, 128, dtype=np.uint8)
    for k, node in enumerate(ids):
        pano = np.zeros((64, 128, 3), dtype=np.uint8)
        pano[..., 0] = cols
        pano[..., 1] = (40 * k) % 256
        pano[:32, :, 2] = 200
        Image.fromarray(pano).save(folder / f"{node}.png")


def _image(response) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(response.content)).convert("RGB"))


def test_replay_shows_the_panoramas_of_a_panorama_run(toy_task, tmp_path):
    from flaneur.web import create_app

    city, _ = toy_task
    ids = [str(n) for n in city.graph.ids]
    panos = tmp_path / "panos"
    _panoramas(panos, ids[1:])  # the first node has none: synthetic there
    runs = tmp_path / "runs"
    run_benchmark(
        RunConfig(agents=("oracle",), tasks=(TASK,), views=f"panorama:{panos}", limit=1),
        runs / "pano",
        progress="none",
    )
    run_benchmark(
        RunConfig(agents=("oracle",), tasks=(TASK,), limit=1), runs / "synth", progress="none"
    )
    expected = PanoramaFolder(panos, city.graph).view(ids[2], 123.45, fov=60, size=VIEW_SIZE)
    with local_client(create_app([runs], cache_dir=tmp_path / "views")) as client:
        params = {"task": TASK, "node": ids[2], "heading": "123.45", "fov": "60"}
        got = client.get("/api/view", params={**params, "run": "pano"})
        assert got.headers["x-flaneur-view"] == "panorama"
        assert np.array_equal(_image(got), np.asarray(expected.image))
        other = client.get("/api/view", params={**params, "heading": "303.45", "run": "pano"})
        assert not np.array_equal(_image(other), _image(got))  # the other way round
        synth = client.get("/api/view", params={**params, "run": "synth"})
        assert synth.headers["x-flaneur-view"] == "synthetic"
        assert not np.array_equal(_image(synth), _image(got))
        none = client.get("/api/view", params={**params, "node": ids[0], "run": "pano"})
        assert none.headers["x-flaneur-view"] == "synthetic" and none.status_code == 200
        row = json.loads((runs / "pano" / "episodes.jsonl").read_text().splitlines()[0])
        replay = client.get(
            "/api/runs/pano/episode",
            params={"task": TASK, "agent": "oracle", "id": row["episode_id"]},
        ).json()
        assert replay["views"] == f"panorama:{panos}"


def test_replay_shows_cached_google_views_without_fetching(toy_task, tmp_path, monkeypatch):
    """A google run's views come from the view cache only: no request, no key read."""
    from flaneur.web import create_app

    city, _ = toy_task
    graph = city.graph
    node = str(graph.ids[3])
    buffer = io.BytesIO()
    Image.new("RGB", (640, 368), (10, 200, 30)).save(buffer, format="JPEG")

    def google(request):
        if request.url.path.endswith("/metadata"):
            return httpx.Response(
                200,
                json={
                    "status": "OK",
                    "pano_id": "P1",
                    "date": "2024-05",
                    "location": {"lat": float(graph.lat[3]), "lng": float(graph.lng[3])},
                },
            )
        return httpx.Response(
            200, content=buffer.getvalue(), headers={"content-type": "image/jpeg"}
        )

    cache = ViewCache(tmp_path / "views")
    fetching = httpx.Client(transport=httpx.MockTransport(google))
    GoogleStreetView(graph, key="k", cache=cache, client=fetching).view(
        node, 45.0
    )  # the run's view
    runs = tmp_path / "runs"
    run_benchmark(
        RunConfig(agents=("oracle",), tasks=(TASK,), views="google", limit=1),
        runs / "google",
        progress="none",
    )
    import flaneur.web.world as world

    monkeypatch.setenv("GOOGLE_MAPS_API_KEY", "SECRET-never-read")
    refused: list[str] = []
    original = world._refuse

    def refuse(request):
        refused.append(str(request.url))
        return original(request)

    monkeypatch.setattr(world, "_refuse", refuse)
    with local_client(create_app([runs], cache_dir=tmp_path / "views")) as client:
        base = {"run": "google", "task": TASK, "node": node, "fov": "60"}
        hit = client.get("/api/view", params={**base, "heading": "45"})
        assert hit.headers["x-flaneur-view"] == "google"
        assert tuple(_image(hit)[100, 100]) == pytest.approx((10, 200, 30), abs=6)
        miss = client.get("/api/view", params={**base, "heading": "200"})
        assert miss.headers["x-flaneur-view"] == "synthetic" and miss.status_code == 200
    assert refused and all("SECRET" not in url for url in refused)  # the miss, refused

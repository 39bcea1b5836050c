"""Place recognition: the generator on a tiny city, every recogniser through the one runner,
resume, and the kind's task-set figures (hand-computed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from flaneur.bench.recognisers import CLIPRecogniser, rank_from_reply
from flaneur.env.toy import toy_city
from flaneur.errors import FlaneurError
from flaneur.evaluate.kinds.virl_bench import RecognitionKind
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.services.errors import RegionError
from flaneur.tasks.generators import generate_set
from flaneur.tasks.items import read_items, write_items
from flaneur.testing.fake_openai import FakeOpenAIServer

TIMING = ("started_at", "duration_s")


def _polygon(name: str, west: float, south: float, east: float, north: float) -> dict:
    ring = [[west, south], [east, south], [east, north], [west, north], [west, south]]
    return {
        "type": "Feature",
        "properties": {"name": name},
        "geometry": {"type": "Polygon", "coordinates": [ring]},
    }


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The toy city's pack, a region file with an empty region, and its recognition set."""
    folder = tmp_path_factory.mktemp("recognition")
    city = toy_city()
    pack = city.save(folder / "toy")
    regions = folder / "regions.geojson"
    features = [_polygon("land", 24.99, 59.99, 25.01, 60.01), _polygon("sea", 0, 0, 1, 1)]
    regions.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    made = generate_set(
        "virl-recognition", city, city_spec=str(pack), options={"regions": str(regions)}
    )
    items = made.write(folder / "recognition.jsonl")
    return {"city": city, "pack": pack, "regions": regions, "made": made, "items": items}


def _run(tmp_path: Path, task: Path, agent: str, factory=None, **config) -> tuple[dict, list[dict]]:
    out = tmp_path / f"run-{agent}"
    run = RunConfig(agents=(agent,), tasks=(str(task),), **config)
    summary = run_benchmark(run, out, progress="none", agent_factory=factory)
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    return summary["runs"][0], rows


def test_generation_skips_the_empty_region_and_is_deterministic(toy: dict) -> None:
    made = toy["made"]
    assert made.report["skipped"] == {"sea": "no named place of the type list"}
    assert made.report["per_region"] == {"land": 3}
    items = {it.id: it for it in made.items}
    assert set(items) == {"cafe-aalto", "bank", "museum"}  # the unnamed kiosk is skipped
    bank = items["bank"]
    assert bank.category == "bank" and bank["types"] == ["bank"] and bank["region"] == "land"
    assert bank["candidates"] == "96" and 0 <= bank["heading"] < 360 and bank["distance_m"] <= 40
    assert {"node", "pitch", "fov"} <= set(bank.data)
    header, again = read_items(toy["items"], kind="virl-recognition")
    assert header["success_metric"] == "top1" and again == made.items
    one = generate_set(
        "virl-recognition",
        toy["city"],
        city_spec=str(toy["pack"]),
        options={"regions": str(toy["regions"]), "per_region": 1, "types": "bank,cafe"},
    )
    assert len(one.items) == 1 and one.items[0]["candidates"] == ["bank", "cafe"]


def test_a_city_without_usable_places_is_one_line(toy: dict, tmp_path: Path) -> None:
    sea = tmp_path / "sea.geojson"
    sea.write_text(json.dumps(_polygon("sea", 0, 0, 1, 1)))
    with pytest.raises(RegionError, match="no named place of the type list") as err:
        generate_set("virl-recognition", toy["city"], city_spec="x", options={"regions": str(sea)})
    assert "\n" not in str(err.value)
    with pytest.raises(FlaneurError, match="'spaceport'"):
        generate_set("virl-recognition", toy["city"], city_spec="x", options={"types": "spaceport"})


def test_oracle_and_offline_recognisers_through_the_runner(toy: dict, tmp_path: Path) -> None:
    oracle, _ = _run(tmp_path, toy["items"], "oracle")
    assert oracle["summary"]["overall"]["metrics"]["top1"]["mean"] == 1.0
    assert oracle["task_metrics"]["macc"] == {"value": 1.0, "n": 3, "ci95": [1.0, 1.0]}
    offline, rows = _run(tmp_path, toy["items"], "offline", concurrency=2)
    assert offline["by_termination"] == {"completed": 3}
    # the synthetic signs carry the names ("Harbour Bank", "Sea Museum", "Cafe Aalto")
    assert offline["summary"]["overall"]["metrics"]["top1"]["mean"] >= 2 / 3
    assert all(len(r["result"]["predicted"]) == 5 for r in rows)


class _FakeBackend:
    """CLIP stand-in: the image embedding points at the caption of the second type."""

    name = "fake"

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        return np.eye(len(texts), 4, dtype=np.float32)

    def embed_images(self, images: list) -> np.ndarray:
        return np.array([[0.0, 1.0, 0.0, 0.0]], dtype=np.float32)


def test_clip_recogniser_softmax_through_the_runner(toy: dict, tmp_path: Path) -> None:
    items = [
        {**it.to_json(), "candidates": ["cafe", "bank", "museum"]}
        for it in read_items(toy["items"])[1]
    ]
    header = {"kind": "virl-recognition", "version": 1, "success_metric": "top1"}
    task = write_items(tmp_path / "three.jsonl", {**header, "city": str(toy["pack"])}, items)
    clip = CLIPRecogniser(backend=_FakeBackend(), weights="tag")
    entry, rows = _run(tmp_path, task, "clip", factory=lambda name: clip)
    assert [r["result"]["predicted"][0] for r in rows] == ["bank"] * 3
    assert entry["summary"]["overall"]["metrics"]["top1"]["mean"] == pytest.approx(1 / 3)
    with pytest.raises(FlaneurError, match="needs weights"):
        run_benchmark(RunConfig(agents=("clip",), tasks=(str(task),)), tmp_path / "no")


def test_vlm_recogniser_through_the_fake_server(toy: dict, tmp_path: Path) -> None:
    with FakeOpenAIServer(lambda request: "1. cafe\n2. museum\n3. bank") as server:
        entry, rows = _run(
            tmp_path,
            toy["items"],
            "vlm",
            llm="fake-model",
            llm_base_url=server.base_url,
            cache_mode="off",
        )
        assert server.chat_count == 3 and server.requests[0].image_count == 1
    metrics = entry["summary"]["overall"]["metrics"]
    assert metrics["top1"]["mean"] == pytest.approx(1 / 3) and metrics["top3"]["mean"] == 1.0
    assert rows[0]["records"][0]["prompt_id"] == "virl-recognition-vlm-1"
    with pytest.raises(FlaneurError, match="needs a language model"):
        run_benchmark(RunConfig(agents=("vlm",), tasks=(str(toy["items"]),)), tmp_path / "x")


def test_resume_after_losing_the_last_row_gives_identical_rows(toy: dict, tmp_path: Path) -> None:
    config = RunConfig(agents=("offline",), tasks=(str(toy["items"]),), concurrency=1)
    out = tmp_path / "run"
    run_benchmark(config, out, progress="none")
    log = out / "episodes.jsonl"
    before = log.read_text().splitlines()
    log.write_text("\n".join(before[:-1]) + "\n")
    run_benchmark(config, out, resume=True, progress="none")
    after = log.read_text().splitlines()

    def strip(lines: list[str]) -> list[dict]:
        rows = [json.loads(x) for x in lines]
        return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]

    assert strip(after) == strip(before)


def test_an_item_the_city_cannot_show_is_a_task_error_row(toy: dict, tmp_path: Path) -> None:
    good = read_items(toy["items"])[1][0].to_json()
    bad = {**good, "id": "nowhere", "node": "no-such-node"}
    header = {"kind": "virl-recognition", "version": 1, "success_metric": "top1"}
    task = write_items(tmp_path / "bad.jsonl", {**header, "city": str(toy["pack"])}, [good, bad])
    entry, rows = _run(tmp_path, task, "offline")
    assert entry["by_termination"] == {"completed": 1, "task_error": 1}
    error = next(r for r in rows if r["termination"] == "task_error")["error"]
    assert "nowhere" in error and "\n" not in error


def test_task_figures_hand_computed() -> None:
    def row(pid: str, types: list[str], top1: bool) -> dict:
        return {"episode_id": pid, "result": {"types": types}, "metrics": {"top1": top1}}

    rows = [row("c", ["bar"], False), row("a", ["bank"], True), row("b", ["cafe", "bar"], True)]
    figures = RecognitionKind().aggregate(rows, None)  # type: ignore[arg-type]
    # bank 1/1; cafe 0.5/0.5; bar 0.5/1.5 -> mAcc (1 + 1 + 1/3) / 3; acc 2/3
    assert figures["macc"]["value"] == pytest.approx(7 / 9) and figures["macc"]["n"] == 3
    assert figures["acc"]["value"] == pytest.approx(2 / 3)
    again = RecognitionKind().aggregate(list(reversed(rows)), None)  # type: ignore[arg-type]
    assert again == figures  # the finishing order of rows does not move the interval
    lo, hi = figures["acc"]["ci95"]
    assert 0.0 <= lo <= 2 / 3 <= hi <= 1.0


def test_rank_from_reply() -> None:
    labels = ["store", "convenience store", "bank", "cafe"]
    s = rank_from_reply("1. Convenience store\n2. cafe\nthen maybe a bank", labels)
    assert list(np.argsort(-s)[:3]) == [1, 3, 2] and s[0] == 0  # "store" inside the longer one
    assert not rank_from_reply("no idea", labels).any()

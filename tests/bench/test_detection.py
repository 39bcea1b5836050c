"""V-IRL's place detection: box -> place matching, AR, AR10 and box accuracy by hand, the
``virl-detection`` generator on the toy city, runs through the one runner (the oracle recalls
every storefront), determinism, resume, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from flaneur.bench.detection import match_boxes, view_headings
from flaneur.bench.detection_metrics import (
    detection_figures,
    heading_in_span,
    match_box,
    recall_matrix,
    top_boxes,
)
from flaneur.bench.types import TYPES_20
from flaneur.cli import app
from flaneur.env.toy import toy_city
from flaneur.errors import FlaneurError
from flaneur.evaluate.kinds.detection import DetectionKind
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.metrics.summary import wilson_interval
from flaneur.perception.detection import OracleDetector, SceneDetector
from flaneur.tasks.generators import generate_set
from flaneur.tasks.items import TaskItem, read_items, write_items

FLANEUR = Path(sys.executable).with_name("flaneur")
TIMING = ("started_at", "duration_s")


def test_heading_in_span_wraps_through_north() -> None:
    assert heading_in_span(10.0, (0.0, 45.0)) and not heading_in_span(46.0, (0.0, 45.0))
    assert heading_in_span(355.0, (350.0, 20.0)) and heading_in_span(0.0, (350.0, 20.0))
    assert not heading_in_span(180.0, (350.0, 20.0))
    assert heading_in_span(-5.0, (350.0, 20.0))  # -5 is 355
    assert heading_in_span(45.0, (0.0, 45.0))  # edges count


def test_match_box_takes_the_nearest_place_in_the_span() -> None:
    cands = [("far", 10.0, 20.0), ("near", 15.0, 8.0), ("behind", 200.0, 1.0)]
    assert match_box((0.0, 30.0), cands) == "near"
    assert match_box((0.0, 12.0), cands) == "far"  # "near" (15°) is outside
    assert match_box((190.0, 210.0), cands) == "behind"
    assert match_box((300.0, 350.0), cands) is None
    assert match_box((350.0, 12.0), cands) == "far"  # a span through north
    assert match_box((0.0, 30.0), []) is None


def test_recall_and_box_accuracy_hand_computed() -> None:
    places = {"p": ["cafe", "bakery"], "q": ["cafe"], "r": ["bar"], "s": ["bank"]}
    boxes = [
        ("cafe", "p"),  # correct
        ("bakery", "p"),  # correct: p recalled as cafe and bakery
        ("bar", "q"),  # matched, wrong label: q localised, not recalled
        ("bar", None),  # unmatched
        ("bar", "r"),  # correct
        ("bar", "r"),  # correct again (r counts once)
    ]
    has, recalled, localised = recall_matrix(places, boxes, TYPES_20)
    cafe = TYPES_20.index("cafe")
    assert (has[:, cafe].sum(), recalled[:, cafe].sum(), localised[:, cafe].sum()) == (2, 1, 2)
    bank = TYPES_20.index("bank")
    assert (has[:, bank].sum(), recalled[:, bank].sum(), localised[:, bank].sum()) == (1, 0, 0)
    viewpoint = (
        [{"id": pid, "types": types} for pid, types in places.items()],
        [{"view": 0, "type": t, "score": 0.5, "place": pid} for t, pid in boxes],
    )
    figures = detection_figures([viewpoint], TYPES_20)
    # recall: bank 0/1, bakery 1/1, cafe 1/2 (p yes, q no), bar 1/1 -> AR = 2.5 / 4
    assert figures["ar"]["value"] == pytest.approx(2.5 / 4) and figures["ar"]["n"] == 4
    assert figures["ar_localisation"]["value"] == pytest.approx(0.75)  # bank 0, others 1
    assert figures["box_accuracy"]["value"] == pytest.approx(0.8)  # 4 of 5 matched boxes
    assert figures["box_accuracy"]["n"] == 5
    empty = detection_figures([([{"id": "p", "types": ["cafe"]}], [])], TYPES_20)
    assert empty["ar"]["value"] == 0.0 and empty["box_accuracy"]["value"] is None
    lone = {"view": 0, "type": "cafe", "score": 0.5, "place": None}
    assert detection_figures([([], [lone])], TYPES_20)["ar"]["value"] is None


def test_view_headings_cover_360_at_each_fov() -> None:
    views = view_headings()
    assert len(views) == 6 + 4 + 3
    assert [h for h, f in views if f == 120.0] == [0.0, 120.0, 240.0]


def test_top_boxes_keep_the_best_of_each_view() -> None:
    boxes = [{"view": v, "score": s} for v, s in [(0, 0.2), (0, 0.9), (1, 0.5), (0, 0.5)]]
    assert top_boxes(boxes, 2) == [boxes[1], boxes[3], boxes[2]]
    assert top_boxes(boxes, 10) == [boxes[1], boxes[3], boxes[0], boxes[2]]


def test_detection_figures_hand_computed() -> None:
    places = [{"id": "p", "types": ["cafe", "bakery"]}, {"id": "q", "types": ["bar"]}]
    # view 0: ten unmatched boxes scoring 0.9, then the one correct box (cafe on p) at 0.5;
    # view 1: a bar box on p (matched, wrong label)
    boxes = [{"view": 0, "type": "bar", "score": 0.9, "place": None} for _ in range(10)]
    boxes += [{"view": 0, "type": "cafe", "score": 0.5, "place": "p"}]
    boxes += [{"view": 1, "type": "bar", "score": 0.3, "place": "p"}]
    figures = detection_figures([(places, boxes)], ["cafe", "bakery", "bar"])
    # AR: cafe 1/1, bakery 0/1, bar 0/1 = 1/3; AR10 drops the cafe box: 0; AR20 keeps it
    assert figures["ar"]["value"] == pytest.approx(1 / 3) and figures["ar"]["n"] == 2
    assert figures["ar10"]["value"] == 0.0 and figures["ar20"]["value"] == pytest.approx(1 / 3)
    # localisation: p is matched (cafe, bakery), q is not (bar): 2/3
    assert figures["ar_localisation"]["value"] == pytest.approx(2 / 3)
    assert figures["box_accuracy"]["value"] == 0.5 and figures["box_accuracy"]["n"] == 2
    assert figures["box_accuracy"]["ci95"] == list(wilson_interval(1, 2))
    lo, hi = figures["ar"]["ci95"]
    assert 0.0 <= lo <= 1 / 3 <= hi <= 1.0
    assert detection_figures([(places, boxes)], ["cafe", "bakery", "bar"]) == figures  # seeded
    none = detection_figures([([], [])], ["cafe"])
    assert none["ar"] == {"value": None, "n": 0, "ci95": None}


@pytest.fixture(scope="module")
def toy_set(tmp_path_factory) -> tuple[Path, list[TaskItem]]:
    folder = tmp_path_factory.mktemp("detection")
    city = toy_city()
    pack = city.save(folder / "toy")
    made = generate_set("virl-detection", city, city_spec=str(pack), options={"cell_m": 10_000})
    return made.write(folder / "det.jsonl"), list(made.items)


def test_generator_on_the_toy_city(toy_set) -> None:
    path, items = toy_set
    header, again = read_items(path)
    assert header["kind"] == "virl-detection" and header["success_metric"] == "recall"
    assert again == items
    assert {p["id"] for it in items for p in it["places"]} == {"bank", "cafe-aalto"}
    for it in items:  # V-IRL's 20 types: the toy museum is not one of them
        assert len(it["views"]) == 13 and it["pitch"] == 10.0 and it["types"] == list(TYPES_20)
        assert all(p["distance"] <= 25.0 and p["types"] for p in it["places"])
    city = toy_city()
    same = generate_set("virl-detection", city, city_spec="toy", options={"cell_m": 10_000})
    assert same.items == items  # same seed, same set
    one = generate_set(
        "virl-detection", city, city_spec="toy", options={"cell_m": 10_000, "per_region": 1}
    )
    assert len(one.items) == 1 and one.items[0].id in {it.id for it in items}
    museum = generate_set("virl-detection", city, city_spec="toy", options={"types": "museum"})
    assert {p["id"] for it in museum.items for p in it["places"]} == {"museum"}


def test_regions_without_viewpoints_are_skipped_and_nothing_is_one_line(tmp_path) -> None:
    city = toy_city()
    west, south, east, north = city.graph.bbox

    def feature(name, ring):
        return {
            "type": "Feature",
            "properties": {"name": name},
            "geometry": {"type": "Polygon", "coordinates": [ring]},
        }

    town = [[west - 0.01, south - 0.01], [east + 0.01, south - 0.01], [east + 0.01, north + 0.01]]
    town += [[west - 0.01, north + 0.01], town[0]]
    sea = [[0, 0], [0.01, 0], [0.01, 0.01], [0, 0.01], [0, 0]]
    regions = tmp_path / "regions.geojson"
    features = [feature("open sea", sea), feature("town", town)]
    regions.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    made = generate_set("virl-detection", city, city_spec="toy", options={"regions": str(regions)})
    assert made.items and {it.category for it in made.items} == {"town"}
    assert "no street viewpoint" in made.report["skipped"]["open sea"]
    regions.write_text(json.dumps(feature("open sea", sea)))
    with pytest.raises(FlaneurError, match="no viewpoint has a place") as info:
        generate_set("virl-detection", city, city_spec="toy", options={"regions": str(regions)})
    assert "\n" not in str(info.value)
    for bad, said in (({"types": "cafe,teleporter"}, "'teleporter'"), ({"spacing_m": -1}, "5")):
        with pytest.raises(FlaneurError, match=said) as info:
            generate_set("virl-detection", city, city_spec="toy", options=bad)
        assert "\n" not in str(info.value)


def _rows(folder: Path) -> dict[str, dict]:
    rows = read_rows(folder / "episodes.jsonl")[0]
    return {r["episode_id"]: {k: v for k, v in r.items() if k not in TIMING} for r in rows}


def test_oracle_recalls_every_storefront_and_runs_are_deterministic(toy_set, tmp_path) -> None:
    path, _ = toy_set

    def run(folder: Path, concurrency: int, limit: int | None = None) -> dict:
        config = RunConfig(
            agents=("oracle", "scene"), tasks=(str(path),), concurrency=concurrency, limit=limit
        )
        return run_benchmark(config, folder, progress="none")

    summary = run(tmp_path / "one", 1)
    runs = {e["agent"]: e for e in summary["runs"]}
    oracle, scene = runs["oracle"]["task_metrics"], runs["scene"]["task_metrics"]
    assert oracle["ar"]["value"] == oracle["ar10"]["value"] == 1.0
    assert oracle["box_accuracy"]["value"] == 1.0 and oracle["ar"]["n"] == 2
    assert 0.0 <= scene["ar"]["value"] <= 1.0
    rows = _rows(tmp_path / "one")
    assert all(r["termination"] == "completed" and r["metrics"]["places"] for r in rows.values())
    some = next(iter(rows.values()))
    assert some["result"]["views"] == 13 and {"view", "type", "span"} <= set(
        some["result"]["boxes"][0]
    )
    run(tmp_path / "four", 4)
    assert _rows(tmp_path / "four") == rows
    run(tmp_path / "resumed", 1, limit=2)  # then the rest, resumed
    config = RunConfig(agents=("oracle", "scene"), tasks=(str(path),))
    run_benchmark(config, tmp_path / "resumed", progress="none", resume=True)
    assert _rows(tmp_path / "resumed") == rows


def test_bad_items_end_as_task_errors_and_the_rest_runs(toy_set, tmp_path) -> None:
    path, items = toy_set
    header, _ = read_items(path)
    broken = TaskItem("nowhere", "r", {**items[0].data, "node": "no-such-node"})
    typeless = TaskItem("typeless", "r", {**items[0].data, "types": ["teleporter"]})
    file = write_items(tmp_path / "bad.jsonl", header, [broken, typeless, items[0]])
    run_benchmark(
        RunConfig(agents=("oracle",), tasks=(str(file),)), tmp_path / "r", progress="none"
    )
    rows = _rows(tmp_path / "r")
    assert rows[items[0].id]["termination"] == "completed"
    for bad in ("nowhere", "typeless"):
        assert rows[bad]["termination"] == "task_error" and "\n" not in rows[bad]["error"]
    assert "teleporter" in rows["typeless"]["error"]


def test_matching_and_the_synthetic_only_simulators() -> None:
    item = TaskItem(
        "v", "r", {"places": [{"id": "p", "bearing": 30.0, "distance": 10.0, "types": ["cafe"]}]}
    )
    got = match_boxes(
        item,
        [
            {"view": 0, "type": "cafe", "score": 0.9, "span": [14.0, 45.0]},
            {"view": 1, "type": "bar", "score": 0.8, "span": [20.0, 40.0]},
            {"view": 2, "type": "cafe", "score": 0.7, "span": [50.0, 60.0]},
        ],
    )
    assert [(b["place"], b["correct"]) for b in got] == [("p", True), ("p", False), (None, False)]
    kind = DetectionKind()
    google = SimpleNamespace(views="google", llm=None, landmarks=None)
    for cls in (SceneDetector, OracleDetector):
        with pytest.raises(FlaneurError, match="needs synthetic views, not --views google"):
            kind.check_setup("scene", cls, options={}, config=google, scheme="")
    synthetic = SimpleNamespace(views="synthetic", llm=None, landmarks=None)
    kind.check_setup("scene", SceneDetector, options={}, config=synthetic, scheme="")


def test_bench_detection_short_form(toy_set, tmp_path) -> None:
    path, _ = toy_set
    args = ["bench", "detection", "--task", str(path), "--out", str(tmp_path / "o")]
    done = CliRunner().invoke(app, [*args, "--detector", "oracle", "--json"])
    assert done.exit_code == 0, done.output
    figures = json.loads(done.output)
    assert figures["task_metrics"]["ar"]["value"] == 1.0 and figures["solver"] == "oracle"
    assert figures["paper_ar10_ar20"]["GLIP"] == [15.4, 9.0]
    table = CliRunner().invoke(
        app,
        ["bench", "detection", "--task", str(path), "--out", str(tmp_path / "s"), "--limit", "2"],
        env={"COLUMNS": "200"},
    )
    text = " ".join(table.output.split())
    assert table.exit_code == 0 and "V-IRL Table 3" in text and "flaneur scene on toy" in text


@pytest.mark.skipif(not FLANEUR.is_file(), reason="console script not installed")
def test_console_script_errors_are_one_line(toy_set, tmp_path) -> None:
    path, _ = toy_set
    done = subprocess.run(
        [
            str(FLANEUR),
            "run",
            "--agent",
            "scene",
            "--tasks",
            str(path),
            "--out",
            str(tmp_path / "o"),
            "--option",
            "scene.seed=-2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "seed=-2" in lines[0] and "from 0" in lines[0], lines

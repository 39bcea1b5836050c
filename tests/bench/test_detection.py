"""Place detection: box -> place matching, AR and box accuracy by hand, the set on the toy
city, the scene simulator's storefronts, resume, and one-line errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image
from shapely.geometry import box
from typer.testing import CliRunner

from flaneur.bench.detection import build_detection_set, evaluate_detection, view_headings
from flaneur.bench.detection_metrics import heading_in_span, match_box, score_detection
from flaneur.bench.detection_run import build_detection, run_detection, write_detection_csv
from flaneur.bench.types import TYPES_20, TYPES_96, TypeListError
from flaneur.cli import app
from flaneur.env.toy import toy_city
from flaneur.perception.detection import Detection, SceneDetector, SceneNoise
from flaneur.services.errors import RegionError
from flaneur.services.region import Region
from flaneur.views.base import View
from flaneur.views.synthetic import SyntheticViews

WORLD = [Region("all", box(-180, -90, 180, 90))]


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


def test_score_detection_hand_computed() -> None:
    places = {"p": ["cafe", "bakery"], "q": ["cafe"], "r": ["bar"], "s": ["bank"]}
    boxes = [
        ("cafe", "p"),  # correct
        ("bakery", "p"),  # correct: p recalled as cafe and bakery
        ("bar", "q"),  # matched, wrong label: q localised, not recalled
        ("bar", None),  # unmatched
        ("bar", "r"),  # correct
        ("bar", "r"),  # correct again (r counts once)
    ]
    s = score_detection(places, boxes, TYPES_20)
    # recall: bank 0/1, bakery 1/1, cafe 1/2 (p yes, q no), bar 1/1 -> AR = 2.5 / 4
    assert s.per_type["cafe"] == {
        "places": 2,
        "localised": 2,
        "recalled": 1,
        "recall": 0.5,
        "localisation": 1.0,
    }
    assert s.per_type["bank"]["recall"] == 0.0 and s.per_type["bank"]["localisation"] == 0.0
    assert s.ar == pytest.approx(2.5 / 4)
    # localisation: bank 0, bakery 1, cafe 1, bar 1 -> 3 / 4
    assert s.ar_localisation == pytest.approx(0.75)
    # matched boxes 5, correct 4
    assert (s.boxes, s.matched_boxes, s.correct_boxes) == (6, 5, 4)
    assert s.box_accuracy == pytest.approx(0.8)
    assert list(s.per_type) == ["bank", "bakery", "cafe", "bar"]  # list order, with places


def test_score_detection_without_boxes_or_places() -> None:
    s = score_detection({"p": ["cafe"]}, [])
    assert s.ar == 0.0 and math.isnan(s.box_accuracy) and s.boxes == 0
    assert math.isnan(score_detection({}, [("cafe", None)]).ar)


def test_view_headings_cover_360_at_each_fov() -> None:
    views = view_headings()
    assert len(views) == 6 + 4 + 3
    assert [h for h, f in views if f == 120.0] == [0.0, 120.0, 240.0]


def test_build_set_on_the_toy_city() -> None:
    city = toy_city()
    items, truth, grid = build_detection_set(city, WORLD, TYPES_96)
    assert build_detection_set(city, WORLD, TYPES_96) == (items, truth, grid)
    assert set(truth) == {"bank", "cafe-aalto", "museum"}  # within 25 m of a viewpoint
    assert truth["bank"]["types"] == ["bank"]
    for it in items:
        assert len(it["views"]) == 13 and it["pitch"] == 10.0
        assert it["places"] and all(d <= 25.0 for _, _, d in it["places"])
    assert grid["all"] >= len(items)
    # a sample of one viewpoint: its places only
    one, truth1, _ = build_detection_set(city, WORLD, TYPES_96, per_region=1)
    assert len(one) == 1 and set(truth1) == {p for p, _, _ in one[0]["places"]}
    # V-IRL's 20 types: the toy museum is not one of them
    _, truth20, _ = build_detection_set(city, WORLD, TYPES_20)
    assert set(truth20) == {"bank", "cafe-aalto"}


def _view(node: str, heading: float, pitch: float, fov: float) -> View:
    return View(Image.new("RGB", (800, 400)), node, heading, pitch, fov)


def test_evaluate_matches_boxes_by_heading_span() -> None:
    items = [
        {
            "node": "v",
            "region": "all",
            "views": [[0.0, 90.0]],
            "pitch": 10.0,
            "places": [["p", 30.0, 10.0], ["q", 350.0, 5.0]],
        }
    ]
    truth = {"p": {"region": "all", "types": ["cafe"]}, "q": {"region": "all", "types": ["bar"]}}

    def detect(views, labels):
        assert labels[:2] == ["cafe", "bar"]
        # fov 90 on 800 px: focal 400 px; x=400 is heading 0, x=800 is 45°
        return [
            [
                Detection((500.0, 0, 800.0, 50), "cafe", 0.9),  # 14°..45°: p
                Detection((0.0, 0, 400.0, 50), "cafe", 0.8),  # 315°..0°: q, wrong label
                Detection((0.0, 0, 100.0, 50), "bar", 0.7),  # 315°..323°: nothing
            ]
        ]

    s = evaluate_detection(items, truth, ["cafe", "bar"], detect, _view)
    boxes = s["results"][0]["boxes"]
    assert [b["place_id"] for b in boxes] == ["p", "q", None]
    assert [b["correct"] for b in boxes] == [True, False, False]
    assert boxes[0]["span"] == [14.04, 45.0]
    assert s["ar"] == pytest.approx(0.5) and s["box_accuracy"] == pytest.approx(0.5)
    assert s["ar_localisation"] == 1.0 and s["per_region"]["all"]["viewpoints"] == 1


def test_scene_simulator_reports_storefronts_with_their_types() -> None:
    city = toy_city()
    views = SyntheticViews(city)
    items, _, _ = build_detection_set(city, WORLD, TYPES_20)
    item = next(it for it in items if it["places"][0][0] == "cafe-aalto")
    _, heading, _ = item["places"][0]
    view = views.view(item["node"], heading, pitch=10.0, fov=90.0)
    assert any(s["place_id"] == "cafe-aalto" for s in view.metadata["signs"])
    places = {str(city.places.ids[r]): city.places.categories[r] for r in range(len(city.places))}
    det = SceneDetector(SceneNoise.perfect(), places=places, label_categories={"spa": ("sauna",)})
    found = det.detect(view, ["cafe", "bank", "spa"])
    assert "place:cafe-aalto" in {d.object_id for d in found}
    assert {d.label for d in found if d.object_id == "place:cafe-aalto"} == {"cafe"}
    # without the places the simulator reports furniture only, as before
    plain = SceneDetector(SceneNoise.perfect()).detect(view, ["cafe", "bank"])
    assert not any(str(d.object_id).startswith("place:") for d in plain)


def test_run_resumes_and_writes_csv(tmp_path: Path) -> None:
    city = toy_city()
    built = build_detection("toy", tmp_path, types="20", regions=None, cell_m=10_000, city=city)
    assert built["detection_places"] == 2 and built["detection_views"] == 13 * len(
        build_detection_set(city, WORLD, TYPES_20)[0]
    )
    places = {str(city.places.ids[r]): city.places.categories[r] for r in range(len(city.places))}
    views = SyntheticViews(city)

    def view_of(node, heading, pitch, fov):
        return views.view(node, heading, pitch=pitch, fov=fov)

    det = SceneDetector(SceneNoise.perfect(), places=places, label_categories={"spa": ("sauna",)})
    first = run_detection(
        built["detection_set"], det, view_of=view_of, show_progress=False, limit=2
    )
    assert first["viewpoints"] == 2
    calls = det.misses
    again = run_detection(built["detection_set"], det, view_of=view_of, show_progress=False)
    assert det.misses - calls == 13 * (built["detection_viewpoints"] - 2)  # only new ones
    assert again["viewpoints"] == built["detection_viewpoints"]
    assert again["ar"] == 1.0  # the perfect simulator recalls every storefront it drew
    csv_path = write_detection_csv(again, tmp_path / "det.csv")
    rows = csv_path.read_text().splitlines()
    assert rows[0] == "city,table,name,places,recall,localisation,box_accuracy"
    assert any(r.startswith("toy,type,cafe,1,1.000000") for r in rows)
    assert any(",region,r00c00," in r for r in rows)


def test_bad_regions_and_types_are_one_line_errors(tmp_path: Path) -> None:
    sea = tmp_path / "sea.geojson"
    sea.write_text(
        json.dumps(
            {
                "type": "Feature",
                "properties": {"name": "open sea"},
                "geometry": {
                    "type": "Polygon",
                    "coordinates": [[[0, 0], [0.01, 0], [0.01, 0.01], [0, 0.01], [0, 0]]],
                },
            }
        )
    )
    with pytest.raises(RegionError, match="region 'open sea' has no street viewpoint") as err:
        build_detection("toy", tmp_path, regions=sea, city=toy_city())
    assert "\n" not in str(err.value)
    with pytest.raises(TypeListError, match="'teleporter'") as err:
        build_detection("toy", tmp_path, types="cafe,teleporter", city=toy_city())
    assert "\n" not in str(err.value)


FLANEUR = Path(sys.executable).with_name("flaneur")


def test_cli_builds_runs_and_resumes_on_a_pack(tmp_path: Path) -> None:
    pack = toy_city().save(tmp_path / "toy")
    out = tmp_path / "bench"
    args = ["bench", "detection", str(out), "--city", str(pack), "--cell-m", "10000"]
    args += ["--detector", "scene", "--csv", str(tmp_path / "d.csv"), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["detection_places"] == 2 and summary["places"] == 2
    assert 0.0 <= summary["ar"] <= 1.0 and summary["detector"] == "scene-simulator"
    assert (out / "detection-v1.jsonl").is_file() and (tmp_path / "d.csv").is_file()
    again = CliRunner().invoke(app, args)  # the set exists: no rebuild, all resumed
    resumed = json.loads(again.output.strip().splitlines()[-1])
    assert "detection_places" not in resumed and resumed["ar"] == summary["ar"]
    other = CliRunner().invoke(app, [*args, "--types", "cafe,bank"])
    assert other.exit_code != 0 and "built with other types" in str(other.exception)
    table = CliRunner().invoke(app, args[:-1])
    text = " ".join(table.output.split())
    assert table.exit_code == 0 and "V-IRL Table 3" in text
    assert "city, the imagery and the detectors differ" in text


@pytest.mark.skipif(not FLANEUR.is_file(), reason="console script not installed")
@pytest.mark.parametrize(
    "args, expected",
    [
        (["bench", "detection", "--types", "cafe,teleporter"], "'teleporter'"),
        (["bench", "detection", "--detector", "sonar"], "--detector"),
    ],
)
def test_console_script_errors_are_one_line(tmp_path: Path, args, expected) -> None:
    done = subprocess.run(
        [str(FLANEUR), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], lines


def test_report_rows_per_city_type_and_region(tmp_path: Path) -> None:
    from flaneur.bench.tables import collect, rows

    pack = toy_city().save(tmp_path / "toy")
    out = tmp_path / "bench"
    args = ["bench", "detection", str(out), "--city", str(pack), "--cell-m", "10000"]
    done = CliRunner().invoke(app, [*args, "--detector", "scene", "--json"])
    ran = json.loads(done.output.strip().splitlines()[-1])
    (entry,) = collect(out)
    assert (entry["city"], entry["benchmark"], entry["runner"]) == ("toy", "detection", "scene")
    assert entry["summary"]["ar"] == ran["ar"]  # summarised again from the results file
    found = list(rows([out]))
    assert ("toy", "detection", "scene", "overall", "", "ar", ran["ar"]) in found
    assert any(r[3] == "type" and r[4] == "cafe" for r in found)
    assert any(r[3] == "region" for r in found)
    csv_path = tmp_path / "all.csv"
    wide = {"COLUMNS": "240"}
    table = CliRunner().invoke(app, ["bench", "report", str(out), "--csv", str(csv_path)], env=wide)
    assert table.exit_code == 0, table.output
    text = " ".join(table.output.split())
    assert "AR20" in text and "city and the imagery differ" in text
    assert csv_path.read_text().splitlines()[0] == "city,benchmark,runner,table,name,metric,value"
    detailed = CliRunner().invoke(app, ["bench", "report", str(out), "--detail"], env=wide)
    assert "region" in detailed.output and "cafe" in detailed.output
    as_json = CliRunner().invoke(app, ["bench", "report", str(out), "--json"])
    cities = json.loads(as_json.output)["cities"]
    assert cities["toy"]["detection"]["scene"]["ar"] == ran["ar"]


def test_report_reads_a_vln_result_and_names_a_broken_one(tmp_path: Path) -> None:
    from flaneur.bench.sets import BenchSetError
    from flaneur.bench.tables import rows

    vln = {"city": "toy", "routes": 2, "results": {"oracle": {"metrics": {"success": 0.5}}}}
    (tmp_path / "vln.json").write_text(json.dumps(vln))
    assert list(rows([tmp_path])) == [
        ("toy", "vln", "oracle", "overall", "", "success", 0.5),
        ("toy", "vln", "oracle", "overall", "", "routes", 2),
    ]
    (tmp_path / "vln.json").write_text('{"city": "toy"}')
    with pytest.raises(BenchSetError, match=r"vln\.json: not a `flaneur bench vln -o` result"):
        list(rows([tmp_path]))

"""RX-399 (``robot``) and Imani (``planner``): crops, counts beside OpenStreetMap, heat map,
and one-line errors through the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import shapely
from PIL import Image

from flaneur.errors import DataError
from flaneur.report.virl_run import run_agent
from flaneur.report.virl_vision_run import (
    PALETTE,
    _colour,
    _settings,
    dedup_errors,
    heat_cells,
    heat_svg,
)
from flaneur.services.persona import persona_from_dict

FLANEUR = Path(sys.executable).with_name("flaneur")
BASE = {
    "name": "T",
    "city": "helsinki",
    "start": "Stockmann",
    "background": "a robot",
    "intention": "count",
}
# about 110 m x 55 m of Esplanadi park (benches and bins in OpenStreetMap)
SMALL = [[60.1673, 24.9470], [60.1673, 24.9490], [60.1678, 24.9490], [60.1678, 24.9470]]


@pytest.fixture(scope="module")
def helsinki():
    from flaneur.world.builtin import load_builtin

    return load_builtin("helsinki")


def test_colour_and_dedup_errors_hand_computed():
    assert _colour(0, 4) == PALETTE[0] and _colour(4, 4) == PALETTE[-1]
    assert _colour(2, 4) == PALETTE[2] and _colour(1, 0) == PALETTE[-1]
    s = lambda oid: SimpleNamespace(object_id=oid)  # noqa: E731
    memory = SimpleNamespace(
        objects=[
            SimpleNamespace(sightings=[s("a"), s("a")]),
            SimpleNamespace(sightings=[s("a")]),
            SimpleNamespace(sightings=[s("b"), s("c")]),
            SimpleNamespace(sightings=[s(None)]),
        ]
    )
    # "a" counted by two objects -> 1 duplicate; one object holds b and c -> 1 merged
    assert dedup_errors(SimpleNamespace(memory=memory)) == {"duplicates": 1, "merged": 1}


def test_heat_cells_count_points_per_cell(helsinki):
    poly = shapely.Polygon(
        [(24.9470, 60.1673), (24.9490, 60.1673), (24.9490, 60.1678), (24.9470, 60.1678)]
    )
    # two points near the south-west corner share a 40 m cell, one in the north-east is alone
    pts = [(60.16732, 24.94702), (60.16735, 24.94710), (60.16778, 24.94898)]
    cells = heat_cells(helsinki, poly, pts, 40.0)
    assert sorted(c["count"] for c in cells) == [1, 2]
    two = next(c for c in cells if c["count"] == 2)
    assert two["south"] <= 60.16732 <= two["north"] and two["west"] <= 24.94702 <= two["east"]
    svg = heat_svg(poly, cells, [(60.1675, 24.948)], "<b>&title")
    assert "&lt;b&gt;&amp;title" in svg and "<b>" not in svg and svg.count("<rect") == 3


def test_looks_option_defaults_to_one_and_must_be_a_positive_integer():
    assert _settings(persona_from_dict(BASE), 3).looks == 1
    assert _settings(persona_from_dict({**BASE, "looks": 1}), 3).looks == 1
    assert _settings(persona_from_dict({**BASE, "looks": "3"}), 3).looks == 3
    for bad in (0, -1, 1.5, True, "two", [2]):
        with pytest.raises(DataError, match="field 'looks' must be a positive integer"):
            _settings(persona_from_dict({**BASE, "looks": bad}), 3)


def test_robot_counts_and_crops(helsinki, tmp_path):
    persona = persona_from_dict(
        {
            **BASE,
            "start": "60.16750,24.94700",
            "end": "60.16760,24.94900",
            "labels": ["trash bin", "bench"],
            "view_size": 320,
        }
    )
    result = run_agent("robot", helsinki, persona, tmp_path)
    assert result["views"] >= 3 * result["viewpoints"]
    assert sum(result["counts"].values()) == len(result["objects"]) > 0
    for row in result["objects"]:
        crop = Image.open(tmp_path / row["crop"])
        assert 0 < crop.width <= 320 and 0 < crop.height <= 320
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["counts"] == result["counts"] and (tmp_path / "map.html").is_file()
    assert saved["settings"]["looks"] == 1


def test_planner_counts_beside_ground_truth(helsinki, tmp_path):
    persona = persona_from_dict(
        {**BASE, "polygon": SMALL, "spacing": 40, "view_size": 320, "views_per_point": 4}
    )
    result = run_agent("planner", helsinki, persona, tmp_path)
    poly = shapely.Polygon([(lng, lat) for lat, lng in SMALL])
    furn = helsinki.furniture
    for category in ("waste_basket", "bench"):
        truth = sum(
            1
            for r in furn.of_kind(category)
            if poly.contains(shapely.Point(furn.lng[r], furn.lat[r]))
        )
        row = result["counts"][category]
        assert row["ground_truth"] == truth
        assert row["difference"] == row["counted"] - truth
    assert sum(c["count"] for c in result["heat_cells"]) == len(result["objects"])
    assert (tmp_path / "heatmap.svg").read_text().startswith("<svg")
    page = (tmp_path / "map.html").read_text()
    assert "<svg" in page and "cdn.jsdelivr" not in page and "unpkg.com" not in page


def one_line_error(tmp_path, text: str, *extra: str) -> str:
    cfg = tmp_path / "imani.toml"
    cfg.write_text(
        'name = "Imani"\ncity = "helsinki"\nstart = "Stockmann"\n'
        'background = "a planner"\nintention = "count"\n' + text
    )
    proc = subprocess.run(
        [str(FLANEUR), "virl", "planner", str(cfg), *extra, "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "out" / "result.json").exists()
    return lines[0]


def test_planner_bad_input_is_one_line(tmp_path):
    assert "polygon" in one_line_error(tmp_path, "polygon = []\n")
    assert "3 (lat, lng) points" in one_line_error(tmp_path, "polygon = [[60.1, 24.9]]\n")
    line = one_line_error(tmp_path, f"polygon = {SMALL}\nlabels = ['unicorn']\n")
    assert "unicorn" in line and "labels" in line
    line = one_line_error(tmp_path, f"polygon = {SMALL}\nlabels = ['cafe']\n")
    assert "street furniture" in line


def robot_error(tmp_path, text: str) -> str:
    cfg = tmp_path / "rx399.toml"
    cfg.write_text(
        'name = "RX"\ncity = "helsinki"\nstart = "60.16750,24.94700"\n'
        'end = "60.16760,24.94750"\nbackground = "a robot"\nintention = "count"\n'
        "view_size = 64\n" + text
    )
    proc = subprocess.run(
        [str(FLANEUR), "virl", "robot", str(cfg), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "out" / "result.json").exists()
    return lines[0]


def test_robot_bad_input_is_one_line(tmp_path):
    line = robot_error(tmp_path, "labels = ['flux capacitor']\n")
    assert "flux capacitor" in line and "labels" in line
    line = robot_error(tmp_path, "detector = 'yolo-world'\n")
    assert "weights" in line and "rx399.toml" in line
    line = robot_error(tmp_path, "detector = 'yolo-world'\nweights = 'nowhere.pt'\n")
    assert "nowhere.pt" in line and "not found" in line
    line = robot_error(tmp_path, "looks = 0\n")
    assert "looks" in line and "positive integer" in line and "rx399.toml" in line
    line = robot_error(tmp_path, "noise = 'loud'\n")
    assert "noise" in line and "'loud'" in line and "virl" in line
    line = robot_error(tmp_path, "detector = 'detectron'\n")
    assert "detectron" in line and "yolo-world" in line
    (tmp_path / "model.pt").write_bytes(b"not really weights")
    line = robot_error(tmp_path, "detector = 'yolo-world'\nweights = 'model.pt'\n")
    assert "pip install ultralytics" in line
    (tmp_path / "memory.json").write_text('{"format": "flaneur-visual-memory", "version": 1,')
    line = robot_error(tmp_path, "memory = 'memory.json'\n")
    assert "memory.json" in line and "invalid JSON" in line


def test_robot_saves_its_memory_and_continues_from_it(helsinki, tmp_path):
    base = {**BASE, "start": "60.16750,24.94700", "end": "60.16760,24.94900", "view_size": 320}
    first = run_agent("robot", helsinki, persona_from_dict(base), tmp_path / "a")
    saved = tmp_path / "a" / "memory.json"
    assert sum(first["counts"].values()) == len(json.loads(saved.read_text())["objects"])
    again = run_agent(
        "robot", helsinki, persona_from_dict({**base, "memory": str(saved)}), tmp_path / "b"
    )
    # the same walk seen again: every sighting matches an object already in memory
    assert again["counts"] == first["counts"]

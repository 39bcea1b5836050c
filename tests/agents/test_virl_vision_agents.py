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

from flaneur.report.virl_run import run_agent
from flaneur.report.virl_vision_run import PALETTE, _colour, dedup_errors, heat_cells, heat_svg
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

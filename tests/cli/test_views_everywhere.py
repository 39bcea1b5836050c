"""One view-provider option everywhere (issue 30, item 1): ``flaneur run``, ``flaneur virl
rx399`` and ``flaneur bench detection`` look through ``--views panorama:DIR`` (a folder of
small equirectangular panoramas the test paints, one per node of a tiny city) and through a
plug-in provider, with a plug-in detector chosen by its registry name; the spec is checked
before anything runs, and the detectors that report what the offline renderer drew refuse
other views in one line. All through the installed console script.

The plug-ins live in a package the test writes (``flaneur_probe``): ``sky``, a view provider
whose colour follows the heading (``docs/extending.md``), and ``red``, a detector boxing the
red pixels of a view that refuses views of the offline renderer (so a row that completes
looked through the run's provider). A ``sitecustomize.py`` on the subprocess's
``PYTHONPATH`` registers both through the registries (``register_views``,
``DETECTORS.register``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from flaneur.env.toy import toy_city
from flaneur.evaluate.runlog import read_rows
from flaneur.tasks.generators import generate_set
from flaneur.testing.street_scene import street_city

FLANEUR = Path(sys.executable).with_name("flaneur")
pytestmark = pytest.mark.skipif(not FLANEUR.is_file(), reason="console script not installed")

VIEWS_PY = '''\
"""Views of a sky whose colour follows the heading (blue north, orange south)."""

from typing import ClassVar

from PIL import Image

from flaneur.views import ViewCache
from flaneur.views.cached import CachedViewProvider, Fetched, Plan


class SkyViews(CachedViewProvider):
    name: ClassVar[str] = "sky"

    def __init__(self, city) -> None:
        self.graph = city.graph
        self.cache = ViewCache.in_memory(32)

    @classmethod
    def from_spec(cls, city, arg: str) -> "SkyViews":
        return cls(city)

    def plan(self, request) -> Plan:
        warmth = round(abs(180.0 - request.heading) / 180.0 * 255)
        key = {"provider": self.name, "warmth": 255 - warmth, "size": list(request.size)}
        return Plan(key, {"warmth": 255 - warmth})

    def fetch(self, request, plan) -> Fetched:
        w = plan.metadata["warmth"]
        return Fetched(Image.new("RGB", request.size, (w, 120, 255 - w)), plan.metadata)
'''
DETECT_PY = '''\
"""A detector of red pixels that will not look at the offline renderer's views."""

import numpy as np

from flaneur.perception.detection import Detection, DetectionError, Detector


class RedDetector(Detector):
    name = "red"

    def __init__(self, *, threshold: float = 0.5) -> None:
        super().__init__(threshold=threshold)

    def _detect(self, view, labels):
        if view.source == "synthetic":
            raise DetectionError("red: a view of the offline renderer, not of the run's --views")
        rgb = np.asarray(view.image.convert("RGB")).astype(int)
        ys, xs = np.nonzero((rgb[..., 0] > 200) & (rgb[..., 2] < 100))
        if not xs.size:
            return []
        box = (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))
        return [Detection(box, labels[0], 0.9)]
'''
SITECUSTOMIZE = """\
from flaneur.perception.detection import DETECTORS
from flaneur.views.registry import register_views

register_views("sky", "flaneur_probe.views:SkyViews", replace=True)
DETECTORS.register("red", "flaneur_probe.detect:RedDetector", replace=True)
"""
# bins on the east side every 40 m, benches on the west side every 60 m
OBJECTS = [("waste_basket", 2.5, float(y)) for y in range(-90, 91, 40)]
OBJECTS += [("bench", -2.5, float(y)) for y in range(-70, 91, 60)]


def panoramas(folder: Path, node_ids: list[str]) -> Path:
    """One 360 x 180 equirectangular panorama per node (grey, a red block 50-70 degrees
    right of the centre column, at the horizon), alternately JPEG and PNG."""
    folder.mkdir()
    pano = np.full((180, 360, 3), 110, np.uint8)
    pano[80:100, 230:250] = (230, 20, 20)
    for k, node in enumerate(node_ids):
        Image.fromarray(pano).save(folder / f"{node}.{'jpg' if k % 2 else 'png'}")
    return folder


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Any]:
    """The plug-in package, two tiny cities with their task files and panorama folders."""
    root = tmp_path_factory.mktemp("views-everywhere")
    site = root / "site"
    (site / "flaneur_probe").mkdir(parents=True)
    (site / "flaneur_probe" / "__init__.py").write_text("", encoding="utf-8")
    (site / "flaneur_probe" / "views.py").write_text(VIEWS_PY, encoding="utf-8")
    (site / "flaneur_probe" / "detect.py").write_text(DETECT_PY, encoding="utf-8")
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    street = street_city(OBJECTS, length=200.0)
    street_pack = street.save(root / "street")
    short = {"labels": "trash bin", "min_m": 80, "max_m": 160}
    robot = generate_set("virl-rx399", street, city_spec=str(street_pack), size=1, options=short)
    toy = toy_city()
    toy_pack = toy.save(root / "toy")
    places = generate_set(
        "virl-detection", toy, city_spec=str(toy_pack), options={"cell_m": 10_000}
    )
    graph = street.graph
    at = {
        n: f"{graph.lat[graph.index(n)]:.7f},{graph.lng[graph.index(n)]:.7f}"
        for n in ("s-60", "s60")
    }
    return {  # the street city has no place names: start and end as lat,lng
        "start": at["s-60"],
        "end": at["s60"],
        "root": root,
        "site": site,
        "street": street_pack,
        "rx": robot.write(root / "rx.jsonl"),
        "street_panos": panoramas(root / "street-panos", [str(n) for n in street.graph.ids]),
        "det": places.write(root / "det.jsonl"),
        "toy_panos": panoramas(root / "toy-panos", [str(n) for n in toy.graph.ids]),
    }


def flaneur(world: dict[str, Any], *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(world["site"]),
        "FLANEUR_CACHE_DIR": str(world["root"] / "cache"),
    }
    return subprocess.run(
        [str(FLANEUR), *args], env=env, capture_output=True, text=True, timeout=300
    )


def one_line(done: subprocess.CompletedProcess, *said: str) -> str:
    """The one error line of a refused command (exit 2), holding every ``said`` (a usage
    error shows the command's usage line above it, as ``flaneur run`` does)."""
    assert done.returncode == 2, done.stderr
    lines = [x for x in done.stderr.strip().splitlines() if not x.startswith("Usage: flaneur")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert all(s in lines[0] for s in said), lines[0]
    return lines[0]


def rows(folder: Path) -> list[dict]:
    found = read_rows(folder / "episodes.jsonl")[0]
    assert found and all(r["termination"] == "completed" for r in found), found
    return found


def test_run_looks_through_a_panorama_folder_and_a_plugin_provider(world) -> None:
    panos = f"panorama:{world['street_panos']}"
    for views, seen in ((panos, True), ("sky", False)):
        out = world["root"] / f"run-rx-{views.partition(':')[0]}"
        args = ["run", "--agent", "rx399", "--tasks", str(world["rx"]), "--views", views]
        args += ["--option", "rx399.detector=red", "--option", "rx399.view_size=160"]
        done = flaneur(world, *args, "--out", str(out), "--progress", "none", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["config"]["views"] == views
        (row,) = rows(out)
        assert row["result"]["settings"]["detector"] == "red"
        assert (row["result"]["sightings"] > 0) is seen  # the red block of every panorama
    out = world["root"] / "run-det"
    panos = f"panorama:{world['toy_panos']}"
    args = ["run", "--agent", "red", "--tasks", str(world["det"]), "--views", panos, "--limit", "2"]
    done = flaneur(world, *args, "--out", str(out), "--progress", "none", "--json")
    assert done.returncode == 0, done.stderr
    assert all(r["result"]["boxes"] for r in rows(out))
    # the simulator reports what the renderer drew: refused before anything runs
    scene = ["run", "--agent", "scene", "--tasks", str(world["det"]), "--views", panos]
    one_line(flaneur(world, *scene, "--out", str(out) + "-scene"), "needs synthetic views")
    assert not Path(str(out) + "-scene").exists()


def test_virl_rx399_takes_views_as_run_does(world) -> None:
    persona = world["root"] / "rx399.toml"
    persona.write_text(
        f'name = "RX"\ncity = "{world["street"]}"\nstart = "{world["start"]}"\n'
        f'end = "{world["end"]}"\nbackground = "a robot"\nintention = "count bins"\n'
        'labels = ["trash bin"]\n',
        encoding="utf-8",
    )
    panos = f"panorama:{world['street_panos']}"
    for views, seen in ((panos, True), ("sky", False)):
        out = world["root"] / f"virl-{views.partition(':')[0]}"
        args = ["virl", "rx399", str(persona), "detector=red", "view_size=160"]
        done = flaneur(world, *args, "--views", views, "-o", str(out), "--json")
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["settings"]["detector"] == "red" and result["views"] > 0
        assert (result["sightings"] > 0) is seen
        assert json.loads((out / "summary.json").read_text())["config"]["views"] == views
    out = world["root"] / "virl-refused"
    scene = ["virl", "rx399", str(persona), "--views", panos, "-o", str(out)]
    one_line(flaneur(world, *scene), "'scene'", "needs synthetic views")
    assert not (out / "result.json").exists()
    for bad, said in (("nowhere", "--views must be one of"), ("panorama:/no/such", "not a folder")):
        one_line(
            flaneur(world, "virl", "rx399", str(persona), "--views", bad, "-o", str(out)), said
        )


def test_bench_detection_takes_views_and_a_detector_by_name(world) -> None:
    for views in (f"panorama:{world['toy_panos']}", "sky"):
        out = world["root"] / f"bench-{views.partition(':')[0]}"
        args = ["bench", "detection", "--task", str(world["det"]), "--detector", "red"]
        args += ["--views", views, "--limit", "2", "--out", str(out), "--json"]
        done = flaneur(world, *args)
        assert done.returncode == 0, done.stderr
        figures = json.loads(done.stdout)
        assert figures["solver"] == "red" and figures["items"] == 2
        assert json.loads((out / "summary.json").read_text())["config"]["views"] == views
        assert any(r["result"]["boxes"] for r in rows(out))
    out = world["root"] / "bench-refused"
    base = ["bench", "detection", "--task", str(world["det"]), "--out", str(out)]
    one_line(flaneur(world, *base, "--views", "sky"), "'scene'", "not --views sky")
    one_line(flaneur(world, *base, "--views", "bogus"), "--views must be one of", "sky")
    one_line(flaneur(world, *base, "--detector", "oracle", "--views", "sky"), "'oracle'")
    assert not out.exists()


def test_render_and_the_other_benchmarks_take_views_the_same_way(world) -> None:
    png = world["root"] / "view.png"
    args = ["render", str(world["street"]), "--node", "s0", "--heading", "60", "--fov", "40"]
    args += ["--views", f"panorama:{world['street_panos']}", "--size", "160x120"]
    done = flaneur(world, *args, "-o", str(png), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["views"].startswith("panorama:")
    red, green, blue = np.asarray(Image.open(png).convert("RGB"))[60, 80]
    assert red > 200 and green < 80 and blue < 80  # the block the camera faces
    scratch = str(world["root"] / "scratch")
    for command in (
        ["bench", "recognition", "--out", scratch],
        ["bench", "vqa", "--out", scratch],
        ["bench", "vln", "--out", scratch],
        ["render", str(world["street"]), "--node", "s0", "-o", str(png)],
    ):
        one_line(flaneur(world, *command, "--views", "bogus"), "--views must be one of")
    assert not Path(scratch).exists()

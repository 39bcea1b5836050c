"""``flaneur virl geocode`` and ``directions`` through the installed console script on a toy
city pack: names in other languages, and points that are one error line (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flaneur.cli.virl import SNAP
from flaneur.services.geocode import OFF_STREET_M
from flaneur.world import City, Places, StreetGraph

FLANEUR = Path(sys.executable).with_name("flaneur")
LAT0, LNG0, STEP = 60.0, 25.0, 0.0004  # viewpoints about 22 m apart east-west


def flaneur(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(FLANEUR), *args], capture_output=True, text=True, timeout=120)


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> Path:
    """One street of ten viewpoints with a cathedral, a library and a bar on it."""
    n = 10
    graph = StreetGraph.from_edges(
        [f"v{i}" for i in range(n)],
        [LAT0] * n,
        [LNG0 + i * STEP for i in range(n)],
        [*range(n - 1), *range(1, n)],
        [*range(1, n), *range(n - 1)],
    )
    places = Places.from_records(
        [
            {
                "id": "way/1",
                "name": "Helsingin tuomiokirkko",
                "lat": LAT0 + 0.0001,
                "lng": LNG0 + 8 * STEP,
                "categories": ["place_of_worship"],
                "tags": {"name:en": "Helsinki Cathedral", "wikidata": "Q738015"},
            },
            {
                "id": "way/2",
                "name": "Helsingin keskustakirjasto Oodi",
                "lat": LAT0 - 0.0001,
                "lng": LNG0 + 1 * STEP,
                "categories": ["library"],
                "tags": {"name:en": "Helsinki Central Library Oodi", "short_name": "Oodi"},
            },
            {"id": "node/3", "name": "BR", "lat": LAT0, "lng": LNG0 + 4 * STEP},
            {"id": "node/4", "name": "Helsinki", "lat": LAT0, "lng": LNG0 + 5 * STEP},
        ]
    )
    city = City(name="toytown", graph=graph, places=places, source="hand-made", licence="CC0")
    return city.save(tmp_path_factory.mktemp("packs") / "toytown")


def test_names_in_other_languages_rank_first(pack):
    proc = flaneur("virl", "geocode", "Helsinki Cathedral", "--city", str(pack))
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert "Helsingin tuomiokirkko [Helsinki Cathedral]" in first and first.startswith("100.0")
    proc = flaneur("virl", "geocode", "Library Oodi", "--city", str(pack), "--json")
    results = json.loads(proc.stdout)["results"]
    assert results[0]["name"] == "Helsingin keskustakirjasto Oodi"
    assert results[0]["match"] == "words" and "BR" not in [r["name"] for r in results]


def test_far_and_not_finite_points_are_one_line(pack):
    far = one_line_error(flaneur("virl", "directions", "61.0,25.0", "Oodi", "--city", str(pack)))
    assert far.startswith("error: 61.00000,25.00000 lies 111,") and "more than 500 m" in far
    line = one_line_error(flaneur("virl", "directions", "nan,nan", "Oodi", "--city", str(pack)))
    assert "'nan,nan' is not a point" in line and "finite" in line
    line = one_line_error(flaneur("virl", "geocode", "inf", "--city", str(pack)))
    assert "'inf' is not a point" in line
    near = f"{LAT0 + 0.0009},{LNG0}"  # 100 m north of the street
    proc = flaneur("virl", "directions", near, "Oodi", "--city", str(pack), "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["nodes"][0] == 0
    line = one_line_error(
        flaneur("virl", "directions", near, "Oodi", "--city", str(pack), "--snap-radius", "50")
    )
    assert "lies 100 m from the nearest street of toytown, more than 50 m" in line


def test_the_distance_limit_is_a_documented_option():
    assert SNAP.default == OFF_STREET_M
    proc = flaneur("virl", "directions", "--help")
    assert "--snap-radius" in proc.stdout and "default: 500.0" in proc.stdout

"""An outside package, installed with pip, adds a detector and a task set through entry points
and ``flaneur run`` runs them: nothing in flaneur names the package.

The package is written by the test into a temporary folder (``pyproject.toml`` with the
``flaneur.detectors`` and ``flaneur.tasks`` entry-point groups, one module), installed by
``pip install --no-deps --no-build-isolation --target SITE`` (offline: setuptools and wheel
of this virtualenv build it) and found through ``PYTHONPATH=SITE`` by the installed console
script. Its detector boxes the middle third of every view with the first label asked for;
its task set is V-IRL's place detection generated on built-in Helsinki (three viewpoints).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FLANEUR = Path(sys.executable).with_name("flaneur")

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "flaneur-middle-box"
version = "0.1"

[project.entry-points."flaneur.detectors"]
middle-box = "flaneur_middle_box:MiddleBoxDetector"

[project.entry-points."flaneur.tasks"]
middle-box-sets = "flaneur_middle_box:task_sets"
"""

MODULE = '''\
"""A detector that boxes the middle third of a view, and a task set to run it on."""

from dataclasses import dataclass

from flaneur.perception.detection import Detection, Detector
from flaneur.tasks.spec import TaskSpec


class MiddleBoxDetector(Detector):
    """One box, the middle third of the view, labelled with the first label asked for."""

    name = "middle-box"

    @dataclass(frozen=True)
    class Options:
        score: float = 0.9

    def __init__(self, score: float = 0.9) -> None:
        super().__init__()
        self.score = score

    def _detect(self, view, labels):
        w, h = view.image.size
        return [Detection((w / 3, h / 3, 2 * w / 3, 2 * h / 3), labels[0], self.score)]


def task_sets():
    return [
        TaskSpec(
            id="middle-box-detection-v1",
            description="V-IRL place detection on three Helsinki viewpoints (plug-in)",
            kind="virl-detection",
            city="helsinki",
            loader="generated",
            generator="virl-detection",
            size=3,
            success_metric="recall",
            scheme="",
        )
    ]
'''


def _install(tmp_path: Path) -> Path:
    source, site = tmp_path / "src", tmp_path / "site"
    source.mkdir()
    (source / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (source / "flaneur_middle_box.py").write_text(textwrap.dedent(MODULE), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return site


@pytest.mark.skipif(not FLANEUR.exists(), reason="the flaneur console script is not installed")
def test_a_pip_installed_package_adds_a_detector_and_a_task_set(tmp_path: Path) -> None:
    site = _install(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(site)}

    def flaneur(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(FLANEUR), *args], env=env, capture_output=True, text=True, timeout=600
        )

    listed = flaneur("tasks", "ls", "--json")
    assert listed.returncode == 0, listed.stderr
    ids = {t["id"]: t for t in json.loads(listed.stdout)["tasks"]}
    assert ids["middle-box-detection-v1"]["kind"] == "virl-detection"
    assert "entry point" in ids["middle-box-detection-v1"]["origin"]

    out = tmp_path / "run"
    run = flaneur(
        "run",
        "--tasks",
        "middle-box-detection-v1",
        "--agent",
        "middle-box,oracle",
        "--out",
        str(out),
        "--json",
        "--option",
        "middle-box.score=0.8",
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    entries = {r["agent"]: r for r in summary["runs"]}
    assert entries["middle-box"]["rows"] == entries["oracle"]["rows"] == 3
    oracle, middle = (entries[a]["task_metrics"]["ar"]["value"] for a in ("oracle", "middle-box"))
    assert 0.5 <= oracle <= 1.0 and middle <= oracle  # V-IRL's matching rule caps the oracle
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert {r["termination"] for r in rows} == {"completed"}

    typo = flaneur(
        "run",
        "--tasks",
        "middle-box-detection-v1",
        "--agent",
        "middle-box",
        "--out",
        str(tmp_path / "typo"),
        "--option",
        "middle-box.scor=0.8",
    )
    assert typo.returncode == 2
    assert "scor" in typo.stderr and "score" in typo.stderr and "Traceback" not in typo.stderr

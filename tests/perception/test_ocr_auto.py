"""``backend="auto"``: the fastest installed OCR backend that reads as ONNX Runtime reads,
measured once per machine and cached; the backend a run read with, in its rows and summary.

The calibration here runs on fake engines and a fake clock (deterministic); the real one,
with OpenVINO installed, is tested in ``test_ocr_backends.py`` (CI's extras lane)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flaneur.evaluate.summary import ocr_backend_of, run_entry
from flaneur.perception import ocr as ocr_module
from flaneur.perception import ocr_auto
from flaneur.perception.ocr import (
    OCR,
    OCRError,
    check_ocr_environment,
    note_ocr_use,
    recording_backends,
)
from flaneur.perception.ocr_auto import (
    CALIBRATION_SIGNS,
    AutoChoice,
    Trial,
    calibration_images,
    choose,
    found_signs,
    resolve_auto,
    sign_recall,
)

FLANEUR = Path(sys.executable).with_name("flaneur")
SIGNS = [list(signs) for signs in CALIBRATION_SIGNS]  # every sign read as drawn
MOST = [list(signs[:3]) for signs in CALIBRATION_SIGNS]  # the smallest sign of each missed


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FLANEUR_OCR_BACKEND", raising=False)
    monkeypatch.delenv("FLANEUR_OCR_THREADS", raising=False)
    ocr_auto.forget()
    yield
    ocr_auto.forget()


class FakeClock:
    """A clock that advances only when a fake engine reads."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeEngine:
    """Reads ``lines`` per view and takes ``seconds`` per calibration pass on ``clock``."""

    def __init__(self, clock: FakeClock, seconds: float, lines: list[list[str]]) -> None:
        self.clock, self.seconds, self.lines, self.reads = clock, seconds, lines, 0

    def read_many(self, images, text_score):
        self.reads += 1
        self.clock.now += self.seconds * len(images) / len(CALIBRATION_SIGNS)
        return [[(None, text, 0.9) for text in self.lines[k]] for k in range(len(images))]


def fake_loader(clock: FakeClock, table: dict[str, tuple[float, list[list[str]]]]):
    """``load`` for :func:`resolve_auto`: the engines of ``table`` (``{backend: (seconds,
    lines)}``); a backend missing from it fails to load; ``loaded`` counts the loads."""

    loaded: list[str] = []

    def load(backend: str, threads: int | None) -> FakeEngine:
        loaded.append(backend)
        if backend not in table:
            raise RuntimeError(f"{backend} is broken")
        return FakeEngine(clock, *table[backend])

    load.loaded = loaded  # type: ignore[attr-defined]
    return load


def _trial(backend: str, seconds: float | None, lines=SIGNS) -> Trial:
    return Trial(backend, seconds, [list(v) for v in lines])


# ------------------------------------------------------------------ the rules
def test_choose_takes_the_fastest_backend_that_reads_the_same():
    ref = _trial("onnxruntime", 1.0)
    assert choose([ref, _trial("openvino", 0.8)])[0] == "openvino"
    # within the 5 % margin: the reference stays
    backend, why = choose([ref, _trial("openvino", 0.97)])
    assert backend == "onnxruntime" and why == {"openvino": "not faster by the margin"}
    # faster but reading another text: not eligible
    other = [list(v) for v in SIGNS]
    other[1][2] = "Museum of Deslgn"
    backend, why = choose([ref, _trial("openvino", 0.5, other)])
    assert backend == "onnxruntime" and why["openvino"] == "read other texts than the reference"
    backend, why = choose([ref, Trial("openvino", None, error="RuntimeError: no plugin")])
    assert backend == "onnxruntime" and why["openvino"] == "failed: RuntimeError: no plugin"


def test_bf16_is_chosen_only_when_it_keeps_recall_and_is_clearly_faster():
    ref, f32 = _trial("onnxruntime", 1.0, MOST), _trial("openvino", 0.8, MOST)
    # other lines (a gained sign) but every sign the reference found: keeps recall
    assert choose([ref, f32, _trial("openvino-bf16", 0.5, SIGNS)])[0] == "openvino-bf16"
    # a sign the reference found is lost: recall lower, not eligible whatever its speed
    lost = [list(v) for v in MOST]
    lost[0] = lost[0][1:]
    backend, why = choose([ref, f32, _trial("openvino-bf16", 0.3, lost)])
    assert backend == "openvino" and why["openvino-bf16"].startswith("missed calibration signs")
    # not 10 % faster than the best exact backend: the exact one
    assert choose([ref, f32, _trial("openvino-bf16", 0.75, MOST)])[0] == "openvino"
    assert sign_recall(MOST) == pytest.approx(0.75) and sign_recall(SIGNS) == 1.0


def test_signs_are_matched_as_the_landmark_scorer_matches_names():
    misread = [["Stockrnann", "Apteekki", "Cafe Ekberg"], ["Pizzerla Luna"], []]
    assert found_signs(misread) == {"Stockmann", "Apteekki", "Cafe Ekberg", "Pizzeria Luna"}


def test_onnxruntime_reads_most_calibration_signs():
    images = calibration_images()
    assert [im.shape for im in images] == [(460, 800, 3)] * len(CALIBRATION_SIGNS)
    engine = ocr_auto.load_engine("onnxruntime", 1)
    lines = [[t for _, t, _ in found] for found in engine.read_many(images, 0.5)]
    assert sign_recall(lines) >= 0.75  # the largest three of each view at least


# ------------------------------------------------------------------ measured once, cached
def test_auto_measures_once_and_later_processes_read_the_cache_file():
    clock = FakeClock()
    load = fake_loader(clock, {"onnxruntime": (1.0, SIGNS), "openvino": (0.7, SIGNS)})
    backends = ["onnxruntime", "openvino"]
    first = resolve_auto(1, backends=backends, load=load, clock=clock, remember=False)
    assert first.backend == "openvino" and not first.from_cache
    assert first.engine is not None and first.engine.reads == 1 + ocr_auto.TIMED_PASSES
    assert first.record["trials"]["openvino"]["seconds"] == pytest.approx(0.7)
    assert load.loaded == backends
    (path,) = (Path(os.environ["FLANEUR_CACHE_DIR"]) / "ocr-backend").glob("*.json")
    written = json.loads(path.read_text())
    assert written["backend"] == "openvino" and written["key"]["threads"] == 1
    assert written["key"]["backends"] == backends and written["key"]["cpu"]

    def never(backend, threads):
        raise AssertionError("measured again")

    again = resolve_auto(1, backends=backends, load=never, remember=False)
    assert again.backend == "openvino" and again.from_cache and again.engine is None
    # another thread setting is another key: measured again
    load.loaded.clear()
    resolve_auto(2, backends=backends, load=load, clock=clock, remember=False)
    assert load.loaded == backends
    # this process remembers its answer without reading the file
    kept = resolve_auto(3, backends=backends, load=load, clock=clock)
    for stale in path.parent.glob("*.json"):
        stale.unlink()
    assert resolve_auto(3, backends=backends, load=never).backend == kept.backend


def test_a_damaged_cache_file_is_measured_again():
    clock = FakeClock()
    load = fake_loader(clock, {"onnxruntime": (1.0, SIGNS), "openvino": (0.7, SIGNS)})
    resolve_auto(1, backends=["onnxruntime", "openvino"], load=load, clock=clock, remember=False)
    (path,) = (Path(os.environ["FLANEUR_CACHE_DIR"]) / "ocr-backend").glob("*.json")
    path.write_text("{broken", encoding="utf-8")
    again = resolve_auto(
        1, backends=["onnxruntime", "openvino"], load=load, clock=clock, remember=False
    )
    assert not again.from_cache and json.loads(path.read_text())["backend"] == "openvino"


def test_a_cache_folder_that_cannot_be_written_costs_a_measurement_not_a_failure(
    monkeypatch, tmp_path
):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(blocked))
    clock = FakeClock()
    load = fake_loader(clock, {"onnxruntime": (1.0, SIGNS), "openvino": (0.7, SIGNS)})
    backends = ["onnxruntime", "openvino"]
    for _ in range(2):
        choice = resolve_auto(1, backends=backends, load=load, clock=clock, remember=False)
        assert choice.backend == "openvino" and not choice.from_cache
    assert load.loaded == backends * 2


def test_a_broken_backend_is_left_out():
    clock = FakeClock()
    load = fake_loader(clock, {"onnxruntime": (1.0, SIGNS)})
    choice = resolve_auto(
        None, backends=["onnxruntime", "openvino"], load=load, clock=clock, remember=False
    )
    assert choice.backend == "onnxruntime"
    assert choice.record["trials"]["openvino"]["error"] == "RuntimeError: openvino is broken"
    assert choice.record["not_chosen"]["openvino"].startswith("failed: RuntimeError")


def test_onnxruntime_alone_is_chosen_without_measuring(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)  # no openvino

    def never(backend, threads):
        raise AssertionError("measured")

    assert resolve_auto(None, load=never).backend == "onnxruntime"
    reader = OCR()
    assert (reader.backend, reader.backend_source) == ("onnxruntime", "auto")
    assert not (Path(os.environ["FLANEUR_CACHE_DIR"]) / "ocr-backend").exists()


def test_the_reader_uses_the_engine_the_calibration_loaded(monkeypatch):
    engine = object()
    chosen = AutoChoice("onnxruntime", {}, from_cache=False, engine=engine)
    monkeypatch.setattr(ocr_module, "resolve_auto", lambda threads: chosen)
    monkeypatch.setattr(ocr_module, "_ENGINES", {})
    reader = OCR(threads=3)
    assert reader.backend_source == "auto" and reader._load() is engine
    assert OCR(threads=3, det_limit_side_len=480)._load() is not engine  # other settings


# ------------------------------------------------------------------ the variable
def test_the_variable_forces_a_backend_and_a_bad_one_is_one_line(monkeypatch):
    monkeypatch.setenv("FLANEUR_OCR_BACKEND", "onnxruntime")
    reader = OCR()
    assert (reader.backend, reader.backend_source) == ("onnxruntime", "FLANEUR_OCR_BACKEND")
    monkeypatch.setenv("FLANEUR_OCR_BACKEND", "auto")
    monkeypatch.setattr(ocr_module, "resolve_auto", lambda threads: pytest.fail("resolved"))
    check_ocr_environment()  # checks the name only: nothing is measured before a run
    for bad in ("tensorrt", "AUTO", "onnxruntime,openvino"):
        monkeypatch.setenv("FLANEUR_OCR_BACKEND", bad)
        with pytest.raises(OCRError) as err:
            check_ocr_environment()
        said = str(err.value)
        assert "\n" not in said and said.startswith("FLANEUR_OCR_BACKEND must be one of auto,")
        assert repr(bad) in said
        with pytest.raises(OCRError, match="FLANEUR_OCR_BACKEND must be one of"):
            OCR()


# ------------------------------------------------------------------ rows and summary
def test_readers_note_their_backend_inside_a_recording_block(monkeypatch):
    monkeypatch.setenv("FLANEUR_OCR_BACKEND", "onnxruntime")
    outside = OCR()
    with recording_backends() as used:
        assert used == set()
        outside.read_many([])
        note_ocr_use(object())  # no backend: ignored
    assert used == {"onnxruntime"}
    note_ocr_use(outside)  # outside any block: nothing to note into
    rows = [
        {"termination": "stopped", "ocr_backend": "openvino"},
        {"termination": "stopped", "ocr_backend": "onnxruntime,openvino"},
        {"termination": "stopped"},
    ]
    assert ocr_backend_of(rows) == "onnxruntime,openvino"
    assert ocr_backend_of([{"termination": "stopped"}]) is None
    entry = run_entry("t", "explorer", "headings", "toy", rows[:1], 1)
    assert entry["ocr_backend"] == "openvino"
    assert "ocr_backend" not in run_entry("t", "forward", "turns", "toy", rows[2:], 1)


@pytest.mark.skipif(not FLANEUR.is_file(), reason="console script not installed")
def test_a_run_records_the_backend_auto_chose_in_its_rows_and_summary(tmp_path):
    from flaneur.env import toy_city, toy_episodes
    from flaneur.tasks.episode import write_episodes

    pack = toy_city().save(tmp_path / "toy")
    tasks = tmp_path / "walks.jsonl"
    write_episodes(toy_episodes()[:1], tasks)
    cache = Path(os.environ["FLANEUR_CACHE_DIR"])
    # the machine's measured choice, as a calibration would have left it: the run reads it
    installed = ocr_auto.installed_backends()
    chosen = installed[-1]
    if len(installed) > 1:
        key = ocr_auto.machine_key(None, installed)
        record = {"backend": chosen, "trials": {}, "key": key}
        ocr_auto.cache_path(key).write_text(json.dumps(record), encoding="utf-8")
    base = ["run", "--tasks", str(tasks), "--city", str(pack), "--scheme", "headings"]
    base += ["--progress", "none", "--json"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLANEUR_OCR_")}
    env["FLANEUR_CACHE_DIR"] = str(cache)
    for name, extra in (("ocr", ["--views", "synthetic", "--landmarks", "ocr"]), ("map", [])):
        out = tmp_path / name
        args = [str(FLANEUR), *base, "--agent", "explorer", *extra, "--out", str(out)]
        done = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        (entry,) = json.loads(done.stdout)["runs"]
        rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
        if name == "ocr":
            assert entry["ocr_backend"] == chosen and rows[0]["ocr_backend"] == chosen
        else:  # map landmarks: no OCR, nothing said
            assert "ocr_backend" not in entry and "ocr_backend" not in rows[0]

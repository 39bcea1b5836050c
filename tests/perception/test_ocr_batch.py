"""Batched OCR: one recognition batch for many views, shared results, settings checks."""

from __future__ import annotations

import asyncio

import pytest

from flaneur.perception.json_store import JsonStore
from flaneur.perception.landmarks.ocr import OCRLandmarks
from flaneur.perception.ocr import OCR, OCRError, clear_memory


def _views(views):
    return [views.view("n100_060", h) for h in (0.0, 45.0, 90.0, 135.0, 270.0)]


def test_read_many_reads_each_view_as_alone(views):
    images = _views(views)
    clear_memory()
    batch = OCR().read_many(images)
    alone = []
    for image in images:
        clear_memory()
        alone.append(OCR().read(image))
    assert any(batch)  # the Stockmann front is in view at 90 degrees
    for got, want in zip(batch, alone, strict=True):
        assert [b.text for b in got] == [b.text for b in want]
        assert [b.box for b in got] == [b.box for b in want]
        assert [b.score for b in got] == pytest.approx([b.score for b in want], abs=1e-4)


def test_readers_of_the_same_settings_share_results_and_models(views):
    image = views.view("n100_060", 90.0)
    clear_memory()
    first, second = OCR(), OCR()
    assert first.read(image) == second.read(image)
    assert first.runs == 1 and second.runs == 0  # the second consumer ran nothing
    assert first._load() is second._load()
    other = OCR(det_limit_side_len=480)  # other settings: own results
    other.read(image)
    assert other.runs == 1 and other.params["model"] == first.params["model"]


def test_detector_side_length_is_honoured(views):
    image = views.view("n100_060", 90.0).array()  # 800 x 460
    shapes = {
        side: OCR(det_limit_side_len=side)._load().det_input(image).shape
        for side in (480, 640, 960)
    }
    assert shapes == {480: (1, 3, 288, 480), 640: (1, 3, 384, 640), 960: (1, 3, 448, 800)}


def test_bad_settings_fail_with_one_line(monkeypatch):
    with pytest.raises(OCRError, match="det_limit_type must be 'max' or 'min'"):
        OCR(det_limit_type="long")
    with pytest.raises(OCRError, match="at least 32"):
        OCR(det_limit_side_len=8)
    monkeypatch.setenv("FLANEUR_OCR_THREADS", "two")
    with pytest.raises(OCRError, match="FLANEUR_OCR_THREADS must be a positive integer"):
        OCR()
    monkeypatch.setenv("FLANEUR_OCR_THREADS", "1")
    assert OCR().threads == 1 and OCR(threads=2).threads == 2


def test_score_views_matches_score_per_view(views):
    scorer = OCRLandmarks(OCR())
    images = _views(views)
    names = ["Stockmann", "Hotel Kämp"]
    clear_memory()
    together = scorer.score_views(images, names)
    assert together == [scorer.score(v, names) for v in images]
    assert any(o.visible for per in together for o in per)
    assert asyncio.run(scorer.aseen_in(images, names)) == scorer.seen_in(images, names)


def test_json_store_round_trip_and_damage(tmp_path):
    store = JsonStore(tmp_path / "sub")
    assert store.get("k") is None  # missing folder: a miss
    store.put("k", [{"a": 1}])
    assert store.get("k") == [{"a": 1}]
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["k.json"]  # no temporary left
    store.path("k").write_text('[{"a": ', encoding="utf-8")
    assert store.get("k") is None

"""OCR (PP-OCR through rapidocr) and OCRLandmarks on synthetic views."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PIL import Image

from flaneur.perception.landmarks.ocr import OCRLandmarks, text_candidates
from flaneur.perception.ocr import OCR, TextBox, clear_memory, image_digest
from flaneur.views.synthetic.lettering import render_text


def test_reads_a_sign(ocr):
    board = render_text("Stockmann", 44, (20, 20, 20), (250, 250, 245)).convert("RGB")
    canvas = Image.new("RGB", (400, 120), (200, 200, 200))
    canvas.paste(board, (40, 30))
    boxes = ocr.read(canvas)
    assert [b.text for b in boxes] == ["Stockmann"]
    x0, _, x1, _ = boxes[0].bbox
    assert 30 <= x0 < x1 <= 40 + board.width + 10 and boxes[0].score > 0.9
    assert ocr.read(np.asarray(canvas))[0].text == "Stockmann"  # arrays hash alike


def test_results_are_cached_by_pixels(tmp_path):
    img = Image.new("RGB", (64, 64), (255, 255, 255))
    clear_memory()
    disk = OCR(cache_dir=tmp_path)
    assert disk.read(img) == []
    assert disk.runs == 1
    assert len(list(tmp_path.glob("*.json"))) == 1
    clear_memory()
    fresh = OCR(cache_dir=tmp_path)  # a new process's reader: the disk copy answers
    for _ in range(100):
        assert fresh.read(img) == []
        assert disk.read(np.asarray(img)) == []  # arrays hash like their image
    assert fresh.runs == 0 and disk.runs == 1
    assert image_digest(img) == image_digest(np.asarray(img))
    (tmp_path / next(tmp_path.glob("*.json")).name).write_text("[{broken", encoding="utf-8")
    clear_memory()
    assert fresh.read(img) == [] and fresh.runs == 1  # a damaged file is read again


def test_ocr_landmarks_find_the_sign_and_its_direction(views, ocr):
    scorer = OCRLandmarks(ocr)
    view = views.view("n100_060", 90.0)  # faces the Stockmann shop front
    obs = {o.landmark: o for o in scorer.score(view, ["Stockmann", "Hotel Kämp", "Stockmann"])}
    assert list(obs) == ["Stockmann", "Hotel Kämp"]
    assert obs["Stockmann"].visible and obs["Stockmann"].score >= 0.8
    assert obs["Stockmann"].source == "ocr" and obs["Stockmann"].node == "n100_060"
    assert -30 <= obs["Stockmann"].relative_bearing <= 30
    assert not obs["Hotel Kämp"].visible
    t0 = time.perf_counter()
    scorer.score(views.view("n100_060", 90.0), ["Stockmann"])
    assert time.perf_counter() - t0 < 0.05  # seen before: cached


def test_text_candidates_join_split_names():
    a = TextBox("Akateeminen", ((0, 0), (100, 0), (100, 20), (0, 20)), 0.9)
    b = TextBox("Kirjakauppa", ((110, 2), (200, 2), (200, 22), (110, 22)), 0.9)
    c = TextBox("far away", ((600, 300), (700, 300), (700, 320), (600, 320)), 0.9)
    texts = [t for t, _ in text_candidates([a, b, c])]
    assert "Akateeminen Kirjakauppa" in texts and len(texts) == 4


@pytest.mark.parametrize("threshold", [0.8, 0.95])
def test_ocr_landmarks_threshold(views, ocr, threshold):
    scorer = OCRLandmarks(ocr, threshold=threshold)
    view = views.view("n100_060", 90.0)
    [obs] = scorer.score(view, ["Stockman"])  # one letter short: ratio 0.94
    assert obs.visible == (threshold <= 0.94)

"""OCR inference backends: ONNX Runtime (default) and OpenVINO (optional extra)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from flaneur.perception import ocr_auto
from flaneur.perception.ocr import OCR, OCRError, clear_memory
from flaneur.perception.ocr_engine import (
    BACKENDS,
    PPOCR,
    make_session,
    model_paths,
    model_version,
)

HAS_OPENVINO = importlib.util.find_spec("openvino") is not None
needs_openvino = pytest.mark.skipif(
    not HAS_OPENVINO, reason="the openvino extra is not installed (.ci/run installs it)"
)


def _images(views):
    return [views.view("n100_060", h) for h in (0.0, 90.0, 135.0)]


def test_backend_comes_from_the_argument_then_the_environment(monkeypatch):
    monkeypatch.setenv("FLANEUR_OCR_BACKEND", "onnxruntime")
    assert OCR().backend == "onnxruntime"
    monkeypatch.setenv("FLANEUR_OCR_BACKEND", "tensorrt")
    with pytest.raises(
        OCRError, match="FLANEUR_OCR_BACKEND must be one of auto, onnxruntime, openvino"
    ):
        OCR()
    assert OCR(backend="onnxruntime").backend == "onnxruntime"  # the argument wins
    with pytest.raises(OCRError, match=r"^backend must be one of"):
        OCR(backend="cuda")


def test_backends_key_their_results_apart():
    keys = {OCR._key(_fake_reader(backend), "digest") for backend in BACKENDS}
    assert len(keys) == len(BACKENDS)


def _fake_reader(backend: str):
    from flaneur.perception.ocr_engine import model_version

    reader = OCR.__new__(OCR)
    reader.params = {"det_limit_side_len": 960, "model": model_version(backend)}
    return reader


def test_missing_openvino_is_one_clear_line(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(
        OCRError, match=r"needs the openvino package: pip install 'flaneur\[openvino\]'"
    ):
        OCR(backend="openvino")
    monkeypatch.setenv("FLANEUR_OCR_BACKEND", "openvino-bf16")
    with pytest.raises(OCRError, match="'openvino-bf16' \\(FLANEUR_OCR_BACKEND\\)"):
        OCR()


def test_engine_and_session_reject_unknown_backends():
    with pytest.raises(ValueError, match="backend must be one of"):
        PPOCR(backend="cpu")
    with pytest.raises(ValueError, match="backend must be one of"):
        make_session(model_paths()["Det"], "cpu", 1)


@needs_openvino
def test_auto_measures_the_installed_backends_once_and_keeps_the_reference_readings(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path))
    ocr_auto.forget()
    installed = ocr_auto.installed_backends()
    assert installed[:2] == ["onnxruntime", "openvino"]
    assert ("openvino-bf16" in installed) == ocr_auto.cpu_has_bf16()
    choice = ocr_auto.resolve_auto(1, remember=False)
    trials = choice.record["trials"]
    assert set(trials) == set(installed) and choice.backend in installed
    assert choice.engine is not None and choice.engine.backend == choice.backend
    # OpenVINO in f32 reads what ONNX Runtime reads on the calibration views
    assert trials["openvino"]["readings"] == trials["onnxruntime"]["readings"]
    assert trials["onnxruntime"]["recall"] >= 0.75
    assert set(choice.record["not_chosen"]) == set(installed) - {choice.backend}  # each says why
    again = ocr_auto.resolve_auto(1, remember=False)
    assert again.from_cache and again.backend == choice.backend
    monkeypatch.delenv("FLANEUR_OCR_BACKEND", raising=False)
    monkeypatch.setattr(ocr_auto, "_CHOICES", {(1, None): again})
    reader = OCR(threads=1)
    assert (reader.backend, reader.backend_source) == (choice.backend, "auto")
    assert reader.params["model"] == model_version(choice.backend)
    ocr_auto.forget()


@needs_openvino
def test_openvino_reads_as_onnxruntime_reads(views):
    images = _images(views)
    clear_memory()
    reference = OCR(backend="onnxruntime", threads=1, cache_items=0).read_many(images)
    openvino = OCR(backend="openvino", threads=1, cache_items=0)
    got = openvino.read_many(images)
    assert openvino.runs == len(images) and any(reference)
    for mine, theirs in zip(got, reference, strict=True):
        assert [b.text for b in mine] == [b.text for b in theirs]
        assert np.allclose([b.box for b in mine], [b.box for b in theirs], atol=1.0)
        assert [b.score for b in mine] == pytest.approx([b.score for b in theirs], abs=2e-3)
    assert "openvino" in openvino.params["model"] and "f32" in openvino.params["model"]


@needs_openvino
def test_openvino_session_matches_onnxruntime_on_the_detector(views):
    from flaneur.perception.openvino_session import OpenVINOSession

    engine = PPOCR(threads=1)
    x = engine.det_input(views.view("n100_060", 90.0).array())
    path = model_paths()["Det"]
    name = engine.rapid.text_det.infer.session.get_inputs()[0].name
    want = make_session(path, "onnxruntime", 1, fold=False).run(None, {name: x})[0]
    session = OpenVINOSession(path, threads=1)
    assert [i.name for i in session.get_inputs()] == [name]
    got = session.run(None, {name: x})[0]
    assert got.shape == want.shape
    assert float(np.abs(got - want).max()) < 1e-3
    with pytest.raises(ValueError, match="precision must be one of"):
        OpenVINOSession(path, precision="int4")


@needs_openvino
def test_openvino_bf16_still_reads_the_sign(views):
    image = views.view("n100_060", 90.0)  # the Stockmann front
    clear_memory()
    reader = OCR(backend="openvino-bf16", threads=1, cache_items=0)
    texts = " ".join(b.text for b in reader.read(image))
    assert "Stockmann" in texts
    assert "bf16" in reader.params["model"]


@needs_openvino
def test_static_shapes_compile_per_shape_with_the_same_outputs(views, monkeypatch):
    from flaneur.perception import openvino_session
    from flaneur.perception.openvino_session import OpenVINOSession

    path = model_paths()["Det"]
    dynamic = OpenVINOSession(path, threads=1)
    static = OpenVINOSession(path, threads=1, static_shapes=True)
    name = dynamic.get_inputs()[0].name
    image = PPOCR(threads=1).det_input(views.view("n100_060", 90.0).array())
    assert static.compiled_shapes() == []
    got = static.run(None, {name: image})[0]
    assert float(np.abs(got - dynamic.run(None, {name: image})[0]).max()) < 1e-5
    assert static.compiled_shapes() == [(image.shape,)]
    monkeypatch.setattr(openvino_session, "STATIC_SHAPES_KEPT", 2)
    crops = [np.ascontiguousarray(image[..., :32, :w]) for w in (64, 96, 64, 128)]
    for crop in crops:
        got = static.run(None, {name: crop})[0]
        assert float(np.abs(got - dynamic.run(None, {name: crop})[0]).max()) < 1e-5
    # least recently used out: the view shape, then 96 (64 was used again in between)
    assert static.compiled_shapes() == [((1, 3, 32, 64),), ((1, 3, 32, 128),)]


@needs_openvino
def test_engine_compiles_only_the_detector_per_shape():
    engine = PPOCR(threads=1, backend="openvino")
    assert engine.rapid.text_det.infer.session.static_shapes
    assert not engine.rapid.text_rec.session.session.static_shapes

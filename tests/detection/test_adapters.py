"""The YOLO-World / YOLO and OWL-ViT adapters, run against stub libraries written here."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from PIL import Image

from flaneur.errors import FlaneurError
from flaneur.perception.detection import DetectionError, make_detector
from flaneur.views.base import View


def _view(colour=(10, 20, 30)) -> View:
    return View(Image.new("RGB", (64, 48), colour), "n1", 0.0)


class _Boxes:
    def __init__(self, xyxy, conf, cls):
        self.xyxy, self.conf, self.cls = np.array(xyxy), np.array(conf), np.array(cls)


class _Result:
    def __init__(self, names, boxes):
        self.names, self.boxes = names, boxes


@pytest.fixture
def stub_ultralytics(monkeypatch):
    calls = {"classes": [], "batches": []}

    class YOLOWorld:
        def __init__(self, path):
            calls["path"] = path
            self.classes = []

        def set_classes(self, classes):
            self.classes = classes
            calls["classes"].append(list(classes))

        def predict(self, images, conf, verbose):
            calls["batches"].append(len(images))
            names = dict(enumerate(self.classes))
            return [
                _Result(names, _Boxes([[1, 2, 11, 22], [5, 5, 6, 6]], [0.9, 0.3], [0, 0]))
                for _ in images
            ]

    class YOLO(YOLOWorld):
        def predict(self, images, conf, verbose):
            names = {0: "person", 1: "fire hydrant", 2: "bench"}
            return [
                _Result(names, _Boxes([[0, 0, 4, 4], [1, 1, 9, 9]], [0.8, 0.7], [0, 1]))
                for _ in images
            ]

    module = types.SimpleNamespace(YOLOWorld=YOLOWorld, YOLO=YOLO)
    monkeypatch.setitem(sys.modules, "ultralytics", module)
    return calls


def test_yolo_world_adapter_batches_and_maps_classes(stub_ultralytics, tmp_path):
    weights = tmp_path / "w.pt"
    weights.write_bytes(b"stub")
    det = make_detector("yolo-world", weights=str(weights), threshold=0.5)
    out = det.detect_batch([_view(), _view((1, 2, 3))], ["trash bin"])
    assert stub_ultralytics["batches"] == [2] and stub_ultralytics["classes"] == [["trash bin"]]
    assert [[(d.box, d.label, d.score) for d in r] for r in out] == [
        [((1.0, 2.0, 11.0, 22.0), "trash bin", 0.9)]
    ] * 2
    # cached: the model is not asked again, and a lower threshold sees the low box
    assert len(det.detect(_view(), ["trash bin"], threshold=0.1)) == 2
    assert stub_ultralytics["batches"] == [2]


def test_plain_yolo_keeps_requested_classes_by_taxonomy(stub_ultralytics, tmp_path):
    weights = tmp_path / "y.pt"
    weights.write_bytes(b"stub")
    det = make_detector("yolo", weights=str(weights), threshold=0.5)
    found = det.detect(_view(), ["hydrant"])
    assert [(d.label, d.score) for d in found] == [("hydrant", 0.7)]


def test_owlvit_adapter_with_stub_transformers(monkeypatch, tmp_path):
    import contextlib

    class Processor:
        def __call__(self, text, images, return_tensors):
            assert text == [["a photo of a bench", "a photo of a waste basket"]] * len(images)
            return {"n": len(images)}

        def post_process_object_detection(self, outputs, threshold, target_sizes):
            assert target_sizes == [(48, 64)] * outputs["n"]
            return [
                {
                    "boxes": np.array([[2.0, 3.0, 12.0, 13.0]]),
                    "scores": np.array([0.61]),
                    "labels": np.array([1]),
                }
                for _ in range(outputs["n"])
            ]

    class Model:
        def eval(self):
            return self

        def __call__(self, **inputs):
            return inputs

    transformers = types.SimpleNamespace(
        AutoProcessor=types.SimpleNamespace(from_pretrained=lambda path, **kw: Processor()),
        AutoModelForZeroShotObjectDetection=types.SimpleNamespace(
            from_pretrained=lambda path, **kw: Model()
        ),
    )
    torch = types.SimpleNamespace(no_grad=contextlib.nullcontext)
    monkeypatch.setitem(sys.modules, "transformers", transformers)
    monkeypatch.setitem(sys.modules, "torch", torch)
    det = make_detector("owlvit", weights=str(tmp_path), threshold=0.5)
    found = det.detect(_view(), ["bench", "waste_basket"])
    assert [(d.box, d.label, d.score) for d in found] == [
        ((2.0, 3.0, 12.0, 13.0), "waste_basket", 0.61)
    ]


def test_missing_weights_or_library_is_one_line(monkeypatch, tmp_path):
    with pytest.raises(FlaneurError, match="detector 'yolo-world': needs weights") as info:
        make_detector("yolo-world")
    assert "\n" not in str(info.value)
    with pytest.raises(DetectionError, match="weights not found"):
        make_detector("owlvit", weights=str(tmp_path / "nothing"))
    monkeypatch.setitem(sys.modules, "ultralytics", None)  # import fails
    (tmp_path / "w.pt").write_bytes(b"x")
    det = make_detector("yolo-world", weights=str(tmp_path / "w.pt"))
    with pytest.raises(DetectionError, match="pip install ultralytics") as info:
        det.detect(_view(), ["bench"])
    assert "\n" not in str(info.value)
    monkeypatch.setitem(sys.modules, "transformers", None)
    owl = make_detector("owlvit", weights=str(tmp_path))
    with pytest.raises(DetectionError, match="pip install torch transformers"):
        owl.detect(_view(), ["bench"])

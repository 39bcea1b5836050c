"""Real open-vocabulary detectors behind the same interface, for users with weights.

* :class:`YOLOWorldDetector` — Ultralytics YOLO-World (open vocabulary: the labels are set
  as its classes), and :class:`YOLODetector`, a plain Ultralytics YOLO model (closed
  vocabulary: boxes whose class name is a requested label, or normalises to the same
  taxonomy category, are kept);
* :class:`OwlViTDetector` — OWL-ViT / OWLv2 through Hugging Face ``transformers``.

The libraries are imported on first use and the weights come from a path the user gives;
nothing is downloaded. A missing library or weights file is a one-line
:class:`~flaneur.perception.detection.base.DetectionError` naming what to install or pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np

from flaneur.options import Range, option
from flaneur.perception.detection.base import Detection, DetectionError, Detector, pixel_box
from flaneur.views.base import View
from flaneur.world.taxonomy import normalize_category


def _weights(path: str | Path | None, what: str) -> Path:
    if path is None or str(path).strip() == "":
        raise DetectionError(
            f"the {what} detector needs weights: pass weights=PATH (the model file or folder)"
        )
    weights = Path(path).expanduser()
    if not weights.exists():
        raise DetectionError(f"{what} weights not found: {weights} (pass weights=PATH)")
    return weights


@dataclass(frozen=True)
class ModelOptions:
    """Options of the detectors that run a real model from weights."""

    weights: str = option("", "path of the model's weights (file or folder); required")
    threshold: Annotated[float, Range(0.0, 1.0)] = option(0.55, "minimum score of a box")
    min_score: Annotated[float, Range(0.0, 1.0)] = option(
        0.05, "scores below this are not even kept in the cache"
    )

    def __post_init__(self) -> None:
        if not self.weights.strip():
            raise DetectionError("needs weights: pass weights=PATH (the model file or folder)")


class YOLOWorldDetector(Detector):
    """Ultralytics YOLO-World on views (the labels are set as its classes).

    Parameters
    ----------
    weights
        Path of the model file (``yolov8s-worldv2.pt``; ``yolov8n.pt`` for
        :class:`YOLODetector`).
    min_score
        Scores below this are not even kept in the cache.
    """

    name = "yolo-world"
    Options = ModelOptions
    open_vocabulary = True

    def __init__(
        self, weights: str | Path | None = None, *, min_score: float = 0.05, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.weights = _weights(weights, "YOLO-World" if self.open_vocabulary else "YOLO")
        self.min_score = min_score
        self._model: Any = None
        self._classes: tuple[str, ...] | None = None

    def settings(self) -> dict[str, Any]:
        return {"weights": str(self.weights), "open": self.open_vocabulary, "min": self.min_score}

    def _load(self) -> Any:
        if self._model is None:
            try:
                # optional: installed by the user
                import ultralytics
            except ImportError:
                raise DetectionError(
                    f"the {self.name} detector needs Ultralytics: pip install ultralytics"
                ) from None
            cls = ultralytics.YOLOWorld if self.open_vocabulary else ultralytics.YOLO
            self._model = cls(str(self.weights))
        return self._model

    def _detect_many(self, views: Sequence[View], labels: tuple[str, ...]) -> list[list[Detection]]:
        model = self._load()
        if self.open_vocabulary and self._classes != labels:
            model.set_classes(list(labels))
            self._classes = labels
        wanted = {normalize_category(lab) or lab.lower(): lab for lab in labels}
        results = model.predict([v.image for v in views], conf=self.min_score, verbose=False)
        out = []
        for result in results:
            names = result.names
            boxes = result.boxes
            xyxy = np.asarray(_numpy(boxes.xyxy), dtype=float).reshape(-1, 4)
            conf = np.asarray(_numpy(boxes.conf), dtype=float).reshape(-1)
            cls = np.asarray(_numpy(boxes.cls), dtype=int).reshape(-1)
            dets = []
            for box, score, k in zip(xyxy, conf, cls, strict=True):
                name = str(names[int(k)])
                label = name if name in labels else wanted.get(normalize_category(name) or name)
                if label is None:
                    continue
                dets.append(Detection(pixel_box(box), label, float(score)))
            out.append(dets)
        return out


class YOLODetector(YOLOWorldDetector):
    """A plain (closed-vocabulary) Ultralytics YOLO model: boxes whose class name is a
    requested label, or normalises to the same taxonomy category, are kept."""

    name = "yolo"
    open_vocabulary = False


def _numpy(value: Any) -> Any:
    """A torch tensor (on any device) or an array as something numpy reads."""
    if hasattr(value, "cpu"):
        value = value.cpu()
    if hasattr(value, "numpy"):
        return value.numpy()
    return value


class OwlViTDetector(Detector):
    """OWL-ViT (or OWLv2) open-vocabulary detection through ``transformers``.

    Parameters
    ----------
    weights
        A local model folder (``save_pretrained`` output, e.g. of
        ``google/owlvit-base-patch32``).
    min_score
        Scores below this are not even kept in the cache.
    """

    name = "owlvit"
    Options = ModelOptions

    def __init__(
        self, weights: str | Path | None = None, *, min_score: float = 0.05, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.weights = _weights(weights, "OWL-ViT")
        self.min_score = min_score
        self._parts: tuple[Any, Any, Any] | None = None

    def settings(self) -> dict[str, Any]:
        return {"weights": str(self.weights), "min": self.min_score}

    def _load(self) -> tuple[Any, Any, Any]:
        if self._parts is None:
            try:
                # optional extra flaneur[clip]
                import torch
                import transformers
            except ImportError:
                raise DetectionError(
                    "the owlvit detector needs PyTorch and transformers: "
                    "pip install torch transformers"
                ) from None
            processor = transformers.AutoProcessor.from_pretrained(str(self.weights))
            model = transformers.AutoModelForZeroShotObjectDetection.from_pretrained(
                str(self.weights)
            )
            model.eval()
            self._parts = (torch, processor, model)
        return self._parts

    def _detect_many(self, views: Sequence[View], labels: tuple[str, ...]) -> list[list[Detection]]:
        torch, processor, model = self._load()
        images = [v.image.convert("RGB") for v in views]
        prompts = [[f"a photo of a {lab.replace('_', ' ')}" for lab in labels]] * len(images)
        inputs = processor(text=prompts, images=images, return_tensors="pt")
        with torch.no_grad():
            outputs = model(**inputs)
        sizes = [(im.size[1], im.size[0]) for im in images]
        results = processor.post_process_object_detection(
            outputs, threshold=self.min_score, target_sizes=sizes
        )
        out = []
        for result in results:
            boxes = np.asarray(_numpy(result["boxes"]), dtype=float).reshape(-1, 4)
            scores = np.asarray(_numpy(result["scores"]), dtype=float).reshape(-1)
            ks = np.asarray(_numpy(result["labels"]), dtype=int).reshape(-1)
            out.append(
                [
                    Detection(pixel_box(box), labels[int(k)], float(s))
                    for box, s, k in zip(boxes, scores, ks, strict=True)
                ]
            )
        return out

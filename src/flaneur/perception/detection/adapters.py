"""Real open-vocabulary detectors behind the same interface, for users with weights.

* :class:`YOLOWorldDetector` — Ultralytics YOLO-World (open vocabulary: the labels are set
  as its classes), and :class:`YOLODetector`, a plain Ultralytics YOLO model (closed
  vocabulary: boxes whose class name is a requested label, or normalises to the same
  taxonomy category, are kept);
* :class:`OwlViTDetector` — OWL-ViT / OWLv2 through Hugging Face ``transformers``;
* :class:`GroundingDinoDetector` — Grounding DINO through ``transformers``.

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
from numpy.typing import NDArray

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


def view_boxes(boxes: Any, width: int, height: int) -> NDArray[np.float64]:
    """``(n, 4)`` pixel boxes ``(x0, y0, x1, y1)`` clipped to a ``width`` x ``height``
    view; a box left with no area (it lay outside the view, as OWLv2's boxes in the padding
    below or right of a view can) becomes NaN, for the caller to drop."""
    out = np.asarray(_numpy(boxes), dtype=float).reshape(-1, 4).copy()
    out[:, 0::2] = np.clip(out[:, 0::2], 0.0, float(width))
    out[:, 1::2] = np.clip(out[:, 1::2], 0.0, float(height))
    empty = (out[:, 2] <= out[:, 0]) | (out[:, 3] <= out[:, 1])
    out[empty] = np.nan
    return out


def _kept(
    boxes: NDArray[np.float64], scores: Any, ks: Any, labels: Sequence[str]
) -> list[Detection]:
    scores = np.asarray(_numpy(scores), dtype=float).reshape(-1)
    ks = np.asarray(_numpy(ks), dtype=int).reshape(-1)
    return [
        Detection(pixel_box(box), labels[int(k)], float(s))
        for box, s, k in zip(boxes, scores, ks, strict=True)
        if not np.isnan(box[0])
    ]


class OwlViTDetector(Detector):
    """OWL-ViT or OWLv2 open-vocabulary detection through ``transformers``.

    Each label is asked as ``"a photo of a <label>"`` (underscores as spaces); a box's score
    is the sigmoid of its best label's logit, its label that label (transformers'
    post-processing, which also scales OWLv2's boxes from the padded square to the view);
    boxes are clipped to the view and those left outside it dropped.

    Parameters
    ----------
    weights
        A local model folder (``save_pretrained`` output of the model and its processor, e.g.
        of ``google/owlvit-base-patch32`` or ``google/owlv2-base-patch16-ensemble``); read
        with ``local_files_only``, so nothing is downloaded.
    min_score
        Scores below this are not even kept in the cache.
    batch_size
        Views given to the model at once.
    """

    name = "owlvit"
    Options = ModelOptions
    what = "OWL-ViT"

    def __init__(
        self,
        weights: str | Path | None = None,
        *,
        min_score: float = 0.05,
        batch_size: int = 8,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.weights = _weights(weights, self.what)
        self.min_score = min_score
        self.batch_size = max(1, int(batch_size))
        self._parts: tuple[Any, Any, Any] | None = None

    def settings(self) -> dict[str, Any]:
        return {"weights": str(self.weights), "min": self.min_score}

    def _load(self) -> tuple[Any, Any, Any]:
        if self._parts is None:
            try:
                # lazy: optional extra flaneur[vision] (torch and transformers take ~5 s)
                import torch
                import transformers
            except ImportError:
                raise DetectionError(
                    f"the {self.name} detector needs PyTorch and transformers: "
                    "pip install torch transformers (or flaneur[vision])"
                ) from None
            path = str(self.weights)
            processor = transformers.AutoProcessor.from_pretrained(path, local_files_only=True)
            model = transformers.AutoModelForZeroShotObjectDetection.from_pretrained(
                path, local_files_only=True
            )
            model.eval()
            self._parts = (torch, processor, model)
        return self._parts

    def _detect_many(self, views: Sequence[View], labels: tuple[str, ...]) -> list[list[Detection]]:
        out: list[list[Detection]] = []
        for start in range(0, len(views), self.batch_size):
            out.extend(self._detect_batch(views[start : start + self.batch_size], labels))
        return out

    def _detect_batch(
        self, views: Sequence[View], labels: tuple[str, ...]
    ) -> list[list[Detection]]:
        torch, processor, model = self._load()
        images = [v.image.convert("RGB") for v in views]
        prompts = [[f"a photo of a {lab.replace('_', ' ')}" for lab in labels]] * len(images)
        inputs = processor(text=prompts, images=images, return_tensors="pt")
        with torch.no_grad():
            outputs = model(**inputs)
        sizes = [(im.size[1], im.size[0]) for im in images]
        # the name of newer transformers (5.x has only it), else the older one
        post = getattr(processor, "post_process_grounded_object_detection", None)
        post = post or processor.post_process_object_detection
        results = post(outputs, threshold=self.min_score, target_sizes=sizes)
        return [
            _kept(view_boxes(r["boxes"], *im.size), r["scores"], r["labels"], labels)
            for r, im in zip(results, images, strict=True)
        ]


def grounding_prompt(labels: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Grounding DINO's text for ``labels`` and each label's character span in it:
    lower-case phrases ended by dots (``"trash bin. bench."``), underscores as spaces."""
    phrases = [" ".join(lab.replace("_", " ").lower().split()) for lab in labels]
    spans, pos = [], 0
    for phrase in phrases:
        spans.append((pos, pos + len(phrase)))
        pos += len(phrase) + 2
    return ". ".join(phrases) + ".", spans


def label_tokens(
    offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]], positions: int
) -> NDArray[np.float64]:
    """``(labels, positions)``: row ``k`` is 1 at the tokens inside label ``k``'s span
    (from the tokenizer's character offsets; special tokens have empty offsets)."""
    out = np.zeros((len(spans), positions))
    for t, (a, b) in enumerate(offsets[:positions]):
        for k, (lo, hi) in enumerate(spans):
            if b > a and lo <= a and b <= hi:
                out[k, t] = 1.0
    return out


def cxcywh_to_xyxy(boxes: Any, width: int, height: int) -> NDArray[np.float64]:
    """Boxes ``(cx, cy, w, h)`` relative to the image as pixel ``(x0, y0, x1, y1)``."""
    b = np.asarray(_numpy(boxes), dtype=float).reshape(-1, 4)
    half = b[:, 2:] / 2.0
    corners = np.concatenate([b[:, :2] - half, b[:, :2] + half], axis=1)
    return corners * np.array([width, height, width, height], dtype=float)


class GroundingDinoDetector(OwlViTDetector):
    """Grounding DINO open-set detection through ``transformers``.

    The labels are asked as one text (:func:`grounding_prompt`); a query's score for a
    label is the mean over the label's tokens of the sigmoid of the query's token logits
    (mmdetection's rule, so a label of several words needs all of them), its box's score
    and label those of its best label. Boxes (centre and size relative to the view) become
    pixel corners of the view, clipped to it.

    Parameters
    ----------
    weights
        A local model folder (``save_pretrained`` output of the model and its processor, e.g.
        of ``IDEA-Research/grounding-dino-tiny``); nothing is downloaded.
    min_score
        Scores below this are not even kept in the cache.
    batch_size
        Views given to the model at once.
    """

    name = "grounding-dino"
    what = "Grounding DINO"

    def _detect_batch(
        self, views: Sequence[View], labels: tuple[str, ...]
    ) -> list[list[Detection]]:
        torch, processor, model = self._load()
        images = [v.image.convert("RGB") for v in views]
        text, spans = grounding_prompt(labels)
        inputs = processor(images=images, text=[text] * len(images), return_tensors="pt")
        with torch.no_grad():
            outputs = model(**inputs)
        probs = np.asarray(_numpy(torch.sigmoid(outputs.logits)), dtype=float)
        offsets = processor.tokenizer(text, return_offsets_mapping=True)["offset_mapping"]
        tokens = label_tokens(offsets, spans, probs.shape[-1])
        per_label = (
            probs @ tokens.T / np.maximum(tokens.sum(axis=1), 1.0)
        )  # (views, queries, labels)
        out = []
        for k, im in enumerate(images):
            scores, ks = per_label[k].max(axis=1), per_label[k].argmax(axis=1)
            keep = scores >= self.min_score
            boxes = view_boxes(cxcywh_to_xyxy(outputs.pred_boxes[k], *im.size), *im.size)
            out.append(_kept(boxes[keep], scores[keep], ks[keep], labels))
        return out

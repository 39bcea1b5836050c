"""The PP-OCR pipeline behind :class:`flaneur.perception.ocr.OCR`, run on many images at once.

``rapidocr-onnxruntime`` ships the PP-OCRv4 detection and recognition models and their
pre- and post-processing; its ``RapidOCR.__call__`` reads one image at a time. This module
drives the same ONNX sessions and the same post-processing for a batch of images:

1. every image is detected on its own (DB text detector, input scaled so its longer side
   is ``det_limit_side_len``), its boxes sorted top to bottom and cropped as rapidocr does;
2. the crops of *all* images go to the recogniser together, in batches of crops padded to
   the same width.

Each crop is padded to a width that depends on that crop alone (its own aspect ratio,
rounded up to :data:`REC_WIDTH_STEP` pixels, at least the model's 320), never on the other
crops in its batch, so what a view reads does not depend on which views were read with it
(rapidocr pads a batch to its widest crop, so there it did).

:class:`PPOCR` also keeps the process CPU time spent in each stage (``timings``), which
``benchmarks/views.py`` reports as the perception breakdown.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

REC_WIDTH_STEP = 32
"""Crops are padded to a multiple of this many pixels (at the recogniser's 48-pixel height)."""
REC_BATCH = 6
"""At most this many crops of one width go through the recogniser in one run."""


def model_version() -> str:
    """The OCR models' identity, part of every cache key of OCR results."""
    try:
        lib = version("rapidocr-onnxruntime")
    except PackageNotFoundError:  # pragma: no cover - a dependency
        lib = "unknown"
    return f"rapidocr-onnxruntime {lib}: PP-OCRv4 det + rec, rec width step {REC_WIDTH_STEP}"


@dataclass
class StageTimes:
    """Process CPU seconds spent per stage, and how many images and crops went through."""

    seconds: dict[str, float] = field(
        default_factory=lambda: {"detect": 0.0, "crop": 0.0, "classify": 0.0, "recognise": 0.0}
    )
    images: int = 0
    crops: int = 0

    def add(self, stage: str, since: float) -> float:
        """Add the CPU time since ``since`` to ``stage``; return the time now."""
        now = time.process_time()
        self.seconds[stage] += now - since
        return now

    def reset(self) -> None:
        """Start counting again."""
        for key in self.seconds:
            self.seconds[key] = 0.0
        self.images = self.crops = 0


def session_options(threads: int | None) -> Any:
    """ONNX Runtime options of the OCR sessions: ``threads`` intra-op threads (None: all
    cores), one inter-op thread, full graph optimisation, no spin-waiting."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = int(threads) if threads else 0
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def model_paths() -> dict[str, str]:
    """``{"Det" | "Cls" | "Rec": ONNX file}`` of the models rapidocr ships."""
    from rapidocr_onnxruntime.main import DEFAULT_CFG_PATH
    from rapidocr_onnxruntime.utils import read_yaml, update_model_path

    config = update_model_path(read_yaml(DEFAULT_CFG_PATH))
    return {part: str(config[part]["model_path"]) for part in ("Det", "Cls", "Rec")}


def _session(path: str, options: Any) -> Any:
    """An ONNX Runtime CPU session of the model at ``path``."""
    import onnxruntime as ort

    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


class PPOCR:
    """PP-OCR detection and recognition over many images (the models load on first use).

    Parameters
    ----------
    det_limit_side_len, det_limit_type
        Detector input size (see :class:`flaneur.perception.ocr.OCR`).
    use_cls
        Run the text-direction classifier on the crops.
    threads
        ONNX Runtime intra-op threads of each session (None: all cores).
    """

    def __init__(
        self,
        *,
        det_limit_side_len: int = 640,
        det_limit_type: str = "max",
        use_cls: bool = False,
        threads: int | None = None,
    ) -> None:
        from rapidocr_onnxruntime import RapidOCR

        self.rapid = RapidOCR(
            det_limit_side_len=det_limit_side_len,
            det_limit_type=det_limit_type,
            use_cls=use_cls,
            print_verbose=False,
        )
        # rapidocr's own sessions ignore per-module thread settings and disable the memory
        # arena; ours run with the threads asked for, the arena on and no spin-waiting
        # (idle threads burning CPU hurt every other process on a shared machine)
        options = session_options(threads)
        paths = model_paths()
        self.rapid.text_det.infer.session = _session(paths["Det"], options)
        self.rapid.text_rec.session.session = _session(paths["Rec"], options)
        if use_cls:
            self.rapid.text_cls.infer.session = _session(paths["Cls"], options)
        self.threads = threads
        self.use_cls = use_cls
        self.det_limit_side_len = det_limit_side_len
        self.det_limit_type = det_limit_type
        self.lock = threading.Lock()  # the sessions are shared: one batch at a time
        self.timings = StageTimes()

    # ------------------------------------------------------------------ detection
    def _det_input(self, img: np.ndarray) -> np.ndarray:
        """The detector's input: resized so its longer (``"max"``) or shorter (``"min"``)
        side is ``det_limit_side_len`` (never enlarged with ``"max"``), both sides
        multiples of 32, scaled to [-1, 1].

        rapidocr's own detector replaces a ``"max"`` limit below 960 by 960, so before
        this pipeline the setting did nothing for views up to 960 pixels wide; it is
        honoured here (``det_limit_side_len=960`` reads as rapidocr read).
        """
        from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

        prep = DetPreProcess(self.det_limit_side_len, self.det_limit_type)
        resized = prep.resize(img)
        scaled = resized.astype(np.float32) * np.float32(2.0 / 255.0) - np.float32(1.0)
        return np.ascontiguousarray(scaled.transpose(2, 0, 1)[None])

    def detect(self, img: np.ndarray) -> list[np.ndarray]:
        """Text boxes (4x2 corner arrays) of a BGR image, sorted as rapidocr sorts them."""
        det = self.rapid.text_det
        pred = det.infer(self._det_input(img))[0]
        boxes, _ = det.postprocess_op(pred, img.shape[:2])
        boxes = det.filter_tag_det_res(boxes, img.shape[:2])
        if len(boxes) == 0:
            return []
        return list(self.rapid.sorted_boxes(boxes))

    # ------------------------------------------------------------------ recognition
    def _rec_input(self, crop: np.ndarray) -> np.ndarray:
        """One crop resized to the recogniser's height and padded to its own width."""
        import cv2

        _, height, min_width = self.rapid.text_rec.rec_image_shape
        h, w = crop.shape[:2]
        resized_w = max(1, math.ceil(height * w / float(h)))
        width = max(min_width, REC_WIDTH_STEP * math.ceil(resized_w / REC_WIDTH_STEP))
        resized = cv2.resize(crop, (resized_w, height)).astype(np.float32)
        out = np.zeros((3, height, width), dtype=np.float32)
        out[:, :, :resized_w] = resized.transpose(2, 0, 1) * np.float32(2.0 / 255.0) - 1.0
        return out

    def recognise(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """``(text, confidence)`` of each crop, batched by padded width."""
        rec = self.rapid.text_rec
        inputs = [self._rec_input(c) for c in crops]
        groups: dict[int, list[int]] = {}
        for i, arr in enumerate(inputs):
            groups.setdefault(arr.shape[2], []).append(i)
        out: list[tuple[str, float]] = [("", 0.0)] * len(crops)
        for members in groups.values():
            for start in range(0, len(members), REC_BATCH):
                chunk = members[start : start + REC_BATCH]
                preds = rec.session(np.stack([inputs[i] for i in chunk]))[0]
                for i, (text, score, *_) in zip(chunk, rec.postprocess_op(preds), strict=True):
                    out[i] = (str(text), float(score))
        return out

    # ------------------------------------------------------------------ pipeline
    def read_many(
        self, images: Sequence[np.ndarray], text_score: float
    ) -> list[list[tuple[np.ndarray, str, float]]]:
        """``(box, text, score)`` lines of each RGB image, top to bottom, left to right.

        Boxes are in the image's own pixels; lines below ``text_score`` are dropped.
        """
        import cv2

        rapid = self.rapid
        with self.lock:
            t = time.process_time()
            per_image: list[tuple[list[np.ndarray], dict[str, Any], tuple[int, int]]] = []
            crops: list[np.ndarray] = []
            for rgb in images:
                img = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR)
                raw_h, raw_w = img.shape[:2]
                img, ratio_h, ratio_w = rapid.preprocess(img)
                record: dict[str, Any] = {"preprocess": {"ratio_h": ratio_h, "ratio_w": ratio_w}}
                img, record = rapid.maybe_add_letterbox(img, record)
                t = self.timings.add("crop", t)
                boxes = self.detect(img)
                t = self.timings.add("detect", t)
                if boxes:
                    crops.extend(rapid.get_crop_img_list(img, boxes))
                per_image.append((boxes, record, (raw_h, raw_w)))
                t = self.timings.add("crop", t)
            if crops and self.use_cls:
                crops, _, _ = rapid.text_cls(crops)
                t = self.timings.add("classify", t)
            texts = self.recognise(crops) if crops else []
            t = self.timings.add("recognise", t)
            self.timings.images += len(images)
            self.timings.crops += len(crops)
        out: list[list[tuple[np.ndarray, str, float]]] = []
        k = 0
        for boxes, record, (raw_h, raw_w) in per_image:
            lines = []
            if boxes:
                origin = rapid._get_origin_points(boxes, record, raw_h, raw_w)
                for box, (text, score) in zip(origin, texts[k : k + len(boxes)], strict=True):
                    if score >= text_score:
                        lines.append((box, text, score))
                k += len(boxes)
            out.append(lines)
        return out

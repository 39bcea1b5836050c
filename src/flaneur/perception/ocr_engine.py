"""The PP-OCR pipeline behind :class:`flaneur.perception.ocr.OCR`, run on many images at once.

``rapidocr-onnxruntime`` ships the PP-OCRv4 detection and recognition models and their
pre- and post-processing; its ``RapidOCR.__call__`` reads one image at a time. This module
drives the same ONNX sessions and the same post-processing for a batch of images:

1. every image is detected on its own (DB text detector, input scaled so its longer side
   is at most ``det_limit_side_len``), its boxes sorted top to bottom and cropped as
   rapidocr does;
2. the crops of each image are recognised as rapidocr recognises them (see
   :meth:`PPOCR.recognise` for why the crops of several images are not pooled).

The batch holds the engine's lock once and runs on ONNX sessions of its own (the threads
asked for, the memory arena on, no spin-waiting), built from the shipped models with their
graphs rewritten into an equivalent, cheaper form (:mod:`flaneur.perception.onnx_fold`:
the export's per-layer scalar affine blocks folded into the convolutions, hard-swish as one
gate). What an image reads does not depend on the other images of the batch, and equals
rapidocr's own reading of it for the same settings (up to float rounding).

The sessions are ONNX Runtime's by default (``backend="onnxruntime"``). With the optional
``openvino`` package, ``backend="openvino"`` compiles the shipped models with OpenVINO's CPU
plugin instead (:mod:`flaneur.perception.openvino_session`; same readings up to float
rounding; the detector compiled for each input shape it meets), and ``"openvino-bf16"``
lets it compute in bfloat16 (faster on CPUs with AMX or AVX-512 BF16, approximate).

:class:`PPOCR` also keeps the process CPU time spent in each stage (``timings``), which
``benchmarks/views.py`` reports as the perception breakdown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import cv2
import numpy as np
import onnxruntime as ort

from flaneur.perception.onnx_fold import FOLD_VERSION, folded_model_bytes
from flaneur.perception.openvino_session import OpenVINOSession, openvino_version

BACKENDS = ("onnxruntime", "openvino", "openvino-bf16")
"""The inference backends of the OCR models (see the module's docstring)."""
OPENVINO_PRECISION = {"openvino": "f32", "openvino-bf16": "bf16"}
"""The OpenVINO backends' inference precision hints."""


def model_version(backend: str = "onnxruntime") -> str:
    """The OCR models' identity under ``backend``, part of every cache key of OCR results."""
    try:
        lib = version("rapidocr-onnxruntime")
    except PackageNotFoundError:  # pragma: no cover - a dependency
        lib = "unknown"
    models = f"rapidocr-onnxruntime {lib}: PP-OCRv4 det + rec"
    if backend == "onnxruntime":
        return f"{models}, folded v{FOLD_VERSION}"
    precision = OPENVINO_PRECISION[backend]
    return f"{models}, openvino {openvino_version()} {precision}, detector static shapes"


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

    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = int(threads) if threads else 0
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def model_paths() -> dict[str, str]:
    """``{"Det" | "Cls" | "Rec": ONNX file}`` of the models rapidocr ships."""
    # lazy: rapidocr takes 0.13 s to import
    from rapidocr_onnxruntime.main import DEFAULT_CFG_PATH
    from rapidocr_onnxruntime.utils import read_yaml, update_model_path

    config = update_model_path(read_yaml(DEFAULT_CFG_PATH))
    return {part: str(config[part]["model_path"]) for part in ("Det", "Cls", "Rec")}


def _session(path: str, options: Any, *, fold: bool = True) -> Any:
    """An ONNX Runtime CPU session of the model at ``path``, its graph rewritten by
    :func:`~flaneur.perception.onnx_fold.fold_model` unless ``fold`` is False."""

    model: str | bytes = folded_model_bytes(path)[0] if fold else path
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def make_session(
    path: str,
    backend: str,
    threads: int | None,
    *,
    fold: bool = True,
    static_shapes: bool = False,
) -> Any:
    """A session of the model at ``path`` under ``backend`` (one of :data:`BACKENDS`), with
    ``threads`` inference threads (None: all cores).

    ``fold`` rewrites the graph first (ONNX Runtime only); ``static_shapes`` compiles the
    model once per input shape (OpenVINO only: see
    :class:`~flaneur.perception.openvino_session.OpenVINOSession`).

    Raises
    ------
    ValueError
        ``backend`` is not one of :data:`BACKENDS`.
    ImportError
        The backend's package is not installed (an OpenVINO backend without ``openvino``).
    """
    if backend == "onnxruntime":
        return _session(path, session_options(threads), fold=fold)
    if backend in OPENVINO_PRECISION:
        return OpenVINOSession(
            path,
            threads=threads,
            precision=OPENVINO_PRECISION[backend],
            static_shapes=static_shapes,
        )
    raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")


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
    fold_graphs
        Run the models with their graphs rewritten by
        :func:`~flaneur.perception.onnx_fold.fold_model` (the same function, computed in
        about half the time; False runs the shipped graphs, for comparison). ONNX Runtime
        only: OpenVINO fuses the shipped graphs itself.
    backend
        One of :data:`BACKENDS`: ``"onnxruntime"`` (default), ``"openvino"`` or
        ``"openvino-bf16"`` (needs ``pip install 'flaneur[openvino]'``).
    """

    def __init__(
        self,
        *,
        det_limit_side_len: int = 960,
        det_limit_type: str = "max",
        use_cls: bool = False,
        threads: int | None = None,
        fold_graphs: bool = True,
        backend: str = "onnxruntime",
    ) -> None:
        # lazy: rapidocr takes 0.13 s to import
        from rapidocr_onnxruntime import RapidOCR

        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")

        self.rapid = RapidOCR(
            det_limit_side_len=det_limit_side_len,
            det_limit_type=det_limit_type,
            use_cls=use_cls,
            print_verbose=False,
        )
        # rapidocr's own sessions ignore per-module thread settings and disable the memory
        # arena; ours run with the threads asked for, the arena on and no spin-waiting
        # (idle threads burning CPU hurt every other process on a shared machine)
        paths = model_paths()
        fold = fold_graphs and backend == "onnxruntime"
        # the detector's input size is the views' (a handful of shapes): OpenVINO compiles
        # it per shape, faster than its kernels for any shape; the recogniser's varies
        self.rapid.text_det.infer.session = make_session(
            paths["Det"], backend, threads, fold=fold, static_shapes=True
        )
        self.rapid.text_rec.session.session = make_session(
            paths["Rec"], backend, threads, fold=fold
        )
        if use_cls:
            self.rapid.text_cls.infer.session = make_session(
                paths["Cls"], backend, threads, fold=fold
            )
        self.backend = backend
        self.fold_graphs = fold
        self.threads = threads
        self.use_cls = use_cls
        self.det_limit_side_len = det_limit_side_len
        self.det_limit_type = det_limit_type
        self.lock = threading.Lock()  # the sessions are shared: one batch at a time
        self.timings = StageTimes()

    # ------------------------------------------------------------------ detection
    def det_input(self, img: np.ndarray) -> np.ndarray:
        """The detector's input: resized so its longer (``"max"``) or shorter (``"min"``)
        side is ``det_limit_side_len`` (never enlarged with ``"max"``), both sides
        multiples of 32, scaled to [-1, 1].

        rapidocr's own detector replaces a ``"max"`` limit below 960 by 960, so before
        this pipeline the setting did nothing for views up to 960 pixels wide; it is
        honoured here (``det_limit_side_len=960`` reads as rapidocr read).
        """
        # lazy: rapidocr takes 0.13 s to import
        from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

        prep = DetPreProcess(self.det_limit_side_len, self.det_limit_type)
        resized = prep.resize(img)
        scaled = resized.astype(np.float32) * np.float32(2.0 / 255.0) - np.float32(1.0)
        return np.ascontiguousarray(scaled.transpose(2, 0, 1)[None])

    def detect(self, img: np.ndarray) -> list[np.ndarray]:
        """Text boxes (4x2 corner arrays) of a BGR image, sorted as rapidocr sorts them."""
        det = self.rapid.text_det
        pred = det.infer(self.det_input(img))[0]
        boxes, _ = det.postprocess_op(pred, img.shape[:2])
        boxes = det.filter_tag_det_res(boxes, img.shape[:2])
        if len(boxes) == 0:
            return []
        return list(self.rapid.sorted_boxes(boxes))

    # ------------------------------------------------------------------ recognition
    def recognise(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """``(text, confidence)`` of each crop of one image.

        rapidocr's recogniser, unchanged: crops sorted by aspect ratio, in batches of six
        padded to the widest. A crop's padding depends on the other crops of its image, so
        the crops of several views are recognised per view, never pooled: pooling them
        would change what a view reads and measured no faster on one core
        (``docs/views.md``).
        """
        texts, _ = self.rapid.text_rec(list(crops), False)
        return [(str(t), float(s)) for t, s, *_ in texts]

    # ------------------------------------------------------------------ pipeline
    def read_many(
        self, images: Sequence[np.ndarray], text_score: float
    ) -> list[list[tuple[np.ndarray, str, float]]]:
        """``(box, text, score)`` lines of each RGB image, top to bottom, left to right.

        Boxes are in the image's own pixels; lines below ``text_score`` are dropped.
        """

        rapid = self.rapid
        with self.lock:
            t = time.process_time()
            per_image: list[tuple[list, dict[str, Any], tuple[int, int], list]] = []
            for rgb in images:
                img = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR)
                raw_h, raw_w = img.shape[:2]
                img, ratio_h, ratio_w = rapid.preprocess(img)
                record: dict[str, Any] = {"preprocess": {"ratio_h": ratio_h, "ratio_w": ratio_w}}
                img, record = rapid.maybe_add_letterbox(img, record)
                t = self.timings.add("crop", t)
                boxes = self.detect(img)
                t = self.timings.add("detect", t)
                texts: list[tuple[str, float]] = []
                if boxes:
                    crops = rapid.get_crop_img_list(img, boxes)
                    t = self.timings.add("crop", t)
                    if self.use_cls:
                        crops, _, _ = rapid.text_cls(crops)
                        t = self.timings.add("classify", t)
                    texts = self.recognise(crops)
                    t = self.timings.add("recognise", t)
                    self.timings.crops += len(crops)
                per_image.append((boxes, record, (raw_h, raw_w), texts))
            self.timings.images += len(images)
        out: list[list[tuple[np.ndarray, str, float]]] = []
        for boxes, record, (raw_h, raw_w), texts in per_image:
            lines = []
            if boxes:
                origin = rapid._get_origin_points(boxes, record, raw_h, raw_w)
                for box, (text, score) in zip(origin, texts, strict=True):
                    if score >= text_score:
                        lines.append((box, text, score))
            out.append(lines)
        return out

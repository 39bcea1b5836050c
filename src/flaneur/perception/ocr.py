"""Text in images: PP-OCR through ``rapidocr-onnxruntime`` (the models ship in the wheel).

Results are cached by a hash of the image pixels, so a view seen before costs a hash and a
dictionary lookup.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from flaneur.errors import FlaneurError
from flaneur.views.base import View, pixel_digest


class OCRError(FlaneurError):
    """The OCR engine is missing or failed."""


@dataclass(frozen=True)
class TextBox:
    """One line of text found in an image.

    Attributes
    ----------
    text
        The recognised text.
    box
        Four corner points ``((x, y), ...)`` in pixels, clockwise from the top left.
    score
        Recognition confidence in [0, 1].
    """

    text: str
    box: tuple[tuple[float, float], ...]
    score: float

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """Axis-aligned ``(x0, y0, x1, y1)``."""
        xs = [p[0] for p in self.box]
        ys = [p[1] for p in self.box]
        return min(xs), min(ys), max(xs), max(ys)

    @property
    def centre(self) -> tuple[float, float]:
        """Centre ``(x, y)`` of the box."""
        x0, y0, x1, y1 = self.bbox
        return (x0 + x1) / 2.0, (y0 + y1) / 2.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"text": self.text, "box": [list(p) for p in self.box], "score": self.score}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TextBox:
        """Inverse of :meth:`to_dict`."""
        return cls(d["text"], tuple(tuple(p) for p in d["box"]), float(d["score"]))


def image_digest(image: Image.Image | np.ndarray | View) -> str:
    """SHA-1 of an image's pixels (the key of OCR and perception caches)."""
    if isinstance(image, View):
        return image.digest()
    return pixel_digest(image)


class OCR:
    """PP-OCR text detection and recognition on CPU.

    Parameters
    ----------
    det_limit_side_len
        The detector resizes the image so that its longer side is this many pixels
        (``det_limit_type="max"``) or its shorter side (``"min"``); larger finds smaller
        text and costs more.
    det_limit_type
        ``"max"`` or ``"min"`` (see above).
    text_score
        Lines recognised with a lower confidence are dropped.
    use_cls
        Run the text-direction classifier (not needed for upright signs).
    threads
        ONNX Runtime intra-op threads (default: all cores).
    cache_items
        Number of results kept in memory.
    cache_dir
        Optional folder to keep results on disk as well.
    """

    def __init__(
        self,
        *,
        det_limit_side_len: int = 640,
        det_limit_type: str = "max",
        text_score: float = 0.5,
        use_cls: bool = False,
        threads: int | None = None,
        cache_items: int = 4096,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.params = {
            "det_limit_side_len": det_limit_side_len,
            "det_limit_type": det_limit_type,
            "text_score": text_score,
            "use_cls": use_cls,
        }
        self.threads = threads
        self.cache_items = cache_items
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._memory: OrderedDict[str, list[TextBox]] = OrderedDict()
        self._engine: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as err:  # pragma: no cover - a dependency
                raise OCRError(
                    "OCR needs rapidocr-onnxruntime: pip install rapidocr-onnxruntime"
                ) from err
            kwargs: dict[str, Any] = {
                "det_limit_side_len": self.params["det_limit_side_len"],
                "det_limit_type": self.params["det_limit_type"],
                "use_cls": self.params["use_cls"],
                "print_verbose": False,
            }
            if self.threads is not None:
                kwargs.update(
                    det_intra_op_num_threads=self.threads,
                    rec_intra_op_num_threads=self.threads,
                    cls_intra_op_num_threads=self.threads,
                )
            self._engine = RapidOCR(**kwargs)
        return self._engine

    def _key(self, digest: str) -> str:
        return hashlib.sha1(f"{digest}{sorted(self.params.items())}".encode()).hexdigest()

    def read(self, image: Image.Image | np.ndarray | View) -> list[TextBox]:
        """Text lines in ``image`` (a PIL image, an RGB array or a :class:`View`).

        Returns
        -------
        list of TextBox
            Top-to-bottom, left-to-right.
        """
        key = self._key(image_digest(image))
        hit = self._memory.get(key)
        if hit is None:
            hit = self._read_disk(key)
        if hit is None:
            hit = self._run(image)
            self._write_disk(key, hit)
        self._memory[key] = hit
        self._memory.move_to_end(key)
        while len(self._memory) > self.cache_items:
            self._memory.popitem(last=False)
        return list(hit)

    def _run(self, image: Image.Image | np.ndarray | View) -> list[TextBox]:
        if isinstance(image, View):
            image = image.image
        if isinstance(image, np.ndarray):
            image = Image.fromarray(image.astype(np.uint8))
        engine = self._load()
        with self._lock:  # ONNX sessions are shared; one image at a time uses every core
            result, _ = engine(
                image.convert("RGB"),
                use_cls=self.params["use_cls"],
                text_score=self.params["text_score"],
            )
        boxes = []
        for box, text, score in result or []:
            pts = tuple((float(x), float(y)) for x, y in np.asarray(box).tolist())
            boxes.append(TextBox(str(text), pts, float(score)))
        return boxes

    def _read_disk(self, key: str) -> list[TextBox] | None:
        if self.cache_dir is None:
            return None
        try:
            data = json.loads((self.cache_dir / f"{key}.json").read_text(encoding="utf-8"))
            return [TextBox.from_dict(d) for d in data]
        except (OSError, ValueError, KeyError):
            return None

    def _write_disk(self, key: str, boxes: list[TextBox]) -> None:
        if self.cache_dir is None:
            return
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        path = self.cache_dir / f"{key}.json"
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps([b.to_dict() for b in boxes]), encoding="utf-8")
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()

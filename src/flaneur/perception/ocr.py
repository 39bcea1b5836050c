"""Text in images: PP-OCR through ``rapidocr-onnxruntime`` (the models ship in the wheel).

Results are cached by a hash of the image pixels and the reader's settings (including the
models' version), so a view seen before costs a hash and a dictionary lookup. The in-memory
results and the loaded models are shared by every :class:`OCR` of the same settings in the
process: the landmark scorer, the storefront detector and the explorer read a view once
between them. :meth:`OCR.read_many` reads several images with one recognition batch (the
views of an agent's step).

The models run on the backend asked for (``backend=`` or ``$FLANEUR_OCR_BACKEND``); by
default ``"auto"``, the fastest installed backend that reads as ONNX Runtime reads, measured
once per machine (:mod:`flaneur.perception.ocr_auto`). :func:`recording_backends` collects
the backends of the readers an episode used, for its row and the run summary.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from flaneur.errors import FlaneurError
from flaneur.perception.json_store import JsonStore
from flaneur.perception.ocr_auto import AUTO, resolve_auto
from flaneur.perception.ocr_engine import BACKENDS, PPOCR, model_version
from flaneur.perception.openvino_session import OpenVINOMissing
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
        at most (``det_limit_type="max"``) or its shorter side (``"min"``); larger finds
        smaller text and costs more. The default 960 reads 800x460 views at full size,
        as the OCR always did; the measured recall/speed trade-off is in ``docs/views.md``.
    det_limit_type
        ``"max"`` or ``"min"`` (see above).
    text_score
        Lines recognised with a lower confidence are dropped.
    use_cls
        Run the text-direction classifier (not needed for upright signs).
    threads
        Inference threads (default: ``$FLANEUR_OCR_THREADS`` when set, else all cores;
        one thread per process is the most work per core when several processes or Ray
        workers share a machine).
    backend
        Inference backend of the models (default: ``$FLANEUR_OCR_BACKEND`` when set, else
        ``"auto"``): ``"onnxruntime"``, ``"openvino"`` (same readings, faster on most
        CPUs) or ``"openvino-bf16"`` (bfloat16 where the CPU has it: faster still,
        approximate; both OpenVINO ones need ``pip install 'flaneur[openvino]'``), or
        ``"auto"``: the fastest installed one that reads as ONNX Runtime reads, measured
        once per machine and thread setting (:mod:`flaneur.perception.ocr_auto`). The
        backend chosen is :attr:`backend` and part of the cache key.
    cache_items
        Number of results kept in memory (shared by every reader of the same settings;
        0 keeps none for this reader).
    cache_dir
        Optional folder to keep results on disk as well.
    """

    def __init__(
        self,
        *,
        det_limit_side_len: int = 960,
        det_limit_type: str = "max",
        text_score: float = 0.5,
        use_cls: bool = False,
        threads: int | None = None,
        backend: str | None = None,
        cache_items: int = 4096,
        cache_dir: str | Path | None = None,
    ) -> None:
        if det_limit_type not in ("max", "min"):
            raise OCRError(f"det_limit_type must be 'max' or 'min', not {det_limit_type!r}")
        if int(det_limit_side_len) < 32:
            raise OCRError(f"det_limit_side_len must be at least 32, not {det_limit_side_len}")
        if threads is None:
            threads = _env_threads()
        backend, source = _backend(backend, threads)
        self.params: dict[str, Any] = {
            "det_limit_side_len": int(det_limit_side_len),
            "det_limit_type": det_limit_type,
            "text_score": text_score,
            "use_cls": use_cls,
            "model": model_version(backend),
        }
        self.backend = backend
        """The backend the models run on (``"auto"`` resolved)."""
        self.backend_source = source
        """How it was chosen: ``"backend"`` (the argument), ``"FLANEUR_OCR_BACKEND"`` or
        ``"auto"``."""
        self.threads = threads
        self.cache_items = cache_items
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._store = JsonStore(self.cache_dir) if self.cache_dir is not None else None
        self._memory = _RESULTS
        _RESULTS.grow(cache_items)
        self._engine: PPOCR | None = None
        self.runs = 0
        """Images this reader really ran the models on (cache misses)."""
        note_ocr_use(self)

    def _load(self) -> PPOCR:
        if self._engine is None:
            self._engine = _shared_engine(
                self.params["det_limit_side_len"],
                self.params["det_limit_type"],
                self.params["use_cls"],
                self.threads,
                self.backend,
            )
        return self._engine

    @property
    def timings(self):
        """CPU seconds per stage of the shared engine (:class:`~.ocr_engine.StageTimes`)."""
        return self._load().timings

    def _key(self, digest: str) -> str:
        return hashlib.sha1(f"{digest}{sorted(self.params.items())}".encode()).hexdigest()

    def read(self, image: Image.Image | np.ndarray | View) -> list[TextBox]:
        """Text lines in ``image`` (a PIL image, an RGB array or a :class:`View`).

        Returns
        -------
        list of TextBox
            Top-to-bottom, left-to-right.
        """
        return self.read_many([image])[0]

    def read_many(self, images: Sequence[Image.Image | np.ndarray | View]) -> list[list[TextBox]]:
        """:meth:`read` for several images; the uncached ones are read in one batch.

        What an image reads does not depend on the other images of the batch.
        """
        note_ocr_use(self)
        keys = [self._key(image_digest(image)) for image in images]
        results: list[list[TextBox] | None] = []
        for key in keys:
            hit = self._memory.get(key)
            if hit is None and self._store is not None:
                hit = self._from_disk(key)
            results.append(hit)
        todo = [i for i, r in enumerate(results) if r is None]
        if todo:
            for i, boxes in zip(todo, self._run([images[i] for i in todo]), strict=True):
                results[i] = boxes
                if self._store is not None:
                    self._store.put(keys[i], [b.to_dict() for b in boxes])
        if self.cache_items > 0:
            for key, found in zip(keys, results, strict=True):
                if found is not None:  # every image has been read by now
                    self._memory.put(key, found)
        return [list(r or []) for r in results]

    def _from_disk(self, key: str) -> list[TextBox] | None:
        data = self._store.get(key) if self._store is not None else None
        if not isinstance(data, list):
            return None
        try:
            return [TextBox.from_dict(d) for d in data]
        except (KeyError, TypeError, ValueError):
            return None  # damaged: read again and overwrite

    def _run(self, images: Sequence[Image.Image | np.ndarray | View]) -> list[list[TextBox]]:
        arrays = [_rgb_array(image) for image in images]
        engine = self._load()
        self.runs += len(arrays)
        out = []
        for lines in engine.read_many(arrays, self.params["text_score"]):
            boxes = []
            for box, text, score in lines:
                pts = tuple((float(x), float(y)) for x, y in np.asarray(box).tolist())
                boxes.append(TextBox(str(text), pts, float(score)))
            out.append(boxes)
        return out


def _rgb_array(image: Image.Image | np.ndarray | View) -> np.ndarray:
    """An ``(h, w, 3)`` uint8 RGB array of ``image``."""
    if isinstance(image, View):
        image = image.image
    if isinstance(image, np.ndarray):
        arr = image.astype(np.uint8, copy=False)
        if arr.ndim == 2:
            arr = np.repeat(arr[:, :, None], 3, axis=2)
        return arr[:, :, :3]
    return np.asarray(image.convert("RGB"))


class _SharedResults:
    """The process-wide LRU of OCR results (keys include the reader's settings)."""

    def __init__(self, items: int) -> None:
        self.items = items
        self._data: OrderedDict[str, list[TextBox]] = OrderedDict()
        self._lock = threading.Lock()

    def grow(self, items: int) -> None:
        with self._lock:
            self.items = max(self.items, int(items))

    def get(self, key: str) -> list[TextBox] | None:
        with self._lock:
            hit = self._data.get(key)
            if hit is not None:
                self._data.move_to_end(key)
            return hit

    def put(self, key: str, value: list[TextBox]) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.items:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


_RESULTS = _SharedResults(4096)
_ENGINES: dict[tuple, PPOCR] = {}
_ENGINES_LOCK = threading.Lock()


def check_ocr_environment() -> None:
    """Check ``$FLANEUR_OCR_BACKEND`` and ``$FLANEUR_OCR_THREADS`` before a run starts
    (``auto`` is not resolved here: that waits for the first reader).

    Raises
    ------
    OCRError
        Naming the variable and what it must be (or the extra to install).
    """
    _backend_name(None)
    _env_threads()


def _env_threads() -> int | None:
    """``$FLANEUR_OCR_THREADS`` as a positive integer, or None when unset."""
    raw = os.environ.get("FLANEUR_OCR_THREADS", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise OCRError(f"FLANEUR_OCR_THREADS must be a positive integer, not {raw!r}")
    return int(raw)


def _backend_name(backend: str | None) -> tuple[str, str]:
    """The backend asked for, else ``$FLANEUR_OCR_BACKEND``, else ``auto``; checked, with
    where it came from (``"backend"`` or the variable)."""
    source = "backend"
    if backend is None:
        backend = os.environ.get("FLANEUR_OCR_BACKEND", "").strip() or AUTO
        source = "FLANEUR_OCR_BACKEND"
    if backend != AUTO and backend not in BACKENDS:
        raise OCRError(f"{source} must be one of {', '.join((AUTO, *BACKENDS))}, not {backend!r}")
    if backend not in (AUTO, "onnxruntime") and importlib.util.find_spec("openvino") is None:
        raise OCRError(
            f"the OCR backend {backend!r} ({source}) needs the openvino package: "
            "pip install 'flaneur[openvino]'"
        )
    return backend, source


def _backend(backend: str | None, threads: int | None) -> tuple[str, str]:
    """The backend to run (``auto`` resolved for ``threads``) and how it was chosen:
    ``"backend"``, ``"FLANEUR_OCR_BACKEND"`` or ``"auto"``."""
    name, source = _backend_name(backend)
    if name != AUTO:
        return name, source
    choice = resolve_auto(threads)
    if choice.engine is not None:  # loaded by the calibration: the default reader reuses it
        with _ENGINES_LOCK:
            _ENGINES.setdefault((960, "max", False, threads, choice.backend), choice.engine)
    return choice.backend, AUTO


_USED: ContextVar[set[str] | None] = ContextVar("flaneur_ocr_backends_used", default=None)


@contextlib.contextmanager
def recording_backends() -> Iterator[set[str]]:
    """Collect the backends of the OCR readers made or used inside the block.

    Readers note their backend in the block's context (:func:`note_ocr_use`), which tasks
    and :func:`asyncio.to_thread` calls started inside it share; code that reads in a
    thread pool of its own notes the reader where it takes it (the explorer and Hiro
    perceptions). The runner wraps every job in one: its row's ``ocr_backend``.

    Yields
    ------
    set of str
        Filled as readers are used.
    """
    used: set[str] = set()
    token = _USED.set(used)
    try:
        yield used
    finally:
        # a job coroutine closed from another context (cancelled, collected) cannot reset
        with contextlib.suppress(ValueError):
            _USED.reset(token)


def note_ocr_use(reader: object) -> None:
    """Note ``reader``'s backend in the current :func:`recording_backends` block, if any
    (objects without a ``backend``, e.g. test doubles, are ignored)."""
    used = _USED.get()
    backend = getattr(reader, "backend", None)
    if used is not None and isinstance(backend, str):
        used.add(backend)


def _shared_engine(
    side: int, kind: str, use_cls: bool, threads: int | None, backend: str = "onnxruntime"
) -> PPOCR:
    """One loaded engine per settings in the process."""
    key = (side, kind, use_cls, threads, backend)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            try:
                engine = PPOCR(
                    det_limit_side_len=side,
                    det_limit_type=kind,
                    use_cls=use_cls,
                    threads=threads,
                    backend=backend,
                )
            except OpenVINOMissing as err:
                raise OCRError(str(err)) from err
            except ImportError as err:  # pragma: no cover - a dependency
                raise OCRError(
                    "OCR needs rapidocr-onnxruntime: pip install rapidocr-onnxruntime"
                ) from err
            _ENGINES[key] = engine
        return engine


def clear_memory() -> None:
    """Forget every OCR result kept in memory (benchmarks measuring a cold cache)."""
    _RESULTS.clear()

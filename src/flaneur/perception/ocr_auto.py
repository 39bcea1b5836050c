"""``backend="auto"``: the fastest installed OCR backend that reads as ONNX Runtime reads.

The OCR models run on ONNX Runtime (always installed: the reference) and, with the
``flaneur[openvino]`` extra, on OpenVINO in f32 (``openvino``) or bfloat16
(``openvino-bf16``); :mod:`flaneur.perception.ocr_engine` builds them. Which is fastest
depends on the CPU, so :func:`resolve_auto` measures it once per machine:

1. **Calibration set.** :func:`calibration_images` draws :data:`CALIBRATION_VIEWS` fixed
   800x460 street fronts (sky, facades, windows, sign boards lettered as the synthetic
   views letter them) carrying the :data:`CALIBRATION_SIGNS` texts at 15-44 pixel letter
   sizes. The same pixels on every machine.
2. **Trials** (:func:`run_trials`). Each installed backend loads its models (with the
   threads asked for) and reads the first view once to warm up (OpenVINO compiles the
   detector for the view shape then); then the backends read the whole set in turn,
   :data:`TIMED_PASSES` rounds, and each one's fastest read in process CPU seconds counts
   (wall seconds on a shared machine move with the other work). ``openvino-bf16`` is
   tried only where OpenVINO's CPU plugin lists BF16 among its capabilities: elsewhere it
   computes in f32 and is ``openvino``. A backend that fails to load or read is left out,
   with its error recorded.
3. **What keeps recall.** An exact backend (``openvino``) is eligible when it reads the
   same line texts, in the same order, on every calibration view as ONNX Runtime.
   The approximate one (``openvino-bf16``) keeps recall when it finds every calibration
   sign ONNX Runtime finds (:func:`found_signs`; so its recall, :func:`sign_recall`, is
   not lower); other lines may differ.
4. **Choice** (:func:`choose`). The fastest eligible backend, where another backend than
   ONNX Runtime must be at least :data:`EXACT_MARGIN` faster than it and an approximate
   one at least :data:`APPROXIMATE_MARGIN` faster than the fastest exact one (ties and
   noise keep the reference).

The record (choice, seconds and readings of every trial, why the others were not chosen)
is written to ``$FLANEUR_CACHE_DIR/ocr-backend/<key>.json``, the key hashing the
calibration's version, the versions of rapidocr-onnxruntime, ONNX Runtime, OpenVINO and
the graph rewrite, the installed backends, the CPU model, its core count and the thread
setting (:func:`machine_key`): later processes read it instead of measuring, and
concurrent ones wait on a lock for the first one's answer. A process resolves ``auto`` at
most once per thread setting, and the chosen backend's engine loaded for the trials is the
one the OCR then uses. With ONNX Runtime alone installed nothing is measured. The trials
take 3-6 seconds on this project's two-core machine (models loaded and compiled included).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import itertools
import json
import os
import platform
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw
from rapidfuzz import fuzz

from flaneur.paths import cache_dir
from flaneur.perception.ocr_engine import BACKENDS, PPOCR
from flaneur.perception.onnx_fold import FOLD_VERSION
from flaneur.views.synthetic.lettering import render_text

AUTO = "auto"
"""The backend name that chooses among :data:`~.ocr_engine.BACKENDS` by measurement."""
REFERENCE = "onnxruntime"
"""The backend every other one is compared with (a dependency, always installed)."""
APPROXIMATE = frozenset({"openvino-bf16"})
"""Backends whose readings may differ from the reference's (computing in bfloat16)."""
CALIBRATION_VERSION = 1
"""Bumped when the calibration images, trials or rules change (part of the cache key)."""
EXACT_MARGIN = 0.05
"""A backend other than the reference is chosen only if at least this much faster."""
APPROXIMATE_MARGIN = 0.10
"""An approximate backend is chosen only if this much faster than the best exact one."""
TIMED_PASSES = 2
"""Timed reads of the calibration set per backend (the fastest counts)."""
TEXT_SCORE = 0.5
"""Lines below this confidence are dropped, as :class:`~flaneur.perception.ocr.OCR` does."""
CALIBRATION_SIGNS: tuple[tuple[str, ...], ...] = (
    ("Stockmann", "Apteekki", "Cafe Ekberg", "Kirjakauppa"),
    ("Hotel Torni", "Fazer", "Museum of Design", "Pizzeria Luna"),
    ("Kauppatori", "Bar Loose", "Elokuvateatteri", "Posti"),
)
"""The sign texts of each calibration view (the labels of :func:`sign_recall`)."""
CALIBRATION_VIEWS = len(CALIBRATION_SIGNS)
"""How many calibration views there are."""
MATCH_RATIO = 0.8
"""The fuzzy ratio at which a line reads a calibration sign."""
_SIZES = (44, 28, 20, 15)  # letter sizes: large, medium, small, at the detector's limit


@dataclass
class Trial:
    """One backend's calibration: fastest pass in seconds and the lines read per view.

    Attributes
    ----------
    backend
        The backend's name.
    seconds
        CPU seconds of the fastest timed read of the whole calibration set (None: failed).
    readings
        The line texts of each calibration view, top to bottom.
    error
        Why the backend could not be tried (empty when it was).
    """

    backend: str
    seconds: float | None
    readings: list[list[str]] = field(default_factory=list)
    error: str = ""


Loader = Callable[[str, int | None], Any]
"""``(backend, threads) -> engine`` with ``read_many(images, text_score)`` as
:class:`~flaneur.perception.ocr_engine.PPOCR` has it; tests inject their own."""


@dataclass
class AutoChoice:
    """What :func:`resolve_auto` decided, and on what.

    Attributes
    ----------
    backend
        The chosen backend.
    record
        The calibration record (as written to the cache file).
    from_cache
        True when the record was read from the cache file rather than measured now.
    engine
        The chosen backend's engine loaded by this process's calibration (None when read
        from the cache): the OCR reuses it instead of loading the models again.
    """

    backend: str
    record: dict[str, Any]
    from_cache: bool
    engine: Any = None


# ---------------------------------------------------------------------- calibration set
def calibration_images() -> list[np.ndarray]:
    """The :data:`CALIBRATION_VIEWS` fixed 800x460 RGB calibration views (see the module)."""
    return [_calibration_view(k, signs) for k, signs in enumerate(CALIBRATION_SIGNS)]


def _calibration_view(k: int, signs: Sequence[str]) -> np.ndarray:
    """One street front: sky, three facades with windows, a sign board per text."""
    rng = np.random.default_rng(1000 + k)
    width, height = 800, 460
    img = Image.new("RGB", (width, height), (150, 185, 220))
    draw = ImageDraw.Draw(img)
    edges = [0, 260 + 30 * k, 540 - 20 * k, width]
    for i, (x0, x1) in enumerate(itertools.pairwise(edges)):
        top = int(rng.integers(40, 120))
        wall = tuple(int(v) for v in rng.integers(90, 200, 3))
        draw.rectangle([x0, top, x1, height], fill=wall)
        for wy in range(top + 20, height - 120, 70):
            for wx in range(x0 + 18, x1 - 40, 62):
                draw.rectangle([wx, wy, wx + 34, wy + 44], fill=(60, 70, 85))
        draw.line([x0, top, x0, height], fill=(40, 40, 40), width=2 if i else 0)
    draw.rectangle([0, height - 40, width, height], fill=(85, 85, 90))
    spots = [(40, 300), (330, 250), (560, 330), (200, 140)]
    for j, (text, (x, y)) in enumerate(zip(signs, spots, strict=True)):
        dark = (j + k) % 2 == 0
        fill, board = ((245, 240, 225), (35, 45, 70)) if dark else ((20, 20, 20), (235, 225, 190))
        sign = render_text(text, _SIZES[j], fill, board)
        img.paste(sign, (x, y), sign)
    return np.asarray(img)


def _normalise(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def found_signs(readings: Sequence[Sequence[str]]) -> set[str]:
    """The :data:`CALIBRATION_SIGNS` found in ``readings``, the line texts of each
    calibration view: a sign is found when some line of its view matches it with a fuzzy
    ratio of at least :data:`MATCH_RATIO` (letters and digits, case ignored), the test
    :class:`~flaneur.perception.landmarks.ocr.OCRLandmarks` applies to place names."""
    found = set()
    for signs, lines in zip(CALIBRATION_SIGNS, readings, strict=False):
        seen = [_normalise(line) for line in lines]
        for sign in signs:
            want = _normalise(sign)
            if any(fuzz.ratio(want, line) >= 100 * MATCH_RATIO for line in seen):
                found.add(sign)
    return found


def sign_recall(readings: Sequence[Sequence[str]]) -> float:
    """Fraction of :data:`CALIBRATION_SIGNS` found in ``readings`` (:func:`found_signs`)."""
    return len(found_signs(readings)) / sum(len(signs) for signs in CALIBRATION_SIGNS)


# ---------------------------------------------------------------------- trials
def installed_backends() -> list[str]:
    """The distinct backends this machine can run: ONNX Runtime; ``openvino`` when the
    ``openvino`` package is installed; ``openvino-bf16`` too when the CPU computes in
    bfloat16 (:func:`cpu_has_bf16`; elsewhere it would compute in f32, as ``openvino``)."""
    if importlib.util.find_spec("openvino") is None:
        return [REFERENCE]
    return [b for b in BACKENDS if b != "openvino-bf16" or cpu_has_bf16()]


def cpu_has_bf16() -> bool:
    """Whether OpenVINO's CPU plugin computes in bfloat16 here (its capabilities list BF16)."""
    try:
        # optional extra flaneur[openvino]
        import openvino as ov

        caps = ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    except Exception:  # not installed, or a plugin that cannot tell: treat as absent
        return False
    return "BF16" in [str(c) for c in caps]


def load_engine(backend: str, threads: int | None) -> Any:
    """The OCR engine of ``backend`` with ``threads`` inference threads and the default
    reader's settings (full-size detector input, no direction classifier)."""
    return PPOCR(threads=threads, backend=backend)


def run_trials(
    backends: Sequence[str],
    threads: int | None,
    *,
    load: Loader = load_engine,
    clock: Callable[[], float] = time.process_time,
) -> tuple[list[Trial], dict[str, Any]]:
    """Each backend's trial on the calibration set, and the engines loaded by backend.

    Every engine is loaded and reads the first view once (OpenVINO compiles the detector
    for the view shape then); then :data:`TIMED_PASSES` rounds each read the whole set once
    per backend in turn, timed by ``clock``; a backend's fastest read counts. The default
    clock is the process's CPU time (every thread of it): on a machine shared with other
    work, wall seconds doubled under load while CPU seconds moved by a few per cent, and a
    choice made once is kept. A backend that fails to load or read gets a trial without
    seconds and its error.
    """
    images = calibration_images()
    engines: dict[str, Any] = {}
    errors: dict[str, str] = {}
    best: dict[str, float] = {}
    readings: dict[str, list[list[str]]] = {}
    for backend in backends:
        try:
            engine = load(backend, threads)
            engine.read_many(images[:1], TEXT_SCORE)
        except Exception as err:  # a broken optional backend must not stop OCR
            errors[backend] = f"{type(err).__name__}: {err}"
        else:
            engines[backend] = engine
    for _ in range(TIMED_PASSES):
        for backend, engine in list(engines.items()):
            try:
                start = clock()
                lines = engine.read_many(images, TEXT_SCORE)
                seconds = clock() - start
            except Exception as err:  # as above
                errors[backend] = f"{type(err).__name__}: {err}"
                del engines[backend]
                continue
            best[backend] = min(best.get(backend, float("inf")), seconds)
            readings[backend] = [[str(text) for _, text, _ in found] for found in lines]
    for engine in engines.values():
        timings = getattr(engine, "timings", None)
        if timings is not None:  # the engine kept goes on counting from zero
            timings.reset()
    trials = [
        Trial(b, round(best[b], 4), readings[b])
        if b in engines
        else Trial(b, None, error=errors.get(b, "not run"))
        for b in backends
    ]
    return trials, engines


def choose(trials: Sequence[Trial]) -> tuple[str, dict[str, str]]:
    """The backend to use by the rules of the module's docstring, and why each other one
    was not chosen (``{backend: reason}``)."""
    by_name = {t.backend: t for t in trials}
    ref = by_name.get(REFERENCE)
    if ref is None or ref.seconds is None:
        return REFERENCE, {REFERENCE: "the reference could not be measured: kept as is"}
    reasons: dict[str, str] = {}
    exact: list[Trial] = [ref]
    approximate: list[Trial] = []
    for trial in trials:
        if trial is ref:
            continue
        if trial.seconds is None:
            reasons[trial.backend] = f"failed: {trial.error}"
        elif trial.backend in APPROXIMATE:
            lost = found_signs(ref.readings) - found_signs(trial.readings)
            if lost:
                reasons[trial.backend] = f"missed calibration signs: {', '.join(sorted(lost))}"
            else:
                approximate.append(trial)
        elif trial.readings != ref.readings:
            reasons[trial.backend] = "read other texts than the reference"
        else:
            exact.append(trial)
    best = min(exact, key=_seconds)  # ties: the first, the reference
    if best is not ref and _seconds(best) > (1 - EXACT_MARGIN) * _seconds(ref):
        best = ref
    if approximate:
        fastest = min(approximate, key=_seconds)
        if _seconds(fastest) <= (1 - APPROXIMATE_MARGIN) * _seconds(best):
            best = fastest
    for trial in [*exact, *approximate]:
        if trial is not best:
            reasons.setdefault(trial.backend, "not faster by the margin")
    return best.backend, reasons


def _seconds(trial: Trial) -> float:
    return float(trial.seconds) if trial.seconds is not None else float("inf")


# ---------------------------------------------------------------------- the cached choice
def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "missing"


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else :func:`platform.processor`)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def machine_key(threads: int | None, backends: Sequence[str]) -> dict[str, Any]:
    """What the choice depends on (the cache file is named by its hash)."""
    return {
        "calibration": CALIBRATION_VERSION,
        "backends": list(backends),
        "rapidocr-onnxruntime": _package_version("rapidocr-onnxruntime"),
        "onnxruntime": _package_version("onnxruntime"),
        "openvino": _package_version("openvino"),
        "fold": FOLD_VERSION,
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "threads": threads or "all",
    }


def cache_path(key: dict[str, Any]) -> Path:
    """``$FLANEUR_CACHE_DIR/ocr-backend/<hash of key>.json``."""
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir("ocr-backend") / f"{digest}.json"


def _read_record(path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    """The cached record at ``path`` when it is whole and of ``key`` (else None)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != key:
        return None
    return record if record.get("backend") in key["backends"] else None


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` across processes (none where ``fcntl`` is missing)."""
    try:
        import fcntl  # POSIX only: absent on Windows
    except ImportError:  # pragma: no cover - not POSIX: concurrent calibrations are harmless
        yield
        return
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def calibrate(
    threads: int | None,
    backends: Sequence[str],
    *,
    load: Loader = load_engine,
    clock: Callable[[], float] = time.process_time,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the trials of ``backends`` (:func:`run_trials`) and :func:`choose`; returns the
    record and the engines loaded."""
    started = time.perf_counter()
    trials, engines = run_trials(backends, threads, load=load, clock=clock)
    backend, reasons = choose(trials)
    record = {
        "backend": backend,
        "trials": {
            t.backend: {**asdict(t), "recall": round(sign_recall(t.readings), 4)} for t in trials
        },
        "not_chosen": reasons,
        "not_tried": [b for b in BACKENDS if b not in backends],
        "calibration_s": round(time.perf_counter() - started, 3),
        "load_average_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    return record, engines


_CHOICES: dict[tuple[int | None, tuple[str, ...] | None], AutoChoice] = {}
_CHOICES_LOCK = threading.Lock()


def resolve_auto(
    threads: int | None,
    *,
    backends: Sequence[str] | None = None,
    load: Loader = load_engine,
    clock: Callable[[], float] = time.process_time,
    remember: bool = True,
) -> AutoChoice:
    """The backend ``auto`` stands for with ``threads`` inference threads.

    Answered from this process's memory, else from the cache file, else by calibrating
    (see the module's docstring) and writing the cache file.

    Parameters
    ----------
    threads
        The OCR's inference threads (None: all cores).
    backends
        The candidates (default :func:`installed_backends`); with ONNX Runtime alone,
        nothing is measured.
    load, clock
        How an engine is loaded and time is read (:func:`run_trials`; tests pass
        deterministic ones).
    remember
        Keep the answer in this process's memory.
    """
    memo = (threads, None if backends is None else tuple(backends))
    with _CHOICES_LOCK:
        known = _CHOICES.get(memo)
        if known is not None:
            return known
        candidates = list(backends) if backends is not None else installed_backends()
        if candidates == [REFERENCE]:
            known = AutoChoice(REFERENCE, {"backend": REFERENCE, "trials": {}}, False)
        else:
            key = machine_key(threads, candidates)
            known = _cached_or_calibrated(key, threads, candidates, load, clock)
        if remember:  # (without the engine: the OCR's engine table keeps that)
            _CHOICES[memo] = AutoChoice(known.backend, known.record, known.from_cache)
        return known


def _cached_or_calibrated(
    key: dict[str, Any],
    threads: int | None,
    candidates: list[str],
    load: Loader,
    clock: Callable[[], float],
) -> AutoChoice:
    """The cached record of ``key``, else a calibration written there (under a lock, so
    processes starting together measure once). A cache folder that cannot be written
    costs a calibration per process, never a failure."""
    try:
        path: Path | None = cache_path(key)
    except OSError:
        path = None
    record = _read_record(path, key) if path is not None else None
    if path is None or record is not None:
        return _known_or_measured(record, key, threads, candidates, load, clock)
    choice: AutoChoice | None = None
    try:
        with _file_lock(path.with_suffix(".lock")):
            record = _read_record(path, key)  # another process may have measured meanwhile
            choice = _known_or_measured(record, key, threads, candidates, load, clock)
            if not choice.from_cache:
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(choice.record, indent=2), encoding="utf-8")
                tmp.replace(path)
    except OSError:  # a read-only cache folder: the answer stands, unwritten
        pass
    if choice is None:
        choice = _known_or_measured(None, key, threads, candidates, load, clock)
    return choice


def _known_or_measured(
    record: dict[str, Any] | None,
    key: dict[str, Any],
    threads: int | None,
    candidates: list[str],
    load: Loader,
    clock: Callable[[], float],
) -> AutoChoice:
    """``record`` as a choice, or a fresh calibration when it is None."""
    if record is not None:
        return AutoChoice(record["backend"], record, from_cache=True)
    record, engines = calibrate(threads, candidates, load=load, clock=clock)
    record["key"] = key
    return AutoChoice(record["backend"], record, False, engines.get(record["backend"]))


def forget() -> None:
    """Forget the choices this process made (tests)."""
    with _CHOICES_LOCK:
        _CHOICES.clear()


__all__ = [
    "APPROXIMATE",
    "APPROXIMATE_MARGIN",
    "AUTO",
    "CALIBRATION_SIGNS",
    "EXACT_MARGIN",
    "REFERENCE",
    "TIMED_PASSES",
    "AutoChoice",
    "Loader",
    "Trial",
    "cache_path",
    "calibrate",
    "calibration_images",
    "choose",
    "cpu_has_bf16",
    "cpu_model",
    "forget",
    "found_signs",
    "installed_backends",
    "load_engine",
    "machine_key",
    "resolve_auto",
    "run_trials",
    "sign_recall",
]

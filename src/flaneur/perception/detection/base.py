"""The detector interface: ``detect(view, labels) -> boxes``, batched and cached.

Every detector answers the same question: which of these labels appear in this view, and
where (pixel box, label, score)? Results are cached by the view's pixels, the labels and the
detector's settings, so a view seen before costs a hash and a lookup; scores are kept in the
cache and the threshold is applied on the way out, so a second pass at a higher threshold
(active detection) reuses the first. Optionally results are also kept on disk (JSON files).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from flaneur.errors import FlaneurError
from flaneur.perception.json_store import JsonStore
from flaneur.views.base import View
from flaneur.world.taxonomy import category_label, normalize_category


class DetectionError(FlaneurError):
    """A detector cannot run (missing library or weights, unknown labels, wrong views)."""


@dataclass(frozen=True)
class Detection:
    """One detected object.

    Attributes
    ----------
    box
        ``(x0, y0, x1, y1)`` in pixels of the view.
    label
        The label as requested.
    score
        Confidence in [0, 1].
    object_id
        The drawn object's id when the detector knows it (the scene simulator), else None;
        for analysis only, never used by agents.
    """

    box: tuple[float, float, float, float]
    label: str
    score: float
    object_id: str | None = None

    @property
    def centre(self) -> tuple[float, float]:
        """Centre ``(x, y)`` of the box."""
        x0, y0, x1, y1 = self.box
        return (x0 + x1) / 2.0, (y0 + y1) / 2.0

    @property
    def long_side(self) -> float:
        """The longer side of the box in pixels."""
        x0, y0, x1, y1 = self.box
        return max(x1 - x0, y1 - y0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {**asdict(self), "box": list(self.box)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Detection:
        """Inverse of :meth:`to_dict`."""
        # four numbers, as to_dict wrote them
        box = cast(tuple[float, float, float, float], tuple(float(v) for v in d["box"]))
        return cls(
            box,
            str(d["label"]),
            float(d["score"]),
            d.get("object_id"),
        )


def pixel_box(values: Iterable[Any]) -> tuple[float, float, float, float]:
    """``(x0, y0, x1, y1)`` as floats from four numbers (a list, a tuple, an array row)."""
    x0, y0, x1, y1 = (float(v) for v in values)
    return x0, y0, x1, y1


def check_labels(labels: Sequence[str] | str) -> tuple[str, ...]:
    """Labels as a tuple of non-empty strings, without duplicates (one-line error otherwise)."""
    if isinstance(labels, str):
        labels = [labels]
    out = tuple(dict.fromkeys(str(label).strip() for label in labels))
    if not out or any(not label for label in out):
        raise DetectionError("labels must be a non-empty list of non-empty names")
    return out


def taxonomy_labels(labels: Sequence[str]) -> dict[str, str]:
    """``{label: taxonomy category}`` for detectors that only know taxonomy categories.

    Raises
    ------
    DetectionError
        Naming the first label that is not a category, a label or a synonym of the taxonomy.
    """
    out = {}
    for label in labels:
        category = normalize_category(label)
        if category is None:
            raise DetectionError(
                f"unknown label {label!r}: use a place or street-furniture category such as "
                f"'waste_basket' ({category_label('waste_basket')}), 'bench' or 'cafe'"
            )
        out[label] = category
    return out


class Detector:
    """Base class: caching, thresholds and batching around :meth:`_detect`.

    Subclasses implement ``_detect(view, labels) -> list[Detection]`` (all boxes with their
    scores) and may override ``_detect_many`` to run a real batch; ``settings()`` names what
    changes their output (it is part of the cache key).

    Parameters
    ----------
    threshold
        Default minimum score of a returned box.
    cache_items
        Results kept in memory.
    cache_dir
        Optional folder to keep results on disk as well.
    """

    name = "detector"

    def __init__(
        self,
        *,
        threshold: float = 0.55,
        cache_items: int = 4096,
        cache_dir: str | Path | None = None,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise DetectionError(f"threshold must lie in [0, 1], not {threshold}")
        self.threshold = threshold
        self.cache_items = cache_items
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._store = JsonStore(self.cache_dir) if self.cache_dir is not None else None
        self._memory: OrderedDict[str, list[Detection]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    # -------------------------------------------------------------- to implement
    def settings(self) -> dict[str, Any]:
        """What changes this detector's output (part of the cache key)."""
        return {}

    def _detect(self, view: View, labels: tuple[str, ...]) -> list[Detection]:
        raise NotImplementedError

    def _detect_many(self, views: Sequence[View], labels: tuple[str, ...]) -> list[list[Detection]]:
        return [self._detect(view, labels) for view in views]

    def check(self, labels: tuple[str, ...]) -> None:
        """Validate the labels before any work (default: any non-empty text)."""

    def with_places(
        self,
        places: Mapping[str, Sequence[str]],
        label_categories: Mapping[str, Sequence[str]],
        *,
        seed: int | None = None,
    ) -> Detector:
        """The detector set up for place detection in a run: ``places`` maps place ids to
        their taxonomy categories, ``label_categories`` labels that are not taxonomy names
        to categories (V-IRL's ``"spa"``), ``seed`` is the run's. Detectors that read pixels
        need none of them and return themselves (the default); the scene simulator and the
        oracle, which report what the renderer drew, return a copy that also reports the
        places' storefronts (the simulator seeded by its own seed, else the run's).
        """
        del places, label_categories, seed
        return self

    # -------------------------------------------------------------- public API
    def detect(
        self, view: View, labels: Sequence[str] | str, *, threshold: float | None = None
    ) -> list[Detection]:
        """Boxes of ``labels`` in ``view`` scoring at least ``threshold``, best first."""
        return self.detect_batch([view], labels, threshold=threshold)[0]

    def detect_batch(
        self,
        views: Sequence[View],
        labels: Sequence[str] | str,
        *,
        threshold: float | None = None,
    ) -> list[list[Detection]]:
        """:meth:`detect` for many views at once; uncached views go to the model together."""
        labels = check_labels(labels)
        self.check(labels)
        cut = self.threshold if threshold is None else threshold
        keys = [self._key(view, labels) for view in views]
        results: list[list[Detection] | None] = [self._get(key) for key in keys]
        todo = [i for i, r in enumerate(results) if r is None]
        if todo:
            fresh = self._detect_many([views[i] for i in todo], labels)
            for i, dets in zip(todo, fresh, strict=True):
                dets = sorted(dets, key=lambda d: -d.score)
                self._put(keys[i], dets)
                results[i] = dets
        return [[d for d in r or [] if d.score >= cut] for r in results]

    # -------------------------------------------------------------- cache
    def _key(self, view: View, labels: tuple[str, ...]) -> str:
        text = json.dumps(
            [self.name, view.digest(), list(labels), self.settings()], sort_keys=True, default=str
        )
        return hashlib.sha1(text.encode()).hexdigest()

    def _get(self, key: str) -> list[Detection] | None:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
                self.hits += 1
                return hit
        hit = self._read_disk(key)
        with self._lock:
            if hit is None:
                self.misses += 1
                return None
            self.hits += 1
        self._remember(key, hit)
        return hit

    def _put(self, key: str, dets: list[Detection]) -> None:
        self._remember(key, dets)
        self._write_disk(key, dets)

    def _remember(self, key: str, dets: list[Detection]) -> None:
        if self.cache_items <= 0:
            return
        with self._lock:
            self._memory[key] = dets
            self._memory.move_to_end(key)
            while len(self._memory) > self.cache_items:
                self._memory.popitem(last=False)

    def clear_cache(self) -> None:
        """Forget the in-memory results (disk files stay)."""
        with self._lock:
            self._memory.clear()

    def _read_disk(self, key: str) -> list[Detection] | None:
        data = self._store.get(key) if self._store is not None else None
        if not isinstance(data, list):
            return None
        try:
            return [Detection.from_dict(d) for d in data]
        except (KeyError, TypeError, ValueError):
            return None  # damaged: detect again and overwrite

    def _write_disk(self, key: str, dets: list[Detection]) -> None:
        if self._store is not None:
            self._store.put(key, [d.to_dict() for d in dets])

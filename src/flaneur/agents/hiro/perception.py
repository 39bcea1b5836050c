"""What Hiro sees: views, boxes of the sought place type, and the text along each road.

:class:`HiroEyes` renders views with the run's view provider (``--views``) and

* detects place types in them with a :class:`~flaneur.perception.detection.Detector`
  (default: the OCR storefront detector, PP-OCR text boxes labelled with a place type by
  the sentence embedder), keeping only the boxes matched to a place of the type by
  :func:`flaneur.perception.matching.match_box` (20 m, heading span +- 5 degrees);
* with *active detection* (V-IRL's visual checker, on by default) detects at the proposal
  threshold :data:`PROPOSAL_THRESHOLD`, re-aims the camera at each box and zooms in
  (:func:`~flaneur.perception.detection.active.confirm_candidates`, the loop RX-399 uses:
  ``fov x 4 x box long side / image side``, at least 30 degrees, at most
  :data:`~flaneur.agents.hiro.rules.VIEW_FOV`), detects again in the zoomed views (one
  batch per step) and keeps a box only when a box of its label at the check threshold
  :data:`CHECK_THRESHOLD` confirms it where it was; the *zoomed* box is then
  matched to a place in the zoomed view (a narrower span, a better bearing);
* reads the text in the view along a road (the offline road choice).

Sign words are glossed before they are embedded (``"Apteekki Eliel"`` is read as
``"Apteekki Eliel (pharmacy)"``, the explorer's glossary), as a passer-by who knows the
local sign words reads them. OCR results are cached on disk by image
(``$FLANEUR_CACHE_DIR/hiro-ocr``), so a second run renders but reads nothing again;
rendering and OCR run in two worker threads of their own so that the runner's event loop
keeps serving other episodes. Only the image is used, never the renderer's metadata.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from flaneur.agents.explorer.glossary import gloss
from flaneur.agents.explorer.perception import _RENDER_LOCK as EXPLORER_RENDER_LOCK
from flaneur.agents.hiro.rules import HEADING_MARGIN_DEG, MATCH_RADIUS_M, VIEW_FOV
from flaneur.paths import cache_dir
from flaneur.perception.detection import Detection, Detector, StorefrontDetector
from flaneur.perception.detection.active import MIN_FOV, confirm_candidates
from flaneur.perception.matching import BoxMatch, match_box
from flaneur.perception.ocr import OCR, note_ocr_use
from flaneur.text import shared_embedder
from flaneur.views.base import View
from flaneur.world.city import City

VIEW_SIZE = (640, 640)
"""V-IRL's street-view size in pixels."""

PROPOSAL_THRESHOLD = 0.35
"""Score from which a box of the OCR storefront detector is a proposal for active detection
(the detector's own default; calibrated with ``benchmarks/hiro_calibration.py`` on Helsinki
views facing random places, no episode: docs/agents.md)."""

CHECK_THRESHOLD = 0.40
"""Score a confirming box in the zoomed view must reach (calibrated as
:data:`PROPOSAL_THRESHOLD`: from 0.40 on, about 3 in 4 of the detector's matched boxes are
of the right type, below it about half)."""


class GlossingEmbedder:
    """A sentence embedder that reads local sign words as their English glosses first.

    Parameters
    ----------
    embedder
        The underlying embedder (``similarity(a, b)`` of two text lists).
    """

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def similarity(self, texts: Sequence[str], others: Sequence[str]) -> np.ndarray:
        """Cosine similarities of the glossed ``texts`` to ``others``."""
        return self.embedder.similarity([gloss(t) or t for t in texts], list(others))


@dataclass(frozen=True)
class PlaceSighting:
    """A box of the sought type matched to a place on the map.

    Attributes
    ----------
    detection
        The box, its label and score (with active detection: the confirming box in the
        zoomed view, and its score there).
    match
        The place it points at (row, name, distance).
    heading
        Heading of the view it was seen in (the first view, not the zoomed one).
    """

    detection: Detection
    match: BoxMatch
    heading: float


_POOL: list[ThreadPoolExecutor] = []
_ENGINES: list[OCR] = []
_LOCK = threading.Lock()
_RENDER_LOCK = EXPLORER_RENDER_LOCK  # one lock for every agent rendering from a provider


def _pool() -> ThreadPoolExecutor:
    with _LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=2, thread_name_prefix="hiro-eyes"))
        return _POOL[0]


def shared_ocr() -> OCR:
    """One OCR engine for every Hiro of a process, caching its results on disk."""
    with _LOCK:
        if not _ENGINES:
            _ENGINES.append(OCR(cache_items=20_000, cache_dir=cache_dir("hiro-ocr")))
        return _ENGINES[0]


class HiroEyes:
    """Views, detection and reading for one city.

    Parameters
    ----------
    city
        The city (places to match boxes to).
    views
        The view provider.
    detector
        The place detector (default: :class:`StorefrontDetector` on :func:`shared_ocr`).
    ocr
        The OCR engine for reading along roads (default: :func:`shared_ocr`).
    embedder
        The sentence embedder (glossed; default: the shared one).
    size
        View size in pixels.
    active
        Confirm every box in a re-aimed, zoomed view (see the module docstring); ``False``
        is the single pass at the detector's own threshold.
    proposal_threshold, check_threshold
        Active detection's two thresholds.

    Attributes
    ----------
    views_taken
        Views rendered so far: detection views, zoomed views and views read along roads.
    zoom_views
        Of those, the zoomed views of active detection.
    """

    def __init__(
        self,
        city: City,
        views: Any,
        *,
        detector: Detector | None = None,
        ocr: OCR | None = None,
        embedder: Any = None,
        size: tuple[int, int] = VIEW_SIZE,
        active: bool = True,
        proposal_threshold: float = PROPOSAL_THRESHOLD,
        check_threshold: float = CHECK_THRESHOLD,
    ) -> None:
        if embedder is None:
            embedder = shared_embedder()
        self.city = city
        self.views = views
        self.ocr = ocr or shared_ocr()
        note_ocr_use(self.ocr)  # reads in a thread pool of its own: the episode's row says so
        self.embedder = GlossingEmbedder(embedder)
        self.detector = detector or StorefrontDetector(ocr=self.ocr, embedder=self.embedder)
        self.size = size
        self.active = bool(active)
        self.proposal_threshold = float(proposal_threshold)
        self.check_threshold = float(check_threshold)
        self.views_taken = 0
        self.zoom_views = 0

    def _view(
        self, node: int, heading: float, *, pitch: float = 0.0, fov: float = VIEW_FOV
    ) -> View:
        with _RENDER_LOCK:  # providers and their caches are not thread-safe
            self.views_taken += 1
            return self.views.view(
                int(node), float(heading), pitch=float(pitch), fov=float(fov), size=self.size
            )

    def _rows_of(self, types: Sequence[str]) -> np.ndarray:
        places = self.city.places
        rows = [places.with_category(t) for t in types]
        return np.unique(np.concatenate(rows)) if rows else np.zeros(0, np.int64)

    def _match(self, view: View, det: Detection, rows: np.ndarray) -> BoxMatch:
        return match_box(
            self.city,
            view,
            det.box,
            radius_m=MATCH_RADIUS_M,
            candidates=rows,
            margin_deg=HEADING_MARGIN_DEG,
        )

    def look_now(
        self, node: int, headings: Sequence[float], types: Sequence[str]
    ) -> list[list[PlaceSighting]]:
        """For each heading, the boxes of ``types`` matched to a place (synchronous).

        With :attr:`active`, each box found at the proposal threshold is looked at again in
        a re-aimed, zoomed view (the zoomed views of all headings go to the detector in one
        batch); it is kept only when a box of its label at the check threshold confirms it
        there, and that zoomed box is the one matched to a place.
        """
        views = [self._view(node, h) for h in headings]
        rows = self._rows_of(types)
        if not self.active:
            found = self.detector.detect_batch(views, list(types))
            return [
                [
                    PlaceSighting(det, match, float(heading))
                    for det in dets
                    if (match := self._match(view, det, rows)).matched
                ]
                for view, heading, dets in zip(views, headings, found, strict=True)
            ]
        found = self.detector.detect_batch(views, list(types), threshold=self.proposal_threshold)
        candidates = [(v, d) for v, dets in zip(views, found, strict=True) for d in dets]
        owner = [k for k, dets in enumerate(found) for _ in dets]  # candidate -> first view
        stats: dict[str, int] = {}
        confirmed = confirm_candidates(
            candidates,
            lambda v, heading, pitch, fov: self._view(node, heading, pitch=pitch, fov=fov),
            self.detector,
            list(types),
            active_threshold=self.check_threshold,
            min_fov=MIN_FOV,
            stats=stats,
        )
        self.zoom_views += stats["zoom_views"]
        out: list[list[PlaceSighting]] = [[] for _ in views]
        for c in confirmed:
            match = self._match(c.view, c.box, rows)
            if match.matched:
                k = owner[c.index]
                out[k].append(PlaceSighting(c.box, match, float(headings[k])))
        return out

    async def look(
        self, node: int, headings: Sequence[float], types: Sequence[str]
    ) -> list[list[PlaceSighting]]:
        """:meth:`look_now` in a worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_pool(), self.look_now, node, headings, types)

    def read_now(self, node: int, heading: float) -> tuple[View, list[str]]:
        """The view along ``heading`` and the lines of text read in it (synchronous)."""
        view = self._view(node, heading)
        return view, [b.text for b in self.ocr.read(view) if b.text.strip()]

    async def read(self, node: int, heading: float) -> tuple[View, list[str]]:
        """:meth:`read_now` in a worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_pool(), self.read_now, node, heading)

    def text_fit(self, lines: Sequence[str], queries: Sequence[str]) -> float:
        """How well the best line of text fits the need: the highest similarity of any line
        to any query (0 without text)."""
        if not lines or not queries:
            return 0.0
        return float(max(0.0, self.embedder.similarity(list(lines), list(queries)).max()))


__all__ = [
    "CHECK_THRESHOLD",
    "PROPOSAL_THRESHOLD",
    "VIEW_SIZE",
    "GlossingEmbedder",
    "HiroEyes",
    "PlaceSighting",
    "shared_ocr",
]

"""What the explorer sees when it looks along one heading: texts and how far away they are.

Two perceivers, both answering ``await look(node, heading)`` with a tuple of
:class:`Sighting`:

- :class:`MapPerception` (the offline default): the names of the named places inside the
  60 degree view sector within 50 m, read from the city map (as a map app shows them).
- :class:`OCRPerception`: renders the view with a :class:`flaneur.views.ViewProvider` and
  reads its text with :class:`flaneur.perception.OCR` (signs, shop fronts). OCR costs
  0.2-1 s per image, so results are cached by view request: in memory (module-level LRU,
  shared by every episode of a run) and on disk. Rendering and OCR run in worker threads
  (a small pool of their own) so that the runner's event loop keeps serving other
  episodes.
  The distance of a text is estimated from the height of its box (signs' letters are
  about one metre tall; see :data:`TEXT_HEIGHT_M`).

Neither reads anything about the goal. Only the view image is used, never the
renderer's metadata (which lists the signs drawn).
"""

from __future__ import annotations

import asyncio
import math
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from flaneur.paths import cache_dir
from flaneur.perception.landmarks.ocr import text_candidates
from flaneur.perception.ocr import OCR, note_ocr_use
from flaneur.views.base import DEFAULT_SIZE, focal_length_px
from flaneur.views.cache import ViewCache, request_key
from flaneur.world.city import City

TEXT_HEIGHT_M = 1.03
"""Height in metres that turns an OCR box height into a distance (``f * H / h``).

Fitted as the median of ``box height x true distance / focal length`` over 102 signs read
in synthetic Helsinki views of 40 random nodes (true distances from the map, used for the
fit only). The estimate is rough (10-90 % range about +-50 %): labels of near places are
drawn smaller, blade signs are smaller than fascias.
"""


@dataclass(frozen=True, slots=True)
class Sighting:
    """One text seen along a heading.

    Attributes
    ----------
    text
        The place name (map) or the line of text read (OCR).
    distance_m
        Distance from the viewpoint (map: exact; OCR: estimated from the text size).
    bearing
        Compass heading from the viewpoint to the text, degrees.
    """

    text: str
    distance_m: float
    bearing: float


class _LRU:
    """A small thread-safe LRU dictionary."""

    def __init__(self, items: int) -> None:
        self.items = items
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.items:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class MapPerception:
    """Names of the named places in a heading's view sector, from the map.

    Parameters
    ----------
    city
        The city (its places and their positions).
    fov
        Width of the view sector, degrees.
    radius_m
        Places farther than this are not seen.
    """

    name = "map"

    def __init__(self, city: City, *, fov: float = 60.0, radius_m: float = 50.0) -> None:
        self.city = city
        self.fov = fov
        self.radius_m = radius_m
        self._cache = _LRU(200_000)

    def look_now(self, node: int, heading: float) -> tuple[Sighting, ...]:
        """The sightings along ``heading`` from ``node`` (synchronous)."""
        key = (int(node), round(float(heading), 1))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        places = self.city.places
        rows, dist, rel = places.in_view(
            self.city.graph.xy[node],
            heading,
            fov=self.fov,
            radius_m=self.radius_m,
            named_only=True,
        )
        out = tuple(
            Sighting(str(places.names[r]), float(d), (heading + float(b)) % 360.0)
            for r, d, b in zip(rows.tolist(), dist.tolist(), rel.tolist(), strict=True)
        )
        self._cache.put(key, out)
        return out

    async def look(self, node: int, heading: float) -> tuple[Sighting, ...]:
        """The sightings along ``heading`` from ``node``."""
        return self.look_now(node, heading)


class OCRPerception:
    """Text read by OCR in the rendered view of a heading.

    Parameters
    ----------
    city
        The city (for node ids).
    views
        A view provider (:class:`flaneur.views.SyntheticViews`, panoramas, ...).
    ocr
        The OCR engine (a shared default :class:`OCR` when None).
    fov
        Horizontal field of view of each view, degrees.
    size
        View size in pixels.
    min_text_score
        OCR lines recognised with a lower confidence are ignored.
    disk_cache
        Keep OCR results on disk (``$FLANEUR_CACHE_DIR/explorer-ocr``), keyed by the view
        request, so a second run renders and reads nothing it has seen.
    """

    name = "ocr"

    def __init__(
        self,
        city: City,
        views: Any,
        *,
        ocr: OCR | None = None,
        fov: float = 60.0,
        size: tuple[int, int] = DEFAULT_SIZE,
        min_text_score: float = 0.6,
        disk_cache: bool = True,
    ) -> None:
        self.city = city
        self.views = views
        self.ocr = ocr or _shared_ocr()
        note_ocr_use(self.ocr)  # reads in a thread pool of its own: the episode's row says so
        self.fov = fov
        self.size = size
        self.min_text_score = min_text_score
        self.focal_px = focal_length_px(size[0], fov)
        self._disk: Any = None
        if disk_cache:
            self._disk = ViewCache(cache_dir("explorer-ocr"), memory_items=0)

    def _request(self, node: int, heading: float) -> dict[str, Any]:
        heading = round(float(heading) % 360.0, 2)
        describe = getattr(self.views, "request", None)
        if callable(describe):  # providers that describe their requests (synthetic)
            view = describe(node, heading, 0.0, self.fov, self.size)
        else:
            view = {
                "provider": getattr(self.views, "name", type(self.views).__name__),
                "city": self.city.name,
                "node": str(self.city.graph.ids[node]),
                "heading": heading,
                "fov": self.fov,
                "size": list(self.size),
            }
        return {
            "kind": "explorer-ocr-2",
            "view": view,
            "ocr": self.ocr.params,
            "min_score": self.min_text_score,
        }

    def _key(self, node: int, heading: float) -> str:

        return request_key(self._request(node, heading))

    def look_now(self, node: int, heading: float) -> tuple[Sighting, ...]:
        """Render, read and cache (synchronous; call it from a worker thread)."""
        return self.look_many_now(node, [heading])[0]

    def look_many_now(self, node: int, headings: list[float]) -> list[tuple[Sighting, ...]]:
        """:meth:`look_now` for several headings: the views not cached are rendered and
        read by OCR in one batch (each reads what it would read alone)."""
        keys = [self._key(node, h) for h in headings]
        out: list[tuple[Sighting, ...] | None] = [_OCR_MEMORY.get(k) for k in keys]
        lines_of: dict[int, list] = {}
        todo = []
        for i, key in enumerate(keys):
            if out[i] is not None:
                continue
            lines = self._disk.get_json(key) if self._disk is not None else None
            if lines is None:
                todo.append(i)
            else:
                lines_of[i] = lines
        if todo:
            with _RENDER_LOCK:  # providers and their caches are not thread-safe
                images = [
                    self.views.view(
                        int(node), float(headings[i]), fov=self.fov, size=self.size
                    ).image
                    for i in todo
                ]
            read_many = getattr(self.ocr, "read_many", None)
            read = read_many(images) if read_many else [self.ocr.read(im) for im in images]
            for i, found in zip(todo, read, strict=True):
                boxes = [b for b in found if b.score >= self.min_text_score]
                lines = [
                    [text, *box, _line_height(box, boxes)] for text, box in text_candidates(boxes)
                ]
                if self._disk is not None:
                    self._disk.put_json(keys[i], lines)
                lines_of[i] = lines
        for i, lines in lines_of.items():
            out[i] = tuple(
                self._sighting(str(t), (x0, y0, x1, y1), h, headings[i])
                for t, x0, y0, x1, y1, h in lines
            )
            _OCR_MEMORY.put(keys[i], out[i])
        return [o or () for o in out]

    def _sighting(
        self, text: str, box: tuple[float, ...], line_height: float, heading: float
    ) -> Sighting:
        x0, _, x1, _ = box
        height = max(float(line_height), 1.0)
        centre = (float(x0) + float(x1)) / 2.0 - self.size[0] / 2.0
        bearing = (heading + math.degrees(math.atan2(centre, self.focal_px))) % 360.0
        return Sighting(text, self.focal_px * TEXT_HEIGHT_M / height, bearing)

    async def look(self, node: int, heading: float) -> tuple[Sighting, ...]:
        """The text seen along ``heading`` from ``node`` (OCR in a worker thread)."""
        hit = _OCR_MEMORY.get(self._key(node, heading))
        if hit is not None:
            return hit
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_ocr_pool(), self.look_now, node, heading)

    async def look_many(self, node: int, headings: list[float]) -> list[tuple[Sighting, ...]]:
        """The text seen along each of ``headings`` (one OCR batch in a worker thread)."""
        hits = [_OCR_MEMORY.get(self._key(node, h)) for h in headings]
        if all(hit is not None for hit in hits):
            return hits
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_ocr_pool(), self.look_many_now, node, list(headings))


def _line_height(box: tuple[float, ...], boxes: list[Any]) -> float:
    """Height of one line of text in ``box`` (lines joined by ``text_candidates`` stack up)."""
    x0, y0, x1, y1 = box
    inside = [
        b.bbox[3] - b.bbox[1]
        for b in boxes
        if b.bbox[0] >= x0 - 1
        and b.bbox[1] >= y0 - 1
        and b.bbox[2] <= x1 + 1
        and b.bbox[3] <= y1 + 1
    ]
    return float(min(inside)) if inside else float(y1 - y0)


_OCR_MEMORY = _LRU(50_000)
_OCR_ENGINE: list[OCR] = []
_POOL: list[ThreadPoolExecutor] = []
_MAPS: dict[int, tuple[weakref.ref[City], MapPerception]] = {}
_LOCK = threading.Lock()
_RENDER_LOCK = threading.Lock()


def _ocr_pool() -> ThreadPoolExecutor:
    """Two worker threads for rendering and OCR (one view renders while another is read).

    A pool of its own rather than :func:`asyncio.to_thread`'s default executor, whose few
    threads would otherwise all wait on the OCR engine's lock and delay the runner's own
    thread work (writing episode rows).
    """
    with _LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=2, thread_name_prefix="explorer-ocr"))
        return _POOL[0]


def _shared_ocr() -> OCR:
    with _LOCK:
        if not _OCR_ENGINE:
            _OCR_ENGINE.append(OCR())
        return _OCR_ENGINE[0]


def map_perception(city: City, *, fov: float = 60.0, radius_m: float = 50.0) -> MapPerception:
    """A :class:`MapPerception` shared by every episode on ``city`` (its cache is reused)."""
    with _LOCK:
        entry = _MAPS.get(id(city))
        if entry is not None and entry[0]() is city:
            found = entry[1]
            if found.fov == fov and found.radius_m == radius_m:
                return found
        made = MapPerception(city, fov=fov, radius_m=radius_m)
        _MAPS[id(city)] = (weakref.ref(city), made)
        return made


__all__ = [
    "TEXT_HEIGHT_M",
    "MapPerception",
    "OCRPerception",
    "Sighting",
    "map_perception",
]

"""Task sets, street maps and street views for the app, loaded once and kept.

Task sets are reached by registered id, by the ``--tasks`` files given to ``flaneur serve``,
or as a served run names them (its ``summary.json`` records its task files); never by a path
sent from the browser. Views are rendered by the offline synthetic provider and kept in a
:class:`~flaneur.views.ViewCache` folder, so a step seen once comes back from the cache.

A run made with real imagery (``--views panorama:DIR``, ``google``, ``mapillary``) is
replayed with it where the app can have it without the network (:meth:`ViewService.real`):
panorama cuts from the run's panorama folder, Google and Mapillary views only from the view
cache (their providers get a client that refuses every request and a placeholder key, so
replay never fetches and never reads a key); a view not to be had so falls back to the
synthetic one.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from flaneur.errors import FlaneurError
from flaneur.tasks.episode import Episode
from flaneur.tasks.registry import TASKS, list_tasks, load_spec, navigation_episodes
from flaneur.tasks.resolve import file_spec, spec_of_run
from flaneur.tasks.spec import TaskSpec
from flaneur.views import (
    DEFAULT_SIZE,
    GoogleStreetView,
    Mapillary,
    PanoramaFolder,
    SyntheticViews,
    ViewCache,
    ViewError,
)
from flaneur.world.city import City

VIEW_SIZE = (480, 320)
"""Width and height of the views the app shows, in pixels."""
VIEW_WIDTHS = (64, 1280)
"""Smallest and largest width of a view the app renders on request (``/api/view?width=``)."""
SCALE_STEPS_M = tuple(m * 10**k for k in range(5) for m in (1, 2, 5))
"""Lengths a map's scale bar may show, in metres (1, 2, 5, 10, 20, 50, ... 50,000)."""
MAX_STREET_LABELS = 40
"""Street names written on one map at most (the longest stretches first)."""
REAL_IMAGERY = ("panorama", "google", "mapillary")
"""``--views`` providers whose imagery replay shows (from the cache or local files only)."""
OFFLINE_KEY = "replay-is-offline"
"""Placeholder key of the cache-only providers (never sent: their client refuses requests)."""


def _refuse(request: Any) -> Any:
    # lazy: httpx takes 0.18 s to import
    import httpx

    raise httpx.ConnectError("flaneur serve never fetches imagery", request=request)


class TaskStore:
    """Loaded task sets by id.

    Parameters
    ----------
    data_dir
        Datasets folder for sets that read one (default ``$FLANEUR_DATA``).
    task_files
        Task files the app may load besides the registered ids (``flaneur serve --tasks``);
        each is checked here (exists, a known format), so a bad one stops the server before
        it starts, naming the file.
    """

    def __init__(self, data_dir: Path | None = None, task_files: list[Path] | None = None):
        self.data_dir = data_dir
        self.task_files = {str(p): Path(p).expanduser().resolve() for p in task_files or ()}
        for key, path in self.task_files.items():  # a missing or unreadable file fails now
            file_spec(path, task_id=key)
        self._loaded: dict[str, tuple[TaskSpec, City, list[Episode]]] = {}
        self._lock = threading.Lock()

    def available(self) -> list[dict[str, Any]]:
        """Task sets offered for play and annotation: registered ids and ``--tasks`` files."""

        out = [
            {"id": s.id, "description": s.description, "scheme": s.scheme}
            for s in list_tasks()
            if not s.needs_data_dir or self.data_dir
        ]
        out += [{"id": key, "description": "task file", "scheme": ""} for key in self.task_files]
        return out

    def spec(self, task: str, summary: dict[str, Any] | None = None) -> TaskSpec:
        """The spec of ``task``: a ``--tasks`` file, a registered id, or as a run records it."""

        if task in self.task_files:
            return file_spec(self.task_files[task], task_id=task)
        list_tasks()
        if task in TASKS.names():
            return TASKS.get(task)
        if summary is not None:
            return spec_of_run(task, summary)
        raise FlaneurError(f"unknown task set {task!r}")

    def load(
        self, task: str, summary: dict[str, Any] | None = None
    ) -> tuple[TaskSpec, City, list[Episode]]:
        """``(spec, city, episodes)`` of a task set, loaded on first use."""

        with self._lock:
            hit = self._loaded.get(task)
            if hit is None:
                spec = self.spec(task, summary)
                data_dir = self.data_dir or (summary or {}).get("config", {}).get("data_dir")
                city, items = load_spec(spec, data_dir)
                hit = self._loaded[task] = (spec, city, list(navigation_episodes(items, task=task)))
            return hit

    def episode(self, task: str, episode_id: str, summary: dict[str, Any] | None = None):
        """``(spec, city, episode)`` of one episode; :class:`FlaneurError` if unknown."""
        spec, city, episodes = self.load(task, summary)
        for episode in episodes:
            if episode.id == episode_id:
                return spec, city, episode
        raise FlaneurError(f"task set {task!r} has no episode {episode_id!r}")


def scale_bar_m(span_m: float, fraction: float = 0.25) -> int:
    """The length of a map's scale bar: the longest round length (1, 2 or 5 times a power of
    ten metres) that is at most ``fraction`` of the map's span ``span_m`` (1 m at least)."""
    fitting = [s for s in SCALE_STEPS_M if s <= span_m * fraction]
    return fitting[-1] if fitting else SCALE_STEPS_M[0]


def _walk(start: int, following: int, adjacent: dict[int, list[int]], seen: set) -> list[int]:
    """Nodes of one stretch of a street, from ``start`` through ``following`` on until a node
    where the street ends or forks (an edge already in ``seen`` also stops it)."""
    chain = [start, following]
    seen.add((min(start, following), max(start, following)))
    while len(adjacent[chain[-1]]) == 2:
        back, here = chain[-2], chain[-1]
        ahead = adjacent[here][1] if adjacent[here][0] == back else adjacent[here][0]
        edge = (min(here, ahead), max(here, ahead))
        if edge in seen:
            break
        seen.add(edge)
        chain.append(ahead)
    return chain


def _longest_stretch(pairs: set[tuple[int, int]], xy: NDArray[np.float64]) -> list[int]:
    """The longest (in metres) unbranched run of nodes through the street edges ``pairs``."""
    adjacent: dict[int, list[int]] = {}
    for a, b in sorted(pairs):
        adjacent.setdefault(a, []).append(b)
        adjacent.setdefault(b, []).append(a)
    ends = sorted(n for n, near in adjacent.items() if len(near) != 2)
    seen: set[tuple[int, int]] = set()
    best: list[int] = []
    best_m = -1.0
    for start in [*ends, *sorted(adjacent)]:  # from ends and forks first, then loops
        for following in adjacent[start]:
            if (min(start, following), max(start, following)) in seen:
                continue
            chain = _walk(start, following, adjacent, seen)
            metres = float(np.hypot(*np.diff(xy[chain], axis=0).T).sum())
            if metres > best_m:
                best, best_m = chain, metres
    return best


def street_labels(
    city: City, on_map: NDArray[np.bool_], limit: int = MAX_STREET_LABELS
) -> list[dict[str, Any]]:
    """Where to write street names on a map: per named street with an edge between two nodes
    of ``on_map``, its longest unbranched stretch there.

    Parameters
    ----------
    city
        The city; its ``edge_streets`` give the names (none: no labels).
    on_map
        Mask of the nodes inside the map.
    limit
        Labels kept at most, the longest stretches first.

    Returns
    -------
    list of dict
        ``name``, ``length_m`` and ``points`` (``[[x, y], ...]`` in metres, running west to
        east so that text along them reads from left to right).
    """
    names = city.edge_streets
    if len(names) == 0:
        return []
    graph = city.graph
    src, dst = graph.edge_sources, graph.targets.astype(np.int64)
    by_name: dict[str, set[tuple[int, int]]] = {}
    for e in np.flatnonzero(on_map[src] & on_map[dst] & (names != "")).tolist():
        a, b = int(src[e]), int(dst[e])
        if a != b:
            by_name.setdefault(str(names[e]), set()).add((min(a, b), max(a, b)))
    xy = graph.xy
    stretches = []
    for name, pairs in by_name.items():
        points = xy[_longest_stretch(pairs, xy)]
        if points[-1, 0] < points[0, 0]:
            points = points[::-1]
        stretches.append((float(np.hypot(*np.diff(points, axis=0).T).sum()), name, points))
    stretches.sort(key=lambda s: (-s[0], s[1]))
    return [
        {"name": name, "length_m": round(metres, 1), "points": points.round(1).tolist()}
        for metres, name, points in stretches[:limit]
    ]


def street_map(city: City, node_ids: list[str], *, margin_m: float = 120.0) -> dict[str, Any]:
    """The streets around ``node_ids`` as line segments in metres (y north), for an SVG map.

    Returns
    -------
    dict
        ``bounds`` ``[x0, y0, x1, y1]``, ``segments`` ``[[x1, y1, x2, y2], ...]``,
        ``nodes`` ``{id: [x, y]}`` of the given nodes, ``corners`` (latitude and
        longitude of the bounds' south-west and north-east corners), ``streets`` (names to
        write along the streets, :func:`street_labels`) and ``scale_m`` (the length of the
        scale bar, :func:`scale_bar_m` of the larger side; 0 for an empty map).
    """
    graph = city.graph
    known = [graph.index(n) for n in node_ids if n in graph]
    located = [n for n in known if graph.located[n]]
    if not located:
        empty = {"bounds": [0, 0, 1, 1], "segments": [], "nodes": {}}
        return {**empty, "streets": [], "scale_m": 0}
    xy = graph.xy
    pts = xy[np.asarray(located)]
    lo, hi = pts.min(axis=0) - margin_m, pts.max(axis=0) + margin_m
    src, dst = graph.edge_sources, graph.targets.astype(np.int64)
    inside = np.all((xy >= lo) & (xy <= hi), axis=1) & graph.located
    keep = (src < dst) & (inside[src] | inside[dst])
    segments = np.column_stack([xy[src[keep]], xy[dst[keep]]]).round(1).tolist()
    nodes = {str(graph.ids[n]): xy[n].round(1).tolist() for n in located}
    lat, lng = graph.projection.inverse([lo[0], hi[0]], [lo[1], hi[1]])
    return {
        "bounds": [*lo.round(1).tolist(), *hi.round(1).tolist()],
        "segments": segments,
        "nodes": nodes,
        # lat/lng of the bounds' corners (south-west, north-east), to place map tiles
        "corners": [[float(lat[0]), float(lng[0])], [float(lat[1]), float(lng[1])]],
        "streets": street_labels(city, inside),
        "scale_m": scale_bar_m(float(np.max(hi - lo))),
    }


def view_size(width: str | None) -> tuple[int, int]:
    """``(width, height)`` of a view asked for ``width`` pixels wide (height two thirds of
    it); :data:`VIEW_SIZE` when ``width`` is None or empty.

    Raises
    ------
    FlaneurError
        When ``width`` is not a whole number of pixels within :data:`VIEW_WIDTHS`.
    """
    if not width:
        return VIEW_SIZE
    lo, hi = VIEW_WIDTHS
    text = width.strip()
    if not (text.isascii() and text.isdigit() and len(text) < 6 and lo <= int(text) <= hi):
        raise FlaneurError(f"width must be a whole number of pixels from {lo} to {hi}")
    return int(text), int(text) * 2 // 3


class ViewService:
    """Synthetic street views of the served cities, cached on disk as PNG files.

    Parameters
    ----------
    cache_dir
        Folder of the view cache (default ``$FLANEUR_CACHE_DIR/views``).
    """

    def __init__(self, cache_dir: Path | None = None) -> None:

        self.cache = ViewCache(cache_dir)
        self._providers: dict[str, Any] = {}
        self._png: dict[tuple[str, str, int, int], bytes] = {}
        self._lock = threading.Lock()

    def provider(self, city: City) -> Any:
        """The synthetic provider of ``city`` (built once)."""

        with self._lock:
            if city.name not in self._providers:
                self._providers[city.name] = SyntheticViews(
                    city, cache=self.cache, scene_cache=True
                )
            return self._providers[city.name]

    def real(self, spec: str, city: City) -> Any:
        """The offline provider of a run's ``--views`` value (see the module docstring), or
        None for the synthetic renderer, other providers and a panorama folder now gone."""
        kind, _, arg = spec.partition(":")
        if kind not in REAL_IMAGERY:
            return None
        with self._lock:
            key = f"{spec}@{city.name}"
            if key not in self._providers:
                self._providers[key] = self._make_real(kind, arg, city)
            return self._providers[key]

    def _make_real(self, kind: str, arg: str, city: City) -> Any:
        # lazy: httpx takes 0.18 s to import
        import httpx

        if kind == "panorama":
            try:
                return PanoramaFolder(Path(arg), city.graph, cache=self.cache)
            except ViewError:
                return None
        client = httpx.Client(transport=httpx.MockTransport(_refuse))
        if kind == "google":
            return GoogleStreetView(city.graph, key=OFFLINE_KEY, cache=self.cache, client=client)
        return Mapillary(city.graph, token=OFFLINE_KEY, cache=self.cache, client=client)

    def real_png(
        self,
        spec: str,
        city: City,
        node_id: str,
        heading: float,
        fov: float,
        size: tuple[int, int] = VIEW_SIZE,
    ) -> bytes | None:
        """The run's own imagery at ``node_id`` facing ``heading`` as PNG bytes of ``size``,
        or None.

        Cached views are looked up as agents' image sensors ask for them (their size, fov 60
        or 45 degrees) and as the app asks (its size); panorama cuts are made at once."""
        provider = self.real(spec, city)
        if provider is None or node_id not in city.graph:
            return None
        tries = [(fov, size), (fov, VIEW_SIZE)]
        if spec.partition(":")[0] != "panorama":
            tries = [(fov, DEFAULT_SIZE), (60.0, DEFAULT_SIZE), (45.0, DEFAULT_SIZE), *tries]
        for f, asked in dict.fromkeys(tries):
            try:
                view = provider.view(node_id, heading, fov=f, size=asked)
            except (ViewError, FlaneurError, OSError, ValueError):
                continue
            image = view.image if view.image.size == size else view.image.resize(size)
            buffer = io.BytesIO()
            image.save(buffer, format="PNG", compress_level=1)
            return buffer.getvalue()
        return None

    def png(
        self,
        city: City,
        node_id: str,
        heading: float,
        fov: float = 60.0,
        size: tuple[int, int] = VIEW_SIZE,
    ) -> bytes:
        """The synthetic view at ``node_id`` facing ``heading`` as PNG bytes of ``size``
        (kept in memory at the app's own size :data:`VIEW_SIZE`; other sizes come from the
        view cache on disk)."""
        if node_id not in city.graph:
            raise FlaneurError(f"no node {node_id!r} in {city.name}")
        key = (city.name, node_id, round(heading) % 360, round(fov))
        data = self._png.get(key) if size == VIEW_SIZE else None
        if data is None:
            view = self.provider(city).view(node_id, float(key[2]), fov=float(key[3]), size=size)
            buffer = io.BytesIO()
            view.image.save(buffer, format="PNG", compress_level=1)
            data = buffer.getvalue()
            if size == VIEW_SIZE:
                with self._lock:
                    if len(self._png) > 2000:
                        self._png.clear()
                    self._png[key] = data
        return data


def view_directions(city: City, node_id: str, heading: float, scheme: str) -> list[dict]:
    """The views shown at one step: ahead, left and right for ``turns``; one view down each
    street for ``headings`` and ``nodes`` (labelled by compass heading)."""
    if scheme == "turns" or node_id not in city.graph:
        sides = (("left", -90.0), ("ahead", 0.0), ("right", 90.0))
        return [{"label": label, "heading": (heading + offset) % 360.0} for label, offset in sides]
    graph = city.graph
    node = graph.index(node_id)
    return [
        {"label": f"street {k}", "heading": float(h)}
        for k, h in enumerate(graph.out_headings(node).tolist(), start=1)
    ]

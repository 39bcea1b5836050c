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


def street_map(city: City, node_ids: list[str], *, margin_m: float = 120.0) -> dict[str, Any]:
    """The streets around ``node_ids`` as line segments in metres (y north), for an SVG map.

    Returns
    -------
    dict
        ``bounds`` ``[x0, y0, x1, y1]``, ``segments`` ``[[x1, y1, x2, y2], ...]``,
        ``nodes`` ``{id: [x, y]}`` of the given nodes and ``corners`` (latitude and
        longitude of the bounds' south-west and north-east corners).
    """
    graph = city.graph
    known = [graph.index(n) for n in node_ids if n in graph]
    located = [n for n in known if graph.located[n]]
    if not located:
        return {"bounds": [0, 0, 1, 1], "segments": [], "nodes": {}}
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
    }


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
        self, spec: str, city: City, node_id: str, heading: float, fov: float
    ) -> bytes | None:
        """The run's own imagery at ``node_id`` facing ``heading`` as PNG bytes, or None.

        Cached views are looked up as agents' image sensors ask for them (their size, fov 60
        or 45 degrees) and as the app asks (its size); panorama cuts are made at once."""
        provider = self.real(spec, city)
        if provider is None or node_id not in city.graph:
            return None
        tries = [(fov, VIEW_SIZE)]
        if spec.partition(":")[0] != "panorama":
            tries = [(fov, DEFAULT_SIZE), (60.0, DEFAULT_SIZE), (45.0, DEFAULT_SIZE), *tries]
        for f, size in dict.fromkeys(tries):
            try:
                view = provider.view(node_id, heading, fov=f, size=size)
            except (ViewError, FlaneurError, OSError, ValueError):
                continue
            image = view.image if view.image.size == VIEW_SIZE else view.image.resize(VIEW_SIZE)
            buffer = io.BytesIO()
            image.save(buffer, format="PNG", compress_level=1)
            return buffer.getvalue()
        return None

    def png(self, city: City, node_id: str, heading: float, fov: float = 60.0) -> bytes:
        """The synthetic view at ``node_id`` facing ``heading`` as PNG bytes."""
        if node_id not in city.graph:
            raise FlaneurError(f"no node {node_id!r} in {city.name}")
        key = (city.name, node_id, round(heading) % 360, round(fov))
        data = self._png.get(key)
        if data is None:
            view = self.provider(city).view(
                node_id, float(key[2]), fov=float(key[3]), size=VIEW_SIZE
            )
            buffer = io.BytesIO()
            view.image.save(buffer, format="PNG", compress_level=1)
            data = buffer.getvalue()
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

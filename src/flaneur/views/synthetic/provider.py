"""``SyntheticViews``: the offline view provider that renders street scenes from the city model."""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import threading
from pathlib import Path
from typing import Any, ClassVar

from flaneur.paths import cache_dir
from flaneur.views.base import DEFAULT_SIZE, NoImageryError
from flaneur.views.cache import ViewCache
from flaneur.views.cached import CachedViewProvider, Fetched, Plan, ViewRequest
from flaneur.views.synthetic.camera import Camera
from flaneur.views.synthetic.labels import LabelParams
from flaneur.views.synthetic.layout import layout_signs
from flaneur.views.synthetic.painter import Style, paint
from flaneur.views.synthetic.scene import Scene, SceneParams
from flaneur.views.synthetic.signs import SignParams, Signs
from flaneur.world.city import City

RENDER_VERSION = 2
"""Bumped whenever the renderer's output changes (it is part of every cache key)."""


def city_fingerprint(city: City) -> str:
    """A short hash of what the renderer draws from ``city`` (graph, places, buildings)."""
    h = hashlib.sha1(city.name.encode())
    g = city.graph
    for arr in (g.lat, g.lng, g.indptr, g.targets):
        h.update(arr.tobytes())
    h.update("\x1f".join(city.places.names.tolist()).encode())
    h.update(city.places.lat.tobytes() + city.places.lng.tobytes())
    h.update(str(len(city.buildings)).encode() + city.building_heights.tobytes())
    h.update("\x1f".join(city.furniture.kinds.tolist()).encode())
    h.update(city.furniture.lat.tobytes() + city.furniture.lng.tobytes())
    for geom in city.buildings[:: max(1, len(city.buildings) // 64)]:
        h.update(geom.wkb if geom is not None else b"")
    return h.hexdigest()[:16]


def _read_scene(path: Path) -> tuple[Scene, Signs] | None:
    """A cached ``(scene, signs)``, or None when missing or unreadable (then rebuilt)."""
    try:
        with path.open("rb") as handle:
            scene, signs = pickle.load(handle)
    except Exception:  # missing, cut or stale: rebuild (and overwrite it)
        return None
    if not isinstance(scene, Scene) or not isinstance(signs, Signs):
        return None
    return scene, signs


def _write_scene(path: Path, value: tuple[Scene, Signs]) -> None:
    """Write the cache file atomically (a temporary file of this process and thread, then
    a rename). The cache is best effort: a failed write leaves no file and raises nothing."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}-{threading.get_ident()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


class SyntheticViews(CachedViewProvider):
    """Render perspective street views of any node, heading, pitch and fov of a city.

    The scene (walls from building footprints or synthesised along streets, streets, and
    storefront signs carrying place names) is built once, on the first view. Rendering is
    deterministic, needs no GPU and takes a few tens of milliseconds.

    Parameters
    ----------
    city
        The city model.
    cache
        A :class:`ViewCache`, a cache folder, ``True`` for the default cache folder, or
        ``None`` (default) for an in-memory cache only.
    eye_height
        Camera height above the ground in metres (a street-view car: 2.5 m).
    scene_params, sign_params, style
        Dimensions and colours of the scene.
    labels
        Line-of-sight labels for places in view whose own signs are out of sight
        (:mod:`flaneur.views.synthetic.labels`); ``False`` draws static signs only.
    memory_items
        Size of the in-memory cache when ``cache`` is None.
    scene_cache
        Keep the built scene on disk and load it next time: a folder, ``True`` for
        ``$FLANEUR_CACHE_DIR/scenes``, or ``None`` (default) to build it in every process.
        Building takes seconds on a large city (Manhattan: about 5 s), loading a few tens
        of milliseconds. The files are pickles keyed by the city's fingerprint, the renderer
        version and the scene parameters; only load caches you wrote yourself.
    """

    name: ClassVar[str] = "synthetic"

    def __init__(
        self,
        city: City,
        *,
        cache: ViewCache | str | Path | bool | None = None,
        eye_height: float = 2.5,
        scene_params: SceneParams | None = None,
        sign_params: SignParams | None = None,
        style: Style | None = None,
        labels: LabelParams | bool = True,
        memory_items: int = 128,
        scene_cache: str | Path | bool | None = None,
    ) -> None:
        self.city = city
        self.graph = city.graph
        if cache is True:
            cache = ViewCache()
        elif isinstance(cache, str | Path):
            cache = ViewCache(cache)
        self.cache: ViewCache = cache or ViewCache.in_memory(memory_items)
        self.eye_height = eye_height
        self.scene_params = scene_params or SceneParams()
        self.sign_params = sign_params or SignParams()
        self.style = style or Style()
        if labels is True:
            labels = LabelParams()
        self.label_params: LabelParams | None = labels or None
        self._scene: Scene | None = None
        self._signs: Signs | None = None
        self._fingerprint: str | None = None
        self._lock = threading.Lock()
        self.scene_cache: Path | None = (
            cache_dir("scenes")
            if scene_cache is True
            else Path(scene_cache).expanduser()
            if scene_cache
            else None
        )

    def __repr__(self) -> str:
        return f"SyntheticViews({self.city.name!r}, cache={self.cache!r})"

    # ------------------------------------------------------------------ scene
    def prepare(self) -> SyntheticViews:
        """Build the scene geometry now (otherwise it is built on the first view)."""
        with self._lock:  # threads of one run share the provider: build once
            if self._scene is None:
                self._build_or_load()
        return self

    def _build_or_load(self) -> None:
        path = self._scene_path()
        loaded = _read_scene(path) if path is not None else None
        if loaded is not None:
            self._scene, self._signs = loaded
            return
        self._scene = Scene.build(self.city, self.scene_params)
        self._signs = layout_signs(self.city, self._scene, self.sign_params)
        if path is not None:
            _write_scene(path, (self._scene, self._signs))

    def _scene_path(self) -> Path | None:
        if self.scene_cache is None:
            return None
        key = repr((RENDER_VERSION, self.fingerprint, self.scene_params, self.sign_params))
        name = hashlib.sha1(key.encode()).hexdigest()[:20]
        return self.scene_cache / f"{self.city.name}-{name}.pkl"

    @property
    def scene(self) -> Scene:
        """The scene geometry (built on first use)."""
        scene = self.prepare()._scene
        assert scene is not None, "prepare() builds it"
        return scene

    @property
    def signs(self) -> Signs:
        """The laid-out storefront signs (built on first use)."""
        signs = self.prepare()._signs
        assert signs is not None, "prepare() builds them"
        return signs

    @property
    def fingerprint(self) -> str:
        """Hash of the city content that enters every cache key."""
        if self._fingerprint is None:
            self._fingerprint = city_fingerprint(self.city)
        return self._fingerprint

    # ------------------------------------------------------------------ views
    def request(self, node: int, heading: float, pitch: float, fov: float, size) -> dict:
        """The cache-key dict of a normalised request."""
        return {
            "provider": self.name,
            "version": RENDER_VERSION,
            "city": self.fingerprint,
            "node": str(self.city.graph.ids[node]),
            "heading": heading,
            "pitch": pitch,
            "fov": fov,
            "size": list(size),
            "eye": self.eye_height,
            "params": repr((self.scene_params, self.sign_params, self.style, self.label_params)),
        }

    def validate(self, request: ViewRequest) -> None:
        """Only located nodes can be rendered."""
        if not self.city.graph.located[request.index]:
            raise NoImageryError(
                f"node {request.node_id!r} has no known position; nothing to render"
            )

    def plan(self, request: ViewRequest) -> Plan:
        """The key of a rendering: city content, camera, renderer version and parameters."""
        r = request
        return Plan(self.request(r.index, r.heading, r.pitch, r.fov, r.size))

    def fetch(self, request: ViewRequest, plan: Plan) -> Fetched:
        """Render the view (see :meth:`render`)."""
        r = request
        image, meta = self.render(r.index, r.heading, pitch=r.pitch, fov=r.fov, size=r.size)
        return Fetched(image, meta)

    def render(
        self,
        node: int,
        heading: float,
        *,
        pitch: float = 0.0,
        fov: float = 60.0,
        size: tuple[int, int] = DEFAULT_SIZE,
    ) -> tuple[Any, dict[str, Any]]:
        """Render without validation or caching: ``(PIL image, metadata)``."""
        x, y = self.city.graph.xy[node]
        camera = Camera(float(x), float(y), self.eye_height, heading, pitch, fov, *size)
        objects: list[dict] = []
        image, drawn = paint(
            self.scene,
            self.signs,
            camera,
            self.style,
            self.label_params,
            furniture=self.city.furniture,
            objects=objects,
        )
        ids = self.city.places.ids
        meta = {
            "signs": [
                {
                    "place_id": str(ids[d["place"]]),
                    "name": d["name"],
                    "kind": d["kind"],
                    "box": d["box"],
                }
                for d in drawn
            ],
            "objects": objects,
        }
        return image, meta

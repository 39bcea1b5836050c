"""Stored CLIP reference sets: VELMA's threshold set for any city and imagery.

VELMA sees a landmark in a view when the CLIP similarity of the view and ``"picture of
{landmark}"``, standardised per landmark over the image embeddings of the seen area's
panoramas, reaches 3.5 (``vln/env.py`` l.41-61, ``vln/clip.py``: the five 60-degree slices
of every panorama heading it embedded, 800x460 pixels). :class:`CLIPLandmarks` needs such
a reference set; ``flaneur perception clip-reference`` builds one for any city and any view
provider (:func:`build_reference`): views of seeded random viewpoints and headings -
viewpoints outside the city's ``unseen`` node set where it has one, as VELMA's seen
panoramas - embedded by an open_clip model and stored beside the city pack; ``--landmarks
clip`` standardises on the stored set (:func:`stored_clip_scorer`: VELMA requires one, Ling
uses one when it exists).

Layout
------
``<pack>/clip_reference/<name>.npz`` holds ``embeddings`` (float32 ``(n, d)``, unit rows),
``nodes`` (the viewpoint ids) and ``headings`` (degrees); ``<name>.json`` beside it the
provenance: format and version, the city (name, fingerprint, viewpoints), the views
(``spec`` as ``--views`` takes it, ``identity``), the model (``model``, ``weights`` as
given, ``identity`` with a fingerprint of the weights file or folder, ``backend``,
``dim``), ``size``, ``seed``, ``fov``, ``pitch``, ``image_size``, ``drawn_from`` (``seen``
or ``located``), ``skipped`` viewpoints without imagery, what VELMA standardises with
(caption, tau, the standard deviation) and timings. ``<pack>`` is the folder the city was
loaded from (:attr:`flaneur.world.city.City.pack`); where it is not writable, or the city
has none, the sets live in ``$FLANEUR_CACHE_DIR/clip_reference/<city>-<fingerprint>/``
(both places are searched). ``<name>`` is ``<views>-<model>-n<size>-s<seed>-fov<fov>-
<hash>``, the hash covering the views' and the model's identities, the size, the seed and the
field of view: one file per key, rebuilt in place.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from flaneur.paths import cache_dir
from flaneur.perception.landmarks.clip import CLIPError, CLIPLandmarks, OpenCLIPBackend
from flaneur.views.base import DEFAULT_SIZE, NoImageryError, ProviderError, View, ViewError
from flaneur.views.synthetic import RENDER_VERSION, SyntheticViews
from flaneur.views.synthetic.provider import city_fingerprint
from flaneur.world.city import City

FOLDER = "clip_reference"
"""The folder of the reference sets inside a city pack."""
FORMAT = "flaneur-clip-reference"
FORMAT_VERSION = 1
DEFAULT_VIEWS = 256
"""Views of a reference set built by ``flaneur perception clip-reference``."""
DEFAULT_MODEL = "ViT-B-32"
"""The open_clip architecture used unless one is named."""
VELMA_FOV = 60.0
"""Field of view of VELMA's five views (its ``PanoCLIP(fov=60)``) and of its observer here."""
VELMA_TAU = 3.5
"""VELMA's visibility threshold on the standardised score (``--image_threshold 3.5``)."""
CAPTION = "picture of {landmark}"
"""VELMA's caption (``--image_prompt 'picture of {}'``)."""
_CHUNK = 1 << 20


class MissingReferenceError(CLIPError):
    """No reference set is stored for a city, its views and a model; ``command`` builds one."""

    def __init__(self, message: str, command: str) -> None:
        super().__init__(message)
        self.command = command


# ------------------------------------------------------------------ identities
def views_spec(provider: Any) -> str:
    """The ``--views`` value that makes ``provider`` (``synthetic``, ``panorama:DIR``, a
    plug-in's name, else ``package.module:Class``)."""
    name = str(getattr(provider, "name", "") or "")
    folder = getattr(provider, "folder", None)
    if name and folder is not None:
        return f"{name}:{Path(folder).expanduser().resolve()}"
    if name:
        return name
    return f"{type(provider).__module__}:{type(provider).__qualname__}"


def views_identity(provider: Any) -> str:
    """What a reference set's views depend on: the provider's spec, with the renderer's
    version for synthetic views."""
    spec = views_spec(provider)
    return f"{spec}@render{RENDER_VERSION}" if isinstance(provider, SyntheticViews) else spec


def _file_digest(path: Path, h: Any) -> None:
    """Feed ``h`` a file's size and its first and last MiB (fast on weights of a GB)."""
    size = path.stat().st_size
    h.update(f"{path.name}:{size}:".encode())
    with path.open("rb") as handle:
        h.update(handle.read(_CHUNK))
        if size > 2 * _CHUNK:
            handle.seek(size - _CHUNK)
            h.update(handle.read(_CHUNK))


def clip_identity(model: str, weights: str) -> str:
    """The identity of an open_clip model as :class:`OpenCLIPBackend` loads it: a folder in
    open_clip's format (``local-dir:``) or ``model:`` a weights file (both by a fingerprint of
    the files: sizes, first and last MiB) or a pretrained tag."""
    for candidate in (weights, model):
        folder = Path(candidate).expanduser() if candidate else None
        if folder is not None and folder.is_dir():
            h = hashlib.sha1()
            for item in sorted(p for p in folder.iterdir() if p.is_file()):
                _file_digest(item, h)
            return f"local-dir:{h.hexdigest()[:16]}"
    file = Path(weights).expanduser() if weights else None
    if file is not None and file.is_file():
        h = hashlib.sha1()
        _file_digest(file, h)
        return f"{model}:file:{h.hexdigest()[:16]}"
    return f"{model}:{weights or 'random'}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-.")[:40] or "x"


def _label(model: str, weights: str) -> str:
    for candidate in (weights, model):
        if candidate and Path(candidate).expanduser().is_dir():
            return _slug(Path(candidate).expanduser().resolve().name)
    return _slug(model)


def reference_name(
    views: str,
    model: str,
    weights: str,
    identities: tuple[str, str],
    size: int,
    seed: int,
    fov: float,
) -> str:
    """``<views>-<model>-n<size>-s<seed>-fov<fov>-<hash>`` (see the module docstring)."""
    key = json.dumps([*identities, size, seed, float(fov)])
    digest = hashlib.sha1(key.encode()).hexdigest()[:8]
    kind, _, arg = views.partition(":")
    shown = _slug(f"{kind}-{Path(arg).name}" if arg else kind)
    return f"{shown}-{_label(model, weights)}-n{size}-s{seed}-fov{fov:g}-{digest}"


# ------------------------------------------------------------------ where sets live
def reference_folders(city: City, fingerprint: str | None = None) -> list[Path]:
    """Where ``city``'s reference sets are looked for: its pack's ``clip_reference``, then
    the cache's folder of the city (see the module docstring)."""
    folders = [city.pack / FOLDER] if city.pack is not None else []
    fingerprint = fingerprint or city_fingerprint(city)
    return [*folders, cache_dir(FOLDER) / f"{_slug(city.name)}-{fingerprint}"]


def writable_folder(city: City, fingerprint: str) -> tuple[Path, str]:
    """``(folder, "pack" or "cache")``: the pack's ``clip_reference`` when the pack is
    writable, else the cache's folder of the city."""
    if city.pack is not None and city.pack.is_dir():
        target = city.pack / FOLDER
        try:
            target.mkdir(exist_ok=True)
        except OSError:  # a read-only pack (a package, a shared folder): the cache
            pass
        else:
            if os.access(target, os.W_OK | os.X_OK):
                return target, "pack"
    return cache_dir(FOLDER, f"{_slug(city.name)}-{fingerprint}"), "cache"


# ------------------------------------------------------------------ the stored set
@dataclass
class ReferenceSet:
    """Reference image embeddings of a city's views and their provenance.

    Attributes
    ----------
    embeddings
        ``(n, d)`` float32 unit rows, one per view.
    nodes
        The viewpoint id of each view.
    headings
        The heading of each view, degrees.
    meta
        The provenance (see the module docstring); ``meta["name"]`` names the set.
    path
        The ``.npz`` file it was saved to or loaded from.
    """

    embeddings: NDArray[np.float32]
    nodes: NDArray[np.str_]
    headings: NDArray[np.float64]
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    @property
    def name(self) -> str:
        """The set's name (its file stem)."""
        return str(self.meta["name"])

    def save(self, folder: Path) -> Path:
        """Write ``<name>.npz`` then ``<name>.json`` into ``folder``, each through a
        private temporary file and a rename (a JSON file always has its arrays)."""
        folder.mkdir(parents=True, exist_ok=True)
        tag = f".tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        npz = folder / f"{self.name}.npz"
        tmp = folder / f"{self.name}{tag}.npz"
        np.savez(tmp, embeddings=self.embeddings, nodes=self.nodes, headings=self.headings)
        tmp.replace(npz)
        meta_tmp = folder / f"{self.name}{tag}.json"
        meta_tmp.write_text(json.dumps(self.meta, indent=2), encoding="utf-8")
        meta_tmp.replace(folder / f"{self.name}.json")
        self.path = npz
        return npz

    @classmethod
    def load(cls, path: Path) -> ReferenceSet:
        """A set from its ``.npz`` or ``.json`` file; a bad file is a one-line error."""
        npz, meta_file = path.with_suffix(".npz"), path.with_suffix(".json")
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
            with np.load(npz, allow_pickle=False) as arrays:
                emb, nodes = arrays["embeddings"], arrays["nodes"]
                headings = arrays["headings"]
        except (OSError, ValueError, KeyError) as err:
            raise CLIPError(f"{npz}: not a CLIP reference set ({err})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise CLIPError(f"{meta_file}: not a CLIP reference set (format {FORMAT!r})")
        return cls(emb.astype(np.float32), nodes, headings, meta, npz)

    def scorer(self, backend: Any, *, tau: float = VELMA_TAU, ddof: int = 0) -> CLIPLandmarks:
        """A :class:`CLIPLandmarks` on ``backend`` standardised on this set (VELMA's
        caption; the population standard deviation, or the sample one with ``ddof=1`` as
        VELMA's torch.std; its ``reference`` names the set once it is stored); a backend of
        another embedding size is a one-line error."""
        dim = int(backend.embed_texts([CAPTION.format(landmark="a street")]).shape[1])
        if dim != self.embeddings.shape[1]:
            raise CLIPError(
                f"CLIP reference set {self.name}: embeddings of size {self.embeddings.shape[1]}"
                f", but the model makes {dim}: rebuild it with this model"
            )
        scorer = CLIPLandmarks(backend, tau=tau, caption=CAPTION, ddof=ddof)
        stored = self.name if self.path is not None else None
        return scorer.fit_embeddings(self.embeddings, name=stored)


# ------------------------------------------------------------------ building a set
def _viewpoints(city: City) -> tuple[NDArray[np.int64], str]:
    """The viewpoints to draw from: located nodes outside the ``unseen`` node set where the
    city has one (VELMA's seen panoramas), else every located node."""
    located = np.asarray(city.graph.located, dtype=bool)
    unseen = city.node_sets.get("unseen")
    if unseen is not None and (located & ~unseen).any():
        return np.flatnonzero(located & ~unseen), "seen"
    return np.flatnonzero(located), "located"


def _skippable(err: ViewError) -> bool:
    """A viewpoint without imagery (skipped), not a provider that fails (key, quota)."""
    return isinstance(err, NoImageryError) or not isinstance(err, ProviderError)


@dataclass
class _Draw:
    """Views of seeded random viewpoints and headings; viewpoints without imagery are
    skipped, and once all were tried the ones with imagery are drawn again."""

    provider: Any
    nodes: NDArray[np.int64]
    rng: np.random.Generator
    fov: float
    image_size: tuple[int, int]
    skipped: int = 0
    last_error: str = ""

    def views(self, size: int) -> Iterator[tuple[int, float, View]]:
        """``(node index, heading, view)`` of ``size`` views."""
        pool, first, made = self.rng.permutation(self.nodes), True, 0
        good: list[int] = []
        while made < size:
            for node in pool:
                heading = float(self.rng.uniform(0.0, 360.0))
                try:
                    view = self.provider.view(
                        int(node), heading, fov=self.fov, size=self.image_size
                    )
                except ViewError as err:
                    if not _skippable(err):
                        raise
                    self.skipped += 1
                    self.last_error = str(err)
                    continue
                if first:
                    good.append(int(node))
                yield int(node), heading, view
                made += 1
                if made == size:
                    return
            if not good:
                raise CLIPError(
                    f"no view at any of the {len(self.nodes)} viewpoints ({self.last_error})"
                )
            pool, first = self.rng.permutation(np.asarray(good)), False


def _embed_views(
    draw: _Draw, backend: Any, size: int, progress: Callable[[int], None] | None
) -> tuple[NDArray[np.float32], list[str], list[float], dict[str, float]]:
    """Embed ``size`` drawn views, ``batch_size`` at a time; also the render and embed
    seconds."""
    batch = max(1, int(getattr(backend, "batch_size", 32)))
    rows: list[NDArray[np.float32]] = []
    nodes: list[str] = []
    headings: list[float] = []
    images: list[Any] = []
    seconds = {"render": 0.0, "embed": 0.0}
    start = time.perf_counter()
    for _, heading, view in draw.views(size):
        images.append(view.image)
        nodes.append(str(view.node))
        headings.append(heading)
        if len(images) == batch or len(nodes) == size:
            seconds["render"] += time.perf_counter() - start
            start = time.perf_counter()
            rows.append(np.asarray(backend.embed_images(images), dtype=np.float32))
            seconds["embed"] += time.perf_counter() - start
            if progress is not None:
                progress(len(images))
            images = []
            start = time.perf_counter()
    return np.concatenate(rows), nodes, headings, seconds


def build_reference(
    city: City,
    views: Any,
    backend: Any,
    *,
    model: str,
    weights: str,
    size: int = DEFAULT_VIEWS,
    seed: int = 0,
    fov: float = VELMA_FOV,
    image_size: tuple[int, int] = DEFAULT_SIZE,
    progress: Callable[[int], None] | None = None,
) -> ReferenceSet:
    """Draw ``size`` views of ``city`` through ``views`` and embed them with ``backend``.

    Parameters
    ----------
    city, views
        The city and a view provider of it (``views_from_spec``).
    backend
        The embedding backend (:class:`OpenCLIPBackend` of ``model`` and ``weights``).
    model, weights
        What the backend was made from (recorded, and the set's key).
    size, seed
        Views to draw (at least two) and the seed of the viewpoints and headings.
    fov, image_size
        Each view's field of view and ``(width, height)``; VELMA's by default.
    progress
        Called with the number of views embedded after each batch.
    """
    if size < 2:
        raise CLIPError(f"a reference set needs at least two views, not {size}")
    nodes, drawn_from = _viewpoints(city)
    if len(nodes) == 0:
        raise CLIPError(f"city {city.name!r} has no located viewpoint to draw views from")
    draw = _Draw(views, nodes, np.random.default_rng(seed), float(fov), image_size)
    start = time.time()
    emb, ids, headings, seconds = _embed_views(draw, backend, size, progress)
    fingerprint = city_fingerprint(city)
    spec, identities = views_spec(views), (views_identity(views), clip_identity(model, weights))
    meta: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "name": reference_name(spec, model, weights, identities, size, seed, fov),
        "city": {"name": city.name, "fingerprint": fingerprint, "viewpoints": len(nodes)},
        "views": {"spec": spec, "identity": identities[0]},
        "clip": {
            "model": model,
            "weights": weights,
            "identity": identities[1],
            "backend": str(getattr(backend, "name", type(backend).__name__)),
            "dim": int(emb.shape[1]),
        },
        "size": size,
        "seed": seed,
        "fov": float(fov),
        "pitch": 0.0,
        "image_size": list(image_size),
        "drawn_from": drawn_from,
        "skipped": draw.skipped,
        "standardise": {
            "caption": CAPTION,
            "tau": VELMA_TAU,
            "std": "population (ddof 0) by default; the sample one (ddof 1, VELMA's "
            "torch.std) for VELMA under --protocol paper",
        },
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start)),
    }
    return ReferenceSet(emb, np.asarray(ids, dtype=str), np.asarray(headings), meta)


# ------------------------------------------------------------------ finding a set
def stored_references(city: City, fingerprint: str | None = None) -> list[dict[str, Any]]:
    """The provenance of every reference set stored for ``city`` (its ``path`` added),
    sets of another version of the city left out."""
    fingerprint = fingerprint or city_fingerprint(city)
    found = []
    for folder in reference_folders(city, fingerprint):
        for meta_file in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                meta = json.loads(meta_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                continue
            if (meta.get("city") or {}).get("fingerprint") != fingerprint:
                continue
            if meta_file.with_suffix(".npz").is_file():
                found.append({**meta, "path": str(meta_file.with_suffix(".npz"))})
    return found


def find_reference(
    city: City, views: Any, model: str, weights: str, *, fov: float = VELMA_FOV, name: str = ""
) -> ReferenceSet | None:
    """The stored set of ``city`` for ``views``, ``model`` and ``weights``: the one named
    ``name`` (a set's name or its file), else the one of field of view ``fov`` first, then
    the largest, then the lowest seed; ``None`` when none is stored."""
    identities = (views_identity(views), clip_identity(model, weights))
    if name and Path(name).expanduser().suffix in (".npz", ".json"):
        chosen = ReferenceSet.load(Path(name).expanduser())
        _check_identities(chosen.meta, identities)
        return chosen
    metas = stored_references(city)
    if name:
        named = [m for m in metas if m.get("name") == name]
        if not named:
            known = ", ".join(sorted(str(m.get("name")) for m in metas)) or "none"
            raise CLIPError(f"no CLIP reference set {name!r} for city {city.name!r} ({known})")
        _check_identities(named[0], identities)
        return ReferenceSet.load(Path(named[0]["path"]))
    fits = [m for m in metas if _identities(m) == identities]
    if not fits:
        return None
    best = min(
        fits, key=lambda m: (m.get("fov") != fov, -int(m["size"]), int(m["seed"]), m["name"])
    )
    return ReferenceSet.load(Path(best["path"]))


def _identities(meta: dict[str, Any]) -> tuple[Any, Any]:
    """``(views identity, model identity)`` of a set's provenance."""
    return (meta.get("views") or {}).get("identity"), (meta.get("clip") or {}).get("identity")


def _check_identities(meta: dict[str, Any], identities: tuple[str, str]) -> None:
    """A named set made from other views or by another model is a one-line error."""
    views, clip = meta.get("views") or {}, meta.get("clip") or {}
    if views.get("identity") != identities[0]:
        raise CLIPError(
            f"CLIP reference set {meta.get('name')} was made from views {views.get('spec')}, "
            f"not the run's ({identities[0]})"
        )
    if clip.get("identity") != identities[1]:
        raise CLIPError(
            f"CLIP reference set {meta.get('name')} was made by {clip.get('model')} "
            f"{clip.get('weights')}, not the run's model ({identities[1]})"
        )


def city_argument(city: City) -> str:
    """What names ``city`` on the command line: a built-in city's name, else its pack."""
    # lazy: world.builtin imports pyrosm, needed here only to word a hint
    from flaneur.world.builtin import BUILTIN_CITIES

    if city.name in BUILTIN_CITIES or city.pack is None:
        return city.name
    return str(city.pack)


def reference_command(city: City, views: Any, model: str, weights: str) -> str:
    """The ``flaneur perception clip-reference`` command that stores the set."""
    words = ["flaneur", "perception", "clip-reference", city_argument(city)]
    words += ["--views", views_spec(views)]
    if model != DEFAULT_MODEL:
        words += ["--clip-model", model]
    words += ["--clip-weights", weights]
    return shlex.join(words)


# ------------------------------------------------------------------ scorers
_BACKENDS: dict[tuple[str, str], OpenCLIPBackend] = {}
_SCORERS: dict[tuple[Any, ...], CLIPLandmarks] = {}
_LOCK = threading.Lock()


def clip_backend(model: str, weights: str) -> OpenCLIPBackend:
    """One :class:`OpenCLIPBackend` per model and weights in a process."""
    with _LOCK:
        key = (model, weights)
        if key not in _BACKENDS:
            _BACKENDS[key] = OpenCLIPBackend(model, weights or None)
        return _BACKENDS[key]


def stored_clip_scorer(
    city: City,
    views: Any,
    model: str,
    weights: str,
    *,
    fov: float = VELMA_FOV,
    name: str = "",
    tau: float = VELMA_TAU,
    ddof: int = 0,
) -> CLIPLandmarks:
    """``CLIPLandmarks`` on open_clip ``model``/``weights`` standardised on the reference set
    stored for ``city`` and ``views`` (:func:`find_reference`) with the population standard
    deviation (``ddof=0``) or the sample one (``ddof=1``, VELMA's); one per set, model, tau
    and ddof in a process (its ``reference`` names the set).

    Raises
    ------
    MissingReferenceError
        None is stored: one line naming the command that builds it.
    """
    key = (city.name, str(city.pack), views_identity(views), model, weights, fov, name, tau, ddof)
    with _LOCK:
        hit = _SCORERS.get(key)
    if hit is not None:
        return hit
    stored = find_reference(city, views, model, weights, fov=fov, name=name)
    if stored is None:
        command = reference_command(city, views, model, weights)
        raise MissingReferenceError(
            f"no CLIP reference set is stored for city {city.name!r}, views "
            f"{views_spec(views)} and weights {weights or 'random'}: build it with `{command}`",
            command,
        )
    scorer = stored.scorer(clip_backend(model, weights), tau=tau, ddof=ddof)
    with _LOCK:
        return _SCORERS.setdefault(key, scorer)


__all__ = [
    "CAPTION",
    "DEFAULT_MODEL",
    "DEFAULT_VIEWS",
    "VELMA_FOV",
    "VELMA_TAU",
    "MissingReferenceError",
    "ReferenceSet",
    "build_reference",
    "city_argument",
    "clip_backend",
    "clip_identity",
    "find_reference",
    "reference_command",
    "reference_folders",
    "stored_clip_scorer",
    "stored_references",
    "views_identity",
    "views_spec",
    "writable_folder",
]

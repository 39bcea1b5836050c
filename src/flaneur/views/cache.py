"""A disk cache of views keyed by a hash of the request, shared by all providers.

Each entry is two files in ``<folder>/<k[:2]>/``: ``<key>.json`` (the view metadata) and
``<key>.png`` or ``<key>.jpg`` (the image).  Both are written to a temporary file and then
renamed, the image last, so an entry is either complete or absent: a fetch that fails (or
a process that dies half-way) never leaves a partial or wrong entry behind.  A small
in-memory LRU in front of the disk makes repeated views cost a dictionary lookup.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from flaneur.paths import cache_dir


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 of a request dict in canonical JSON (sorted keys, rounded floats).

    Callers must never put secrets (API keys) in ``request``.
    """

    def canon(value: Any) -> Any:
        if isinstance(value, float):
            return round(value, 4)
        if isinstance(value, dict):
            return {str(k): canon(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [canon(v) for v in value]
        return value

    text = json.dumps(canon(request), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class ViewCache:
    """Views (and small JSON lookups) on disk, keyed by :func:`request_key`.

    Parameters
    ----------
    folder
        Cache folder; default ``$FLANEUR_CACHE_DIR/views`` (``~/.cache/flaneur/views``).
    memory_items
        How many decoded images to keep in memory (0 disables the in-memory layer).
    png_compress_level
        zlib level of PNG entries (1 = fast; views are rewritten rarely).
    disk
        False for an in-memory cache only (nothing is written).
    """

    def __init__(
        self,
        folder: str | Path | None = None,
        *,
        memory_items: int = 256,
        png_compress_level: int = 1,
        disk: bool = True,
    ) -> None:
        self.disk = disk
        if not disk:
            self.folder = Path()
        else:
            self.folder = Path(folder).expanduser() if folder is not None else cache_dir("views")
        self.memory_items = memory_items
        self.png_compress_level = png_compress_level
        self._memory: OrderedDict[str, tuple[Image.Image, dict[str, Any]]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @classmethod
    def in_memory(cls, items: int = 256) -> ViewCache:
        """A cache that keeps ``items`` views in memory and writes nothing."""
        return cls(memory_items=items, disk=False)

    def __repr__(self) -> str:
        return f"ViewCache({str(self.folder)!r})" if self.disk else "ViewCache(memory)"

    def _path(self, key: str, suffix: str) -> Path:
        return self.folder / key[:2] / f"{key}{suffix}"

    def _remember(self, key: str, image: Image.Image, meta: dict[str, Any]) -> None:
        if self.memory_items <= 0:
            return
        self._memory[key] = (image.copy(), meta)
        self._memory.move_to_end(key)
        while len(self._memory) > self.memory_items:
            self._memory.popitem(last=False)

    # ------------------------------------------------------------------ images
    def get(self, key: str) -> tuple[Image.Image, dict[str, Any]] | None:
        """The cached ``(image, metadata)`` for ``key``, or None on a miss."""
        hit = self._memory.get(key)
        if hit is not None:
            self._memory.move_to_end(key)
            self.hits += 1
            return hit[0].copy(), dict(hit[1])  # callers may draw on what they get
        if not self.disk:
            self.misses += 1
            return None
        meta_path = self._path(key, ".json")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            image_path = self._path(key, meta["_file_suffix"])
            with Image.open(image_path) as img:
                image = img.convert("RGB")
        except (OSError, ValueError, KeyError, UnidentifiedImageError):
            self.misses += 1
            return None
        meta.pop("_file_suffix", None)
        self._remember(key, image, meta)
        self.hits += 1
        return image, meta

    def put(
        self,
        key: str,
        image: Image.Image,
        meta: dict[str, Any],
        *,
        encoded: bytes | None = None,
        suffix: str = ".png",
    ) -> None:
        """Store a view.

        Parameters
        ----------
        key
            From :func:`request_key`.
        image
            The decoded image (kept in memory).
        meta
            JSON-serialisable metadata.
        encoded
            The image file exactly as fetched (e.g. a provider's JPEG); PNG-encoded from
            ``image`` when None.
        suffix
            File suffix of ``encoded`` (``".jpg"`` or ``".png"``).
        """
        if not self.disk:
            self._remember(key, image, dict(meta))
            return
        if encoded is None:
            buf = io.BytesIO()
            image.save(buf, format="PNG", compress_level=self.png_compress_level)
            encoded, suffix = buf.getvalue(), ".png"
        record = {**meta, "_file_suffix": suffix}
        _atomic_write(self._path(key, ".json"), json.dumps(record).encode())
        _atomic_write(self._path(key, suffix), encoded)
        self._remember(key, image, dict(meta))

    # ------------------------------------------------------------------ JSON lookups
    def get_json(self, key: str) -> Any | None:
        """A cached JSON value (e.g. a panorama lookup), or None."""
        if not self.disk:
            return None
        try:
            return json.loads(self._path(key, ".meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put_json(self, key: str, value: Any) -> None:
        """Store a JSON value atomically."""
        if not self.disk:
            return
        _atomic_write(self._path(key, ".meta.json"), json.dumps(value).encode())

    def clear_memory(self) -> None:
        """Forget the in-memory layer (the disk entries stay)."""
        self._memory.clear()

    def __contains__(self, key: str) -> bool:
        if key in self._memory:
            return True
        return self.disk and any(self._path(key, s).is_file() for s in (".png", ".jpg"))

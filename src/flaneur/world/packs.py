"""The one city-pack cache: build a city once, save it as a pack, load it afterwards.

Every cached city (the built-in ``helsinki``, the cities of task sets) goes through
:func:`cached_city`. It is safe for concurrent processes: a builder writes its pack into a
private temporary folder and renames it into place; when another process got there first,
its (equivalent) pack is kept. Within one process, a memo returns the same
:class:`~flaneur.world.city.City` object for the same key.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from flaneur.paths import cache_dir
from flaneur.world.city import City

_MEMO: dict[str, City] = {}
_LOCK = threading.Lock()


def pack_folder(key: str) -> Path:
    """Where the pack of ``key`` lives: ``cache_dir("cities") / key``."""
    return cache_dir("cities") / key


def cached_city(
    key: str, build: Callable[[], City], *, rebuild: bool = False, memo: bool = True
) -> City:
    """The city of ``key``: from the in-process memo, the pack on disk, or ``build()``.

    Parameters
    ----------
    key
        Cache key that changes whenever the city would (source files, versions).
    build
        Makes the city when no pack exists (or on ``rebuild``).
    rebuild
        Build again and replace the pack.
    memo
        Share one object per key within the process; ``False`` gives a fresh copy each
        call (loaded from the pack).
    """
    pack = pack_folder(key)
    memo_key = str(pack)  # another cache folder is another cache
    with _LOCK:
        if memo and not rebuild and memo_key in _MEMO:
            return _MEMO[memo_key]
    if (pack / "city.json").is_file() and not rebuild:
        city = City.load(pack)
    else:
        city = build()
        save_pack(city, pack, replace=rebuild)
        city.pack = pack
    if memo:
        with _LOCK:
            _MEMO[memo_key] = city
    return city


def save_pack(city: City, pack: Path, *, replace: bool = False) -> None:
    """Write ``city`` to ``pack`` atomically (private temporary folder, then a rename)."""
    tmp = pack.with_name(f"{pack.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    city.save(tmp)
    if replace:
        shutil.rmtree(pack, ignore_errors=True)
    try:
        tmp.rename(pack)
    except OSError:  # another process finished first; its pack is equivalent
        if (pack / "city.json").is_file():
            shutil.rmtree(tmp, ignore_errors=True)
        else:  # a stale, incomplete folder is in the way: replace it
            shutil.rmtree(pack, ignore_errors=True)
            tmp.rename(pack)


def forget(key: str | None = None) -> None:
    """Drop ``key`` (or everything) from the in-process memo."""
    with _LOCK:
        if key is None:
            _MEMO.clear()
        else:
            _MEMO.pop(str(pack_folder(key)), None)


__all__ = ["cached_city", "forget", "pack_folder", "save_pack"]

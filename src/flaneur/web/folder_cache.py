"""Results computed from a run folder's files, kept while those files are unchanged.

The runs list and a run's tables read every row of a log (1,600 rows parse in about 0.2 s);
``flaneur serve`` answers them again on every page load. :class:`FolderCache` keeps each
result under the folder's *stamp* (size and modification time of its log, summary and
manifest) and computes it again only when the stamp changes: a run being written is always
current, a finished one is read once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

STAMPED_FILES = ("episodes.jsonl", "summary.json", "run.json")


def folder_stamp(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """``(name, mtime_ns, size)`` of each of :data:`STAMPED_FILES` present in ``folder``."""
    out = []
    for name in STAMPED_FILES:
        try:
            stat = (folder / name).stat()
        except OSError:
            continue
        out.append((name, stat.st_mtime_ns, stat.st_size))
    return tuple(out)


class FolderCache:
    """At most ``size`` results, least recently used out; safe to share between threads.

    Parameters
    ----------
    size
        How many (what, folder) results are kept.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, Path], tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, what: str, folder: Path, compute: Callable[[], T]) -> T:
        """The result ``what`` of ``folder``: kept, or ``compute()`` when its files changed.

        The stamp is taken before computing, so a file written meanwhile makes the next call
        compute again; callers must not change the value they get."""
        key, stamp = (what, folder), folder_stamp(folder)
        with self._lock:
            kept = self._items.get(key)
            if kept is not None and kept[0] == stamp:
                self._items.move_to_end(key)
                self.hits += 1
                return kept[1]
        value = compute()
        with self._lock:
            self.misses += 1
            self._items[key] = (stamp, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

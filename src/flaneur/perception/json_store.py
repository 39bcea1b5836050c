"""A folder of small JSON results, one file per key: the disk cache of OCR and detectors.

Reads forgive anything (a missing, cut or damaged file is a miss, to be computed again and
overwritten); writes are atomic (a temporary file of this process and thread, then a
rename), so concurrent writers of one key never leave a half-written file.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path
from typing import Any


class JsonStore:
    """``<folder>/<key>.json`` files.

    Parameters
    ----------
    folder
        Where the files live (created on the first write).
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser()

    def __repr__(self) -> str:
        return f"JsonStore({str(self.folder)!r})"

    def path(self, key: str) -> Path:
        """The file of ``key``."""
        return self.folder / f"{key}.json"

    def get(self, key: str) -> Any | None:
        """The stored value of ``key``, or None when missing or unreadable."""
        try:
            return json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON-serialisable) atomically."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.path(key)
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
        try:
            tmp.write_text(json.dumps(value), encoding="utf-8")
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()


__all__ = ["JsonStore"]

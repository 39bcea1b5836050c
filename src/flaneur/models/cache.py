"""A response cache in SQLite, so that re-running an experiment sends no request.

The key is the SHA-256 of the backend identity (kind, base URL, model), every sampling
parameter and the messages, with images replaced by the hash of their bytes
(:func:`request_key`).  Only that hash, the model name and the reply are stored: never the
messages, headers or API key.  The database runs in WAL mode with a busy timeout, so several
threads and processes may read and write it at once.

Modes: ``use`` reads and writes, ``refresh`` writes without reading (overwrites old replies),
``off`` neither reads nor writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flaneur.models.errors import ModelConfigError, ModelError

CACHE_MODES = ("use", "refresh", "off")
KEY_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    response TEXT NOT NULL
) WITHOUT ROWID
"""


def default_cache_path() -> Path:
    """``$FLANEUR_CACHE_DIR/llm.sqlite``, else ``~/.cache/flaneur/llm.sqlite``."""
    base = os.environ.get("FLANEUR_CACHE_DIR")
    if base:
        return Path(base).expanduser() / "llm.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return root / "flaneur" / "llm.sqlite"


def request_key(identity: Mapping[str, Any], params: Mapping[str, Any], messages: Any) -> str:
    """Hash a request into a cache key.

    Parameters
    ----------
    identity
        Backend kind, base URL and model name (never credentials).
    params
        Every sampling parameter sent with the request.
    messages
        The messages in :func:`flaneur.models.messages.key_form`.

    Returns
    -------
    str
        64 hex digits.
    """
    blob = json.dumps(
        [KEY_VERSION, identity, params, messages],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite-backed store of model replies.

    Parameters
    ----------
    path
        Database file; :func:`default_cache_path` when ``None``.  Created on first write.
    mode
        ``"use"``, ``"refresh"`` or ``"off"``.

    Attributes
    ----------
    hits, misses, writes
        Counters of this object's lookups and stores.
    """

    def __init__(self, path: str | Path | None = None, mode: str = "use"):
        if mode not in CACHE_MODES:
            raise ModelConfigError(
                f"cache mode must be one of {', '.join(CACHE_MODES)}, not {mode!r}"
            )
        self.path = Path(path).expanduser() if path is not None else default_cache_path()
        self.mode = mode
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    @property
    def reads(self) -> bool:
        """Whether lookups are made (mode ``use``)."""
        return self.mode == "use"

    @property
    def stores(self) -> bool:
        """Whether replies are written (modes ``use`` and ``refresh``)."""
        return self.mode != "off"

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        last: Exception | None = None
        for attempt in range(20):  # first-time WAL switch can race with other processes
            try:
                conn = sqlite3.connect(
                    self.path, timeout=30.0, isolation_level=None, check_same_thread=False
                )
                conn.execute("PRAGMA busy_timeout=30000")
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(_SCHEMA)
                return conn
            except sqlite3.DatabaseError as err:
                last = err
                if "locked" not in str(err) and "busy" not in str(err):
                    break
                time.sleep(0.01 * (attempt + 1))
        raise ModelError(f"cannot open response cache {self.path}: {last}")

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply for ``key``, or ``None`` (always ``None`` unless mode is ``use``)."""
        if not self.reads:
            return None
        try:
            row = (
                self._conn()
                .execute("SELECT response FROM responses WHERE key = ?", (key,))
                .fetchone()
            )
        except sqlite3.DatabaseError as err:
            raise ModelError(f"response cache {self.path} cannot be read: {err}") from None
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, *, backend: str, model: str, response: Mapping[str, Any]) -> None:
        """Store a reply (no-op in mode ``off``)."""
        if not self.stores:
            return
        blob = json.dumps(response, ensure_ascii=False, separators=(",", ":"))
        try:
            self._conn().execute(
                "INSERT OR REPLACE INTO responses (key, backend, model, created, response) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, backend, model, time.time(), blob),
            )
        except sqlite3.DatabaseError as err:
            raise ModelError(f"response cache {self.path} cannot be written: {err}") from None
        self.writes += 1

    def stats(self) -> dict[str, Any]:
        """Entries, size on disk and entries per model (without creating the file)."""
        out: dict[str, Any] = {"path": str(self.path), "exists": self.path.exists()}
        if not out["exists"]:
            return out | {"entries": 0, "bytes": 0, "models": {}}
        conn = self._conn()
        (entries,) = conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        models = dict(
            conn.execute("SELECT model, COUNT(*) FROM responses GROUP BY model ORDER BY 2 DESC")
        )
        oldest, newest = conn.execute("SELECT MIN(created), MAX(created) FROM responses").fetchone()
        size = sum(
            p.stat().st_size
            for p in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"))
            if p.exists()
        )
        return out | {
            "entries": entries,
            "bytes": size,
            "models": models,
            "oldest": oldest,
            "newest": newest,
        }

    def clear(self, model: str | None = None) -> int:
        """Delete all entries (or those of ``model``); returns how many were removed."""
        if not self.path.exists():
            return 0
        conn = self._conn()
        if model is None:
            cur = conn.execute("DELETE FROM responses")
        else:
            cur = conn.execute("DELETE FROM responses WHERE model = ?", (model,))
        removed = cur.rowcount
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if model is None:
            conn.execute("VACUUM")
        return removed

    def close(self) -> None:
        """Close every connection this object opened."""
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r}, mode={self.mode!r})"

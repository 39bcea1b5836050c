"""Run model coroutines from synchronous code on one long-lived background event loop.

Using one loop for every synchronous call keeps a backend's HTTP connection pool and
in-flight bound alive between calls (``asyncio.run`` per call would rebuild them).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The shared background event loop (started on first use, in a daemon thread)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="flaneur-models-loop", daemon=True
            )
            thread.start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the background loop and wait for its result.

    Safe to call from any thread, including one that runs its own event loop (that loop is
    blocked while waiting).
    """
    loop = background_loop()
    return asyncio.run_coroutine_threadsafe(coro, loop).result()

"""Ctrl-C during a run: the first stops it cleanly, the second exits at once.

A CPU-bound agent never returns control to the event loop between its steps, so asyncio's
own SIGINT handling (cancelling the main task at the loop's next turn) cannot be relied on.
:class:`InterruptHandler` installs a plain ``signal`` handler instead, which Python runs in
the main thread between two bytecodes whatever the agent is doing: the first SIGINT asks the
run to stop (:meth:`RunStop.request` with ``interrupt=True``: no new episode starts, those in
flight are cancelled), the runner then writes the summary marked partial and raises
:class:`RunInterrupted`; a second SIGINT exits the process at once with code 130 (every
finished row is already written: the run log flushes each row as it finishes).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from flaneur.evaluate.executors import RunStop

INTERRUPTED_EXIT_CODE = 130
"""Exit code of an interrupted run (128 + SIGINT), as shells report a Ctrl-C."""


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C after writing its finished rows and a partial summary.

    Attributes
    ----------
    summary
        The summary written to ``summary.json`` (``partial`` is true).
    folder
        The run folder.
    """

    def __init__(self, summary: dict[str, Any], folder: Path) -> None:
        rows = summary.get("episodes", 0)
        super().__init__(f"run interrupted: {rows} episode row(s) kept in {folder}")
        self.summary = summary
        self.folder = folder


class InterruptHandler:
    """SIGINT handling for the duration of a run (a context manager; main thread only).

    Parameters
    ----------
    stop
        The run's stop request, set by the first SIGINT.
    note
        Prints a one-line message to the user.
    log_path
        The run's ``episodes.jsonl`` (named when a second SIGINT exits).
    exit_now
        Ends the process on the second SIGINT (``os._exit``; tests pass their own).
    """

    def __init__(
        self,
        stop: RunStop,
        *,
        note: Callable[[str], None],
        log_path: Path,
        exit_now: Callable[[int], Any] = os._exit,
    ) -> None:
        self.stop = stop
        self.note = note
        self.log_path = log_path
        self.exit_now = exit_now
        self.count = 0
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> InterruptHandler:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self.handle)
            self._installed = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """The SIGINT handler (see the module docstring)."""
        self.count += 1
        if self.count == 1:
            self.stop.request("interrupted (Ctrl-C)", interrupt=True)
            self.note(
                "Ctrl-C: stopping; finished rows are kept and the summary is written "
                "(press Ctrl-C again to quit at once)"
            )
            return
        message = (
            f"\x1b[?25h\n[flaneur run] interrupted again: exiting now; finished rows are in "
            f"{self.log_path} (continue with --resume)\n"
        )
        if not sys.stderr.isatty():
            message = message.replace("\x1b[?25h", "")
        with contextlib.suppress(OSError):
            os.write(2, message.encode("utf-8", "replace"))
        self.exit_now(INTERRUPTED_EXIT_CODE)


__all__ = ["INTERRUPTED_EXIT_CODE", "InterruptHandler", "RunInterrupted"]

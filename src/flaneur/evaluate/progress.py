"""Progress of a run: a Rich bar, plain log lines for CI, or nothing."""

from __future__ import annotations

import sys
import time
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

PROGRESS_MODES = ("rich", "plain", "none")


class RunProgress:
    """Counts finished episodes, successes, tokens and errors, and shows them.

    Parameters
    ----------
    total
        Episodes to run in this invocation.
    mode
        ``rich`` (a live bar on stderr), ``plain`` (a line every ``every_s`` seconds and at
        the end) or ``none``.
    """

    def __init__(self, total: int, *, mode: str = "rich", every_s: float = 5.0) -> None:
        if mode not in PROGRESS_MODES:
            raise ValueError(f"progress must be one of {PROGRESS_MODES}")
        self.total, self.mode, self.every_s = total, mode, every_s
        self.done = self.successes = self.errors = self.tokens = 0
        self._last = time.monotonic()
        self._bar: Progress | None = None
        if mode == "rich":
            self._bar = Progress(
                TextColumn("[bold]episodes"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("success {task.fields[rate]}"),
                TextColumn("tokens {task.fields[tokens]}"),
                TextColumn("errors {task.fields[errors]}"),
                TimeElapsedColumn(),
                transient=False,
            )
            self._task = self._bar.add_task("run", total=total, rate="-", tokens=0, errors=0)

    def __enter__(self) -> RunProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self.mode == "plain" and self.total:
            self._line()

    @property
    def success_rate(self) -> float | None:
        """Share of finished episodes that succeeded so far."""
        return self.successes / self.done if self.done else None

    def update(self, *, success: bool, error: bool, tokens: int = 0) -> None:
        """Count one finished episode."""
        self.done += 1
        self.successes += int(success)
        self.errors += int(error)
        self.tokens += tokens
        rate = "-" if self.success_rate is None else f"{self.success_rate:.0%}"
        if self._bar is not None:
            self._bar.update(
                self._task, advance=1, rate=rate, tokens=self.tokens, errors=self.errors
            )
        elif self.mode == "plain" and time.monotonic() - self._last >= self.every_s:
            self._line()

    def note(self, text: str) -> None:
        """Print a one-off message (e.g. why the run stopped early)."""
        if self.mode != "none":
            print(f"[flaneur run] {text}", file=sys.stderr, flush=True)

    def _line(self) -> None:
        self._last = time.monotonic()
        rate = "-" if self.success_rate is None else f"{self.success_rate:.1%}"
        text = f"{self.done}/{self.total} episodes, success {rate}, tokens {self.tokens}"
        print(f"[flaneur run] {text}, errors {self.errors}", file=sys.stderr, flush=True)

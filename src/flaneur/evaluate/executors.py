"""Executors: where the runner's units of work (one episode each) run.

The runner (:mod:`flaneur.evaluate.runner`) turns a run into a list of jobs, one per
(task set, agent, episode), and hands them to an executor with three callables:
``work(job)`` runs one episode and returns its result (or ``None`` when the job asked the
run to stop, e.g. an exhausted token budget); ``finish(results)`` turns a few results into
finished rows (scoring them together is several times cheaper than one by one);
``deliver(row)`` hands a row to the run's single writer, which appends it to
``episodes.jsonl`` at once. Executors decide only where and how many jobs run at a time,
and stop scheduling when the run's :class:`RunStop` is requested. :class:`LocalExecutor`
runs jobs on one asyncio event loop in this process; an executor that sends jobs to other
processes or machines (Ray) fits the same interface, its workers running ``work`` and
``finish`` and returning rows to the process that writes them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")
Row = dict[str, Any]

BATCH_ROWS = 32
"""Rows a local worker scores together at most."""
BATCH_S = 0.2
"""Longest time a finished episode waits for its batch to be scored and written."""


class RunStop:
    """Why a run stops scheduling episodes (set once; thread- and signal-safe to request).

    Attributes
    ----------
    reason
        The first reason given (``None`` while the run goes on).
    interrupted
        Whether the user interrupted the run (Ctrl-C) rather than the run stopping itself.
    """

    def __init__(self) -> None:
        self.reason: str | None = None
        self.interrupted = False
        self._listeners: list[Callable[[], object]] = []
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return self.reason is not None

    def request(self, reason: str, *, interrupt: bool = False) -> None:
        """Stop scheduling new episodes; ``interrupt=True`` also cancels those in flight."""
        if self.reason is None:
            self.reason = reason
        if interrupt and not self.interrupted:
            self.interrupted = True
            for listener in list(self._listeners):
                listener()

    def on_interrupt(self, listener: Callable[[], object]) -> Callable[[], None]:
        """Call ``listener`` (from any thread or a signal handler) when interrupted; returns
        a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)


class Executor(Protocol):
    """Runs jobs; see the module docstring."""

    def run(
        self,
        jobs: Iterable[Job],
        work: Callable[[Job], Awaitable[Result | None]],
        finish: Callable[[list[Result]], list[Row]],
        deliver: Callable[[Row], None],
        stop: RunStop,
        *,
        cleanup: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Run ``jobs`` until done or ``stop`` is requested; deliver each finished row."""
        ...


class LocalExecutor:
    """Jobs on one asyncio event loop in this process, at most ``concurrency`` at a time.

    ``concurrency`` workers take jobs in order; an agent that waits on a model lets the
    others run meanwhile, an agent that never waits runs its episodes one after the other.
    Finished results are scored and delivered in small batches (at most :data:`BATCH_ROWS`
    rows, none waiting longer than :data:`BATCH_S` seconds, checked whenever a worker gives
    the loop a turn, which it does after every job), so rows are written as episodes finish
    whatever the agent. When ``stop``
    is requested no new job starts; an interrupt also cancels the jobs in flight (their
    rows are not written, a resumed run runs them again) after the finished ones are
    delivered.

    Parameters
    ----------
    concurrency
        Jobs in flight at most (at least 1).
    batch_rows, batch_s
        Batch limits (see above).
    """

    def __init__(
        self, concurrency: int = 8, *, batch_rows: int = BATCH_ROWS, batch_s: float = BATCH_S
    ) -> None:
        self.concurrency = max(1, int(concurrency))
        self.batch_rows = max(1, int(batch_rows))
        self.batch_s = float(batch_s)

    def run(
        self,
        jobs: Iterable[Job],
        work: Callable[[Job], Awaitable[Result | None]],
        finish: Callable[[list[Result]], list[Row]],
        deliver: Callable[[Row], None],
        stop: RunStop,
        *,
        cleanup: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Run ``jobs`` (see the class docstring); ``cleanup`` runs last, inside the loop."""
        asyncio.run(self._run(iter(jobs), work, finish, deliver, stop, cleanup))

    async def _run(
        self,
        jobs: Iterator[Job],
        work: Callable[[Job], Awaitable[Result | None]],
        finish: Callable[[list[Result]], list[Row]],
        deliver: Callable[[Row], None],
        stop: RunStop,
        cleanup: Callable[[], Awaitable[None]] | None,
    ) -> None:
        loop = asyncio.get_running_loop()
        batch: list[Result] = []  # finished results waiting to be scored and written
        timer: list[asyncio.TimerHandle] = []

        def flush() -> None:
            while timer:
                timer.pop().cancel()
            if batch:
                done = list(batch)
                batch.clear()
                for row in finish(done):
                    deliver(row)

        failures: list[BaseException] = []

        def flush_on_time() -> None:  # a timer callback: asyncio would only log its errors
            try:
                flush()
            except Exception as err:  # e.g. a scoring bug: end the run with it
                failures.append(err)
                cancel_all()

        def add(result: Result) -> None:
            batch.append(result)
            if len(batch) >= self.batch_rows:
                flush()
            elif len(batch) == 1:  # the oldest waits batch_s at most (the loop's next turn
                timer.append(loop.call_later(self.batch_s, flush_on_time))  # if CPU-bound)

        async def worker() -> None:
            for job in jobs:  # one shared iterator: each job is taken by one worker
                if stop:
                    return
                result = await work(job)
                if result is not None:
                    add(result)
                await asyncio.sleep(0)  # let the loop (timers, other workers) have a turn

        workers = [asyncio.ensure_future(worker()) for _ in range(self.concurrency)]

        def cancel_all() -> None:
            for task in workers:
                task.cancel()

        remove = stop.on_interrupt(lambda: loop.call_soon_threadsafe(cancel_all))
        try:
            if stop.interrupted:
                cancel_all()
            done, pending = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                error = None if task.cancelled() else task.exception()
                if error is not None:
                    failures.append(error)
            if failures:  # a bug outside the episodes (they catch their agents' errors)
                cancel_all()
                await asyncio.gather(*pending, return_exceptions=True)
                raise failures[0]
        finally:
            remove()
            flush()  # also after an interrupt: what finished is written
            if cleanup is not None:
                await cleanup()


__all__ = ["Executor", "LocalExecutor", "RunStop"]

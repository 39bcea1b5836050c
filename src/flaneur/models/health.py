"""Keeping a run healthy against a model server: an adaptive in-flight limit and a dead-server
gate.

:class:`AdaptiveLimit` bounds the requests in flight.  A time-out halves the limit (never
below one): a server that cannot keep up gets fewer requests at once instead of the same
requests again at the same pace, which on a one-slot server abandons requests the server is
still working on (a *timeout storm*).  After ``grow_after`` successes in a row the limit grows
by one again, up to its ceiling.

:class:`ServerHealth` counts model calls that failed for good (after their retries) in a row.
After ``threshold`` of them, or at once for an error that no retry can fix (the model does
not exist, the key is refused, the prompt does not fit the context) before any call has
succeeded, the server counts as down: every later call fails at once with
:class:`ModelServerDown` without a request, and the runner stops scheduling episodes and
exits with the reason.
"""

from __future__ import annotations

import asyncio
import logging

from flaneur.models.errors import ModelContextOverflow, ModelError, ModelHTTPError

log = logging.getLogger("flaneur.models")

FATAL_STATUS = frozenset({401, 403, 404})
CONTEXT_HINT = (
    "start the server with a larger context (llama.cpp: -c / --n_ctx; vLLM: --max-model-len; "
    "in process: --llm-n-ctx) or lower --llm-max-tokens"
)
_CONTEXT_WORDS = ("context", "n_ctx", "too long", "maximum length", "exceeds", "too many tokens")


class ModelServerDown(ModelError):
    """The model server failed too many calls in a row; the run should stop."""


def is_context_overflow(err: BaseException) -> bool:
    """Whether ``err`` is a server's refusal of a prompt longer than its context."""
    if isinstance(err, ModelContextOverflow):
        return True
    if not isinstance(err, ModelHTTPError) or err.status not in (400, 413, 422):
        return False
    text = err.server_message.lower()
    return any(word in text for word in _CONTEXT_WORDS)


def is_fatal(err: BaseException) -> bool:
    """Errors that every later call would repeat: auth, unknown model/route, context."""
    if isinstance(err, ModelHTTPError) and err.status in FATAL_STATUS:
        return True
    return is_context_overflow(err)


class AdaptiveLimit:
    """An asyncio concurrency limit that shrinks on time-outs and grows back slowly.

    Parameters
    ----------
    ceiling
        Most requests in flight.
    start
        Initial limit (default ``ceiling``).
    grow_after
        Successes in a row after which the limit grows by one.
    """

    def __init__(self, ceiling: int, *, start: int | None = None, grow_after: int = 8):
        if ceiling < 1:
            raise ValueError(f"ceiling must be at least 1, not {ceiling}")
        self.ceiling = int(ceiling)
        self.limit = min(self.ceiling, int(start or ceiling))
        self.grow_after = int(grow_after)
        self.in_flight = 0
        self.timeouts = 0
        self._streak = 0
        self._cond = asyncio.Condition()

    def set_ceiling(self, ceiling: int) -> None:
        """Change the ceiling (and the limit with it); wakes waiters if it grew."""
        self.ceiling = max(1, int(ceiling))
        self.limit = self.ceiling

    async def __aenter__(self) -> AdaptiveLimit:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def on_success(self) -> None:
        """Count a reply; grow the limit by one after ``grow_after`` in a row."""
        self._streak += 1
        if self._streak >= self.grow_after and self.limit < self.ceiling:
            self.limit += 1
            self._streak = 0

    def on_timeout(self) -> None:
        """Halve the limit (at least 1) after a time-out."""
        self.timeouts += 1
        self._streak = 0
        new = max(1, self.limit // 2)
        if new < self.limit:
            log.warning("model server timed out: requests in flight %d -> %d", self.limit, new)
        self.limit = new


class ServerHealth:
    """Counts failed calls in a row and declares the server down past a threshold.

    Parameters
    ----------
    threshold
        Calls failed for good in a row (after retries) that stop the run; ``0`` never stops.
    where
        The server (for the message).
    """

    def __init__(self, threshold: int = 3, where: str = "the model server"):
        if threshold < 0:
            raise ValueError(f"threshold must be >= 0, not {threshold}")
        self.threshold = int(threshold)
        self.where = where
        self.failures_in_row = 0
        self.successes = 0
        self.down: str | None = None

    def check(self) -> None:
        """Raise :class:`ModelServerDown` if the server is down."""
        if self.down is not None:
            raise ModelServerDown(self.down)

    def success(self) -> None:
        """Record a call that got a reply."""
        self.failures_in_row = 0
        self.successes += 1

    def failure(self, err: BaseException) -> None:
        """Record a call that failed for good; may declare the server down."""
        if self.down is not None:
            return
        if isinstance(err, ModelServerDown):  # a failed preflight
            self.down = f"{err}; run stopped: re-run with --resume once fixed"
            return
        self.failures_in_row += 1
        fatal = is_fatal(err) and self.successes == 0
        if fatal or (self.threshold and self.failures_in_row >= self.threshold):
            count = (
                "failed the first call"
                if fatal
                else f"failed {self.failures_in_row} calls in a row"
            )
            fix = CONTEXT_HINT if is_context_overflow(err) else "fix it"
            self.down = f"{self.where} {count} ({err}); run stopped: {fix}, re-run with --resume"


__all__ = [
    "CONTEXT_HINT",
    "AdaptiveLimit",
    "ModelServerDown",
    "ServerHealth",
    "is_context_overflow",
    "is_fatal",
]

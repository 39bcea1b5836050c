"""Faults the fake OpenAI server can inject, and how they are written on a command line.

Kinds: ``429`` or ``429:<retry-after-s>``, any HTTP status (``500``, ``503``, ``400``...),
``timeout`` (hang until the client gives up), ``slow:<s>``, ``malformed`` (not JSON),
``truncated`` (JSON cut in half), ``missing-choices``, ``wrong-action`` (a reply naming no
action), ``empty`` (empty content), ``echo-auth`` (a 401 quoting the Authorization header).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

WRONG_ACTION_TEXT = "I would rather fly over the rooftops."
"""The reply text of a ``wrong-action`` fault."""

FAULT_KINDS = (
    "429", "<status>", "timeout", "slow:<s>", "malformed", "truncated", "missing-choices",
    "wrong-action", "empty", "echo-auth",
)  # fmt: skip


class FaultPlan:
    """Which requests fail, and how.

    Parameters
    ----------
    at
        ``{request_index: fault}`` for exact requests (0-based among chat requests).
    rates
        ``{fault: probability}`` applied to every other request.
    seed
        Seed of the random draws (one draw per request, so runs are reproducible).
    """

    def __init__(
        self,
        at: Mapping[int, str] | None = None,
        rates: Mapping[str, float] | None = None,
        seed: int = 0,
    ):
        self.at = {int(k): str(v) for k, v in (at or {}).items()}
        self.rates = dict(rates or {})
        if sum(self.rates.values()) > 1.0:
            raise ValueError("fault probabilities add up to more than 1")
        self._rng = random.Random(seed)

    @classmethod
    def first(cls, n: int, fault: str) -> FaultPlan:
        """The first ``n`` requests get ``fault``."""
        return cls(at=dict.fromkeys(range(n), fault))

    def pick(self, index: int) -> str | None:
        """The fault for request ``index``, or ``None``."""
        u = self._rng.random() if self.rates else 1.0
        if index in self.at:
            return self.at[index]
        for fault, p in self.rates.items():
            if u < p:
                return fault
            u -= p
        return None


def parse_fault_args(specs: Sequence[str]) -> dict[int, str]:
    """``["0=429", "3-5=500"]`` → ``{0: "429", 3: "500", 4: "500", 5: "500"}``."""
    out: dict[int, str] = {}
    for spec in specs:
        where, sep, fault = spec.partition("=")
        if not sep or not fault:
            raise ValueError(f"fault must look like INDEX=KIND or FIRST-LAST=KIND, not {spec!r}")
        lo, _, hi = where.partition("-")
        for i in range(int(lo), int(hi or lo) + 1):
            out[i] = fault
    return out


def parse_rate_args(specs: Sequence[str]) -> dict[str, float]:
    """``["500=0.1", "timeout=0.01"]`` → ``{"500": 0.1, "timeout": 0.01}``."""
    out: dict[str, float] = {}
    for spec in specs:
        fault, sep, p = spec.rpartition("=")
        if not sep or not fault:
            raise ValueError(f"fault rate must look like KIND=PROBABILITY, not {spec!r}")
        out[fault] = float(p)
    return out

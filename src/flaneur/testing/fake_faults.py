"""Faults the fake OpenAI server can inject, and how they are written on a command line.

Kinds: ``429`` or ``429:<retry-after-s>``, any HTTP status (``500``, ``503``, ``400``...),
``timeout`` (hang until the client gives up), ``slow:<s>``, ``malformed`` (not JSON),
``truncated`` (JSON cut in half), ``missing-choices``, ``wrong-action`` (a reply naming no
action), ``empty`` (empty content), ``echo-auth`` (a 401 quoting the Authorization header).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

WRONG_ACTION_TEXT = "I would rather fly over the rooftops."
"""The reply text of a ``wrong-action`` fault."""

FAULT_KINDS = (
    "429",
    "<status>",
    "timeout",
    "slow:<s>",
    "malformed",
    "truncated",
    "missing-choices",
    "wrong-action",
    "empty",
    "echo-auth",
)


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


NAMED_FAULTS = (
    "timeout",
    "malformed",
    "truncated",
    "missing-choices",
    "wrong-action",
    "empty",
    "echo-auth",
)
"""Faults named by a word (the others are an HTTP status, ``429:<s>`` or ``slow:<s>``)."""


def check_fault(fault: str) -> str:
    """``fault`` if it is a kind the server knows (see :data:`FAULT_KINDS`).

    Raises
    ------
    ValueError
        For an unknown kind, an HTTP status outside 400-599, or a negative or non-numeric
        delay of ``429:<s>`` / ``slow:<s>``; the message quotes the fault.
    """
    head, colon, arg = fault.partition(":")
    if head.isdigit():
        if not 400 <= int(head) <= 599:
            raise ValueError(f"fault {fault!r}: an HTTP error status must be in 400-599")
        if colon and head != "429":
            raise ValueError(f"fault {fault!r}: only 429 takes a :<retry-after-s>")
    elif head == "slow" and colon:
        pass
    elif fault not in NAMED_FAULTS:
        raise ValueError(
            f"unknown fault {fault!r}: use an HTTP status, 429:<s>, slow:<s> or one of "
            f"{', '.join(NAMED_FAULTS)}"
        )
    if colon:
        try:
            seconds = float(arg)
        except ValueError:
            seconds = -1.0
        if not (math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"fault {fault!r}: the delay must be a number of seconds >= 0")
    return fault


def _index(text: str, spec: str) -> int:
    if not text.strip().isdigit():
        raise ValueError(f"fault {spec!r}: request indices must be whole numbers >= 0")
    return int(text)


def parse_fault_args(specs: Sequence[str]) -> dict[int, str]:
    """``["0=429", "3-5=500"]`` → ``{0: "429", 3: "500", 4: "500", 5: "500"}``.

    Raises
    ------
    ValueError
        For a malformed spec, a negative index, a reversed range (``5-2``) or an unknown
        fault (see :func:`check_fault`).
    """
    out: dict[int, str] = {}
    for spec in specs:
        where, sep, fault = spec.partition("=")
        if not sep or not fault:
            raise ValueError(f"fault must look like INDEX=KIND or FIRST-LAST=KIND, not {spec!r}")
        lo_text, dash, hi_text = where.partition("-")
        lo = _index(lo_text, spec)
        hi = _index(hi_text, spec) if dash else lo
        if hi < lo:
            raise ValueError(f"fault {spec!r}: the range {lo}-{hi} is reversed")
        check_fault(fault)
        for i in range(lo, hi + 1):
            out[i] = fault
    return out


def parse_rate_args(specs: Sequence[str]) -> dict[str, float]:
    """``["500=0.1", "timeout=0.01"]`` → ``{"500": 0.1, "timeout": 0.01}``.

    Raises
    ------
    ValueError
        For a malformed spec, an unknown fault, or a probability outside [0, 1].
    """
    out: dict[str, float] = {}
    for spec in specs:
        fault, sep, p = spec.rpartition("=")
        if not sep or not fault:
            raise ValueError(f"fault rate must look like KIND=PROBABILITY, not {spec!r}")
        check_fault(fault)
        try:
            rate = float(p)
        except ValueError:
            rate = math.nan
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate {spec!r}: the probability must be in [0, 1]")
        out[fault] = rate
    return out

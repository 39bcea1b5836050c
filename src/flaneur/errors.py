"""Exceptions that flaneur raises for bad input.

Every error that comes from user data names where the problem is (file, line, field or id)
and what was expected, so that the command line can print it without a traceback.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any


class FlaneurError(Exception):
    """Base class of all errors that flaneur reports to users."""


class DataError(FlaneurError, ValueError):
    """Input data is missing or malformed.

    Parameters
    ----------
    message
        What is wrong and what was expected.
    path
        The file (or folder) that holds the problem, if any.
    line
        1-based line number inside ``path``, if known.
    """

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None):
        self.path = None if path is None else Path(path)
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = f"{self.path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(where + message)


class UnknownNodeError(FlaneurError, KeyError):
    """A node id is not part of the street graph."""

    def __init__(self, node_id: object, *, context: str = ""):
        self.node_id = node_id
        suffix = f" ({context})" if context else ""
        super().__init__(f"unknown node id {node_id!r}{suffix}")

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


class ArgumentError(FlaneurError, ValueError):
    """An argument of a public function or method is of the wrong kind or out of range.

    The message names the argument and what was expected, e.g.
    ``nearest_node: lat must be finite degrees in [-90, 90], got nan``.
    """


def check_finite(
    value: Any,
    name: str,
    *,
    where: str,
    low: float | None = None,
    high: float | None = None,
    what: str = "a number",
) -> float:
    """``value`` as a float, or :class:`ArgumentError` naming ``name`` (in ``where``) when it
    is not a finite number inside ``[low, high]``."""

    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"{where}: {name} must be {what}, got {value!r}") from None
    if (
        isinstance(value, bool)
        or not math.isfinite(number)
        or (low is not None and number < low)
        or (high is not None and number > high)
    ):
        bounds = (
            ""
            if low is None and high is None
            else f" >= {low:g}"
            if high is None
            else f" <= {high:g}"
            if low is None
            else f" in [{low:g}, {high:g}]"
        )
        raise ArgumentError(f"{where}: {name} must be finite {what}{bounds}, got {value!r}")
    return number

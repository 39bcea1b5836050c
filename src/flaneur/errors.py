"""Exceptions that flaneur raises for bad input.

Every error that comes from user data names where the problem is (file, line, field or id)
and what was expected, so that the command line can print it without a traceback.
"""

from __future__ import annotations

from pathlib import Path


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

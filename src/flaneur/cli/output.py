"""Shared output helpers: one JSON object on stdout with ``--json``, Rich text otherwise."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from rich.console import Console

console = Console(stderr=False, highlight=False)
err_console = Console(stderr=True, highlight=False)


def _default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        value = float(obj)
        return None if math.isnan(value) else value
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if hasattr(obj, "__fspath__"):
        return str(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


def dumps(obj: Any) -> str:
    """Serialise ``obj`` (with numpy scalars and paths) to compact, sorted-key-free JSON."""
    return json.dumps(obj, default=_default, ensure_ascii=False)


def print_json(obj: Any) -> None:
    """Print exactly one JSON object on stdout."""
    print(dumps(obj), flush=True)

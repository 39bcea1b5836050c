"""Versioned benchmark sets on disk: JSON Lines with a header line.

The first line is ``{"benchmark": ..., "version": ..., "city": ..., "seed": ..., ...}``;
every further line is one item. Reading checks the benchmark name and version and names
the file and line of anything malformed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from flaneur.errors import FlaneurError

__all__ = ["BenchSetError", "read_set", "score_items", "write_set"]


class BenchSetError(FlaneurError):
    """A benchmark set file is missing, malformed or of another benchmark/version."""


def write_set(path: str | Path, header: dict[str, Any], items: Iterable[dict[str, Any]]) -> Path:
    """Write ``header`` then one item per line (atomically: a temporary file, then a rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header, ensure_ascii=False) + "\n")
        for item in items:
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def read_set(
    path: str | Path, benchmark: str, version: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read a set written by :func:`write_set`; check its benchmark name and version."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise BenchSetError(f"{path}: cannot read benchmark set ({err.strerror})") from None
    rows = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise BenchSetError(f"{path}:{no}: not JSON ({err.msg})") from None
        if not isinstance(row, dict):
            raise BenchSetError(f"{path}:{no}: expected a JSON object")
        rows.append(row)
    if not rows:
        raise BenchSetError(f"{path}: empty benchmark set")
    header = rows[0]
    if header.get("benchmark") != benchmark or header.get("version") != version:
        raise BenchSetError(
            f"{path}:1: expected a {benchmark!r} set of version {version}, got "
            f"{header.get('benchmark')!r} version {header.get('version')!r}"
        )
    return header, rows[1:]


def score_items(
    items: Iterable[dict[str, Any]],
    key: str,
    score: Callable[[dict[str, Any]], dict[str, Any]],
    done: dict[str, dict[str, Any]] | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """The evaluators' loop: ``score`` each item unless its result is in ``done`` (resume).

    Parameters
    ----------
    items
        Set items; ``item[key]`` identifies one (``place_id``, ``node``).
    key
        The identifying field.
    score
        Item -> its per-item result.
    done
        Results already computed, by key; they are kept and not scored again.
    on_result
        Called with each new result (to append it to a results file).

    Returns
    -------
    list of dict
        One result per item, in item order.
    """
    results = []
    for item in items:
        ident = str(item[key])
        if done and ident in done:
            results.append(done[ident])
            continue
        result = score(item)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results

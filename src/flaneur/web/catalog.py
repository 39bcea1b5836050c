"""The run folders the app serves, found under the folders it was given, by safe names.

A run folder is a folder holding ``episodes.jsonl`` or ``summary.json`` (a run still in
progress has only the log). The browser names runs by :func:`safe_name` keys, never by path:
a request can only reach a folder found here, so nothing outside the given folders is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flaneur.errors import DataError, FlaneurError
from flaneur.evaluate.runlog import row_success

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, *, default: str = "anonymous", limit: int = 40) -> str:
    """``text`` reduced to letters, digits, ``.``, ``_`` and ``-`` (no leading dot), at most
    ``limit`` characters; ``default`` when nothing is left.

    >>> safe_name("../../etc/passwd")
    'etc_passwd'
    >>> safe_name("<script>Ada</script>")
    'script_Ada_script'
    """
    cleaned = _UNSAFE.sub("_", text).strip("._-")[:limit].strip("._-")
    return cleaned or default


def is_run_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a run log or a run summary."""
    return (folder / "episodes.jsonl").is_file() or (folder / "summary.json").is_file()


@dataclass(frozen=True)
class RunEntry:
    """One served run folder."""

    key: str
    folder: Path
    root: Path


class RunCatalog:
    """Run folders under ``roots`` (each root is a run folder or a folder of run folders).

    Parameters
    ----------
    roots
        Folders given on the command line; missing ones are refused with a one-line error.
    """

    def __init__(self, roots: list[Path]) -> None:
        self.roots: list[Path] = []
        for root in roots:
            path = Path(root).expanduser()
            if not path.is_dir():
                raise DataError("no such folder (give run folders or folders of runs)", path=root)
            self.roots.append(path.resolve())

    def runs(self) -> dict[str, RunEntry]:
        """``{key: entry}`` of every run folder now present (found afresh on each call, so
        runs started after the server appear)."""
        found: dict[str, RunEntry] = {}
        for root in self.roots:
            candidates = [root] if is_run_folder(root) else []
            candidates += sorted(p for p in root.iterdir() if p.is_dir() and is_run_folder(p))
            for folder in candidates:
                key = base = safe_name(folder.name, default="run")
                n = 2
                while key in found and found[key].folder != folder:
                    key, n = f"{base}-{n}", n + 1
                found[key] = RunEntry(key, folder, root)
        return found

    def get(self, key: str) -> RunEntry:
        """The run named ``key``; :class:`FlaneurError` for anything else (paths included)."""
        entry = self.runs().get(key)
        if entry is None:
            raise FlaneurError(f"no run named {key!r}")
        folder = entry.folder.resolve()
        if not folder.is_relative_to(entry.root):  # a symlink leading out of the root
            raise FlaneurError(f"run {key!r} lies outside the served folders")
        return entry


def running_metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Progress figures of a log: rows, successes and the mean of each metric so far.

    Success is :func:`flaneur.evaluate.runlog.row_success`; means are over the rows that
    have the metric.
    """

    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for row in rows:
        for name, value in (row.get("metrics") or {}).items():
            if isinstance(value, bool | int | float) and value is not None:
                sums[name] = sums.get(name, 0.0) + float(value)
                counts[name] = counts.get(name, 0) + 1
    successes = sum(1 for r in rows if row_success(r))
    return {
        "rows": len(rows),
        "successes": successes,
        "success_rate": successes / len(rows) if rows else None,
        "means": {k: sums[k] / counts[k] for k in sorted(sums)},
    }

"""The append-only run log ``DIR/episodes.jsonl`` and what resuming a run reads from it.

Every finished episode is one JSON line, written with a single ``write`` and flushed and
fsynced at once, so a run killed at any moment loses at most the episodes in flight. A line
cut short by a kill during the write is the only way a row can be partial: reading drops it
(and resuming truncates the file back to the last complete row). Rows are keyed by
``(task, agent, episode_id)``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from flaneur.errors import FlaneurError

FINISHED = frozenset({"stopped", "step_limit", "invalid_action"})
"""Terminations of episodes that ran to an end; the others (model, agent or task errors,
budget exhausted) are run again by ``--resume``."""

RowKey = tuple[str, str, str]


def row_key(row: dict[str, Any]) -> RowKey:
    """``(task, agent, episode_id)`` of a row."""
    return (str(row["task"]), str(row["agent"]), str(row["episode_id"]))


def row_success(row: dict[str, Any]) -> bool:
    """Whether an episode row succeeded, by its ``success_metric`` (else TC, TCP, SR)."""
    metrics = row.get("metrics") or {}
    for key in (row.get("success_metric"), "tc", "tcp", "sr"):
        if key and metrics.get(key) is not None:
            return bool(metrics[key])
    return bool(row.get("success"))


def read_rows(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Complete rows of a log, and the byte length they span (a cut last line is left out)."""
    if not path.is_file():
        return [], 0
    rows: list[dict[str, Any]] = []
    good = 0
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                break  # a line cut short by a kill
            try:
                rows.append(json.loads(raw))
            except json.JSONDecodeError:
                break
            good += len(raw)
    return rows, good


class RunLog:
    """Append rows to ``episodes.jsonl``; on resume keep finished rows and drop the others.

    Parameters
    ----------
    folder
        The run folder (created).
    resume
        Continue a run in ``folder``. Without it, a folder that already holds rows is refused
        so that nothing written is lost.
    config_hashes
        ``{(task, agent): config hash}`` of this run; on resume, rows written under another
        configuration are refused with a clear message.
    """

    def __init__(
        self, folder: Path, *, resume: bool, config_hashes: dict[tuple[str, str], str]
    ) -> None:
        self.folder = folder
        self.path = folder / "episodes.jsonl"
        folder.mkdir(parents=True, exist_ok=True)
        rows, good = read_rows(self.path)
        if rows and not resume:
            raise FlaneurError(
                f"{self.path} already holds {len(rows)} episode row(s); pass --resume to "
                "continue that run, or choose another --out"
            )
        for row in rows:
            expected = config_hashes.get((str(row.get("task")), str(row.get("agent"))))
            if expected is not None and row.get("config_hash") != expected:
                raise FlaneurError(
                    f"{self.path}: rows of task {row.get('task')!r} / agent {row.get('agent')!r} "
                    "were written with another configuration (model, scheme, seed, views, ...); "
                    "resume with the same options or use another --out"
                )
        kept = [r for r in rows if r.get("termination") in FINISHED]
        self.dropped_errors = len(rows) - len(kept)
        if self.path.is_file() and (self.dropped_errors or good != self.path.stat().st_size):
            self._rewrite(kept)
        self.rows: dict[RowKey, dict[str, Any]] = {row_key(r): r for r in kept}
        self._handle = self.path.open("a", encoding="utf-8")

    def _rewrite(self, rows: Iterable[dict[str, Any]]) -> None:
        tmp = self.path.with_suffix(".jsonl.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(self.path)

    def done(self, key: RowKey) -> bool:
        """Whether the episode already has a finished row."""
        return key in self.rows

    def append(self, row: dict[str, Any]) -> None:
        """Write one row durably (single write, flush, fsync)."""
        self._handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self.rows[row_key(row)] = row

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

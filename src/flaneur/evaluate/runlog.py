"""The append-only run log ``DIR/episodes.jsonl`` and what resuming a run reads from it.

Every finished episode is one JSON line, written with a single ``write`` and flushed to the
operating system at once (by the thread that finished it, whatever the agent), so a process
killed at any moment (SIGKILL included) loses at most the episodes in flight. The file is
also fsynced at most every :data:`SYNC_EVERY_S` seconds by a background thread and on
close, so a machine crash loses at most that much. A line cut short by a kill during the
write is the only way a row can be partial: reading drops it (and resuming truncates the
file back to the last complete row). Rows are keyed by ``(task, agent, episode_id)``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from flaneur.errors import FlaneurError

FINISHED = frozenset({"stopped", "step_limit", "invalid_action", "completed"})
"""Terminations of episodes that ran to an end (``completed``: an item a solver answered);
the others (model, agent or task errors, budget exhausted) are run again by ``--resume``."""

RowKey = tuple[str, str, str]

OUTSIDE_AGENTS = frozenset({"human"})
"""Agents whose rows something else than the runner writes into a run folder: ``human``
(human play in ``flaneur serve``, saved beside an agents' run). A resumed run keeps their
rows as they are (never run again, never checked against its configuration) and summarises
them beside its own agents, so ``flaneur report`` keeps comparing them."""

SYNC_EVERY_S = 1.0
"""Longest time a written row waits for its fsync (a flushed row survives a killed process
at once; the fsync guards against a crash of the machine)."""


def row_key(row: dict[str, Any]) -> RowKey:
    """``(task, agent, episode_id)`` of a row."""
    return (str(row["task"]), str(row["agent"]), str(row["episode_id"]))


def row_success(row: Mapping[str, Any]) -> bool:
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
        configuration, or of a (task, agent) pair this run does not name, are refused with a
        clear message (a summary that left them out would disagree with the reports, which
        read every row). Rows of :data:`OUTSIDE_AGENTS` are kept whatever the run names.
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
        held = {
            (str(r.get("task")), str(r.get("agent")))
            for r in rows
            if r.get("agent") not in OUTSIDE_AGENTS
        }
        left_out = sorted(held - set(config_hashes))
        if left_out:
            tasks = sorted({t for t, _ in config_hashes} | {t for t, _ in held})
            agents = sorted({a for _, a in config_hashes} | {a for _, a in held})
            named = ", ".join(f"{a!r} on {t!r}" for t, a in left_out[:3])
            raise FlaneurError(
                f"{self.path} holds rows of {named} that this run does not name; a resumed "
                "run must keep every agent and task set of its folder and may add others "
                f"(agents {','.join(agents)}; task sets {','.join(tasks)}), "
                "or write to another folder"
            )
        for row in rows:
            expected = config_hashes.get((str(row.get("task")), str(row.get("agent"))))
            if expected is not None and row.get("config_hash") != expected:
                raise FlaneurError(
                    f"{self.path}: rows of task {row.get('task')!r} / agent {row.get('agent')!r} "
                    "were written with another configuration (model, scheme, seed, views, ...); "
                    "resume with the same options or use another --out"
                )
        kept = [
            r for r in rows if r.get("termination") in FINISHED or r.get("agent") in OUTSIDE_AGENTS
        ]
        self.dropped_errors = len(rows) - len(kept)
        if self.path.is_file() and (self.dropped_errors or good != self.path.stat().st_size):
            self._rewrite(kept)
        self.rows: dict[RowKey, dict[str, Any]] = {row_key(r): r for r in kept}
        self._handle = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self._dirty = False
        self._closed = threading.Event()
        self._syncer = threading.Thread(target=self._sync_loop, name="runlog-fsync", daemon=True)
        self._syncer.start()

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
        """Write one row at once (single write, flushed to the OS; fsynced within a second)."""
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self._handle.write(line)
            self._handle.flush()
            self._dirty = True
        self.rows[row_key(row)] = row

    def sync(self) -> None:
        """fsync the rows written so far (the background thread does this every second)."""
        with self._lock:
            if self._dirty and not self._handle.closed:
                os.fsync(self._handle.fileno())
                self._dirty = False

    def _sync_loop(self) -> None:
        while not self._closed.wait(SYNC_EVERY_S):
            self.sync()

    def close(self) -> None:
        """fsync and close the file (and stop the fsync thread)."""
        self._closed.set()
        self._syncer.join()
        self.sync()
        with self._lock:
            self._handle.close()


def finished_rows(summary: dict[str, Any]) -> int:
    """How many rows of a summary's run ended without an error (stopped or out of steps)."""
    counts = summary.get("by_termination") or {}
    return sum(n for kind, n in counts.items() if kind in FINISHED)


def failed_run_reason(summary: dict[str, Any]) -> str | None:
    """Why a finished run counts as failed: a dead model server, or every row errored."""
    if summary.get("server_down"):
        return str(summary["server_down"])
    counts = summary.get("by_termination") or {}
    if sum(counts.values()) and not finished_rows(summary):
        kinds = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        return f"every row of the run errored ({kinds}); see 'error' in episodes.jsonl"
    return None

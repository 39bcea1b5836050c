"""The CitySeeker agent's graph memory: an SQLite store that persists across rounds.

CitySeeker repeats a task for several *rounds*; memory strategies (R1, R2) and the cognitive
strategies (C1, C2) read what earlier rounds did. Every step the agent takes is one row of
``visits`` (task, episode, round, step, node, metric position, heading, decision, target,
confidence, backtrack flag) and, when the round ends, its outcome is written to the round's
rows and to ``rounds``. The store is *queried*, never loaded whole: by node set (an h-hop
neighbourhood of the city graph), by radius (a bounding box on indexed metric coordinates,
then an exact distance filter) or by (task, episode) for the trajectories of earlier rounds.

Rows are keyed by ``(task, episode id)``; one file per task and agent by default, under
``flaneur.paths.cache_dir("memory")``.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from flaneur.paths import cache_dir

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

SCHEMA_VERSION = 1
_SUFFIXES = (".sqlite", ".sqlite3", ".db")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS visits (
    task TEXT NOT NULL, episode TEXT NOT NULL, round INTEGER NOT NULL, step INTEGER NOT NULL,
    node TEXT NOT NULL, x REAL NOT NULL, y REAL NOT NULL, heading REAL,
    decision TEXT, target TEXT, confidence REAL, backtrack INTEGER NOT NULL DEFAULT 0,
    outcome TEXT,
    PRIMARY KEY (task, episode, round, step)
);
CREATE INDEX IF NOT EXISTS visits_by_node ON visits (task, episode, node);
CREATE INDEX IF NOT EXISTS visits_by_xy ON visits (task, episode, x, y);
CREATE TABLE IF NOT EXISTS rounds (
    task TEXT NOT NULL, episode TEXT NOT NULL, round INTEGER NOT NULL,
    outcome TEXT, success INTEGER, steps INTEGER, end_node TEXT,
    PRIMARY KEY (task, episode, round)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
_MAX_PARAMS = 500


@dataclass(frozen=True, slots=True)
class Visit:
    """One remembered step.

    Attributes
    ----------
    round, step
        When it happened.
    node
        Node id where the agent stood.
    x, y
        Metric position of the node (the city's projection).
    heading
        Heading the agent faced on arrival.
    decision
        What it decided (``"B:LEFT"``, ``"stop"``, ``"backtrack"``).
    target
        Node id it moved to (``None`` for a stop).
    confidence
        Its confidence (``None`` if unknown).
    backtrack
        Whether the step was part of a backtracking walk.
    outcome
        The round's outcome (``"success"``, ``"failure"``, ``"step_limit"``) once known.
    """

    round: int
    step: int
    node: str
    x: float
    y: float
    heading: float | None
    decision: str | None
    target: str | None
    confidence: float | None
    backtrack: bool
    outcome: str | None


_COLUMNS = "round, step, node, x, y, heading, decision, target, confidence, backtrack, outcome"


def _visit(row: Sequence) -> Visit:
    return Visit(
        int(row[0]),
        int(row[1]),
        str(row[2]),
        float(row[3]),
        float(row[4]),
        row[5],
        row[6],
        row[7],
        row[8],
        bool(row[9]),
        row[10],
    )


def default_memory_path(task: str, agent: str = "cityseeker") -> Path:
    """``cache_dir("memory") / "<agent>-<task>.sqlite"`` (names made file-safe)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{agent}-{task or 'task'}")
    return cache_dir("memory") / f"{safe}.sqlite"


def resolve_memory_path(path: str | Path | None, task: str, agent: str = "cityseeker") -> Path:
    """The store file: ``path`` if it names a ``.sqlite``/``.db`` file, a file named by task
    inside ``path`` if it is a folder, else :func:`default_memory_path`."""
    if path is None:
        return default_memory_path(task, agent)
    path = Path(path).expanduser()
    if path.suffix.lower() in _SUFFIXES:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path
    path.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{agent}-{task or 'task'}")
    return path / f"{safe}.sqlite"


class GraphMemory:
    """The persistent visit store of one (task, episode) key.

    Parameters
    ----------
    path
        SQLite file (created with its tables if missing).
    task, episode
        The key every read and write uses.
    """

    def __init__(self, path: str | Path, task: str, episode: str) -> None:
        self.path = Path(path)
        self.task = task
        self.episode = episode
        self._con: sqlite3.Connection | None = None

    # ------------------------------------------------------------------ connection
    @property
    def con(self) -> sqlite3.Connection:
        """The open connection (opened, and the schema made, on first use)."""
        if self._con is None:
            con = sqlite3.connect(self.path, timeout=30.0)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.executescript(_SCHEMA)
            con.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            con.commit()
            self._con = con
        return self._con

    def close(self) -> None:
        """Close the connection (it reopens on the next use)."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> GraphMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writes
    def start_round(self, round_: int) -> None:
        """Forget what an earlier run of the same round wrote (a rerun replaces it)."""
        key = (self.task, self.episode, int(round_))
        with self.con:
            self.con.execute("DELETE FROM visits WHERE task=? AND episode=? AND round=?", key)
            self.con.execute("DELETE FROM rounds WHERE task=? AND episode=? AND round=?", key)

    def add_visit(
        self,
        round_: int,
        step: int,
        node: str,
        xy: Sequence[float],
        *,
        heading: float | None = None,
        decision: str | None = None,
        target: str | None = None,
        confidence: float | None = None,
        backtrack: bool = False,
    ) -> None:
        """Write one step."""
        row = (
            self.task,
            self.episode,
            int(round_),
            int(step),
            str(node),
            float(xy[0]),
            float(xy[1]),
            heading,
            decision,
            target,
            confidence,
            int(bool(backtrack)),
        )
        with self.con:
            self.con.execute(
                "INSERT OR REPLACE INTO visits (task, episode, round, step, node, x, y, heading,"
                " decision, target, confidence, backtrack) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                row,
            )

    def finish_round(
        self, round_: int, outcome: str, *, success: bool | None, steps: int, end_node: str
    ) -> None:
        """Write the round's outcome to ``rounds`` and to each of its visits."""
        key = (self.task, self.episode, int(round_))
        flag = None if success is None else int(bool(success))
        with self.con:
            self.con.execute(
                "UPDATE visits SET outcome=? WHERE task=? AND episode=? AND round=?",
                (outcome, *key),
            )
            self.con.execute(
                "INSERT OR REPLACE INTO rounds VALUES (?,?,?,?,?,?,?)",
                (*key, outcome, flag, int(steps), end_node),
            )

    # ------------------------------------------------------------------ queries
    def _where_round(self, before_round: int | None) -> tuple[str, tuple]:
        if before_round is None:
            return "", ()
        return " AND round < ?", (int(before_round),)

    def visits_at(
        self, nodes: Iterable[str], *, before_round: int | None = None, limit: int = 1000
    ) -> list[Visit]:
        """Visits of the given nodes (an h-hop neighbourhood), oldest first."""
        wanted = list(dict.fromkeys(str(n) for n in nodes))
        extra, args = self._where_round(before_round)
        out: list[Visit] = []
        for i in range(0, len(wanted), _MAX_PARAMS):
            chunk = wanted[i : i + _MAX_PARAMS]
            marks = ",".join("?" * len(chunk))
            sql = (
                f"SELECT {_COLUMNS} FROM visits WHERE task=? AND episode=? AND node IN ({marks})"
                f"{extra} ORDER BY round, step LIMIT ?"
            )
            rows = self.con.execute(sql, (self.task, self.episode, *chunk, *args, limit))
            out.extend(_visit(r) for r in rows)
        out.sort(key=lambda v: (v.round, v.step))
        return out[:limit]

    def visits_within(
        self,
        xy: Sequence[float] | NDArray[np.float64],
        radius_m: float,
        *,
        before_round: int | None = None,
        limit: int = 1000,
    ) -> list[tuple[Visit, float]]:
        """Visits within ``radius_m`` metres of ``xy``, with their distances, nearest first."""
        x, y, r = float(xy[0]), float(xy[1]), float(radius_m)
        extra, args = self._where_round(before_round)
        sql = (
            f"SELECT {_COLUMNS} FROM visits WHERE task=? AND episode=? AND x BETWEEN ? AND ?"
            f" AND y BETWEEN ? AND ?{extra} LIMIT ?"
        )
        rows = self.con.execute(
            sql, (self.task, self.episode, x - r, x + r, y - r, y + r, *args, limit * 4)
        )
        found = []
        for row in rows:
            visit = _visit(row)
            d = math.hypot(visit.x - x, visit.y - y)
            if d <= r:
                found.append((visit, d))
        found.sort(key=lambda p: (p[1], p[0].round, p[0].step))
        return found[:limit]

    def trajectories(
        self, *, before_round: int | None = None, last_rounds: int = 5, max_steps: int = 200
    ) -> dict[int, list[Visit]]:
        """The step sequences of up to ``last_rounds`` earlier rounds (newest rounds kept)."""
        extra, args = self._where_round(before_round)
        rounds = [
            int(r[0])
            for r in self.con.execute(
                f"SELECT DISTINCT round FROM visits WHERE task=? AND episode=?{extra}"
                " ORDER BY round DESC LIMIT ?",
                (self.task, self.episode, *args, int(last_rounds)),
            )
        ]
        out: dict[int, list[Visit]] = {}
        for rnd in sorted(rounds):
            rows = self.con.execute(
                f"SELECT {_COLUMNS} FROM visits WHERE task=? AND episode=? AND round=?"
                " ORDER BY step LIMIT ?",
                (self.task, self.episode, rnd, int(max_steps)),
            )
            out[rnd] = [_visit(r) for r in rows]
        return out

    def round_outcomes(self, *, before_round: int | None = None) -> dict[int, dict]:
        """``{round: {"outcome", "success", "steps", "end_node"}}`` of finished rounds."""
        extra, args = self._where_round(before_round)
        rows = self.con.execute(
            "SELECT round, outcome, success, steps, end_node FROM rounds"
            f" WHERE task=? AND episode=?{extra} ORDER BY round",
            (self.task, self.episode, *args),
        )
        return {
            int(r[0]): {
                "outcome": r[1],
                "success": None if r[2] is None else bool(r[2]),
                "steps": r[3],
                "end_node": r[4],
            }
            for r in rows
        }

    def count(self) -> int:
        """Number of visits stored under this key."""
        row = self.con.execute(
            "SELECT COUNT(*) FROM visits WHERE task=? AND episode=?", (self.task, self.episode)
        ).fetchone()
        return int(row[0])


__all__ = ["GraphMemory", "Visit", "default_memory_path", "resolve_memory_path"]

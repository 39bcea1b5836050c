"""Two or more runs side by side: their figures per task set and their paired comparisons.

The figures are each run's tables (:func:`flaneur.web.runs.run_tables`); every two runs are
compared as ``flaneur report`` compares them (:func:`flaneur.report.run_report.compare_runs`:
same agent name, or the only agent of each; difference of success rates with its interval
and exact McNemar p).
"""

from __future__ import annotations

import itertools
from typing import Any

from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import read_rows
from flaneur.report.run_report import RunData, compare_runs
from flaneur.report.tables import PAIRED_COLUMNS, PAIRED_NOTE, paired_cells
from flaneur.web.catalog import RunEntry
from flaneur.web.folder_cache import FolderCache
from flaneur.web.runs import read_summary, run_tables

MAX_COMPARED = 8
"""Most runs one comparison shows."""


def _run_data(entry: RunEntry) -> RunData:
    rows, _ = read_rows(entry.folder / "episodes.jsonl")
    return RunData(entry.folder, read_summary(entry.folder) or {}, rows)


def compare_view(entries: list[RunEntry], cache: FolderCache | None = None) -> dict[str, Any]:
    """What the compare page shows of ``entries`` (2 to :data:`MAX_COMPARED` runs).

    Returns
    -------
    dict
        ``runs`` (key, name, status of each), ``labels`` (metric key to column label),
        ``tasks`` (per task set, one line per run and agent with its figures and intervals),
        ``paired`` (per task, the cells of every two runs' comparison, in
        ``paired_columns`` order) and ``paired_note``.

    Raises
    ------
    FlaneurError
        With fewer than two runs, more than :data:`MAX_COMPARED`, or one run twice.
    """
    if not 2 <= len(entries) <= MAX_COMPARED:
        raise FlaneurError(f"compare takes 2 to {MAX_COMPARED} runs, got {len(entries)}")
    if len({e.key for e in entries}) != len(entries):
        raise FlaneurError("compare names a run twice")
    tables = [run_tables(entry, cache) for entry in entries]
    labels: dict[str, str] = {}
    tasks: dict[str, list[dict[str, Any]]] = {}
    for run in tables:
        labels.update(run["labels"])
        for table in run["tables"]:
            tasks.setdefault(str(table["task"]), []).append(
                {"run": run["name"], "key": run["key"], **table}
            )
    loaded = [_run_data(entry) for entry in entries]
    paired = [
        {"task": c["task"], "cells": paired_cells(c)}
        for a, b in itertools.combinations(loaded, 2)
        for c in compare_runs(a, b)
    ]
    return {
        "runs": [
            {"key": run["key"], "name": run["name"], "status": run["status"]} for run in tables
        ],
        "labels": labels,
        "tasks": [{"task": task, "lines": lines} for task, lines in tasks.items()],
        "paired_columns": list(PAIRED_COLUMNS),
        "paired_note": PAIRED_NOTE,
        "paired": paired,
    }

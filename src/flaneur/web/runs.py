"""The runs page's data: metric tables, per-category tables and paired comparisons.

Finished runs are tabled from their ``summary.json``; a run still being written (no summary
yet, or a log newer than it) is tabled from its rows with the same summariser. Paired
comparisons are those of ``flaneur report`` (:func:`flaneur.report.run_report.paired_comparisons`).
"""

from __future__ import annotations

import json
import os
import shlex
import socket
from collections import Counter
from pathlib import Path
from typing import Any

from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import (
    OUTSIDE_AGENTS,
    failed_run_reason,
    read_rows,
    row_key,
    row_success,
)
from flaneur.evaluate.summary import MANIFEST
from flaneur.metrics import summarize
from flaneur.report.run_report import RunData, load_run, paired_comparisons
from flaneur.report.tables import (
    METRIC_LABELS,
    PAIRED_COLUMNS,
    PAIRED_NOTE,
    paired_cells,
    run_figures,
)
from flaneur.web.catalog import RunEntry, running_metrics
from flaneur.web.folder_cache import FolderCache


def read_summary(folder: Path) -> dict[str, Any] | None:
    """``summary.json`` of a folder, or None when absent or not (yet) valid JSON."""
    try:
        return json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def run_config(folder: Path, summary: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run's configuration: from its ``summary.json`` (``summary`` when already read),
    else ``run.json`` (a run in progress), else ``{}``."""

    config = (summary if summary is not None else read_summary(folder) or {}).get("config")
    if not isinstance(config, dict):
        try:
            config = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("config")
        except (OSError, ValueError, AttributeError):
            config = None
    return config if isinstance(config, dict) else {}


def run_progress(folder: Path, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`~flaneur.web.catalog.running_metrics` of the rows, with ``done`` of ``total``.

    ``total`` is the number of episodes the run plans over all its agents: from ``run.json``
    (written by ``flaneur run`` before its first episode), else from ``summary.json``, else
    None. ``done`` counts the distinct episodes of those agents and task sets the log holds
    (human rows saved beside the agents are not part of the run's plan).
    """

    pairs: set[tuple[str, str]] | None = None
    total: int | None = None
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        planned = manifest["planned"]
        pairs = {(str(t), str(a)) for t, agents in planned.items() for a in agents}
        total = int(manifest["total"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        entries = [
            e
            for e in (read_summary(folder) or {}).get("runs") or []
            if isinstance(e, dict) and e.get("agent") not in OUTSIDE_AGENTS
        ]
        if entries:
            pairs = {(str(e.get("task")), str(e.get("agent"))) for e in entries}
            total = sum(int(e.get("episodes") or 0) for e in entries)
    keys = {
        row_key(r)
        for r in rows
        if r.get("agent") not in OUTSIDE_AGENTS
        and (pairs is None or (str(r.get("task")), str(r.get("agent"))) in pairs)
    }
    done = min(len(keys), total) if total is not None else len(keys)
    return {**running_metrics(rows), "done": done, "total": total}


def is_live(folder: Path) -> bool:
    """Whether the run looks in progress: a log and no summary, or a log newer than it."""
    log, summary = folder / "episodes.jsonl", folder / "summary.json"
    if not summary.is_file():
        return log.is_file()
    return log.is_file() and log.stat().st_mtime > summary.stat().st_mtime + 1.0


def process_alive(manifest: dict[str, Any]) -> bool:
    """Whether the process a run's manifest names still runs (on this machine; a run started
    on another host counts as alive, as nothing here can tell)."""
    pid, host = manifest.get("pid"), manifest.get("host")
    if not isinstance(pid, int) or pid <= 0:
        return False
    if host and host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def run_status(folder: Path) -> dict[str, Any]:
    """What a run folder is now: ``status`` (``running``, ``finished``, ``interrupted`` or
    ``failed``), with ``reason`` for a failed run and ``resume`` (the command to continue,
    when the run was started from the console script) for an interrupted one.

    A run is running while the process its manifest names is alive and the log is newer than
    any summary; a run whose process is gone without a final summary, or whose summary says
    it stopped part-way (Ctrl-C), is interrupted; a finished summary with a dead model server
    or only errored rows is failed.
    """
    summary = read_summary(folder)
    manifest = _manifest(folder)
    if is_live(folder) and process_alive(manifest):
        return {"status": "running"}
    if summary is not None and not summary.get("partial") and not is_live(folder):
        reason = failed_run_reason(summary)
        return {"status": "failed", "reason": reason} if reason else {"status": "finished"}
    command = manifest.get("command")
    if isinstance(command, str) and "--resume" not in shlex.split(command):
        command = f"{command} --resume"
    return {"status": "interrupted", "resume": command if isinstance(command, str) else None}


def _manifest(folder: Path) -> dict[str, Any]:
    try:
        loaded = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _entries_from_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((str(row["task"]), str(row["agent"])), []).append(row)
    out = []
    for (task, agent), mine in groups.items():
        scored = [r["metrics"] for r in mine if r.get("metrics")]
        out.append(
            {
                "task": task,
                "agent": agent,
                "kind": mine[0].get("kind") or "navigation",
                "scheme": mine[0].get("scheme"),
                "rows": len(mine),
                "by_termination": dict(Counter(r.get("termination") for r in mine)),
                "summary": summarize(scored) if scored else None,
            }
        )
    return out


def _means(metrics: dict[str, Any]) -> dict[str, float | None]:
    return {k: (metrics.get(k) or {}).get("mean") for k in METRIC_LABELS if k in metrics}


def _all_means(group: dict[str, Any]) -> dict[str, float | None]:
    """Every metric's mean of one group of a task kind other than navigation."""
    return {k: (v or {}).get("mean") for k, v in (group.get("metrics") or {}).items()}


def run_overview(entry: RunEntry, cache: FolderCache | None = None) -> dict[str, Any]:
    """One line of the runs list (read from the files through ``cache`` when given; the
    state is always looked at afresh)."""
    cache = cache or FolderCache(0)
    status = run_status(entry.folder)
    kept = cache.get("overview", entry.folder, lambda: _overview(entry))
    return {**kept, "key": entry.key, **status, "live": status["status"] == "running"}


def _overview(entry: RunEntry) -> dict[str, Any]:
    summary = read_summary(entry.folder) or {}
    rows, _ = read_rows(entry.folder / "episodes.jsonl")
    agents = sorted({str(r.get("agent")) for r in rows})
    tasks = sorted({str(r.get("task")) for r in rows})
    progress = running_metrics(rows)
    return {
        "name": entry.folder.name,
        "agents": agents,
        "tasks": tasks,
        "rows": len(rows),
        "success_rate": progress["success_rate"],
        "model": summary.get("model"),
        "reportable": summary.get("reportable"),
        "modified": (entry.folder / "episodes.jsonl").stat().st_mtime
        if (entry.folder / "episodes.jsonl").is_file()
        else None,
    }


def run_tables(entry: RunEntry, cache: FolderCache | None = None) -> dict[str, Any]:
    """Metric tables per task, per-category tables, paired comparisons and the episodes
    (read from the files through ``cache`` when given; the state is looked at afresh)."""
    cache = cache or FolderCache(0)
    status = run_status(entry.folder)
    kept = cache.get("tables", entry.folder, lambda: _tables(entry))
    return {**kept, "key": entry.key, **status, "live": status["status"] == "running"}


def _tables(entry: RunEntry) -> dict[str, Any]:
    summary = read_summary(entry.folder) or {}
    rows, _ = read_rows(entry.folder / "episodes.jsonl")
    live = is_live(entry.folder)  # rows newer than the summary: tables from the rows
    entries = _entries_from_rows(rows) if live or not summary.get("runs") else summary["runs"]
    tables = []
    labels = dict(METRIC_LABELS)
    for item in entries:
        result = item.get("summary") or {}
        overall = (result.get("overall") or {}).get("metrics") or {}
        groups = (result.get("by") or {}).get("category") or {}
        navigation = item.get("kind", "navigation") == "navigation"
        means = _means(overall) if navigation else run_figures(item)
        labels.update({key: key for key in means if key not in labels})
        categories = {
            cat: {
                "episodes": g.get("episodes"),
                "means": _means(g.get("metrics") or {}) if navigation else _all_means(g),
            }
            for cat, g in groups.items()
        }
        tables.append(
            {
                "task": item.get("task"),
                "agent": item.get("agent"),
                "scheme": item.get("scheme"),
                "rows": item.get("rows"),
                "by_termination": item.get("by_termination") or {},
                "means": means,
                "categories": categories,
            }
        )
    paired = paired_comparisons(RunData(entry.folder, summary, rows))
    warnings: list[str] = []
    if summary and not live:  # what `flaneur report` would warn about this folder
        try:
            warnings = load_run(entry.folder).warnings
        except FlaneurError as err:
            warnings = [str(err)]
    episodes = [
        {
            "task": r.get("task"),
            "agent": r.get("agent"),
            "episode_id": r.get("episode_id"),
            "category": r.get("category"),
            "termination": r.get("termination"),
            "steps": r.get("steps"),
            "success": row_success(r),
            "player": r.get("player"),
        }
        for r in rows
    ]
    return {
        "name": entry.folder.name,
        "labels": labels,
        "tables": tables,
        "paired_columns": list(PAIRED_COLUMNS),
        "paired_note": PAIRED_NOTE,
        "paired": [{"task": c["task"], "cells": paired_cells(c)} for c in paired],
        "episodes": episodes,
        "progress": run_progress(entry.folder, rows),
        "seed": summary.get("seed"),
        "model": summary.get("model"),
        "warnings": warnings,
    }

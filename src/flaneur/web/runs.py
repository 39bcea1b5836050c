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
from flaneur.evaluate.summary import MANIFEST, run_entry
from flaneur.metrics.summary import wilson_interval
from flaneur.report.run_report import RunData, load_run, paired_comparisons
from flaneur.report.svg_map import bar_chart_svg
from flaneur.report.tables import (
    METRIC_LABELS,
    PAIRED_COLUMNS,
    PAIRED_NOTE,
    metric_figures,
    paired_cells,
)
from flaneur.web.catalog import RunEntry, running_metrics
from flaneur.web.episode_rows import brief_row, facets, usage_totals
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
    """:func:`~flaneur.web.catalog.running_metrics` of the rows, with ``done`` of ``total``
    and each agent's success so far (``agents``: :func:`success_entries`).

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
    return {
        **running_metrics(rows),
        "done": done,
        "total": total,
        "agents": success_entries(rows),
    }


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
    """Summary entries (:func:`~flaneur.evaluate.summary.run_entry`) of a run still being
    written, one per (task, agent) in log order."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((str(row["task"]), str(row["agent"])), []).append(row)
    return [
        {
            **run_entry(task, agent, str(mine[0].get("scheme")), str(mine[0].get("city")), mine, 0),
            "kind": mine[0].get("kind") or "navigation",
        }
        for (task, agent), mine in groups.items()
    ]


def success_entries(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (task, agent), in log order: ``n`` scored rows, their success rate (``success``,
    :func:`~flaneur.evaluate.runlog.row_success`) with its Wilson 95% interval, errors and
    tokens."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((str(row.get("task")), str(row.get("agent"))), []).append(row)
    out = []
    for (task, agent), mine in groups.items():
        scored = [r for r in mine if r.get("metrics")]
        wins = sum(1 for r in scored if row_success(r))
        totals = usage_totals(mine)
        out.append(
            {
                "task": task,
                "agent": agent,
                "n": len(scored),
                "success": wins / len(scored) if scored else None,
                "ci95": list(wilson_interval(wins, len(scored))) if scored else None,
                "errors": totals["errors"],
                "tokens": totals["total_tokens"],
                "cost_usd": totals["cost_usd"],
            }
        )
    return out


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
    progress = running_metrics(rows)
    return {
        "name": entry.folder.name,
        "agents": sorted({str(r.get("agent")) for r in rows}),
        "tasks": sorted({str(r.get("task")) for r in rows}),
        "rows": len(rows),
        "success_rate": progress["success_rate"],
        "entries": success_entries(rows),
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


def _table(item: dict[str, Any]) -> dict[str, Any]:
    """One (task, agent) entry of a summary as the run view tables it: each figure with its
    interval and n, overall and per category, and the entry's usage."""
    result = item.get("summary") or {}
    overall = (result.get("overall") or {}).get("metrics") or {}
    groups = (result.get("by") or {}).get("category") or {}
    navigation = item.get("kind", "navigation") == "navigation"
    return {
        "task": item.get("task"),
        "agent": item.get("agent"),
        "kind": item.get("kind", "navigation"),
        "scheme": item.get("scheme"),
        "rows": item.get("rows"),
        "by_termination": item.get("by_termination") or {},
        "usage": item.get("usage") or {},
        "figures": metric_figures(
            overall, navigation=navigation, task_metrics=item.get("task_metrics")
        ),
        "categories": {
            cat: {
                "episodes": g.get("episodes"),
                "figures": metric_figures(g.get("metrics") or {}, navigation=navigation),
            }
            for cat, g in groups.items()
        },
    }


def _tables(entry: RunEntry) -> dict[str, Any]:
    summary = read_summary(entry.folder) or {}
    rows, _ = read_rows(entry.folder / "episodes.jsonl")
    live = is_live(entry.folder)  # rows newer than the summary: tables from the rows
    entries = _entries_from_rows(rows) if live or not summary.get("runs") else summary["runs"]
    tables = [_table(item) for item in entries]
    keys = dict.fromkeys(key for table in tables for key in table["figures"])
    warnings: list[str] = []
    try:
        paired = paired_comparisons(RunData(entry.folder, summary, rows))
    except FlaneurError as err:  # rows of two protocols: said, not paired
        paired, warnings = [], [str(err)]
    if summary and not live:  # what `flaneur report` would warn about this folder
        try:
            warnings += load_run(entry.folder).warnings
        except FlaneurError as err:
            warnings.append(str(err))
    return {
        "name": entry.folder.name,
        "labels": {key: METRIC_LABELS.get(key, key) for key in keys},
        "tables": tables,
        "paired_columns": list(PAIRED_COLUMNS),
        "paired_note": PAIRED_NOTE,
        "paired": [{"task": c["task"], "cells": paired_cells(c)} for c in paired],
        "facets": facets(rows),
        "totals": usage_totals(rows),
        "progress": run_progress(entry.folder, rows),
        "seed": summary.get("seed"),
        "model": summary.get("model"),
        "warnings": warnings,
    }


def run_rows(entry: RunEntry, cache: FolderCache | None = None) -> list[dict[str, Any]]:
    """The rows of a run's log without their long fields (:func:`brief_row`; read through
    ``cache`` when given); callers must not change them."""
    cache = cache or FolderCache(0)
    return cache.get(
        "rows",
        entry.folder,
        lambda: [brief_row(r) for r in read_rows(entry.folder / "episodes.jsonl")[0]],
    )


def category_chart(
    entry: RunEntry, task: str, metric: str, cache: FolderCache | None = None
) -> str:
    """SVG chart of one figure of one task set by category: a bar per agent with its 95%
    interval (from the run's tables).

    Raises
    ------
    FlaneurError
        When the run has no table of ``task`` or no category figure ``metric``.
    """
    kept = (cache or FolderCache(0)).get("tables", entry.folder, lambda: _tables(entry))
    mine = [t for t in kept["tables"] if t["task"] == task]
    if not mine:
        raise FlaneurError(f"run {entry.key!r} has no task {task[:80]!r}")
    categories = list(dict.fromkeys(c for t in mine for c in t["categories"]))
    cells = {
        str(t["agent"]): [
            t["categories"].get(c, {}).get("figures", {}).get(metric) for c in categories
        ]
        for t in mine
    }
    if not any(cell and cell.get("mean") is not None for row in cells.values() for cell in row):
        raise FlaneurError(f"run {entry.key!r} has no figure {metric[:80]!r} by category")
    label = kept["labels"].get(metric, metric)
    return bar_chart_svg(
        categories,
        {agent: [c["mean"] if c else None for c in row] for agent, row in cells.items()},
        intervals={agent: [c["ci95"] if c else None for c in row] for agent, row in cells.items()},
        title=f"{task}: {label} by category (bars: mean; whiskers: 95% interval)",
    )

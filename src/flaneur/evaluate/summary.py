"""``summary.json`` of a run folder, rebuilt from every row of its ``episodes.jsonl``.

The summary covers every row the folder holds (a resumed run must name every agent and task
set the folder already holds, see :class:`~flaneur.evaluate.runlog.RunLog`), so the summary
and the reports built from the rows always describe the same episodes. Rows of agents the
runner does not run (:data:`~flaneur.evaluate.runlog.OUTSIDE_AGENTS`: human play) get an
entry each per task over the episodes they hold (:func:`outside_entries`). ``partial`` is true
while some scheduled episode has no row (a run stopped by Ctrl-C, a kill or a token budget);
``--resume`` completes it (and runs errored rows again).
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from flaneur.agents.ablations import perception_of
from flaneur.evaluate.provenance import git_commit, package_versions
from flaneur.evaluate.runlog import OUTSIDE_AGENTS
from flaneur.metrics import summarize
from flaneur.world.city import City

SUMMARY_VERSION = 2
"""2: ``partial``, ``interrupted`` and per-run ``missing`` added; rows outside this
invocation's selection are counted."""

Plan = tuple[str, City, list[Any], str]
"""``(task id, city, episodes or items this invocation selected, scheme)``."""


def summarize_run(
    config: Any,
    rows: list[dict[str, Any]],
    plans: Sequence[Plan],
    *,
    wall_s: float,
    ran: int,
    resumed: bool,
    dropped_errors: int,
    stopped_early: str | None = None,
    interrupted: bool = False,
    kinds: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The summary of a run from all its rows (see the module docstring).

    Parameters
    ----------
    config
        The :class:`~flaneur.evaluate.runner.RunConfig` of this invocation.
    rows
        Every row of the run folder.
    plans
        What this invocation scheduled, per task set.
    wall_s, ran, resumed, dropped_errors
        This invocation's wall time, episodes scheduled, whether it resumed, and errored
        rows it dropped to run them again.
    stopped_early
        Why the run stopped before scheduling everything (``None`` if it did not).
    interrupted
        Whether Ctrl-C stopped it.
    kinds
        The shared context of each task set (:class:`~flaneur.evaluate.kinds.TaskContext`),
        whose kind's task-set figures join each entry (``task_metrics``).
    """
    runs = []
    missing_total = 0
    for task, city, episodes, scheme in plans:
        for agent in config.agents:
            mine = [r for r in rows if r["task"] == task and r["agent"] == agent]
            expected = {e.id for e in episodes} | {str(r["episode_id"]) for r in mine}
            context = (kinds or {}).get(task)
            entry = run_entry(task, agent, scheme, city.name, mine, len(expected), context=context)
            missing_total += entry["missing"]
            runs.append(entry)
    runs += outside_entries(rows, plans, named=config.agents)
    return {
        "summary_version": SUMMARY_VERSION,
        "config": asdict(config),
        "protocol": config.protocol,
        "reportable": config.reportable,
        "partial": missing_total > 0,
        "interrupted": interrupted,
        "stopped_early": stopped_early,
        "git_commit": git_commit(),
        "versions": package_versions(),
        "model": config.llm,
        "seed": config.seed,
        "episodes": len(rows),
        "by_termination": dict(Counter(r["termination"] for r in rows)),
        "ran_this_invocation": ran,
        "resumed": resumed,
        "errored_rows_rerun": dropped_errors,
        "wall_s": round(wall_s, 3),
        "runs": runs,
    }


def run_entry(
    task: str,
    agent: str,
    scheme: str,
    city: str,
    mine: list[dict[str, Any]],
    episodes: int,
    *,
    context: Any = None,
) -> dict[str, Any]:
    """The summary entry of one agent on one task set from its rows (``episodes``: how many
    it should have; ``context``: the task set's, whose kind's task-set figures join it)."""

    scored = [r["metrics"] for r in mine if r.get("metrics")]
    usage: Counter[str] = Counter()
    for r in mine:
        usage.update(
            {k: v for k, v in (r.get("usage") or {}).items() if isinstance(v, int | float)}
        )
    entry: dict[str, Any] = {
        "task": task,
        "agent": agent,
        "kind": context.kind.name if context is not None else "navigation",
        "scheme": scheme,
        "city": city,
        "episodes": episodes,
        "rows": len(mine),
        "missing": episodes - len(mine),
        "by_termination": dict(Counter(r["termination"] for r in mine)),
        "usage": dict(usage),
        "privileged": any(r.get("privileged") for r in mine),
        "summary": summarize(scored) if scored else None,
    }
    ablations = sorted({str(a) for r in mine for a in r.get("ablations") or ()})
    if ablations:
        entry["ablations"] = ablations  # e.g. VELMA's "no image" without imagery
    if perception_of(mine) == "none":
        entry["perception"] = "none"  # every row ran blind: nothing to see
    ocr = ocr_backend_of(mine)
    if ocr:
        entry["ocr_backend"] = ocr  # what read the signs (auto: chosen per machine)
    figures = context.kind.aggregate(mine, context) if context is not None and scored else None
    if figures:
        entry["task_metrics"] = figures
    return entry


def ocr_backend_of(rows: Sequence[dict[str, Any]]) -> str | None:
    """The OCR backends the rows read text with (``"ocr_backend"`` of each row, see
    :func:`~flaneur.evaluate.runner.run_job`), comma-separated; None when none did."""
    found = {b for r in rows for b in str(r.get("ocr_backend") or "").split(",") if b}
    return ",".join(sorted(found)) or None


def outside_entries(
    rows: list[dict[str, Any]], plans: Sequence[Plan], *, named: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Entries of the rows of :data:`~flaneur.evaluate.runlog.OUTSIDE_AGENTS` (human play
    saved beside an agents' run) other than the ``named`` agents, per task and agent, over
    the episodes they played; each is marked ``outside``."""

    cities = {task: city.name for task, city, _, _ in plans}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("agent") in OUTSIDE_AGENTS and row.get("agent") not in named:
            groups.setdefault((str(row["task"]), str(row["agent"])), []).append(row)
    out = []
    for (task, agent), mine in groups.items():
        scheme = str(mine[0].get("scheme") or "")
        city = cities.get(task) or str(mine[0].get("city") or "")
        played = len({str(r["episode_id"]) for r in mine})
        out.append({**run_entry(task, agent, scheme, city, mine, played), "outside": True})
    return out


MANIFEST = "run.json"
"""File a run writes into its folder when it starts: what it plans (read by the live page)."""


def write_manifest(folder: Path, config: Any, plans: Sequence[Plan], to_run: int) -> None:
    """Write ``run.json``: the configuration and the episodes planned per task and agent
    (``total`` counts those a resume finds done too), before any episode runs; the live page
    of ``flaneur serve`` shows its progress as *k of total*."""
    planned = {task: {a: len(episodes) for a in config.agents} for task, _, episodes, _ in plans}
    manifest = {
        "config": asdict(config),
        "planned": planned,
        "total": sum(n for agents in planned.values() for n in agents.values()),
        "to_run": to_run,
        "started": time.time(),
        # who runs it: a page tells a running run from one that died without a summary
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": console_command(),
    }
    tmp = folder / f"{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8")
    tmp.replace(folder / MANIFEST)


def console_command() -> str | None:
    """The ``flaneur ...`` command line of this process, when it is the console script."""
    if Path(sys.argv[0]).name != "flaneur":
        return None
    return shlex.join(["flaneur", *sys.argv[1:]])


def write_summary(folder: Path, summary: dict[str, Any]) -> None:
    """Write ``summary.json`` whole (a temporary file renamed over the old one)."""
    path = folder / "summary.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    tmp.replace(path)


__all__ = [
    "MANIFEST",
    "SUMMARY_VERSION",
    "console_command",
    "ocr_backend_of",
    "outside_entries",
    "run_entry",
    "summarize_run",
    "write_manifest",
    "write_summary",
]

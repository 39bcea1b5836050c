"""The one way the ``flaneur bench`` short forms run (:mod:`flaneur.cli.bench`,
:mod:`flaneur.cli.bench_vln`, :mod:`flaneur.cli.bench_detection`): build the
:class:`~flaneur.evaluate.runner.RunConfig` of one solver on one task set, run it into the
run folder, and print its figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from flaneur.cli.failures import check_output_path
from flaneur.cli.output import console, print_json
from flaneur.cli.run import exit_on_failed_run, parse_agent_options, report_interrupted
from flaneur.errors import FlaneurError


def run_short_form(
    kind: str | None,
    task: str,
    solver: str,
    out: Path,
    *,
    options: list[str] | dict[str, Any] | None = None,
    resume: bool = False,
    progress: str = "rich",
    **fields: Any,
) -> dict[str, Any]:
    """Run ``solver`` on the task set ``task`` (of ``kind``, when given) into ``out``; the
    run's summary. The one way the ``bench`` short forms build a
    :class:`~flaneur.evaluate.runner.RunConfig` (``fields``: its other fields) and run it.
    ``options``: ``--option KEY=VALUE`` strings, or the solver's options as a dict (``None``: the
    config names no options of it)."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.evaluate.runner import RunConfig, RunInterrupted, run_benchmark
    from flaneur.tasks.resolve import resolve_task

    check_output_path(out, "--out", folder=True)
    found = resolve_task(task).kind if kind is not None else None
    if found != kind:
        raise FlaneurError(f"--task {task}: a {found} task set, not {kind}")
    if isinstance(options, list):
        shared, own = parse_agent_options(options, (solver,))
        options = {**shared, **own.get(solver, {})}
    config = RunConfig(
        agents=(solver,),
        tasks=(task,),
        per_agent_options={} if options is None else {solver: options},
        **fields,
    )
    try:
        return run_benchmark(config, out, resume=resume, progress=progress)
    except RunInterrupted as stopped:
        raise typer.Exit(report_interrupted(stopped, "the same command with --resume")) from None


def run_figures(summary: dict[str, Any], solver: str, out: Path) -> dict[str, Any]:
    """The figures of a short-form run: row-metric means and the task-set figures."""
    entry = next(e for e in summary["runs"] if e["agent"] == solver)
    overall = ((entry.get("summary") or {}).get("overall") or {}).get("metrics") or {}
    return {
        "task": entry["task"],
        "solver": solver,
        "city": entry["city"],
        "items": entry["episodes"],
        "rows": entry["rows"],
        "by_termination": entry["by_termination"],
        "metrics": {name: m.get("mean") for name, m in overall.items()},
        "task_metrics": entry.get("task_metrics") or {},
        "reportable": summary["reportable"],
        "out": str(out),
    }


def figure_table(title: str, figures: list[tuple[str, dict[str, Any]]]) -> Any:
    """A table of ``(name, {"value", "n", "ci95"})`` figures."""

    table = Table("figure", "value", "n", "95% interval", title=title)
    for name, fig in figures:
        value, ci = fig.get("value"), fig.get("ci95")
        interval = f"{ci[0]:.3f} .. {ci[1]:.3f}" if ci else ""
        shown = "-" if value is None else f"{value:.3f}"
        table.add_row(name, shown, str(fig.get("n", "")), interval)
    return table


def show_run(
    figures: dict[str, Any],
    summary: dict[str, Any],
    as_json: bool,
    *,
    more_json: dict[str, Any] | None = None,
    tables: Any = None,
) -> None:
    """Print a short-form run and exit 1 when it failed: one JSON object (with
    ``more_json``), or a table of the row-metric means and the task-set figures (``tables``:
    ``figures -> tables`` printed instead)."""

    if as_json:
        print_json({**figures, **(more_json or {})})
    else:
        means = [(name, {"value": mean}) for name, mean in figures["metrics"].items()]
        title = f"{figures['task']}: {figures['solver']}"
        default = [figure_table(title, [*means, *figures["task_metrics"].items()])]
        for table in tables(figures) if tables else default:
            console.print(table)
        out = figures["out"]
        console.print(f"rows: {out}/episodes.jsonl, summary: {out}/summary.json")
    exit_on_failed_run(summary)

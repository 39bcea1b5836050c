"""``flaneur report``: results of one or more runs in the terminal and as an HTML report."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape as markup_escape

from flaneur.cli.failures import check_output_path
from flaneur.cli.output import console, err_console, print_json, print_tables
from flaneur.errors import FlaneurError

if TYPE_CHECKING:
    from flaneur.report.run_folder import RunData
    from flaneur.tasks.episode import Episode
    from flaneur.world.city import City


def report_command(
    runs: list[Path] = typer.Argument(..., help="Run folder(s) written by `flaneur run`."),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="HTML file (default: report.html in the first run folder)."
    ),
    data_dir: Path | None = typer.Option(
        None,
        "--data-dir",
        help="Datasets folder for the maps (default: the run's, or $FLANEUR_DATA).",
    ),
    registry: list[Path] | None = typer.Option(
        None,
        "--registry",
        metavar="FILE",
        help="TOML file registering the runs' user task sets (default: the runs'); repeatable.",
    ),
    max_episodes: int = typer.Option(
        50, "--max-episodes", min=0, help="Episode sections per run, task and agent."
    ),
    tiles: bool = typer.Option(
        False, "--tiles", help="Add OpenStreetMap tiles to the interactive maps (online only)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Print metric tables of runs and write an HTML report (maps, step logs, wins/losses).

    Each run also gets, per task with two or more agents, a paired comparison of its agents on
    the episodes both ran (``paired`` in the ``--json`` output).
    """
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.report.run_report import (
        build_report,
        compare_runs,
        load_run,
        paired_comparisons,
    )

    if out is not None:
        check_output_path(out, "--out", folder=False)
    loaded = [load_run(folder) for folder in runs]
    for run in loaded:  # problems of the run folders (cut or changed logs) are said, not hidden
        for warning in run.warnings:
            err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    path = build_report(
        loaded,
        out or loaded[0].folder / "report.html",
        tasks=_report_tasks(loaded, data_dir, registry),
        max_episodes=max_episodes,
        tiles=tiles,
    )
    comparisons = [c for a, b in itertools.pairwise(loaded) for c in compare_runs(a, b)]
    paired = [paired_comparisons(run) for run in loaded]
    if json_out:
        print_json(
            {
                "report": str(path),
                "runs": [r.summary for r in loaded],
                "warnings": [w for r in loaded for w in r.warnings],
                "comparisons": comparisons,
                "paired": [c for pairs in paired for c in pairs],
            }
        )
        return
    _print_report(loaded, paired, comparisons)
    console.print(f"report: {path}")


def _report_tasks(
    loaded: list[RunData], data_dir: Path | None, registry: list[Path] | None
) -> dict[str, tuple[City, list[Episode]]]:
    """The city and episodes of every task set the runs hold, for the report's maps; a task
    set that cannot be loaded gets a warning (a report without maps is still a report)."""

    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.tasks.registry import load_spec, navigation_episodes
    from flaneur.tasks.resolve import register_registries, spec_of_run

    tasks: dict[str, tuple[City, list[Episode]]] = {}
    for run in loaded:
        config = run.summary.get("config") or {}
        folder = data_dir or config.get("data_dir")
        for task in {str(r["task"]) for r in run.rows} - tasks.keys():
            try:
                register_registries(registry or config.get("registries"))
                spec = spec_of_run(task, run.summary)
                if spec.kind != "navigation":
                    continue  # items of other kinds have no walk to draw
                city, items = load_spec(spec, folder)
                tasks[task] = (city, navigation_episodes(items, task=task))
            except FlaneurError as err:  # a report without maps is still a report
                err_console.print(
                    f"[yellow]no maps for {markup_escape(task)}: {markup_escape(str(err))}[/]"
                )
    return tasks


def _print_report(
    loaded: list[RunData], paired: list[list[dict[str, Any]]], comparisons: list[dict[str, Any]]
) -> None:
    """Each run's results and paired tables (titled by the run), then the run comparisons."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.report.tables import paired_tables, results_tables

    for run, pairs in zip(loaded, paired, strict=True):
        for table in results_tables(run.summary) + paired_tables(pairs):
            table.title = f"{run.name}: {table.title}"
            print_tables([table])
    for table in paired_tables(comparisons):
        table.title = f"runs compared: {table.title}"
        print_tables([table])

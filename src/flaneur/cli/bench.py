"""``flaneur bench``: V-IRL's benchmarks on a city.

``bench recognition`` and ``bench vqa`` are short forms of ``flaneur run`` for the task kinds
``virl-recognition`` and ``virl-vqa`` (:mod:`flaneur.evaluate.kinds.virl_bench`): they name
the task set (a registered id or an item file of ``flaneur tasks generate CITY --kind
virl-recognition|virl-vqa``), the solver and its options, run it through
:func:`flaneur.evaluate.runner.run_benchmark` into ``--out`` and print the figures.
``bench report`` builds the per-city table of any number of run folders beside the paper's
numbers; ``bench types`` shows V-IRL's type lists. ``bench vln`` and ``bench detection``
live in their own modules.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from flaneur.cli import run_options as ro
from flaneur.cli.bench_detection import bench_detection_app
from flaneur.cli.bench_runs import run_figures, run_short_form, show_run
from flaneur.cli.bench_vln import bench_vln_app
from flaneur.cli.output import console, err_console, print_json
from flaneur.cli.run import check_views
from flaneur.errors import FlaneurError
from flaneur.evaluate.protocol import check_protocol
from flaneur.evaluate.runlog import read_rows
from flaneur.report.run_folder import load_run

bench_app = typer.Typer(
    rich_markup_mode=None,
    help=(
        "V-IRL's benchmarks on any city pack: place recognition and place VQA (generated with "
        "`flaneur tasks generate CITY --kind virl-recognition|virl-vqa`, run by the one runner), "
        "place detection and VLN; the paper's metrics (top-1/3/5, mAcc, circular evaluation) "
        "and its numbers beside them. Offline by default."
    ),
    no_args_is_help=True,
)

CSV_HELP = "Also write per-type and per-region accuracy (table,name,accuracy,weight) here."
OPTION_HELP = "An option of the solver, KEY=VALUE (repeatable; VALUE read as JSON when it parses)."
LLM_HELP = "Model of model-using solvers, e.g. openai/gpt-4o-mini, vllm/NAME, ollama/NAME."


@bench_app.command("types")
def types_command(
    types: str = typer.Argument("96", help="'20', '96' or a file with one V-IRL type a line."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Show a V-IRL type list and the flaneur categories each type maps to."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.bench.types import VIRL_TO_FLANEUR, load_type_list

    listed = load_type_list(types)
    if as_json:
        print_json({"types": {t: list(VIRL_TO_FLANEUR[t]) for t in listed}, "count": len(listed)})
        return
    for t in listed:
        typer.echo(f"{t}\t{', '.join(VIRL_TO_FLANEUR[t]) or '(no counterpart)'}")


def _write_csv(path: Path | None, out: Path, solver: str, metric: str) -> None:
    """Per-type and per-region accuracy of the run's rows: ``table,name,accuracy,weight``."""
    if path is None:
        return
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.bench.tables import breakdown

    rows = [r for r in read_rows(out / "episodes.jsonl")[0] if r.get("agent") == solver]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["table", "name", "accuracy", "weight"])
        for table, groups in breakdown(rows, metric).items():
            for name, (accuracy, weight) in groups.items():
                writer.writerow([table, name, f"{accuracy:.6f}", f"{weight:g}"])


def _solver_command(kind: str, flag: str, default: str, solvers: str, metric: str, doc: str):
    """The short form of ``flaneur run`` for a ``kind`` task set (``flag``: the solver)."""

    def command(
        out: Path = typer.Option(
            ..., "-o", "--out", help="Run folder (episodes.jsonl, summary.json)."
        ),
        task: str = typer.Option(
            f"helsinki-{kind}-v1",
            "--task",
            help=f"Registered task id or item file (flaneur tasks generate CITY --kind {kind}).",
        ),
        solver: str = typer.Option(default, flag, help=solvers),
        option: list[str] | None = typer.Option(
            None, "--option", metavar="KEY=VALUE", help=OPTION_HELP
        ),
        llm: str | None = typer.Option(None, "--llm", help=LLM_HELP),
        llm_base_url: str | None = typer.Option(
            None, "--llm-base-url", help="Server URL for --llm."
        ),
        views: str | None = ro.VIEWS,
        seed: int = typer.Option(0, "--seed", min=0, help="Run seed."),
        protocol: str = ro.PROTOCOL,
        limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N places."),
        concurrency: int = typer.Option(4, "--concurrency", min=1, help="Places in flight."),
        resume: bool = typer.Option(False, "--resume", help="Continue the run in --out."),
        csv_path: Path | None = typer.Option(None, "--csv", help=CSV_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        check_views(views)
        summary = run_short_form(
            kind,
            task,
            solver,
            out,
            options=list(option or []),
            progress="none" if as_json else "rich",
            llm=llm,
            llm_base_url=llm_base_url,
            views=views,
            seed=seed,
            protocol=check_protocol(protocol),
            limit=limit,
            concurrency=concurrency,
            resume=resume,
        )
        _write_csv(csv_path, out, solver, metric)
        show_run(run_figures(summary, solver, out), summary, as_json)

    command.__doc__ = doc
    return command


bench_app.command("recognition")(
    _solver_command(
        "virl-recognition",
        "--recogniser",
        "offline",
        "offline (OCR + MiniLM), clip, vlm (--llm) or oracle.",
        "top1",
        "Score a recogniser: top-1/3/5 per place, mAcc and accuracy over the set.",
    )
)
bench_app.command("vqa")(
    _solver_command(
        "virl-vqa",
        "--answerer",
        "embedder",
        "embedder (offline OCR + MiniLM), model (--llm) or oracle.",
        "correct",
        "Score an answerer on place VQA: circular and first-pass accuracy and mAcc.",
    )
)


@bench_app.command("report")
def report_command(
    folders: list[Path] = typer.Argument(..., help="Run folders of V-IRL benchmark runs."),
    csv_path: Path | None = typer.Option(
        None,
        "--csv",
        help="Write every row (city, benchmark, runner, table, name, metric, value) here.",
    ),
    detail: bool = typer.Option(
        False, "--detail", help="Also print the per-type and per-region rows of each run."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Per-city results of V-IRL benchmark runs, beside the paper's numbers."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.bench.tables import PAPER, PAPER_NOTE, report_rows

    found = []
    for folder in folders:
        run = load_run(folder)
        rows = list(report_rows([(run.summary, run.rows)]))
        if not rows:
            raise FlaneurError(f"{folder}: no V-IRL benchmark run here (recognition, VQA, ...)")
        found += rows
    if csv_path is not None:
        with csv_path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["city", "benchmark", "runner", "table", "name", "metric", "value"])
            writer.writerows(found)
    overall = [r for r in found if r[3] == "overall"]
    if as_json:
        cities: dict[str, Any] = {}
        for city, bench, runner, _, _, metric, value in overall:
            cities.setdefault(city, {}).setdefault(bench, {}).setdefault(runner, {})[metric] = value
        print_json({"cities": cities, "note": PAPER_NOTE})
        return

    table = Table("city", "benchmark", "runner", "metric", "flaneur", "paper (V-IRL)")
    for city, bench, runner, _, _, metric, value in overall:
        table.add_row(city, bench, runner, metric, _shown(value), PAPER.get((bench, metric), ""))
    console.print(table)
    if detail:
        rest = Table("city", "benchmark", "runner", "table", "name", "metric", "value")
        for city, bench, runner, kind, name, metric, value in found:
            if kind != "overall":
                rest.add_row(city, bench, runner, kind, name, metric, _shown(value))
        console.print(rest)
    err_console.print(PAPER_NOTE)


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _add_commands() -> None:
    """``bench vln`` and ``bench detection`` live in their own modules; one ``bench`` group."""

    for sub in (bench_vln_app, bench_detection_app):
        bench_app.registered_commands.extend(sub.registered_commands)


_add_commands()

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

from flaneur.cli.output import console, err_console, print_json
from flaneur.errors import FlaneurError

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
VIEWS_HELP = "Views to show (synthetic, panorama:DIR, google, ...); default: SyntheticViews."


@bench_app.command("types")
def types_command(
    types: str = typer.Argument("96", help="'20', '96' or a file with one V-IRL type a line."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Show a V-IRL type list and the flaneur categories each type maps to."""
    from flaneur.bench.types import VIRL_TO_FLANEUR, load_type_list

    listed = load_type_list(types)
    if as_json:
        print_json({"types": {t: list(VIRL_TO_FLANEUR[t]) for t in listed}, "count": len(listed)})
        return
    for t in listed:
        typer.echo(f"{t}\t{', '.join(VIRL_TO_FLANEUR[t]) or '(no counterpart)'}")


def run_short_form(
    kind: str,
    task: str,
    solver: str,
    options: list[str] | None,
    out: Path,
    *,
    llm: str | None,
    llm_base_url: str | None,
    views: str | None,
    seed: int,
    limit: int | None,
    concurrency: int,
    resume: bool,
    quiet: bool,
) -> dict[str, Any]:
    """Run ``solver`` on the ``kind`` task set ``task`` into ``out``; the run's summary."""
    from flaneur.cli.failures import check_output_path
    from flaneur.cli.run import parse_agent_options, report_interrupted
    from flaneur.evaluate.runner import RunConfig, RunInterrupted, run_benchmark
    from flaneur.tasks.resolve import resolve_task

    check_output_path(out, "--out", folder=True)
    spec = resolve_task(task)
    if spec.kind != kind:
        raise FlaneurError(f"--task {task}: a {spec.kind} task set, not {kind}")
    shared, own = parse_agent_options(list(options or []), (solver,))
    config = RunConfig(
        agents=(solver,),
        tasks=(task,),
        llm=llm,
        llm_base_url=llm_base_url,
        views=views,
        seed=seed,
        limit=limit,
        concurrency=concurrency,
        per_agent_options={solver: {**shared, **own.get(solver, {})}},
    )
    try:
        return run_benchmark(config, out, resume=resume, progress="none" if quiet else "rich")
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


def _write_csv(path: Path | None, out: Path, solver: str, metric: str) -> None:
    """Per-type and per-region accuracy of the run's rows: ``table,name,accuracy,weight``."""
    if path is None:
        return
    from flaneur.bench.tables import breakdown
    from flaneur.evaluate.runlog import read_rows

    rows = [r for r in read_rows(out / "episodes.jsonl")[0] if r.get("agent") == solver]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["table", "name", "accuracy", "weight"])
        for table, groups in breakdown(rows, metric).items():
            for name, (accuracy, weight) in groups.items():
                writer.writerow([table, name, f"{accuracy:.6f}", f"{weight:g}"])


def _show(figures: dict[str, Any], summary: dict[str, Any], as_json: bool) -> None:
    from flaneur.cli.run import exit_on_failed_run

    if as_json:
        print_json(figures)
        exit_on_failed_run(summary)
        return
    from rich.table import Table

    table = Table(
        "figure", "value", "n", "95% interval", title=f"{figures['task']}: {figures['solver']}"
    )
    for name, mean in figures["metrics"].items():
        table.add_row(name, "-" if mean is None else f"{mean:.3f}", "", "")
    for name, fig in figures["task_metrics"].items():
        value, ci = fig.get("value"), fig.get("ci95")
        shown = "-" if value is None else f"{value:.3f}"
        interval = f"{ci[0]:.3f} .. {ci[1]:.3f}" if ci else ""
        table.add_row(name, shown, str(fig.get("n", "")), interval)
    console.print(table)
    console.print(f"rows: {figures['out']}/episodes.jsonl, summary: {figures['out']}/summary.json")
    exit_on_failed_run(summary)


TASK_OPTION = "Registered task id or item file (flaneur tasks generate CITY --kind {kind})."


@bench_app.command("recognition")
def recognition_command(
    out: Path = typer.Option(..., "--out", help="Run folder (episodes.jsonl, summary.json)."),
    task: str = typer.Option(
        "helsinki-virl-recognition-v1", "--task", help=TASK_OPTION.format(kind="virl-recognition")
    ),
    recogniser: str = typer.Option(
        "offline", "--recogniser", help="offline (OCR + MiniLM), clip, vlm (--llm) or oracle."
    ),
    option: list[str] | None = typer.Option(
        None, "--option", "-o", metavar="KEY=VALUE", help=OPTION_HELP
    ),
    llm: str | None = typer.Option(None, "--llm", help=LLM_HELP),
    llm_base_url: str | None = typer.Option(None, "--llm-base-url", help="Server URL for --llm."),
    views: str | None = typer.Option(None, "--views", help=VIEWS_HELP),
    seed: int = typer.Option(0, "--seed", min=0, help="Run seed."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N places."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Places in flight."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out."),
    csv_path: Path | None = typer.Option(None, "--csv", help=CSV_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Score a recogniser: top-1/3/5 per place, mAcc and accuracy over the set."""
    summary = run_short_form(
        "virl-recognition",
        task,
        recogniser,
        option,
        out,
        llm=llm,
        llm_base_url=llm_base_url,
        views=views,
        seed=seed,
        limit=limit,
        concurrency=concurrency,
        resume=resume,
        quiet=as_json,
    )
    _write_csv(csv_path, out, recogniser, "top1")
    _show(run_figures(summary, recogniser, out), summary, as_json)


@bench_app.command("vqa")
def vqa_command(
    out: Path = typer.Option(..., "--out", help="Run folder (episodes.jsonl, summary.json)."),
    task: str = typer.Option(
        "helsinki-virl-vqa-v1", "--task", help=TASK_OPTION.format(kind="virl-vqa")
    ),
    answerer: str = typer.Option(
        "embedder", "--answerer", help="embedder (offline OCR + MiniLM), model (--llm) or oracle."
    ),
    option: list[str] | None = typer.Option(
        None, "--option", "-o", metavar="KEY=VALUE", help=OPTION_HELP
    ),
    llm: str | None = typer.Option(None, "--llm", help=LLM_HELP),
    llm_base_url: str | None = typer.Option(None, "--llm-base-url", help="Server URL for --llm."),
    views: str | None = typer.Option(None, "--views", help=VIEWS_HELP),
    seed: int = typer.Option(0, "--seed", min=0, help="Run seed."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N places."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Places in flight."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out."),
    csv_path: Path | None = typer.Option(None, "--csv", help=CSV_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Score an answerer on place VQA: circular and first-pass accuracy and mAcc."""
    summary = run_short_form(
        "virl-vqa",
        task,
        answerer,
        option,
        out,
        llm=llm,
        llm_base_url=llm_base_url,
        views=views,
        seed=seed,
        limit=limit,
        concurrency=concurrency,
        resume=resume,
        quiet=as_json,
    )
    _write_csv(csv_path, out, answerer, "correct")
    _show(run_figures(summary, answerer, out), summary, as_json)


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
    from flaneur.bench.tables import PAPER, PAPER_NOTE, report_rows
    from flaneur.report.run_folder import load_run

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
    from rich.table import Table

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


def _add_vln_commands() -> None:
    """``flaneur bench vln`` lives in :mod:`flaneur.cli.bench_vln`; one ``bench`` group."""
    from flaneur.cli.bench_vln import bench_vln_app

    bench_app.registered_commands.extend(bench_vln_app.registered_commands)


_add_vln_commands()


def _add_detection_command() -> None:
    """``flaneur bench detection`` lives in :mod:`flaneur.cli.bench_detection`."""
    from flaneur.cli.bench_detection import bench_detection_app

    bench_app.registered_commands.extend(bench_detection_app.registered_commands)


_add_detection_command()

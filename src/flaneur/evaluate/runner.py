"""The evaluation runner behind ``flaneur run``: one runner, concurrent, resumable, logged.

Every task set is of a kind (:mod:`flaneur.evaluate.kinds`: navigation episodes, V-IRL's
benchmarks, the planner agents' scenarios); the runner is the same for all. A run is a list
of jobs, one per (task set, solver, item), handed to an executor
(:mod:`flaneur.evaluate.executors`; :class:`~flaneur.evaluate.executors.LocalExecutor`
runs at most ``concurrency`` items at a time on one asyncio event loop). Each job is run by
its task's kind (a navigation job borrows an environment from a pool and runs a fresh agent
in it; a recognition job shows a recogniser the item's view) and its row is scored by the
kind a small batch at a time. The single
writer, :class:`~flaneur.evaluate.runlog.RunLog`, appends every finished row to
``DIR/episodes.jsonl`` as it arrives; ``DIR/summary.json`` is rebuilt at the end from every
row of the log (:mod:`flaneur.evaluate.summary`), so a resumed run summarises the whole run.
Ctrl-C stops scheduling, writes the summary marked partial and raises
:class:`~flaneur.evaluate.interrupt.RunInterrupted` (:mod:`flaneur.evaluate.interrupt`).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flaneur.evaluate.executors import Executor, LocalExecutor, RunStop
from flaneur.evaluate.interrupt import InterruptHandler, RunInterrupted
from flaneur.evaluate.kinds import Job, SolverFactory, TaskContext, TaskKind
from flaneur.evaluate.kinds.navigation import NavigationKind
from flaneur.evaluate.plan import RunPlan, build_context, plan_run, select_episodes
from flaneur.evaluate.progress import RunProgress
from flaneur.evaluate.protocol import DEFAULT_PROTOCOL
from flaneur.evaluate.resources import RunResources
from flaneur.evaluate.runlog import FINISHED, RunLog, row_success
from flaneur.evaluate.summary import (
    SUMMARY_VERSION,
    summarize_run,
    write_manifest,
    write_summary,
)
from flaneur.models.usage import BudgetExceeded
from flaneur.perception.ocr import recording_backends
from flaneur.world.city import City


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides what a run computes (and so goes into the config hash).

    ``limit``, ``ids``, ``concurrency`` and ``progress`` change which episodes run or how
    fast, not their results, and are left out of the hash.  ``llm_options`` are the model
    layer's settings (:class:`~flaneur.models.ModelConfig` fields such as ``timeout_s``,
    ``max_retries``, ``max_in_flight``, ``api_key_env``, ``failure_threshold``,
    ``max_tokens``, ``backend_options``); only ``max_tokens`` and ``backend_options`` can
    change replies, and they enter the hash when set. ``protocol`` is ``flaneur`` or
    ``paper`` (:mod:`flaneur.evaluate.protocol`).
    """

    agents: tuple[str, ...]
    tasks: tuple[str, ...]
    data_dir: str | None = None
    task_format: str | None = None
    city: str | None = None
    registries: tuple[str, ...] = ()
    scheme: str | None = None
    llm: str | None = None
    llm_base_url: str | None = None
    views: str | None = None
    landmarks: str | None = None
    seed: int = 0
    limit: int | None = None
    ids: tuple[str, ...] | None = None
    concurrency: int = 8
    token_budget: int | None = None
    cache_mode: str = "use"
    agent_options: dict[str, Any] = field(default_factory=dict)
    per_agent_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    scheme_options: dict[str, Any] = field(default_factory=dict)
    llm_options: dict[str, Any] = field(default_factory=dict)
    protocol: str = DEFAULT_PROTOCOL

    def options_for(self, agent: str) -> dict[str, Any]:
        """Constructor options of one agent: the shared ones, then its own."""
        return {**self.agent_options, **self.per_agent_options.get(agent, {})}

    def config_hash(self, task: str, agent: str, scheme: str) -> str:
        """Short hash of the result-shaping options for one (task, agent) pair."""
        shaping = {
            "task": task,
            "agent": agent,
            "scheme": scheme,
            "llm": self.llm,
            "llm_base_url": self.llm_base_url,
            "views": self.views,
            "landmarks": self.landmarks,
            "seed": self.seed,
            "agent_options": self.options_for(agent),
            "scheme_options": self.scheme_options,
        }
        if self.protocol != DEFAULT_PROTOCOL:  # (the default leaves earlier hashes unchanged)
            shaping["protocol"] = self.protocol
        if self.task_format or self.city:  # how a task file is read (absent: hashes unchanged)
            shaping["task_file"] = {"format": self.task_format, "city": self.city}
        for key in ("max_tokens", "backend_options"):
            if self.llm_options.get(key):
                shaping[f"llm_{key}"] = self.llm_options[key]
        text = json.dumps(shaping, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def reportable(self) -> bool:
        """Full task sets only: ``--limit`` / ``--ids`` runs are not reportable."""
        return self.limit is None and not self.ids


class SolverFactories:
    """The run's ``name -> solver`` for each task kind, with the run's options for that
    solver checked once against its typed ``Options``; or one ``override`` factory (tests,
    benchmarks) for every kind. Picklable, so Ray workers build solvers the same way."""

    def __init__(self, config: RunConfig, override: SolverFactory | None = None) -> None:
        self.config = config
        self.override = override
        self._made: dict[str, SolverFactory] = {}

    def __call__(self, kind: TaskKind) -> SolverFactory:
        if self.override is not None:
            return self.override
        if kind.name not in self._made:
            self._made[kind.name] = kind.make_factory(self.config.options_for)
        return self._made[kind.name]

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "override": self.override, "_made": {}}


def default_agent_factory(config: RunConfig) -> SolverFactory:
    """``name -> navigation agent`` with the run's options (see :class:`SolverFactories`)."""

    return SolverFactories(config)(NavigationKind())


async def run_job(
    job: Job, factories: SolverFactories, config: RunConfig, resources: RunResources
) -> dict[str, Any]:
    """Run one job and return its row, not yet scored (raises ``BudgetExceeded`` to stop
    the run); :func:`score_jobs` adds the metrics. A job whose solver read text with OCR
    says on which backend (``"ocr_backend"``, :func:`~flaneur.perception.ocr.recording_backends`;
    several are comma-separated)."""
    kind = job.context.kind
    with recording_backends() as used:
        row = await kind.run(job, factories(kind), config, resources)
    if used:
        row["ocr_backend"] = ",".join(sorted(used))
    return row


def score_jobs(done: list[tuple[Job, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Add the metrics to the rows of finished jobs, a kind at a time; returns the rows."""
    by_kind: dict[str, list[tuple[Job, dict[str, Any]]]] = {}
    for job, row in done:
        by_kind.setdefault(job.context.kind.name, []).append((job, row))
    for group in by_kind.values():
        group[0][0].context.kind.score(group)
    return [row for _, row in done]


def run_benchmark(
    config: RunConfig,
    out: str | Path,
    *,
    resume: bool = False,
    progress: str = "rich",
    agent_factory: SolverFactory | None = None,
    loaded: dict[str, tuple[City, list[Any]]] | None = None,
    executor: Executor | None = None,
) -> dict[str, Any]:
    """Run agents on task sets; append episode rows to ``out`` and write its summary.

    Parameters
    ----------
    config
        What to run (see :class:`RunConfig`).
    out
        Run folder: ``episodes.jsonl`` and ``summary.json``.
    resume
        Continue a run in ``out``: finished episodes are skipped, errored ones run again.
        The run must name every agent and task set the folder holds rows of (it may add
        others).
    progress
        ``rich``, ``plain`` or ``none``.
    agent_factory
        ``name -> solver`` for every task set (default: each kind's registered solvers with
        the run's options, see :class:`SolverFactories`).
    loaded
        Pre-loaded ``{task_id: (city, episodes)}`` (tests, or callers that built them); a
        registered id keeps its declared facts, another one declares them by its episodes
        (see :func:`flaneur.tasks.formats.episode_facts`).
    executor
        Where episodes run (default :class:`~flaneur.evaluate.executors.LocalExecutor`
        with ``config.concurrency``).

    Returns
    -------
    dict
        The summary (also written to ``summary.json``).

    Raises
    ------
    RunInterrupted
        After Ctrl-C, once the finished rows and the partial summary are written.
    """
    folder = Path(out)
    factories = SolverFactories(config, agent_factory)
    plan = plan_run(config, factories, loaded)
    resources = _run_resources(config)
    log = RunLog(folder, resume=resume, config_hashes=plan.hashes)
    jobs = plan.pending_jobs(config.agents, log)
    write_manifest(folder, config, plan.plans, len(jobs))
    executor = executor or LocalExecutor(config.concurrency)
    run = _ActiveRun(config, plan, jobs, resources, log, executor, RunStop())
    started = time.time()
    try:
        _execute(run, factories, progress=progress, loaded=loaded)
    finally:
        log.close()
        summary = _run_summary(run, wall_s=time.time() - started, resumed=resume)
        write_summary(folder, summary)
    if run.stop.interrupted:
        raise RunInterrupted(summary, folder)
    return summary


@dataclass(frozen=True)
class _ActiveRun:
    """The parts of one run that its execution and its summary share."""

    config: RunConfig
    plan: RunPlan
    jobs: list[Job]
    resources: RunResources
    log: RunLog
    executor: Executor
    stop: RunStop


def _run_resources(config: RunConfig) -> RunResources:
    """The run's model (with usage accounting) and view providers, from ``config``."""
    return RunResources(
        llm=config.llm,
        llm_base_url=config.llm_base_url,
        views_spec=config.views,
        landmarks=config.landmarks,
        cache_mode=config.cache_mode,
        token_budget=config.token_budget,
        model_options=config.llm_options,
    )


def _execute(
    run: _ActiveRun,
    factories: SolverFactories,
    *,
    progress: str,
    loaded: dict[str, tuple[City, list[Any]]] | None,
) -> None:
    """Run the jobs on the run's executor with a progress bar, appending each scored row to
    the log.

    A spent token budget or a dead model server stops the run (``run.stop``); Ctrl-C too,
    through the interrupt handler."""
    config, resources, stop, executor = run.config, run.resources, run.stop, run.executor
    with RunProgress(len(run.jobs), mode=progress) as bar:

        async def work(job: Job) -> tuple[Job, dict[str, Any]] | None:
            if stop:
                return None
            try:
                row = await run_job(job, factories, config, resources)
            except BudgetExceeded as err:
                stop.request(str(err))
                return None
            down = resources.server_down()
            if down and not stop:
                stop.request(down)  # the dead server's rows are model errors: --resume
            return job, row

        def deliver(row: dict[str, Any]) -> None:
            run.log.append(row)
            tokens = int((row.get("usage") or {}).get("total_tokens", 0))
            bar.update(
                success=row_success(row),
                error=row["termination"] not in FINISHED,
                tokens=tokens,
            )

        if hasattr(executor, "bind"):  # executors whose workers rebuild the jobs (Ray)
            executor.bind(config=config, loaded=loaded, agent_factory=factories)
        with InterruptHandler(stop, note=bar.note, log_path=run.log.path):
            executor.run(run.jobs, work, score_jobs, deliver, stop, cleanup=resources.aclose)
        if stop and not stop.interrupted and not resources.server_down():
            bar.note(f"stopped early: {stop.reason}")  # a dead server: the CLI says why


def _run_summary(run: _ActiveRun, *, wall_s: float, resumed: bool) -> dict[str, Any]:
    """The summary of every row of the run's log (a resumed run summarises the whole run),
    with the task sets' facts, the model server's state, the executor's figures and token
    usage."""
    log, stop, resources, executor = run.log, run.stop, run.resources, run.executor
    summary = summarize_run(
        run.config,
        list(log.rows.values()),
        run.plan.plans,
        wall_s=wall_s,
        ran=len(run.jobs),
        resumed=resumed,
        dropped_errors=log.dropped_errors,
        stopped_early=stop.reason,
        interrupted=stop.interrupted,
        kinds=run.plan.contexts,
    )
    summary["task_sets"] = {task: ctx.spec.facts() for task, ctx in run.plan.contexts.items()}
    summary["server_down"] = resources.server_down()
    if hasattr(executor, "stats"):
        summary["executor"] = executor.stats()
    if resources.usage is not None:
        usage = resources.usage.summary()
        if hasattr(executor, "usage_run"):  # the calls were made in the executor's workers
            usage["run"] = {**usage["run"], **executor.usage_run()}
        summary["usage"] = {"run": usage["run"], "token_budget": usage["token_budget"]}
    else:
        summary["usage"] = None
    return summary


__all__ = [
    "SUMMARY_VERSION",
    "Job",
    "RunConfig",
    "RunInterrupted",
    "SolverFactories",
    "TaskContext",
    "build_context",
    "default_agent_factory",
    "run_benchmark",
    "run_job",
    "score_jobs",
    "select_episodes",
    "summarize_run",
]

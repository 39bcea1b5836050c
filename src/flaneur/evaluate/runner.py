"""The evaluation runner behind ``flaneur run``: one runner, concurrent, resumable, logged.

A run is a list of jobs, one per (task set, agent, episode), handed to an executor
(:mod:`flaneur.evaluate.executors`; :class:`~flaneur.evaluate.executors.LocalExecutor`
runs at most ``concurrency`` episodes at a time on one asyncio event loop). Each job borrows
an environment from a pool built once per (city, task set, scheme) and reset for the episode
(:mod:`flaneur.evaluate.envpool`), gets a fresh agent instance, runs the episode
(:func:`~flaneur.evaluate.episode.run_episode`) and scores its row at once. The single
writer, :class:`~flaneur.evaluate.runlog.RunLog`, appends every finished row to
``DIR/episodes.jsonl`` as it arrives; ``DIR/summary.json`` is rebuilt at the end from every
row of the log (:mod:`flaneur.evaluate.summary`), so a resumed run summarises the whole run.
Ctrl-C stops scheduling, writes the summary marked partial and raises
:class:`~flaneur.evaluate.interrupt.RunInterrupted` (:mod:`flaneur.evaluate.interrupt`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flaneur.agents import (
    AGENTS,
    Agent,
    agent_class,
    check_options,
    check_requirements,
    options_schema,
)
from flaneur.errors import FlaneurError
from flaneur.evaluate.envpool import EnvPool, env_pool
from flaneur.evaluate.episode import average_reference_length, run_episode, score_rows
from flaneur.evaluate.executors import Executor, LocalExecutor, RunStop
from flaneur.evaluate.interrupt import InterruptHandler, RunInterrupted
from flaneur.evaluate.progress import RunProgress
from flaneur.evaluate.resources import RunResources
from flaneur.evaluate.runlog import FINISHED, RunLog, row_success
from flaneur.evaluate.summary import (
    SUMMARY_VERSION,
    Plan,
    summarize_run,
    write_manifest,
    write_summary,
)
from flaneur.models.usage import BudgetExceeded
from flaneur.tasks.episode import Episode
from flaneur.tasks.spec import TaskSpec
from flaneur.world.city import City


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides what a run computes (and so goes into the config hash).

    ``limit``, ``ids``, ``concurrency`` and ``progress`` change which episodes run or how
    fast, not their results, and are left out of the hash.  ``llm_options`` are the model
    layer's settings (:class:`~flaneur.models.ModelConfig` fields such as ``timeout_s``,
    ``max_retries``, ``max_in_flight``, ``api_key_env``, ``failure_threshold``,
    ``max_tokens``, ``backend_options``); only ``max_tokens`` and ``backend_options`` can
    change replies, and they enter the hash when set.
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


def select_episodes(
    episodes: Sequence[Episode], *, limit: int | None, ids: Sequence[str] | None
) -> list[Episode]:
    """The episodes a run covers: named ``ids`` (all must exist), then the first ``limit``."""
    chosen = list(episodes)
    if ids:
        known = {e.id: e for e in episodes}
        missing = [i for i in ids if i not in known]
        if missing:
            raise FlaneurError(f"unknown episode id(s) {missing[:5]} ({len(missing)} in all)")
        chosen = [known[i] for i in ids]
    return chosen[:limit] if limit is not None else chosen


@dataclass(frozen=True)
class EpisodeJob:
    """One unit of work: an agent on one episode of a task set."""

    task: str
    agent: str
    scheme: str
    episode: Episode
    config_hash: str
    context: TaskContext


@dataclass(frozen=True)
class TaskContext:
    """What the jobs of one task set share: its city, whole episode list, statistics and
    environment pool."""

    city: City
    task_episodes: list[Episode]
    avg_reference_length: float | None
    pool: EnvPool
    success_metric: str


AgentFactory = Callable[[str], Agent]


def agent_env_info(job: EpisodeJob, resources: RunResources) -> dict[str, Any]:
    """The run-level ``env_info`` keys an agent receives besides the environment's own (see
    :func:`flaneur.agents.env_info_for`); the one place the runner assembles them."""
    ctx = job.context
    return {
        "avg_reference_length": ctx.avg_reference_length,
        "task_episodes": ctx.task_episodes,
        "city": ctx.city,
        **resources.env_info(ctx.city),
    }


def default_agent_factory(config: RunConfig) -> AgentFactory:
    """``name -> Agent`` with the run's options for that agent: the first instance of each
    agent's options are checked against its typed ``Options`` once (as
    :func:`~flaneur.agents.make_agent` does), later instances are made from the class with
    the same converted options (the check costs more than a cheap agent's whole episode)."""
    checked: dict[str, tuple[type[Agent], dict[str, Any]]] = {}

    def factory(name: str) -> Agent:
        if name not in checked:
            cls = agent_class(name)
            values = check_options(name, options_schema(cls), config.options_for(name))
            checked[name] = (cls, values)
        cls, values = checked[name]
        return cls(**values)

    return factory


def check_agents(config: RunConfig, scheme: str) -> None:
    """Raise one line, before anything runs, when a registered agent of the run cannot act in
    ``scheme`` or lacks the model, views or set-up its declarations need."""
    for name in config.agents:
        if name in AGENTS:
            check_requirements(
                name,
                AGENTS.get(name),
                scheme=scheme,
                has_model=bool(config.llm),
                has_views=bool(config.views),
                options=config.options_for(name),
                landmarks=config.landmarks,
            )


async def run_job(
    job: EpisodeJob, factory: AgentFactory, config: RunConfig, resources: RunResources
) -> dict[str, Any]:
    """Run one job and return its row, not yet scored (raises ``BudgetExceeded`` to stop
    the run); :func:`score_jobs` adds the metrics."""
    agent = factory(job.agent)
    started = time.time()
    usage_key = f"{job.task}/{job.agent}/{job.episode.id}"
    context = resources.usage.episode(usage_key) if resources.usage else contextlib.nullcontext()
    with context as counters, job.context.pool.borrow() as env:
        row = await run_episode(
            env,
            agent,
            job.episode,
            seed=config.seed,
            task_id=job.task,
            **agent_env_info(job, resources),
        )
    row["agent"] = job.agent  # the name the run knows it by (a registry name or module:Class)
    row["city"] = job.context.city.name
    row["success_metric"] = job.context.success_metric
    row["config_hash"] = job.config_hash
    row["started_at"] = round(started, 3)
    row["duration_s"] = round(time.time() - started, 4)
    row["usage"] = counters.to_dict() if counters is not None else {"calls": 0}
    return row


def score_jobs(done: list[tuple[EpisodeJob, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Add the metrics to the rows of finished jobs, a city at a time; returns the rows."""
    by_city: dict[int, list[tuple[EpisodeJob, dict[str, Any]]]] = {}
    for job, row in done:
        if row.get("path"):
            by_city.setdefault(id(job.context.city), []).append((job, row))
    for group in by_city.values():
        city = group[0][0].context.city
        score_rows(city, [job.episode for job, _ in group], [row for _, row in group])
    for _, row in done:  # the task's own success metric (docs/episodes.md, run rows)
        if "success" in row:
            row["env_success"] = row["success"]
            row["success"] = row_success(row)
    return [row for _, row in done]


def run_benchmark(
    config: RunConfig,
    out: str | Path,
    *,
    resume: bool = False,
    progress: str = "rich",
    agent_factory: AgentFactory | None = None,
    loaded: dict[str, tuple[City, list[Episode]]] | None = None,
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
        ``name -> Agent`` (default :func:`default_agent_factory`: the registered agents
        with the run's options).
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
    from flaneur.tasks.resolve import register_registries

    folder = Path(out)
    factory = agent_factory or default_agent_factory(config)
    for name in config.agents:  # fail before running anything on an unknown agent
        factory(name)
    register_registries(config.registries)
    plans: list[Plan] = []
    contexts: dict[str, TaskContext] = {}
    specs: dict[str, TaskSpec] = {}
    for task in config.tasks:
        specs[task], city, episodes = _task_set(task, config, loaded)
        episodes = list(episodes)  # agents may learn from the whole set (k-shot examples)
        chosen = select_episodes(episodes, limit=config.limit, ids=config.ids)
        scheme = config.scheme or specs[task].scheme
        pool = env_pool(city, episodes, scheme, config.scheme_options)
        pool.check()  # a bad scheme or scheme option fails now, before anything runs
        # over the whole task set, so that --limit/--ids rows equal the full run's rows
        avg = average_reference_length(episodes)
        contexts[task] = TaskContext(city, episodes, avg, pool, specs[task].success_metric)
        plans.append((task, city, chosen, scheme))
        check_agents(config, scheme)
    hashes = {
        (task, agent): config.config_hash(task, agent, scheme)
        for task, _, _, scheme in plans
        for agent in config.agents
    }
    resources = RunResources(
        llm=config.llm,
        llm_base_url=config.llm_base_url,
        views_spec=config.views,
        landmarks=config.landmarks,
        cache_mode=config.cache_mode,
        token_budget=config.token_budget,
        model_options=config.llm_options,
    )
    log = RunLog(folder, resume=resume, config_hashes=hashes)
    jobs = [
        EpisodeJob(task, agent, scheme, episode, hashes[(task, agent)], contexts[task])
        for task, _, episodes, scheme in plans
        for agent in config.agents
        for episode in episodes
        if not log.done((task, agent, episode.id))
    ]
    write_manifest(folder, config, plans, len(jobs))
    stop = RunStop()
    started = time.time()
    try:
        with RunProgress(len(jobs), mode=progress) as bar:

            async def work(job: EpisodeJob) -> tuple[EpisodeJob, dict[str, Any]] | None:
                if stop:
                    return None
                try:
                    row = await run_job(job, factory, config, resources)
                except BudgetExceeded as err:
                    stop.request(str(err))
                    return None
                down = resources.server_down()
                if down and not stop:
                    stop.request(down)  # the dead server's rows are model errors: --resume
                return job, row

            def deliver(row: dict[str, Any]) -> None:
                log.append(row)
                tokens = int((row.get("usage") or {}).get("total_tokens", 0))
                bar.update(
                    success=row_success(row),
                    error=row["termination"] not in FINISHED,
                    tokens=tokens,
                )

            executor = executor or LocalExecutor(config.concurrency)
            if hasattr(executor, "bind"):  # executors whose workers rebuild the jobs (Ray)
                executor.bind(config=config, loaded=loaded, agent_factory=factory)
            with InterruptHandler(stop, note=bar.note, log_path=log.path):
                executor.run(jobs, work, score_jobs, deliver, stop, cleanup=resources.aclose)
            if stop and not stop.interrupted and not resources.server_down():
                bar.note(f"stopped early: {stop.reason}")  # a dead server: the CLI says why
    finally:
        log.close()
        summary = summarize_run(
            config,
            list(log.rows.values()),
            plans,
            wall_s=time.time() - started,
            ran=len(jobs),
            resumed=resume,
            dropped_errors=log.dropped_errors,
            stopped_early=stop.reason,
            interrupted=stop.interrupted,
        )
        summary["task_sets"] = {task: spec.facts() for task, spec in specs.items()}
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
        write_summary(folder, summary)
    if stop.interrupted:
        raise RunInterrupted(summary, folder)
    return summary


def _task_set(
    task: str, config: RunConfig, loaded: dict[str, tuple[City, list[Episode]]] | None
) -> tuple[TaskSpec, City, list[Episode]]:
    """The declared facts, city and episodes of one ``--tasks`` entry (id or task file)."""
    from flaneur.tasks.formats import episode_facts
    from flaneur.tasks.registry import _REGISTRY, load_spec
    from flaneur.tasks.resolve import resolve_task

    if loaded and task in loaded:
        city, episodes = loaded[task]
        spec = _REGISTRY.get(task)
        if spec is None:
            scheme, success = episode_facts(list(episodes))
            spec = TaskSpec(
                task, "pre-loaded", city=city.name, scheme=scheme, success_metric=success
            )
        return spec, city, episodes
    spec = resolve_task(task, fmt=config.task_format, city=config.city)
    city, episodes = load_spec(spec, config.data_dir)
    return spec, city, episodes


__all__ = [
    "SUMMARY_VERSION",
    "EpisodeJob",
    "RunConfig",
    "RunInterrupted",
    "agent_env_info",
    "default_agent_factory",
    "run_benchmark",
    "run_job",
    "score_jobs",
    "select_episodes",
    "summarize_run",
]

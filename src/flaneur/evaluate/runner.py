"""The evaluation runner behind ``flaneur run``: concurrent, resumable, logged.

Episodes of every (task set, agent) pair run concurrently on one asyncio event loop, each in
its own :class:`~flaneur.env.navigation_env.NavigationEnv` with its own agent instance, at
most ``concurrency`` at a time (model calls are further bounded by the model layer). Each
finished episode is scored at once and appended to ``DIR/episodes.jsonl`` (see
:mod:`flaneur.evaluate.runlog`); ``DIR/summary.json`` is rewritten at the end from every row
of the log, so a resumed run summarises the whole run.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from flaneur.agents import Agent, make_agent
from flaneur.env.navigation_env import NavigationEnv
from flaneur.errors import FlaneurError
from flaneur.evaluate.progress import RunProgress
from flaneur.evaluate.provenance import git_commit, package_versions
from flaneur.evaluate.resources import RunResources
from flaneur.evaluate.runlog import FINISHED, RunLog, row_key, row_success
from flaneur.evaluate.simple import average_reference_length, run_episode, score_rows
from flaneur.models.usage import BudgetExceeded
from flaneur.tasks.episode import Episode
from flaneur.tasks.spec import TaskSpec
from flaneur.world.city import City

SUMMARY_VERSION = 1


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides what a run computes (and so goes into the config hash).

    ``limit``, ``ids``, ``concurrency`` and ``progress`` change which episodes run or how
    fast, not their results, and are left out of the hash.
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

    def options_for(self, agent: str) -> dict[str, Any]:
        """Constructor options of one agent: the shared ones, then its own."""
        return {**self.agent_options, **self.per_agent_options.get(agent, {})}

    def config_hash(self, task: str, agent: str, scheme: str) -> str:
        """Short hash of the result-shaping options for one (task, agent) pair."""
        shaping = {
            "task": task, "agent": agent, "scheme": scheme, "llm": self.llm,
            "llm_base_url": self.llm_base_url, "views": self.views,
            "landmarks": self.landmarks, "seed": self.seed,
            "agent_options": self.options_for(agent), "scheme_options": self.scheme_options,
        }  # fmt: skip
        if self.task_format or self.city:  # how a task file is read (absent: hashes unchanged)
            shaping["task_file"] = {"format": self.task_format, "city": self.city}
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


@dataclass
class _Job:
    task: str
    agent: str
    scheme: str
    city: City
    episode: Episode
    config_hash: str
    avg_reference_length: float | None
    task_episodes: list[Episode]
    success_metric: str


AgentFactory = Callable[[str], Agent]


async def _run_job(
    job: _Job, factory: AgentFactory, config: RunConfig, resources: RunResources
) -> dict[str, Any]:
    env = NavigationEnv(
        job.city, [job.episode], scheme=job.scheme, scheme_options=config.scheme_options
    )
    agent = factory(job.agent)
    started = time.time()
    usage_key = f"{job.task}/{job.agent}/{job.episode.id}"
    context = resources.usage.episode(usage_key) if resources.usage else contextlib.nullcontext()
    with context as counters:
        row = await run_episode(
            env, agent, job.episode, seed=config.seed, task_id=job.task,
            avg_reference_length=job.avg_reference_length, task_episodes=job.task_episodes,
            city=job.city, **resources.env_info(job.city),
        )  # fmt: skip
    row["city"] = job.city.name
    row["success_metric"] = job.success_metric
    row["config_hash"] = job.config_hash
    row["started_at"] = round(started, 3)
    row["duration_s"] = round(time.time() - started, 4)
    row["usage"] = counters.to_dict() if counters is not None else {"calls": 0}
    if row.get("path"):
        score_rows(job.city, [job.episode], [row])
    return row


async def _run_all(
    jobs: list[_Job],
    log: RunLog,
    factory: AgentFactory,
    config: RunConfig,
    progress: RunProgress,
    resources: RunResources,
) -> str | None:
    gate = asyncio.Semaphore(max(1, config.concurrency))

    stop: list[str] = []
    write_lock = asyncio.Lock()

    async def one(job: _Job) -> None:
        async with gate:
            if stop:
                return  # the token budget is spent: leave the rest for --resume
            try:
                row = await _run_job(job, factory, config, resources)
            except BudgetExceeded as err:
                stop.append(str(err))
                return
        async with write_lock:  # fsync off the event loop, rows still one at a time
            await asyncio.to_thread(log.append, row)
        tokens = int((row.get("usage") or {}).get("total_tokens", 0))
        progress.update(
            success=row_success(row), error=row["termination"] not in FINISHED, tokens=tokens
        )

    try:
        await asyncio.gather(*(one(job) for job in jobs))
    finally:
        await resources.aclose()
    if stop:
        progress.note(f"stopped early: {stop[0]}")
    return stop[0] if stop else None


def run_benchmark(
    config: RunConfig,
    out: str | Path,
    *,
    resume: bool = False,
    progress: str = "rich",
    agent_factory: AgentFactory | None = None,
    loaded: dict[str, tuple[City, list[Episode]]] | None = None,
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
    progress
        ``rich``, ``plain`` or ``none``.
    agent_factory
        ``name -> Agent`` (default :func:`flaneur.agents.make_agent` with
        ``config.agent_options``).
    loaded
        Pre-loaded ``{task_id: (city, episodes)}`` (tests, or callers that built them); a
        registered id keeps its declared facts, another one declares them by its episodes
        (see :func:`flaneur.tasks.formats.episode_facts`).

    Returns
    -------
    dict
        The summary (also written to ``summary.json``).
    """
    from flaneur.tasks.resolve import register_registries

    folder = Path(out)
    factory = agent_factory or (lambda name: make_agent(name, **config.options_for(name)))
    for name in config.agents:  # fail before running anything on an unknown agent
        factory(name)
    register_registries(config.registries)
    plans: list[tuple[str, City, list[Episode], str]] = []
    every: dict[str, list[Episode]] = {}
    specs: dict[str, TaskSpec] = {}
    for task in config.tasks:
        specs[task], city, episodes = _task_set(task, config, loaded)
        every[task] = list(episodes)  # agents may learn from the whole set (k-shot examples)
        chosen = select_episodes(episodes, limit=config.limit, ids=config.ids)
        scheme = config.scheme or specs[task].scheme
        # a bad scheme or scheme option fails now, before anything runs
        NavigationEnv(
            city, chosen or episodes[:1], scheme=scheme, scheme_options=config.scheme_options
        )
        plans.append((task, city, chosen, scheme))
    hashes = {(task, agent): config.config_hash(task, agent, scheme)
              for task, _, _, scheme in plans for agent in config.agents}  # fmt: skip
    log = RunLog(folder, resume=resume, config_hashes=hashes)
    resources = RunResources(
        llm=config.llm, llm_base_url=config.llm_base_url, views_spec=config.views,
        landmarks=config.landmarks, cache_mode=config.cache_mode, token_budget=config.token_budget,
    )  # fmt: skip
    jobs: list[_Job] = []
    for task, city, episodes, scheme in plans:
        # over the whole task set, so that --limit/--ids rows equal the full run's rows
        avg = average_reference_length(every[task])
        for agent in config.agents:
            for episode in episodes:
                if not log.done((task, agent, episode.id)):
                    key = hashes[(task, agent)]
                    success = specs[task].success_metric
                    jobs.append(
                        _Job(task, agent, scheme, city, episode, key, avg, every[task], success)
                    )
    started = time.time()
    stopped_by = None
    try:
        with RunProgress(len(jobs), mode=progress) as bar:
            stopped_by = asyncio.run(_run_all(jobs, log, factory, config, bar, resources))
    finally:
        log.close()
        wanted = {
            (task, agent, e.id) for task, _, eps, _ in plans for agent in config.agents for e in eps
        }
        rows = [r for r in log.rows.values() if row_key(r) in wanted]
        summary = summarize_run(config, rows, plans, wall_s=time.time() - started, ran=len(jobs),
                                resumed=resume, dropped_errors=log.dropped_errors)  # fmt: skip
        summary["stopped_early"] = stopped_by
        summary["task_sets"] = {task: spec.facts() for task, spec in specs.items()}
        if resources.usage is not None:
            usage = resources.usage.summary()
            summary["usage"] = {"run": usage["run"], "token_budget": usage["token_budget"]}
        else:
            summary["usage"] = None
        (folder / "summary.json").write_text(
            json.dumps(summary, indent=2, default=str), encoding="utf-8"
        )
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


def summarize_run(
    config: RunConfig,
    rows: list[dict[str, Any]],
    plans: Sequence[tuple[str, City, list[Episode], str]],
    *,
    wall_s: float,
    ran: int,
    resumed: bool,
    dropped_errors: int,
) -> dict[str, Any]:
    """The ``summary.json`` of a run from its rows (see the module docstring)."""
    from flaneur.metrics import summarize

    runs = []
    for task, city, episodes, scheme in plans:
        for agent in config.agents:
            mine = [r for r in rows if r["task"] == task and r["agent"] == agent]
            scored = [r["metrics"] for r in mine if r.get("metrics")]
            usage = Counter()
            for r in mine:
                usage.update(
                    {k: v for k, v in (r.get("usage") or {}).items() if isinstance(v, int | float)}
                )
            runs.append({
                "task": task, "agent": agent, "scheme": scheme, "city": city.name,
                "episodes": len(episodes), "rows": len(mine),
                "by_termination": dict(Counter(r["termination"] for r in mine)),
                "usage": dict(usage),
                "summary": summarize(scored) if scored else None,
            })  # fmt: skip
    return {
        "summary_version": SUMMARY_VERSION,
        "config": asdict(config),
        "reportable": config.reportable,
        "git_commit": git_commit(),
        "versions": package_versions(),
        "model": config.llm,
        "seed": config.seed,
        "episodes": len(rows),
        "by_termination": dict(Counter(r["termination"] for r in rows)),
        "ran_this_invocation": ran,
        "resumed": resumed,
        "errored_rows_rerun": dropped_errors,
        "wall_s": round(wall_s, 3),
        "runs": runs,
    }

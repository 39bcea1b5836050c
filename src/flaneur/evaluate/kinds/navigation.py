"""The navigation kind: an agent walks one episode in :class:`~flaneur.env.NavigationEnv`.

Each job borrows an environment from a pool built once per (city, task set, scheme) and reset
for the episode (:mod:`flaneur.evaluate.envpool`), gets a fresh agent instance, runs the
episode (:func:`~flaneur.evaluate.episode.run_episode`); rows are scored a city at a time
(:func:`~flaneur.evaluate.episode.score_rows`) and get the task's own success metric.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flaneur.agents import AGENTS, Agent
from flaneur.bench.vln_metrics import has_vln_metadata, row_outcome, vln_figures
from flaneur.errors import FlaneurError
from flaneur.evaluate.envpool import EnvPool, env_pool
from flaneur.evaluate.episode import average_reference_length, run_episode, score_rows
from flaneur.evaluate.kinds.base import (
    Job,
    SolverFactory,
    TaskContext,
    TaskKind,
    finish_row,
    usage_scope,
)
from flaneur.evaluate.resources import RunResources
from flaneur.evaluate.runlog import row_success
from flaneur.registry import Registry
from flaneur.tasks.episode import Episode
from flaneur.tasks.spec import TaskSpec
from flaneur.world.city import City


@dataclass(frozen=True)
class NavigationState:
    """What the jobs of one navigation task set share besides the city and episodes."""

    pool: EnvPool
    avg_reference_length: float | None


def navigation_context(
    spec: TaskSpec, city: City, episodes: list[Episode], scheme: str, scheme_options: dict
) -> TaskContext:
    """The shared context of a navigation task set (its pool is checked at once, so a bad
    scheme option fails before anything runs)."""
    pool = env_pool(city, episodes, scheme, scheme_options)
    pool.check()
    # over the whole task set, so that --limit/--ids rows equal the full run's rows
    state = NavigationState(pool, average_reference_length(episodes))
    return TaskContext(NavigationKind(), spec, city, list(episodes), state)


def agent_env_info(job: Job, resources: RunResources) -> dict[str, Any]:
    """The run-level ``env_info`` keys an agent receives besides the environment's own (see
    :func:`flaneur.agents.env_info_for`); the one place the runner assembles them."""
    ctx = job.context
    return {
        "avg_reference_length": ctx.state.avg_reference_length,
        "task_episodes": ctx.items,
        "city": ctx.city,
        "protocol": ctx.protocol,
        **resources.env_info(ctx.city),
    }


class NavigationKind(TaskKind):
    """Episodes walked by navigation agents (:class:`flaneur.agents.Agent`)."""

    name = "navigation"

    def solvers(self) -> Registry[Any]:
        return AGENTS

    def check_solver(self, name: str, cls: Any) -> None:
        if not (isinstance(cls, type) and issubclass(cls, Agent)):
            solves = ", ".join(getattr(cls, "solves", ())) or "other"
            raise FlaneurError(
                f"agent {name!r} solves {solves} tasks, not navigation episodes: choose a "
                "navigation agent (flaneur agents) or a task set of its kind"
            )

    def default_scheme(self, spec: TaskSpec) -> str:
        return spec.scheme

    def context(
        self, spec: TaskSpec, city: City, items: list[Any], scheme: str, config: Any
    ) -> TaskContext:
        return navigation_context(spec, city, items, scheme, dict(config.scheme_options))

    async def run(
        self, job: Job, factory: SolverFactory, config: Any, resources: RunResources
    ) -> dict[str, Any]:
        agent = factory(job.agent)
        started = time.time()
        with usage_scope(job, resources) as counters, job.context.state.pool.borrow() as env:
            row = await run_episode(
                env,
                agent,
                job.item,
                seed=config.seed,
                task_id=job.task,
                **agent_env_info(job, resources),
            )
        return finish_row(row, job, started, counters)

    def score(self, done: Sequence[tuple[Job, dict[str, Any]]]) -> None:
        by_city: dict[int, list[tuple[Job, dict[str, Any]]]] = {}
        for job, row in done:
            if row.get("path"):
                by_city.setdefault(id(job.context.city), []).append((job, row))
        for group in by_city.values():
            city = group[0][0].context.city
            score_rows(city, [job.item for job, _ in group], [row for _, row in group])
        for _, row in done:  # the task's own success metric (docs/episodes.md, run rows)
            if "success" in row:
                row["env_success"] = row["success"]
                row["success"] = row_success(row)

    def aggregate(
        self, rows: Sequence[dict[str, Any]], context: TaskContext
    ) -> dict[str, Any] | None:
        """V-IRL's six VLN metrics (:mod:`flaneur.bench.vln_metrics`: success, start
        reaction, intersection arrival and reaction, stop arrival and reaction, each with a
        Wilson interval over its denominator) for task sets whose episodes carry VLN
        metadata (key positions, destination, milestones); ``None`` for other sets."""

        episodes = {e.id: e for e in context.items if has_vln_metadata(e)}
        if not episodes:
            return None
        graph = context.city.graph
        outcomes = []
        for row in rows:
            episode = episodes.get(str(row.get("episode_id")))
            outcome = row_outcome(graph, episode, row) if episode is not None else None
            if outcome is not None:
                outcomes.append(outcome)
        return vln_figures(outcomes) if outcomes else None


__all__ = ["NavigationKind", "NavigationState", "agent_env_info", "navigation_context"]

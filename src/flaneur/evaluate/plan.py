"""What a run covers, worked out before anything runs (see :func:`plan_run`).

Each ``--tasks`` entry is loaded (a registered id or a task file, or a set the caller
pre-loaded) into the shared context of its kind; every solver of the run is checked against
it; its items are chosen (``--ids``, ``--limit``); every (task set, solver) pair gets its
config hash. :meth:`RunPlan.pending_jobs` then lists the jobs a run folder does not hold
finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from flaneur.errors import FlaneurError
from flaneur.evaluate.kinds import Job, TaskContext, kind_named
from flaneur.evaluate.protocol import protocol_episodes
from flaneur.evaluate.runlog import RunLog
from flaneur.evaluate.summary import Plan
from flaneur.tasks.episode import Episode
from flaneur.tasks.formats import episode_facts
from flaneur.tasks.items import TaskItem
from flaneur.tasks.registry import TASKS, load_spec
from flaneur.tasks.resolve import register_registries, resolve_task
from flaneur.tasks.spec import TaskSpec
from flaneur.world.city import City

if TYPE_CHECKING:
    from flaneur.evaluate.runner import RunConfig, SolverFactories


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


def check_solvers(config: RunConfig, context: TaskContext, scheme: str) -> None:
    """Raise one line, before anything runs, when a solver of the run does not fit the task
    set's kind, cannot act in ``scheme`` or lacks the model, views or set-up it needs."""
    kind = context.kind
    for name in config.agents:
        if name in kind.solvers():
            cls = kind.solver_class(name)
            kind.check_setup(
                name, cls, options=config.options_for(name), config=config, scheme=scheme
            )


def build_context(
    task: str, config: RunConfig, loaded: dict[str, tuple[City, list[Any]]] | None
) -> tuple[TaskContext, str]:
    """The shared context of one ``--tasks`` entry and the scheme its jobs use (the runner
    and every Ray worker build it the same way), under the run's protocol."""
    spec, city, items = _task_set(task, config, loaded)
    kind = kind_named(spec.kind)
    scheme = (config.scheme or kind.default_scheme(spec)) if kind.default_scheme(spec) else ""
    items = protocol_episodes(spec, list(items), config.protocol)
    context = kind.context(spec, city, items, scheme, config)
    return replace(context, protocol=config.protocol), scheme


@dataclass(frozen=True)
class RunPlan:
    """What a run covers, worked out before anything runs.

    Attributes
    ----------
    plans
        Per ``--tasks`` entry: ``(task, city, chosen items, scheme)``.
    contexts
        The shared context of each task set, by task id.
    hashes
        The config hash of each ``(task, solver)`` pair.
    """

    plans: list[Plan]
    contexts: dict[str, TaskContext]
    hashes: dict[tuple[str, str], str]

    def pending_jobs(self, agents: Sequence[str], log: RunLog) -> list[Job]:
        """One job per (task set, solver, chosen item) that ``log`` does not hold finished."""
        return [
            Job(task, agent, scheme, item, self.hashes[(task, agent)], self.contexts[task])
            for task, _, items, scheme in self.plans
            for agent in agents
            for item in items
            if not log.done((task, agent, item.id))
        ]


def plan_run(
    config: RunConfig,
    factories: SolverFactories,
    loaded: dict[str, tuple[City, list[Any]]] | None,
) -> RunPlan:
    """Load every task set of the run, check its solvers against it (one line, before anything
    runs) and choose its items; the config hashes of every (task, solver) pair."""

    register_registries(config.registries)
    plans: list[Plan] = []
    contexts: dict[str, TaskContext] = {}
    for task in config.tasks:
        contexts[task], scheme = build_context(task, config, loaded)
        context = contexts[task]
        for name in config.agents:  # fail before running anything on an unknown solver
            factories(context.kind)(name)
        check_solvers(config, context, scheme)
        chosen = select_episodes(context.items, limit=config.limit, ids=config.ids)
        plans.append((task, context.city, chosen, scheme))
    hashes = {
        (task, agent): config.config_hash(task, agent, scheme)
        for task, _, _, scheme in plans
        for agent in config.agents
    }
    return RunPlan(plans, contexts, hashes)


def _task_set(
    task: str, config: RunConfig, loaded: dict[str, tuple[City, list[Any]]] | None
) -> tuple[TaskSpec, City, list[Any]]:
    """The declared facts, city and episodes of one ``--tasks`` entry (id or task file)."""

    if loaded and task in loaded:
        city, episodes = loaded[task]
        spec = TASKS.get(task, None)
        if spec is None and episodes and isinstance(episodes[0], TaskItem):
            raise FlaneurError(f"pre-loaded task {task!r} of items must be a registered task set")
        if spec is None:
            scheme, success = episode_facts(list(episodes))
            spec = TaskSpec(
                task, "pre-loaded", city=city.name, scheme=scheme, success_metric=success
            )
        return spec, city, episodes
    spec = resolve_task(task, fmt=config.task_format, city=config.city)
    city, episodes = load_spec(spec, config.data_dir, protocol=config.protocol)
    return spec, city, episodes


__all__ = ["RunPlan", "build_context", "check_solvers", "plan_run", "select_episodes"]

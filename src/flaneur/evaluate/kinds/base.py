"""What the runner needs of a task kind: the solvers it takes, how one item runs, how rows
are scored and summarised.

Every task set is of one kind (:attr:`flaneur.tasks.spec.TaskSpec.kind`): the shape of
inspect_ai's ``Task`` = dataset + solver + scorer. The runner (:mod:`flaneur.evaluate.runner`)
is the same for every kind: jobs of (task set, solver, item), an executor (local asyncio or
Ray), one writer, resume, progress, the summary. A kind supplies the rest:

- ``solvers``: the registry ``--agent`` names are looked up in (navigation agents and V-IRL's
  planner agents in :data:`flaneur.agents.AGENTS`, place recognisers, VQA answerers,
  detectors in their own registries), and the check that a named solver fits;
- ``context``: what the jobs of one task set share (an environment pool, a view renderer);
- ``run``: one item with one solver, to a row (never raising for a bad item or a failing
  solver: the row says ``task_error``, ``agent_error`` or ``model_error``);
- ``score``: the row's ``metrics`` (and ``success``), a batch at a time;
- ``aggregate``: figures of a whole task set that are not means of rows (mean per-class
  accuracy, V-IRL's VLN ratios), each with a 95% interval.
"""

from __future__ import annotations

import abc
import contextlib
import inspect
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from flaneur.agents.options import check_requirements
from flaneur.errors import FlaneurError
from flaneur.options import check_options, options_schema

if TYPE_CHECKING:
    from flaneur.evaluate.resources import RunResources
    from flaneur.registry import Registry
    from flaneur.tasks.spec import TaskSpec
    from flaneur.world.city import City

FINISHED_ITEM = "completed"
"""Termination of an item a solver answered (navigation rows end ``stopped``, ...)."""


@dataclass(frozen=True)
class TaskContext:
    """What the jobs of one task set share.

    Attributes
    ----------
    kind
        The task set's kind.
    spec
        Its declared facts.
    city
        Its city.
    items
        The whole task set (episodes or items), not only a run's selection.
    state
        The kind's own shared state (the navigation kind: an environment pool and the
        average reference length).
    protocol
        The run's protocol (:mod:`flaneur.evaluate.protocol`), written into every row.
    """

    kind: TaskKind
    spec: TaskSpec
    city: City
    items: list[Any]
    state: Any = None
    protocol: str = "flaneur"

    @property
    def success_metric(self) -> str:
        """The row metric that says whether an item succeeded."""
        return self.spec.success_metric


@dataclass(frozen=True)
class Job:
    """One unit of work: a solver on one item of a task set."""

    task: str
    agent: str
    scheme: str
    item: Any
    config_hash: str
    context: TaskContext


SolverFactory = Callable[[str], Any]
"""``agent name -> solver instance`` with the run's options for that agent."""


def base_row(job: Job) -> dict[str, Any]:
    """The identifying fields every row starts with."""
    return {
        "task": job.task,
        "episode_id": str(job.item.id),
        "agent": job.agent,
        "kind": job.context.kind.name,
        "scheme": job.scheme,
        "category": getattr(job.item, "category", "") or "",
    }


def finish_row(
    row: dict[str, Any], job: Job, started: float, counters: Any | None
) -> dict[str, Any]:
    """Add the run fields every row ends with (city, success metric, protocol, hash, timing,
    usage)."""
    row["agent"] = job.agent  # the name the run knows it by (a registry name or module:Class)
    row["city"] = job.context.city.name
    row["protocol"] = job.context.protocol
    row["success_metric"] = job.context.success_metric
    row["config_hash"] = job.config_hash
    row["started_at"] = round(started, 3)
    row["duration_s"] = round(time.time() - started, 4)
    row["usage"] = counters.to_dict() if counters is not None else {"calls": 0}
    return row


def usage_scope(job: Job, resources: RunResources) -> Any:
    """The usage tracker's per-item scope (counters of this item's model calls)."""
    usage_key = f"{job.task}/{job.agent}/{job.item.id}"
    usage = resources.usage
    return usage.episode(usage_key) if usage is not None else contextlib.nullcontext()


class TaskKind(abc.ABC):
    """One kind of task (see the module docstring); subclasses are registered in
    :data:`flaneur.evaluate.kinds.KINDS` under their :attr:`name`."""

    name: ClassVar[str] = ""
    solver_what: ClassVar[str] = "agent"
    """What its solvers are called in messages (``agent``, ``detector``, ...)."""
    fresh_solver: ClassVar[bool] = True
    """Whether every item gets a new solver instance (navigation agents keep per-episode
    state); otherwise one instance per run and worker answers every item."""

    @classmethod
    def about(cls) -> str:
        """What the kind's rows hold and how they are scored (its module's docstring): the
        web app's glossary shows it."""
        module = sys.modules.get(cls.__module__)
        return inspect.cleandoc((module.__doc__ if module else None) or cls.__doc__ or "")

    @abc.abstractmethod
    def solvers(self) -> Registry[Any]:
        """The registry ``--agent`` names are looked up in for this kind."""

    def solver_class(self, name: str) -> type:
        """The solver class registered as ``name``, checked to fit this kind."""
        cls = self.solvers().get(name)
        self.check_solver(name, cls)
        return cls

    def check_solver(self, name: str, cls: Any) -> None:  # noqa: B027 - optional hook
        """Raise one line when ``cls`` cannot solve this kind's items."""

    def check_setup(
        self, name: str, cls: Any, *, options: dict[str, Any], config: Any, scheme: str
    ) -> None:
        """Raise one line when the run lacks what the solver declares it needs."""

        check_requirements(
            name,
            cls,
            scheme=scheme,
            has_model=bool(config.llm),
            has_views=bool(config.views),
            options=options,
            landmarks=config.landmarks,
            views=config.views,
        )

    def make_factory(self, options_for: Callable[[str], dict[str, Any]]) -> SolverFactory:
        """``name -> solver`` with each solver's options checked once against its typed
        ``Options`` (the check costs more than a cheap agent's whole episode)."""
        checked: dict[str, tuple[type, dict[str, Any]]] = {}
        shared: dict[str, Any] = {}

        def factory(name: str) -> Any:
            if name not in checked:
                cls = self.solver_class(name)
                values = check_options(
                    name, options_schema(cls), options_for(name), what=self.solver_what
                )
                checked[name] = (cls, values)
            if not self.fresh_solver and name in shared:
                return shared[name]
            cls, values = checked[name]
            solver = cls(**values)
            if not self.fresh_solver:
                shared[name] = solver
            return solver

        return factory

    def default_scheme(self, spec: TaskSpec) -> str:
        """The action scheme jobs of ``spec`` record (empty for kinds without one)."""
        return ""

    @abc.abstractmethod
    def context(
        self, spec: TaskSpec, city: City, items: list[Any], scheme: str, config: Any
    ) -> TaskContext:
        """What the jobs of one task set share."""

    @abc.abstractmethod
    async def run(
        self, job: Job, factory: SolverFactory, config: Any, resources: RunResources
    ) -> dict[str, Any]:
        """Run one job; its row, not yet scored (a failure is a row, not an exception)."""

    @abc.abstractmethod
    def score(self, done: Sequence[tuple[Job, dict[str, Any]]]) -> None:
        """Add ``metrics`` and ``success`` to the rows of finished jobs (in place)."""

    def aggregate(
        self, rows: Sequence[dict[str, Any]], context: TaskContext
    ) -> dict[str, Any] | None:
        """Task-set figures of one solver's scored rows that are not means of rows (mean
        per-class accuracy, ratios over all routes), each ``{"value", "n", "ci95"}``;
        ``None``: the means of the row metrics say it all."""
        return None


def check_kind_item(job: Job, cls: type) -> None:
    """Raise :class:`FlaneurError` when a job's item is not of type ``cls``."""
    if not isinstance(job.item, cls):
        raise FlaneurError(
            f"task {job.task!r} of kind {job.context.kind.name!r} holds "
            f"{type(job.item).__name__} items, not {cls.__name__}"
        )


__all__ = [
    "FINISHED_ITEM",
    "Job",
    "SolverFactory",
    "TaskContext",
    "TaskKind",
    "base_row",
    "check_kind_item",
    "finish_row",
    "usage_scope",
]

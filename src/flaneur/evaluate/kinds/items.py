"""Kinds whose items are answered by one solver call each (not walked step by step).

V-IRL's perception benchmarks (a recogniser ranks place types for a view, an answerer picks an
option, a detector boxes places) and the planner agents' scenarios (Aria recommends places,
Peng orders a route, ...) all follow the same pattern: the solver gets the item and the run's
resources, returns a JSON-ready result, and the kind scores the result against the item. An
:class:`ItemKind` implements that pattern once; a concrete kind writes :meth:`~ItemKind.solve`
(how its solver interface is called) and :meth:`~ItemKind.score_item` (its scorer).

A row of such a kind holds the identifying fields, ``termination`` (``completed``, or
``task_error`` for an item the city cannot serve, ``agent_error`` / ``model_error`` for a
failing solver: these are run again by ``--resume``), ``result`` (the solver's answer),
``records`` (model exchanges, if any), ``metrics`` and ``success``.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from flaneur.agents.base import SolveInfo
from flaneur.errors import DataError, FlaneurError, UnknownNodeError
from flaneur.evaluate.kinds.base import (
    FINISHED_ITEM,
    Job,
    SolverFactory,
    TaskContext,
    TaskKind,
    base_row,
    finish_row,
    usage_scope,
)
from flaneur.evaluate.resources import RunResources
from flaneur.models.errors import ModelError
from flaneur.models.usage import BudgetExceeded
from flaneur.services.errors import RegionError, UnknownPlaceError, UnreachableError
from flaneur.tasks.items import TaskItem
from flaneur.tasks.spec import TaskSpec
from flaneur.views.base import NoImageryError, ProviderError, ViewError
from flaneur.world.city import City


class ItemError(FlaneurError):
    """An item the task's city cannot serve (a start outside the city, a place it lacks):
    its row ends ``task_error`` with this one line, and the rest of the run goes on."""


ITEM_ERRORS: tuple[type[Exception], ...] = (
    ItemError,
    DataError,
    UnknownPlaceError,
    RegionError,
    UnreachableError,
)
"""Failures that say an item is bad for its city, not that the solver failed: malformed
scenario data, a place name or start the city does not have, a region outside it, a
waypoint it cannot reach. Their rows end ``task_error``."""


@contextmanager
def viewing(item: TaskItem) -> Iterator[None]:
    """Around the views of ``item``: a view the city or the provider does not have ends the
    item (:class:`ItemError`); a failing provider (no key, no quota) is raised as it is."""
    try:
        yield
    except (UnknownNodeError, NoImageryError) as err:
        raise ItemError(f"item {item.id!r}: no view ({err})") from None
    except ViewError as err:
        if isinstance(err, ProviderError):
            raise
        raise ItemError(f"item {item.id!r}: no view ({err})") from None


def solve_info(job: Job, config: Any, resources: RunResources) -> SolveInfo:
    """The :class:`SolveInfo` of one job."""
    ctx = job.context
    return SolveInfo(
        task_id=job.task,
        city=ctx.city,
        items=ctx.items,
        seed=int(config.seed),
        model=resources.model,
        views=resources.views_for(ctx.city),
        landmarks=resources.landmarks,
        state=ctx.state,
        protocol=ctx.protocol,
    )


class ItemKind(TaskKind):
    """A kind whose items are answered by one call of the solver (see the module docstring).

    Subclasses set :attr:`name` and :attr:`solver_what`, return their registry from
    :meth:`solvers`, and write :meth:`solve` and :meth:`score_item`; :meth:`prepare` builds
    state the items of a task set share.
    """

    fresh_solver = False

    def context(
        self, spec: TaskSpec, city: City, items: list[Any], scheme: str, config: Any
    ) -> TaskContext:
        return TaskContext(self, spec, city, list(items), self.prepare(spec, city, items, config))

    def prepare(self, spec: TaskSpec, city: City, items: list[Any], config: Any) -> Any:
        """State the items of one task set share (``None`` by default)."""
        return None

    @abc.abstractmethod
    async def solve(self, job: Job, solver: Any, info: SolveInfo) -> dict[str, Any]:
        """The solver's answer to ``job.item`` (JSON-ready; ``records`` are moved to the row)."""

    @abc.abstractmethod
    def score_item(self, item: TaskItem, result: dict[str, Any], context: TaskContext) -> dict:
        """The metrics of one answered item (booleans and numbers; ``None`` where they do not
        apply); must hold the task's success metric."""

    async def run(
        self, job: Job, factory: SolverFactory, config: Any, resources: RunResources
    ) -> dict[str, Any]:
        row = {**base_row(job), "seed": int(config.seed)}
        started = time.time()
        with usage_scope(job, resources) as counters:
            try:
                info = solve_info(job, config, resources)
                result = await self.solve(job, factory(job.agent), info)
                records = result.pop("records", None)
                row.update(termination=FINISHED_ITEM, result=result)
                if records:
                    row["records"] = records
            except BudgetExceeded:
                raise  # the runner stops scheduling; this item is not written
            except ITEM_ERRORS as err:
                row.update(termination="task_error", error=str(err))
            except ModelError as err:
                row.update(termination="model_error", error=str(err))
            except FlaneurError as err:
                row.update(termination="agent_error", error=str(err))
            except Exception as err:  # a solver bug must not end the whole run
                row.update(termination="agent_error", error=f"{type(err).__name__}: {err}")
        return finish_row(row, job, started, counters)

    def score(self, done: Sequence[tuple[Job, dict[str, Any]]]) -> None:
        for job, row in done:
            if row.get("termination") != FINISHED_ITEM:
                continue
            metrics = self.score_item(job.item, row["result"], job.context)
            row["metrics"] = metrics
            row["success"] = bool(metrics.get(job.context.success_metric))


__all__ = ["ITEM_ERRORS", "ItemError", "ItemKind", "SolveInfo", "solve_info", "viewing"]

"""How the Ray executor hands out a run's jobs: :class:`Dispatch` sends them to the
workers of a :class:`WorkerPool` in batches, least loaded worker first, and settles each
batch that comes back (see :mod:`flaneur.evaluate.executors_ray`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flaneur.evaluate.executors import Row, RunStop

if TYPE_CHECKING:
    from flaneur.evaluate.executors_ray import RayExecutor

MAX_ATTEMPTS = 3
"""Workers an episode may take down before it is written as an error row."""


@dataclass
class WorkerPool:
    """The run's workers and how many episodes each takes.

    Attributes
    ----------
    config
        The run's configuration.
    workers
        The worker actors, by index (a dead worker's place is taken by its replacement).
    new_worker
        ``i -> a started replacement of worker i`` (it takes over worker i's model share).
    slots
        The :class:`~flaneur.evaluate.ray_worker.ModelSlots` actor, or None without a model.
    batch
        Episodes sent in one actor call
        (:func:`~flaneur.evaluate.executors_ray.batch_size`).
    capacity
        Episodes a worker holds at most (those it runs and one batch waiting).
    """

    config: Any
    workers: list[Any]
    new_worker: Callable[[int], Any]
    slots: Any
    batch: int
    capacity: int


_Sent = tuple[list[tuple[Any, int]], int, Any]
"""A batch in flight: ``([(job, attempt), ...], worker index, worker)``."""


class Dispatch:
    """Sends a run's jobs to the pool's workers in batches, least loaded first, and settles
    each batch that comes back: its rows delivered, or its episodes sent again after the
    worker died (an error row after :data:`MAX_ATTEMPTS`)."""

    def __init__(
        self,
        executor: RayExecutor,
        pool: WorkerPool,
        jobs: list[Any],
        deliver: Callable[[Row], None],
        stop: RunStop,
    ) -> None:
        self.executor, self.ray, self.pool = executor, executor.ray, pool
        self.deliver, self.stop = deliver, stop
        self.queue = list(reversed([(job, 1) for job in jobs]))  # pop() takes the next job
        self.in_flight: dict[Any, _Sent] = {}  # by the ref of the actor call
        self.load = [0] * len(pool.workers)
        self.cancelled = False

    def run(self) -> None:
        """Until every batch sent is settled (an interrupt cancels those in flight)."""
        ray = self.ray
        self.submit()
        while self.in_flight:
            if self.stop.interrupted and not self.cancelled:
                for ref in self.in_flight:
                    ray.cancel(ref, force=False)
                self.cancelled = True
            done, rest = ray.wait(list(self.in_flight), num_returns=1, timeout=0.25)
            if done and rest:  # and whatever else is ready by now
                done += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
            for ref in done:
                self.settle(ref)
            self.submit()

    def submit(self) -> None:
        """Send whole batches to the least loaded workers while they have room."""
        queue, load, workers, pool = self.queue, self.load, self.pool.workers, self.pool
        while queue and not self.stop:
            i = min(range(len(load)), key=load.__getitem__)
            room = min(pool.batch, pool.capacity - load[i])
            if room < min(pool.batch, len(queue)):  # wait until a whole batch fits
                return
            sent = [queue.pop() for _ in range(min(room, len(queue)))]
            keys = [(j.task, j.agent, j.scheme, j.item.id, j.config_hash) for j, _ in sent]
            self.in_flight[workers[i].run.remote(keys)] = (sent, i, workers[i])
            load[i] += len(sent)

    def settle(self, ref: Any) -> None:
        """Deliver the rows of a finished batch (or handle its worker's death)."""
        ray = self.ray
        sent, i, handle = self.in_flight.pop(ref)
        self.load[i] -= len(sent)
        try:
            results = ray.get(ref)
        except ray.exceptions.TaskCancelledError:
            return
        except ray.exceptions.RayActorError:
            self.lost(sent, i, handle)
            return
        except ray.exceptions.RayTaskError as err:
            raise err.as_instanceof_cause() from None
        for result in results:
            if "stop" in result:
                self.stop.request(result["stop"])
            else:
                self.executor.count_usage(result["row"], self.pool.config.token_budget, self.stop)
                self.deliver(result["row"])

    def lost(self, sent: list[tuple[Any, int]], i: int, handle: Any) -> None:
        """Worker ``handle`` died holding ``sent``: replace it, then queue its episodes again
        (or write their error rows), unless the run was interrupted."""
        executor, workers = self.executor, self.pool.workers
        if workers[i] is handle:  # replace it once (its other batches fail too)
            executor.worker_deaths += 1
            workers[i] = self.pool.new_worker(i)
        if self.cancelled:
            return
        for job, attempt in sent:
            if attempt >= MAX_ATTEMPTS:
                self.deliver(_lost_row(job, attempt))
            else:
                executor.retried += 1
                self.queue.append((job, attempt + 1))


def _lost_row(job: Any, attempts: int) -> Row:
    """The row of an episode whose worker died ``attempts`` times (run again on resume)."""
    return {
        "task": job.task,
        "episode_id": job.item.id,
        "agent": job.agent,
        "scheme": job.scheme,
        "category": job.item.category,
        "termination": "agent_error",
        "error": f"its Ray worker died {attempts} times",
        "city": job.context.city.name,
        "success_metric": job.context.success_metric,
        "protocol": job.context.protocol,
        "config_hash": job.config_hash,
        "started_at": round(time.time(), 3),
        "duration_s": 0.0,
        "usage": {"calls": 0},
    }


__all__ = ["MAX_ATTEMPTS", "Dispatch", "WorkerPool"]

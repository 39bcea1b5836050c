"""The Ray executor: a run's episodes on Ray actors, on this machine or a cluster.

``flaneur run ... --executor ray [--ray-address auto|ray://HOST:PORT] [--workers N]``.
Each worker is a Ray actor (:class:`flaneur.evaluate.ray_worker.EpisodeWorker`) that
loads the run's task sets (city pack, episodes, environment pool) and its view providers
once, then runs the episodes it is sent with the same code as the local executor
(:func:`~flaneur.evaluate.runner.run_job`, :func:`~flaneur.evaluate.runner.score_jobs`)
and returns scored rows. The driver (this process) keeps the run's single writer: every
row is appended to ``episodes.jsonl`` as it comes back, so resume, the summary and
interrupts behave as with :class:`~flaneur.evaluate.executors.LocalExecutor`.

* Jobs are sent as ``(task, agent, scheme, episode id, config hash)``: workers read the
  city packs themselves (from ``--data-dir`` and ``FLANEUR_CACHE_DIR`` on their node), or,
  for task sets the caller pre-loaded, from the object store (put there once).
* Each worker runs at most ``per_worker`` episodes at a time (the run's ``--concurrency``),
  so a worker that finishes early takes the next episode (CPU-bound agents: use 1).
  Episodes go to workers in batches (:func:`batch_size`, one actor call each) and come
  back as batches of scored rows; with ``per_worker`` above 1 a worker holds one batch
  more than it runs, so it never idles waiting for the driver.
* A worker that dies (killed, out of memory, node lost) loses no finished row: its
  unfinished episodes go to a fresh worker and are counted in ``retried``; an episode
  that kills :data:`MAX_ATTEMPTS` workers gets an ``agent_error`` row instead.
* The model's requests in flight are bounded across all workers by one
  :class:`~flaneur.evaluate.ray_worker.ModelSlots` actor (``model_in_flight``, default
  the model's own ``max_in_flight``), so a cluster does not overrun an API's rate limit.

Ray is an optional extra (``pip install 'flaneur[ray]'``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from flaneur.errors import FlaneurError
from flaneur.evaluate.executors import Row, RunStop
from flaneur.evaluate.ray_dispatch import MAX_ATTEMPTS, Dispatch, WorkerPool
from flaneur.evaluate.ray_worker import EpisodeWorker, ModelSlots, model_limit

RAY_MISSING = "--executor ray needs Ray: pip install 'flaneur[ray]'"
LOCAL_OBJECT_STORE_BYTES = 128 * 1024**2
"""Object store of a Ray instance started by flaneur itself (rows and task sets are small)."""
AUTH_MODE_VARIABLE = "RAY_AUTH_MODE"
"""Ray's setting of its token authentication (``token`` or ``disabled``)."""


def import_ray(*, local: bool = False) -> Any:
    """The ``ray`` module, or a one-line :class:`FlaneurError` naming the extra to install.

    ``local=True`` (a local instance will be started): Ray 2.5x+ turns token authentication
    on for a new local instance and, unless the mode was chosen, prints a notice saying so on
    every start. flaneur chooses it before Ray reads its configuration (at import): the mode
    is set to ``token``, what Ray uses anyway (it keeps the token in ``~/.ray/auth_token``),
    unless ``RAY_AUTH_MODE`` is already set, so a user's own choice stands. Joining a
    cluster leaves the variable alone (the cluster's mode decides; see docs/scale.md).
    """
    if local and "ray" not in sys.modules:
        os.environ.setdefault(AUTH_MODE_VARIABLE, "token")
    try:
        # optional extra flaneur[ray]
        import ray
    except ImportError:
        raise FlaneurError(RAY_MISSING) from None
    return ray


def init_local_ray(
    num_cpus: int,
    *,
    object_store_memory: int = LOCAL_OBJECT_STORE_BYTES,
    log_to_driver: bool = True,
) -> None:
    """Start a local Ray instance in this process (no dashboard, a small object store, the
    authentication mode chosen: see :func:`import_ray`)."""
    ray = import_ray(local=True)
    ray.init(
        num_cpus=num_cpus,
        include_dashboard=False,
        log_to_driver=log_to_driver,
        object_store_memory=object_store_memory,
        configure_logging=False,
    )


class RayExecutor:
    """Runs a run's jobs on Ray actors (see the module docstring).

    Parameters
    ----------
    address
        Ray cluster to join (``auto``, ``ray://HOST:PORT``, ``HOST:PORT``); ``None`` starts
        a local Ray instance for the run (and stops it afterwards).
    workers
        Actors to start (default: the CPUs Ray reports).
    per_worker
        Episodes in flight per worker (default: the run's ``concurrency``).
    model_in_flight
        Model requests in flight across all workers (default: the model's ``max_in_flight``).
    local_cpus
        CPUs a local Ray instance offers (default: ``workers`` or the machine's CPUs).
    """

    def __init__(
        self,
        *,
        address: str | None = None,
        workers: int | None = None,
        per_worker: int | None = None,
        model_in_flight: int | None = None,
        local_cpus: int | None = None,
    ) -> None:
        self.ray = import_ray(local=address is None)
        if workers is not None and workers < 1:
            raise FlaneurError(f"--workers must be at least 1, not {workers}")
        self.address = address
        self.workers = workers
        self.per_worker = per_worker
        self.model_in_flight = model_in_flight
        self.local_cpus = local_cpus
        self.retried = 0
        self.worker_deaths = 0
        self.usage: dict[str, float] = {}
        self.model_slots: dict[str, int] | None = None
        self.worker_cpu_s: list[float] | None = None
        self.worker_startup_cpu_s: list[float] | None = None
        self.worker_pids: list[int] = []  # every worker started (on its own node)
        self.startup_s: float | None = None
        self._bound: dict[str, Any] | None = None
        self._started_ray = False

    def bind(self, *, config: Any, loaded: Any, agent_factory: Any) -> None:
        """Called by the runner before :meth:`run`: what workers need to rebuild a job."""
        self._bound = {"config": config, "loaded": loaded, "agent_factory": agent_factory}

    def stats(self) -> dict[str, Any]:
        """What went into ``summary.json`` under ``executor``."""
        return {
            "kind": "ray",
            "address": self.address or "local",
            "workers": self.workers,
            "retried": self.retried,
            "worker_deaths": self.worker_deaths,
            "model_slots": self.model_slots,
            "worker_cpu_s": self.worker_cpu_s,
            "worker_startup_cpu_s": self.worker_startup_cpu_s,
            "startup_s": self.startup_s,
        }

    def _start(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        if self.address:
            ray.init(address=self.address, include_dashboard=False, log_to_driver=True)
        else:
            init_local_ray(self.local_cpus or self.workers or os.cpu_count() or 1)
            self._started_ray = True
        if self.workers is None:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def run(
        self,
        jobs: Iterable[Any],
        work: Callable[[Any], Awaitable[Any]],
        finish: Callable[[list[Any]], list[Row]],
        deliver: Callable[[Row], None],
        stop: RunStop,
        *,
        cleanup: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Run ``jobs`` on the workers; ``work``/``finish`` run there as
        :func:`~flaneur.evaluate.runner.run_job`/``score_jobs`` (they are not sent)."""
        if self._bound is None:
            raise FlaneurError("RayExecutor.run needs the runner's bind() first")
        jobs = list(jobs)
        if not jobs:
            return
        self._start()
        try:
            self._run(jobs, deliver, stop)
        finally:
            if self._started_ray:
                self.ray.shutdown()
                self._started_ray = False

    def _run(self, jobs: list[Any], deliver: Callable[[Row], None], stop: RunStop) -> None:
        pool = self._start_pool()
        Dispatch(self, pool, jobs, deliver, stop).run()
        self._stop_pool(pool)

    def _start_pool(self) -> WorkerPool:
        """Start the workers (and the model-slots actor of a run with a model) and wait until
        they are up; records the start-up time and CPU of each."""

        ray = self.ray
        bound = dict(self._bound or {})
        config = bound["config"]
        loaded = bound.pop("loaded")
        loaded_ref = ray.put(loaded) if loaded else None
        slots = None
        n_workers = int(self.workers or 1)
        if config.llm:
            limit = self.model_in_flight or model_limit(config)
            slots = ray.remote(ModelSlots).options(num_cpus=0).remote(limit, n_workers)
        per_worker = max(1, self.per_worker or config.concurrency)
        batch = batch_size(per_worker)
        capacity = per_worker + (batch if per_worker > 1 else 0)  # one batch waits ready
        actor = ray.remote(EpisodeWorker).options(
            num_cpus=1, max_concurrency=-(-capacity // batch) + 2
        )
        args = (config, loaded_ref, bound["agent_factory"], slots)

        def started(handles: list[Any]) -> list[Any]:
            """Wait until the workers are up; a worker that cannot start (an error in its
            set-up, not a crash) ends the run with that error instead of being retried."""
            try:
                self.worker_pids += ray.get([h.pid.remote() for h in handles])
            except ray.exceptions.RayActorError as err:
                cause = (getattr(err, "error_msg", None) or str(err)).strip()[-300:]
                raise FlaneurError(f"a Ray worker could not start: {cause}") from None
            return handles

        def new_worker(i: int) -> Any:  # a replacement takes over worker i's model share
            return started([actor.remote(*args, i, per_worker)])[0]

        t0 = time.perf_counter()
        workers = started([actor.remote(*args, i, per_worker) for i in range(n_workers)])
        self.startup_s = round(time.perf_counter() - t0, 3)
        startup_cpu = ray.get([w.cpu_s.remote() for w in workers])
        self.worker_startup_cpu_s = [round(c, 3) for c in startup_cpu]
        return WorkerPool(config, workers, new_worker, slots, batch, capacity)

    def _stop_pool(self, pool: WorkerPool) -> None:
        """Record what each worker's process used and the model slots' figures, then stop
        the workers and the slots actor."""
        ray, workers, slots = self.ray, pool.workers, pool.slots
        with contextlib.suppress(ray.exceptions.RayError):  # what each worker's process used
            self.worker_cpu_s = [round(c, 3) for c in ray.get([w.cpu_s.remote() for w in workers])]
            if slots is not None:
                self.model_slots = _slot_stats(
                    ray.get(slots.stats.remote()),
                    ray.get([w.model_stats.remote() for w in workers]),
                )
        for worker in workers:
            ray.kill(worker)
        if slots is not None:
            ray.kill(slots)

    def count_usage(self, row: Row, budget: int | None, stop: RunStop) -> None:
        """Add a row's model usage to the run's; stop at the run's token budget (each
        worker's own tracker only sees its own calls)."""
        for key, value in (row.get("usage") or {}).items():
            if isinstance(value, int | float):
                self.usage[key] = self.usage.get(key, 0) + value
        if budget is not None and self.usage.get("total_tokens", 0) >= budget:
            stop.request(f"token budget of {budget} exhausted across the Ray workers")

    def usage_run(self) -> dict[str, Any]:
        """The model usage of the episodes this run delivered (``summary.json``'s
        ``usage.run``, summed over the workers)."""
        usage = dict(self.usage)
        if "cost_usd" in usage:
            usage["cost_usd"] = round(usage["cost_usd"], 6)
        return usage


def batch_size(per_worker: int) -> int:
    """Episodes sent to a worker in one actor call: a quarter of what it runs at a time
    (1 for CPU-bound runs of one episode per worker, so that no episode waits on a busy
    worker while another is idle)."""
    return max(1, per_worker // 4)


def _slot_stats(actor: dict[str, int], gates: list[dict[str, int] | None]) -> dict[str, int]:
    """The run's use of its model limit: ``limit``, ``peak`` (most requests in flight at
    once: the actor's count, or with shares the sum of the workers' peaks, an upper bound)
    and ``granted`` (requests that took a slot; workers replaced mid-run are not counted)."""
    used = [g for g in gates if g]
    if not used or not any(g["share"] for g in used):
        return actor
    return {
        "limit": actor["limit"],
        "peak": sum(g["peak"] for g in used),
        "granted": sum(g["granted"] for g in used),
    }


__all__ = [
    "MAX_ATTEMPTS",
    "RAY_MISSING",
    "RayExecutor",
    "batch_size",
    "import_ray",
    "init_local_ray",
]

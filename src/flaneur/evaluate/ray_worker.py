"""What runs inside Ray: the episode worker actor and the run's global model limiter.

Neither class imports Ray: :class:`~flaneur.evaluate.executors_ray.RayExecutor` makes them
actors with ``ray.remote``. An :class:`EpisodeWorker` builds a run's task contexts (city,
episodes, environment pool) and resources (model, view providers) once, on its first
episode of each task set, and keeps them for every later episode it is sent. Episodes come
in batches (one actor call each) and go back as a batch of scored rows: an actor call costs
about a millisecond of CPU in the driver, the worker and Ray's own processes, as much as a
short model-bound episode's own work.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from flaneur.evaluate.resources import RunResources
from flaneur.evaluate.runner import Job, build_context, run_job, score_jobs
from flaneur.models import ModelConfig
from flaneur.models.usage import BudgetExceeded


class ModelSlots:
    """The run-wide bound on model requests in flight (an async Ray actor).

    With at least one slot per worker, the actor splits the limit into fixed shares, one
    per worker index (:meth:`share`): each worker then bounds its own requests with a
    local semaphore of its share, so the bound holds across workers with no round trip
    per request (a per-request actor call costs milliseconds on a busy machine, which at
    hundreds of requests a second made the limiter the bottleneck). With fewer slots than
    workers, every request takes a slot from the actor itself (:meth:`acquire`).

    Parameters
    ----------
    limit
        Requests in flight at most, across every worker of the run.
    workers
        Worker indices the limit is shared between.
    """

    def __init__(self, limit: int, workers: int = 1) -> None:
        self.limit = max(1, int(limit))
        self.workers = max(1, int(workers))
        self._free = asyncio.Semaphore(self.limit)
        self.in_flight = 0
        self.peak = 0
        self.granted = 0

    def share(self, index: int) -> int:
        """Slots of worker ``index`` (0: it asks the actor for every request)."""
        if self.limit < self.workers:
            return 0
        base, extra = divmod(self.limit, self.workers)
        return base + (1 if index < extra else 0)

    async def acquire(self) -> None:
        """Wait for a free slot and take it."""
        await self._free.acquire()
        self.in_flight += 1
        self.granted += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self) -> None:
        """Give a slot back."""
        self.in_flight -= 1
        self._free.release()

    def stats(self) -> dict[str, int]:
        """``limit``, ``peak`` (most slots held at once) and ``granted`` (slots given)."""
        return {"limit": self.limit, "peak": self.peak, "granted": self.granted}


class SlotGate:
    """A worker's side of :class:`ModelSlots`: its share as a local semaphore, or the
    actor's slots one request at a time (share 0)."""

    def __init__(self, slots: Any, share: int) -> None:
        self.slots = slots
        self.share = int(share)
        self._local = asyncio.Semaphore(self.share) if self.share else None
        self.in_flight = 0
        self.peak = 0
        self.granted = 0

    async def acquire(self) -> None:
        """Take one slot (waits while none is free)."""
        if self._local is not None:
            await self._local.acquire()
        else:
            await self.slots.acquire.remote()
        self.in_flight += 1
        self.granted += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self) -> None:
        """Give the slot back."""
        self.in_flight -= 1
        if self._local is not None:
            self._local.release()
        else:
            self.slots.release.remote()

    def stats(self) -> dict[str, int]:
        """``share``, ``peak`` and ``granted`` of this worker."""
        return {"share": self.share, "peak": self.peak, "granted": self.granted}


def model_limit(config: Any) -> int:
    """The run's model's own ``max_in_flight`` (16 when the backend has none)."""

    options = getattr(config, "llm_options", {})
    model = ModelConfig(
        model=config.llm, base_url=config.llm_base_url, cache_mode="off", **options
    ).build()
    return int(getattr(model, "max_in_flight", 16) or 16)


def limit_model(model: Any, gate: SlotGate, limit: int) -> None:
    """Make every request of ``model`` hold a slot of the run's global limit (``gate``).

    The backend's own bound (``max_in_flight``, which also sizes its connection pools) is
    set to the worker's share of the limit, or to the global ``limit`` when every request
    asks the actor: the gate is the binding bound (a backend's adaptive limit still lowers
    it inside the gate). Cached replies never reach ``_complete`` and take no slot.
    """
    inner = model._complete
    if hasattr(model, "max_in_flight"):
        model.max_in_flight = int(gate.share or limit)

    async def limited(messages: Any, params: Any) -> Any:
        await gate.acquire()
        try:
            return await inner(messages, params)
        finally:
            gate.release()

    model._complete = limited


def pin_perception_threads() -> int:
    """Give this worker's OCR as many ONNX Runtime threads as the CPUs Ray assigned it.

    ONNX Runtime otherwise starts one thread per core in every worker, so N workers on N
    cores run N x N threads that contend for the same cores. A ``FLANEUR_OCR_THREADS``
    already set (on the node, or passed down from a local driver) is kept.

    Returns
    -------
    int
        The thread count in force.
    """
    current = os.environ.get("FLANEUR_OCR_THREADS", "").strip()
    if current:
        return int(current) if current.isdigit() else 0
    cpus = 1
    try:
        # optional extra flaneur[ray]
        import ray

        assigned = ray.get_runtime_context().get_assigned_resources().get("CPU", 1)
        cpus = max(1, round(float(assigned)))
    except Exception:  # pragma: no cover - outside a Ray worker: one thread
        cpus = 1
    os.environ["FLANEUR_OCR_THREADS"] = str(cpus)
    return cpus


class EpisodeWorker:
    """Runs a run's episodes in one process (a Ray actor; see the module docstring).

    Parameters
    ----------
    config
        The run's :class:`~flaneur.evaluate.runner.RunConfig`.
    loaded
        The caller's pre-loaded task sets (sent as an object-store reference, which Ray
        resolves once per worker), or ``None``.
    agent_factory
        The runner's :class:`~flaneur.evaluate.runner.SolverFactories`.
    slots
        The run's :class:`ModelSlots` actor, or ``None`` without a model.
    index
        This worker's index (its share of the model limit).
    per_worker
        Episodes this worker runs at a time, whatever the batches it is sent.
    """

    def __init__(
        self,
        config: Any,
        loaded: Any,
        agent_factory: Any,
        slots: Any,
        index: int = 0,
        per_worker: int = 1,
    ) -> None:

        pin_perception_threads()
        self.config = config
        self._loaded: dict[str, Any] | None = loaded  # Ray resolved the object-store reference
        self.factory = agent_factory
        self.contexts: dict[str, Any] = {}
        self.episodes: dict[str, dict[str, Any]] = {}
        self.resources = RunResources(
            llm=config.llm,
            llm_base_url=config.llm_base_url,
            views_spec=config.views,
            landmarks=config.landmarks,
            cache_mode=config.cache_mode,
            token_budget=config.token_budget,
            model_options=getattr(config, "llm_options", {}),
        )
        self.per_worker = max(1, int(per_worker))
        self._running: asyncio.Semaphore | None = None
        self.gate: SlotGate | None = None
        if slots is not None and self.resources.model is not None:
            # optional extra flaneur[ray]
            import ray

            limit = ray.get(slots.stats.remote())["limit"]
            self.gate = SlotGate(slots, ray.get(slots.share.remote(index)))
            limit_model(self.resources.model, self.gate, limit)

    def pid(self) -> int:
        """This worker's process id."""
        return os.getpid()

    def model_stats(self) -> dict[str, int] | None:
        """This worker's use of the model limit (see :meth:`SlotGate.stats`)."""
        return self.gate.stats() if self.gate is not None else None

    def cpu_s(self) -> float:
        """CPU seconds this worker process has used (all its threads)."""
        return time.process_time()

    def _context(self, task: str) -> Any:

        if task not in self.contexts:
            context, _ = build_context(task, self.config, self._loaded)
            self.contexts[task] = context
            self.episodes[task] = {str(e.id): e for e in context.items}
        return self.contexts[task]

    async def run(self, keys: list[tuple[str, str, str, str, str]]) -> list[dict[str, Any]]:
        """Run a batch of episodes, at most ``per_worker`` of this worker's at a time, and
        score their rows together; one ``{"row": row}`` (scored) or ``{"stop": reason}``
        (token budget) per key, in order."""

        if self._running is None:  # made on the actor's own event loop
            self._running = asyncio.Semaphore(self.per_worker)
        running = self._running

        async def one(key: tuple[str, str, str, str, str]) -> Any:
            task, agent, scheme, episode_id, config_hash = key
            context = self._context(task)
            episode = self.episodes[task][episode_id]
            job = Job(task, agent, scheme, episode, config_hash, context)
            async with running:
                try:
                    return job, await run_job(job, self.factory, self.config, self.resources)
                except BudgetExceeded as err:
                    return str(err)

        results = await asyncio.gather(*(one(key) for key in keys))
        scored = iter(score_jobs([r for r in results if not isinstance(r, str)]))
        return [{"stop": r} if isinstance(r, str) else {"row": next(scored)} for r in results]


__all__ = ["EpisodeWorker", "ModelSlots", "SlotGate", "limit_model", "model_limit"]

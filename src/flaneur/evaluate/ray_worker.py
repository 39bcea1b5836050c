"""What runs inside Ray: the episode worker actor and the run's global model limiter.

Neither class imports Ray: :class:`~flaneur.evaluate.executors_ray.RayExecutor` makes them
actors with ``ray.remote``. An :class:`EpisodeWorker` builds a run's task contexts (city,
episodes, environment pool) and resources (model, view providers) once, on its first
episode of each task set, and keeps them for every later episode it is sent.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from flaneur.models.usage import BudgetExceeded


class ModelSlots:
    """One run-wide bound on model requests in flight (an async Ray actor).

    Parameters
    ----------
    limit
        Requests in flight at most, across every worker of the run.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(1, int(limit))
        self._free = asyncio.Semaphore(self.limit)
        self.in_flight = 0
        self.peak = 0
        self.granted = 0

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


def model_limit(config: Any) -> int:
    """The run's model's own ``max_in_flight`` (16 when the backend has none)."""
    from flaneur.models import ModelConfig

    options = getattr(config, "llm_options", {})
    model = ModelConfig(
        model=config.llm, base_url=config.llm_base_url, cache_mode="off", **options
    ).build()
    return int(getattr(model, "max_in_flight", 16) or 16)


def limit_model(model: Any, slots: Any) -> None:
    """Make every request of ``model`` hold one of the run's global ``slots``.

    The backend's own bound (``max_in_flight``) is raised to the global one: the global
    limiter is the binding one, and a worker may use all of it when the others are idle.
    Cached replies never reach ``_complete`` and take no slot.
    """
    inner = model._complete
    if hasattr(model, "max_in_flight"):
        model.max_in_flight = max(int(model.max_in_flight), int(ray_limit(slots)))

    async def limited(messages: Any, params: Any) -> Any:
        await slots.acquire.remote()
        try:
            return await inner(messages, params)
        finally:
            slots.release.remote()

    model._complete = limited


def ray_limit(slots: Any) -> int:
    """The limit of a :class:`ModelSlots` actor."""
    import ray

    return int(ray.get(slots.stats.remote())["limit"])


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
        ``name -> Agent`` (the runner's).
    slots
        The run's :class:`ModelSlots` actor, or ``None`` without a model.
    """

    def __init__(self, config: Any, loaded: Any, agent_factory: Any, slots: Any) -> None:
        from flaneur.evaluate.resources import RunResources

        self.config = config
        self._loaded: dict[str, Any] | None = loaded  # Ray resolved the object-store reference
        self.factory = agent_factory
        self.contexts: dict[str, Any] = {}
        self.episodes: dict[str, dict[str, Any]] = {}
        self.resources = RunResources(
            llm=config.llm, llm_base_url=config.llm_base_url, views_spec=config.views,
            landmarks=config.landmarks, cache_mode=config.cache_mode,
            token_budget=config.token_budget, model_options=getattr(config, "llm_options", {}),
        )  # fmt: skip
        if slots is not None and self.resources.model is not None:
            limit_model(self.resources.model, slots)

    def pid(self) -> int:
        """This worker's process id."""
        return os.getpid()

    def _context(self, task: str, scheme: str) -> Any:
        from flaneur.evaluate.envpool import env_pool
        from flaneur.evaluate.episode import average_reference_length
        from flaneur.evaluate.runner import TaskContext, _task_set

        if task not in self.contexts:
            spec, city, episodes = _task_set(task, self.config, self._loaded)
            episodes = list(episodes)
            pool = env_pool(city, episodes, scheme, self.config.scheme_options)
            avg = average_reference_length(episodes)
            self.contexts[task] = TaskContext(city, episodes, avg, pool, spec.success_metric)
            self.episodes[task] = {e.id: e for e in episodes}
        return self.contexts[task]

    async def run(self, key: tuple[str, str, str, str, str]) -> dict[str, Any]:
        """Run one episode; ``{"row": row}`` (scored) or ``{"stop": reason}`` (budget)."""
        from flaneur.evaluate.runner import EpisodeJob, run_job, score_jobs

        task, agent, scheme, episode_id, config_hash = key
        context = self._context(task, scheme)
        episode = self.episodes[task][episode_id]
        job = EpisodeJob(task, agent, scheme, episode, config_hash, context)
        try:
            row = await run_job(job, self.factory, self.config, self.resources)
        except BudgetExceeded as err:
            return {"stop": str(err)}
        return {"row": score_jobs([(job, row)])[0]}


__all__ = ["EpisodeWorker", "ModelSlots", "limit_model", "model_limit"]

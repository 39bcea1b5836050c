"""What a run shares between its episodes: the model, its usage tracker, view providers.

Agents receive these as fields of their :class:`~flaneur.agents.EnvInfo` (``model``,
``usage``, ``views``, ``landmarks``, ``llm``): the runner builds them once per run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flaneur.models import ModelConfig, UsageTracker
from flaneur.views.registry import views_from_spec as make
from flaneur.world.city import City


def views_from_spec(spec: str, city: City) -> Any:
    """A view provider for ``city`` from a ``--views`` value (see
    :func:`flaneur.views.registry.views_from_spec`)."""

    return make(spec, city)


@dataclass
class RunResources:
    """The model (with usage accounting) and view providers of one run."""

    llm: str | None = None
    llm_base_url: str | None = None
    views_spec: str | None = None
    landmarks: str | None = None
    cache_mode: str = "use"
    token_budget: int | None = None
    model_options: dict[str, Any] = field(default_factory=dict)
    model: Any = None
    usage: Any = None
    _views: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.llm:
            self.usage = UsageTracker(token_budget=self.token_budget)
            config = ModelConfig(
                model=self.llm,
                base_url=self.llm_base_url,
                cache_mode=self.cache_mode,
                token_budget=self.token_budget,
                **self.model_options,
            )
            self.model = config.build(usage=self.usage)

    def server_down(self) -> str | None:
        """Why the model server counts as down (see :mod:`flaneur.models.health`), or None."""
        health = getattr(self.model, "health", None)
        return getattr(health, "down", None)

    def views_for(self, city: City) -> Any:
        """The view provider of ``city`` (one per city, made on first use), or ``None``."""
        if not self.views_spec:
            return None
        if city.name not in self._views:
            self._views[city.name] = views_from_spec(self.views_spec, city)
        return self._views[city.name]

    def env_info(self, city: City) -> dict[str, Any]:
        """The run-resource fields of :class:`~flaneur.agents.EnvInfo` for ``city``."""
        return {
            "model": self.model,
            "usage": self.usage,
            "views": self.views_for(city),
            "landmarks": self.landmarks,
            "llm": self.llm,
        }

    async def aclose(self) -> None:
        """Close the model's HTTP client (inside the run's event loop)."""
        if self.model is not None and hasattr(self.model, "aclose"):
            await self.model.aclose()

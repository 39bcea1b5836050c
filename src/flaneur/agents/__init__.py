"""Agents: the :class:`Agent` interface and the baselines (random, forward, oracle)."""

from __future__ import annotations

import inspect
from typing import Any

from flaneur.agents.base import Action, Agent, StepRecord, env_info_for, step_record
from flaneur.agents.baselines import ForwardAgent, OracleAgent, RandomAgent, episode_seed
from flaneur.agents.cityseeker import CitySeekerAgent
from flaneur.agents.explorer import ExplorerAgent
from flaneur.agents.mapgpt import MapGPTAgent
from flaneur.agents.velma import VelmaAgent
from flaneur.errors import FlaneurError

AGENTS: dict[str, type[Agent]] = {
    "random": RandomAgent,
    "forward": ForwardAgent,
    "oracle": OracleAgent,
    "cityseeker": CitySeekerAgent,
    "mapgpt": MapGPTAgent,
    "velma": VelmaAgent,
    "explorer": ExplorerAgent,
}
"""Agent classes by name (``flaneur run --agent NAME``)."""


def register_agent(name: str, cls: type[Agent], *, replace: bool = False) -> None:
    """Add an agent class under ``name``."""
    if name in AGENTS and not replace:
        raise FlaneurError(f"agent {name!r} is already registered")
    AGENTS[name] = cls


def make_agent(name: str, **kwargs: Any) -> Agent:
    """An agent by name with constructor options ``kwargs``; :class:`FlaneurError` for an
    unknown name (listing the known ones) or an option its constructor does not take."""
    try:
        cls = AGENTS[name]
    except KeyError:
        raise FlaneurError(f"unknown agent {name!r}; choose from {', '.join(AGENTS)}") from None
    _check_option_names(name, cls, kwargs)
    return cls(**kwargs)


def _check_option_names(name: str, cls: type[Agent], kwargs: dict[str, Any]) -> None:
    """Raise :class:`FlaneurError` naming the options that ``cls(**kwargs)`` cannot take."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):  # no introspectable signature: let the call decide
        return
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return  # the constructor checks its own extra options (e.g. the explorer's)
    known = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        takes = f"its options: {', '.join(known)}" if known else "it takes none"
        raise FlaneurError(f"agent {name!r} has no option {', '.join(unknown)} ({takes})")


__all__ = [
    "AGENTS",
    "Action",
    "Agent",
    "ForwardAgent",
    "OracleAgent",
    "RandomAgent",
    "StepRecord",
    "env_info_for",
    "episode_seed",
    "make_agent",
    "register_agent",
    "step_record",
]

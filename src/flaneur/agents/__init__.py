"""Agents: the :class:`Agent` interface and the baselines (random, forward, oracle)."""

from __future__ import annotations

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
    """An agent by name; :class:`FlaneurError` listing the known names otherwise."""
    try:
        cls = AGENTS[name]
    except KeyError:
        raise FlaneurError(f"unknown agent {name!r}; choose from {', '.join(AGENTS)}") from None
    return cls(**kwargs)


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

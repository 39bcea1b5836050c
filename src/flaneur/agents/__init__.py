"""Agents: the :class:`Agent` interface, the registry :data:`AGENTS` and the baselines.

Agents are found by name in :data:`AGENTS`: the built-ins, agents registered in code with
:func:`register_agent`, agents that outside packages declare under the entry-point group
``flaneur.agents``, and any ``"package.module:Class"`` given directly (see
:mod:`flaneur.registry` and ``docs/extending.md``).
"""

from __future__ import annotations

from typing import Any

from flaneur.agents.base import (
    Action,
    Agent,
    EnvInfo,
    EnvView,
    NoOptions,
    Planner,
    Privileged,
    SolveInfo,
    StepRecord,
    env_info_for,
    step_record,
)
from flaneur.agents.baselines import ForwardAgent, OracleAgent, RandomAgent, episode_seed
from flaneur.agents.options import check_requirements
from flaneur.errors import FlaneurError
from flaneur.options import check_options, options_schema
from flaneur.registry import Registry


def _check_agent_class(name: str, entry: Any) -> None:
    if not (isinstance(entry, type) and issubclass(entry, Agent | Planner)):
        raise FlaneurError(
            f"agent {name!r} is {entry!r}, not a subclass of flaneur.agents.Agent or Planner"
        )


AGENTS: Registry[type[Agent] | type[Planner]] = Registry(
    "agent", group="flaneur.agents", check=_check_agent_class
)
"""Agent classes by name (``flaneur run --agent NAME``): navigation agents and V-IRL's
planner agents; language-model agents load lazily."""
_BUILTIN_AGENTS: dict[str, type[Agent] | type[Planner] | str] = {
    "random": RandomAgent,
    "forward": ForwardAgent,
    "oracle": OracleAgent,
    "cityseeker": "flaneur.agents.cityseeker:CitySeekerAgent",
    "mapgpt": "flaneur.agents.mapgpt:MapGPTAgent",
    "velma": "flaneur.agents.velma:VelmaAgent",
    "explorer": "flaneur.agents.explorer:ExplorerAgent",
    "hiro": "flaneur.agents.hiro:HiroAgent",
    "rx399": "flaneur.agents.virl.rx399:RobotAgent",
    "imani": "flaneur.agents.virl.imani:ImaniAgent",
    "ling": "flaneur.agents.virl.ling:LingAgent",
    "local": "flaneur.agents.virl.local:LocalAgent",
    "aria": "flaneur.agents.virl.aria:AriaAgent",
    "vivek": "flaneur.agents.virl.vivek:VivekAgent",
    "peng": "flaneur.agents.virl.peng:PengAgent",
    "diego": "flaneur.agents.virl.diego:DiegoAgent",
}
for _name, _entry in _BUILTIN_AGENTS.items():
    AGENTS.register(_name, _entry)


def register_agent(
    name: str, cls: type[Agent] | type[Planner] | str, *, replace: bool = False
) -> None:
    """Add an agent class (or a ``"module:Class"`` string, imported on first use) as ``name``."""
    AGENTS.register(name, cls, replace=replace)


def agent_class(name: str) -> type[Agent] | type[Planner]:
    """The agent class registered as ``name`` (or named ``"module:Class"``)."""
    return AGENTS.get(name)


def make_agent(name: str, **options: Any) -> Agent | Planner:
    """An agent by name with ``options`` checked against its ``Options`` first.

    Raises
    ------
    FlaneurError
        One line for an unknown name (listing the known ones), an option the agent does not
        have or a value of the wrong type.
    """
    cls = agent_class(name)
    values = check_options(name, options_schema(cls), options)
    return cls(**values)


__all__ = [
    "AGENTS",
    "Action",
    "Agent",
    "EnvInfo",
    "EnvView",
    "ForwardAgent",
    "NoOptions",
    "OracleAgent",
    "Planner",
    "Privileged",
    "RandomAgent",
    "SolveInfo",
    "StepRecord",
    "agent_class",
    "check_options",
    "check_requirements",
    "env_info_for",
    "episode_seed",
    "make_agent",
    "options_schema",
    "register_agent",
    "step_record",
]

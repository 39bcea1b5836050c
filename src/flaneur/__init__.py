"""flaneur: agents that live in real cities.

The names below are flaneur's public API (documented with examples in ``docs/api.md``;
``tests/test_api.py`` pins the list, so a change to it is deliberate). Everything else is
internal and may change. The names are imported on first use, so ``import flaneur`` stays
cheap.

>>> import flaneur
>>> city = flaneur.load_city("helsinki")                         # doctest: +SKIP
>>> summary = flaneur.run(flaneur.RunConfig(agents=("forward",),
...                       tasks=("helsinki-needs-v1",)), "runs/fwd")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API: dict[str, str] = {
    # cities
    "City": "flaneur.world.city:City",
    "load_city": "flaneur.world.builtin:load_city",
    "city_from_osm": "flaneur.world.sources.osm:city_from_osm",
    # the environment
    "NavigationEnv": "flaneur.env.navigation_env:NavigationEnv",
    "make_env": "flaneur.env.registration:make_task_env",
    # solvers
    "Agent": "flaneur.agents.base:Agent",
    "Action": "flaneur.agents.base:Action",
    "EnvInfo": "flaneur.agents.base:EnvInfo",
    "Planner": "flaneur.agents.base:Planner",
    "SolveInfo": "flaneur.agents.base:SolveInfo",
    "make_agent": "flaneur.agents:make_agent",
    "Range": "flaneur.options:Range",
    "option": "flaneur.options:option",
    # tasks
    "Episode": "flaneur.tasks.episode:Episode",
    "TaskItem": "flaneur.tasks.items:TaskItem",
    "TaskSpec": "flaneur.tasks.spec:TaskSpec",
    "list_tasks": "flaneur.tasks.registry:list_tasks",
    "load_task": "flaneur.tasks.registry:load_task",
    "register_task": "flaneur.tasks.registry:register_task",
    "generate_tasks": "flaneur.tasks.generators:generate_set",
    # evaluation
    "RunConfig": "flaneur.evaluate.runner:RunConfig",
    "run": "flaneur.evaluate.runner:run_benchmark",
    "read_run": "flaneur.report.run_folder:load_run",
    # registries (one per kind of plug-in; entry-point group flaneur.<kind>)
    "AGENTS": "flaneur.agents:AGENTS",
    "TASKS": "flaneur.tasks.registry:TASKS",
    "GENERATORS": "flaneur.tasks.generators:GENERATORS",
    "KINDS": "flaneur.evaluate.kinds:KINDS",
    "VIEWS": "flaneur.views.registry:VIEWS",
    "LANDMARKS": "flaneur.perception.landmarks.registry:LANDMARKS",
    "DETECTORS": "flaneur.perception.detection:DETECTORS",
    "RECOGNISERS": "flaneur.bench.recognisers:RECOGNISERS",
    "ANSWERERS": "flaneur.bench.answerers:ANSWERERS",
    "SOURCES": "flaneur.world.sources:SOURCES",
    "SCHEMES": "flaneur.env.schemes:SCHEMES",
    "register_metric": "flaneur.metrics.table:register_metric",
    # errors
    "FlaneurError": "flaneur.errors:FlaneurError",
    "DataError": "flaneur.errors:DataError",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    """Import a public name on first use (see the module docstring)."""
    target = _API.get(name)
    if target is None:
        raise AttributeError(f"module 'flaneur' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

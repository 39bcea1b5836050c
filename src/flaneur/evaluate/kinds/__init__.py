"""Task kinds the runner runs: :data:`KINDS`, by the name a task set declares as its kind.

See :mod:`flaneur.evaluate.kinds.base` for what a kind supplies. Built-in kinds are listed
lazily (``module:Class``), so naming them imports nothing; outside packages add kinds under
the entry-point group ``flaneur.kinds``.
"""

from __future__ import annotations

from typing import Any

from flaneur.errors import FlaneurError
from flaneur.evaluate.kinds.base import Job, SolverFactory, TaskContext, TaskKind
from flaneur.registry import Registry


def _check_kind(name: str, entry: Any) -> None:
    if not (isinstance(entry, type) and issubclass(entry, TaskKind)):
        raise FlaneurError(f"task kind {name!r} is {entry!r}, not a TaskKind subclass")


KINDS: Registry[type[TaskKind]] = Registry("task kind", group="flaneur.kinds", check=_check_kind)
"""Task kinds by name."""
for _name, _entry in {
    "navigation": "flaneur.evaluate.kinds.navigation:NavigationKind",
    "virl-recognition": "flaneur.evaluate.kinds.virl_bench:RecognitionKind",
    "virl-vqa": "flaneur.evaluate.kinds.virl_bench:VqaKind",
    "virl-detection": "flaneur.evaluate.kinds.detection:DetectionKind",
    "virl-local": "flaneur.evaluate.kinds.scenarios:LocalScenarios",
    "virl-peng": "flaneur.evaluate.kinds.scenarios:PengScenarios",
    "virl-aria": "flaneur.evaluate.kinds.scenarios:AriaScenarios",
    "virl-vivek": "flaneur.evaluate.kinds.scenarios:VivekScenarios",
    "virl-diego": "flaneur.evaluate.kinds.scenarios:DiegoScenarios",
    "virl-rx399": "flaneur.evaluate.kinds.scenarios:RobotScenarios",
    "virl-imani": "flaneur.evaluate.kinds.scenarios:ImaniScenarios",
}.items():
    KINDS.register(_name, _entry)


def kind_named(name: str) -> TaskKind:
    """An instance of the task kind ``name``."""
    return KINDS.get(name)()


__all__ = ["KINDS", "Job", "SolverFactory", "TaskContext", "TaskKind", "kind_named"]

"""The scenario kinds of V-IRL's planner agents: one persona (and what it asks for) per item,
planned by a :class:`~flaneur.agents.Planner` (``virl-aria``: ``--agent aria``, ...) and
scored by the kind's scorer in :mod:`flaneur.bench` (:data:`SCORERS`).

A scorer is ``score(item, result, city) -> metrics`` and reads only the item and the plan:
the planner never scores itself.
"""

from __future__ import annotations

import inspect
from typing import Any

from flaneur.agents import AGENTS, Planner
from flaneur.errors import FlaneurError
from flaneur.evaluate.kinds.base import Job, TaskContext
from flaneur.evaluate.kinds.items import ItemKind
from flaneur.registry import Registry, import_object
from flaneur.tasks.items import TaskItem

SCORERS = {
    "virl-local": "route_scenarios:score_local",
    "virl-peng": "scenario_scores:score_peng",
    "virl-aria": "scenario_scores:score_aria",
    "virl-vivek": "scenario_scores:score_vivek",
    "virl-diego": "scenario_scores:score_diego",
    "virl-rx399": "survey_scenarios:score_robot",
    "virl-imani": "survey_scenarios:score_planner",
}
"""Per kind, its scorer (``module:function`` in :mod:`flaneur.bench`)."""


class ScenarioKind(ItemKind):
    """Scenarios planned by the planner agents that declare this kind in ``solves``."""

    @classmethod
    def about(cls) -> str:
        """The kind's metrics, as its scorer's docstring and that of its module give them."""
        scorer = import_object(f"flaneur.bench.{SCORERS[cls.name]}", what=f"scorer of {cls.name}")
        module = inspect.getmodule(scorer)
        parts = (scorer.__doc__, module.__doc__ if module else None)
        return "\n\n".join(inspect.cleandoc(part) for part in parts if part)

    def solvers(self) -> Registry[Any]:
        return AGENTS

    def check_solver(self, name: str, cls: Any) -> None:
        if not (isinstance(cls, type) and issubclass(cls, Planner) and self.name in cls.solves):
            fits = [n for n in AGENTS.names() if self._plans(n)]
            raise FlaneurError(
                f"agent {name!r} does not plan {self.name} scenarios; "
                f"choose {', '.join(fits) or 'a planner that does'}"
            )

    def _plans(self, name: str) -> bool:
        try:
            cls = AGENTS.get(name)
        except FlaneurError:
            return False
        return isinstance(cls, type) and issubclass(cls, Planner) and self.name in cls.solves

    async def solve(self, job: Job, solver: Any, info: Any) -> dict[str, Any]:
        return dict(await solver.solve(job.item, info))

    def score_item(self, item: TaskItem, result: dict[str, Any], context: TaskContext) -> dict:
        scorer = f"flaneur.bench.{SCORERS[self.name]}"
        score = import_object(scorer, what=f"scorer of {self.name}")
        return dict(score(item, result, context.city))


def _kind(class_name: str, name: str) -> type[ScenarioKind]:
    return type(class_name, (ScenarioKind,), {"name": name, "__doc__": f"``{name}`` scenarios."})


LocalScenarios = _kind("LocalScenarios", "virl-local")
PengScenarios = _kind("PengScenarios", "virl-peng")
AriaScenarios = _kind("AriaScenarios", "virl-aria")
VivekScenarios = _kind("VivekScenarios", "virl-vivek")
DiegoScenarios = _kind("DiegoScenarios", "virl-diego")
RobotScenarios = _kind("RobotScenarios", "virl-rx399")
ImaniScenarios = _kind("ImaniScenarios", "virl-imani")

"""The scenario kinds of V-IRL's planner agents: one persona (and what it asks for) per item,
planned by a :class:`~flaneur.agents.Planner` and scored by the kind's scorer.

======================  ==========================  =====================================
kind                    planner (``--agent``)       scorer (:mod:`flaneur.bench`)
======================  ==========================  =====================================
``virl-local``          ``local``                   ``route_scenarios:score_local``
``virl-peng``           ``peng``                    ``scenarios:score_peng``
``virl-aria``           ``aria``                    ``scenarios:score_aria``
``virl-vivek``          ``vivek``                   ``scenarios:score_vivek``
``virl-diego``          ``diego``                   ``scenarios:score_diego``
``virl-rx399``          ``rx399``                   ``survey_scenarios:score_robot``
``virl-imani``          ``imani``                   ``survey_scenarios:score_planner``
======================  ==========================  =====================================

A scorer is ``score(item, result, city) -> metrics`` and reads only the item and the plan:
the planner never scores itself.
"""

from __future__ import annotations

from typing import Any, ClassVar

from flaneur.agents import AGENTS, Planner
from flaneur.errors import FlaneurError
from flaneur.evaluate.kinds.base import Job, TaskContext
from flaneur.evaluate.kinds.items import ItemKind
from flaneur.registry import Registry, import_object
from flaneur.tasks.items import TaskItem


class ScenarioKind(ItemKind):
    """Scenarios planned by the planner agents that declare this kind in ``solves``."""

    scorer: ClassVar[str] = ""
    """``"module:function"`` of the kind's scorer."""

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
        score = import_object(self.scorer, what=f"scorer of {self.name}")
        return dict(score(item, result, context.city))


class LocalScenarios(ScenarioKind):
    """Local's direction questions (``virl-local``)."""

    name = "virl-local"
    scorer = "flaneur.bench.route_scenarios:score_local"


class PengScenarios(ScenarioKind):
    """Peng's errands to put in order and walk (``virl-peng``)."""

    name = "virl-peng"
    scorer = "flaneur.bench.scenarios:score_peng"


class AriaScenarios(ScenarioKind):
    """Aria's place-recommendation wishes (``virl-aria``)."""

    name = "virl-aria"
    scorer = "flaneur.bench.scenarios:score_aria"


class VivekScenarios(ScenarioKind):
    """Vivek's home searches (``virl-vivek``)."""

    name = "virl-vivek"
    scorer = "flaneur.bench.scenarios:score_vivek"


class DiegoScenarios(ScenarioKind):
    """Diego's day plans (``virl-diego``)."""

    name = "virl-diego"
    scorer = "flaneur.bench.scenarios:score_diego"


class RobotScenarios(ScenarioKind):
    """RX-399's object counts along a route (``virl-rx399``)."""

    name = "virl-rx399"
    scorer = "flaneur.bench.survey_scenarios:score_robot"


class ImaniScenarios(ScenarioKind):
    """Imani's surveys of a region (``virl-imani``)."""

    name = "virl-imani"
    scorer = "flaneur.bench.survey_scenarios:score_planner"


__all__ = [
    "AriaScenarios",
    "DiegoScenarios",
    "ImaniScenarios",
    "LocalScenarios",
    "PengScenarios",
    "RobotScenarios",
    "ScenarioKind",
    "VivekScenarios",
]

"""Imani, V-IRL's urban planner: count street furniture in a region.

The scenario (``virl-imani``, :mod:`flaneur.bench.survey_scenarios`) holds the persona, the
region (``polygon``: ``[lat, lng]`` corners), the grid ``spacing``, the ``labels`` to count
and what its generator resolved with the region service: the sampled ``viewpoints`` (graph
node ids, in walking order) and the ``walk`` through them. Imani perceives as RX-399 does
(:mod:`flaneur.agents.virl.rx399`; same options), but all around by default
(``views_per_point`` 6: a full turn of fov 60), and reports the objects whose estimated
position lies inside the polygon: the count per category (``counts``), those objects, how
many were counted outside, the walk and the visual memory. The counts are set beside the
OpenStreetMap furniture in the polygon by
:func:`flaneur.bench.survey_scenarios.score_planner`; the heat map is drawn by
:func:`flaneur.report.virl_survey_maps.planner_map`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import shapely

from flaneur.agents.base import SolveInfo
from flaneur.agents.virl.rx399 import RobotAgent, RobotOptions, scenario_nodes
from flaneur.errors import DataError
from flaneur.options import Range, option
from flaneur.services.region import polygon_from_latlng
from flaneur.tasks.items import TaskItem


@dataclass(frozen=True)
class ImaniOptions(RobotOptions):
    """How Imani perceives: RX-399's options, looking all around by default."""

    views_per_point: Annotated[int, Range(1, 12)] = option(
        6, "views at each viewpoint (6: a full turn of fov 60)"
    )


def scenario_polygon(item: TaskItem) -> shapely.Polygon:
    """The scenario's region (``polygon``: a list of ``[lat, lng]``), checked."""

    ring = item.get("polygon")
    if not isinstance(ring, list) or not ring:
        raise DataError(f"scenario {item.id!r}: field 'polygon' must be a list of [lat, lng]")
    return polygon_from_latlng(ring)


class ImaniAgent(RobotAgent):
    """Imani on ``virl-imani`` scenarios (see the module docstring)."""

    name: ClassVar[str] = "imani"
    solves: ClassVar[tuple[str, ...]] = ("virl-imani",)
    Options: ClassVar[type] = ImaniOptions

    async def solve(self, item: TaskItem, info: SolveInfo) -> dict[str, Any]:
        """Look around at the scenario's viewpoints and count its labels in the region."""
        polygon = scenario_polygon(item)
        nodes = scenario_nodes(info.city, item, "viewpoints")
        scenario_nodes(info.city, item, "walk")  # the walk must be in the city too
        walked, labels = await self.walk(item, info, nodes)
        plan = self.plan(info.city, walked, labels)
        inside = [o for o in plan["objects"] if shapely.contains_xy(polygon, o["lng"], o["lat"])]
        return self.counted(list(item["walk"]), plan, inside, "counted_outside_polygon")

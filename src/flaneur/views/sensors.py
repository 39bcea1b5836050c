"""Image sensors: the set of views an agent gets at each step, and landmark observations.

* ``"velma"`` - five views: left, slightly left, ahead, slightly right, right
  (-90, -45, 0, 45, 90 degrees from the agent's heading);
* ``"virl"`` - eight views every 45 degrees, starting ahead (V-IRL's surroundings);
* ``"navigable"`` - one view along each street leaving the node (CitySeeker).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flaneur.views.base import DEFAULT_SIZE, View, ViewError, ViewProvider

if TYPE_CHECKING:
    from flaneur.perception.landmarks.base import LandmarkObservation, LandmarkScorer
    from flaneur.world.graph import StreetGraph

VELMA_DIRECTIONS: tuple[tuple[str, float], ...] = (
    ("left", -90.0),
    ("slightly left", -45.0),
    ("ahead", 0.0),
    ("slightly right", 45.0),
    ("right", 90.0),
)
VIRL_DIRECTIONS: tuple[tuple[str, float], ...] = (
    ("ahead", 0.0),
    ("ahead right", 45.0),
    ("right", 90.0),
    ("behind right", 135.0),
    ("behind", 180.0),
    ("behind left", 225.0),
    ("left", 270.0),
    ("ahead left", 315.0),
)
LAYOUTS = ("velma", "virl", "navigable")


@dataclass
class Observation:
    """What an image sensor saw at one step.

    Attributes
    ----------
    node
        Node id.
    heading
        Agent heading (degrees).
    views
        ``{label: View}`` in the layout's order.
    landmarks
        Visible landmarks (best observation per landmark), if a scorer was used.
    """

    node: str
    heading: float
    views: dict[str, View]
    landmarks: list[LandmarkObservation] = field(default_factory=list)


class ImageSensor:
    """Views around an agent in a fixed layout.

    Parameters
    ----------
    provider
        Where views come from (any :class:`ViewProvider`).
    graph
        The street graph (needed for the ``"navigable"`` layout).
    layout
        ``"velma"``, ``"virl"`` or ``"navigable"``.
    fov, pitch, size
        Camera settings of every view (``fov`` defaults to 60 degrees, or 45 for "virl"
        so the eight views do not overlap).
    """

    def __init__(
        self,
        provider: ViewProvider,
        graph: StreetGraph | None = None,
        *,
        layout: str = "velma",
        fov: float | None = None,
        pitch: float = 0.0,
        size: tuple[int, int] = DEFAULT_SIZE,
    ) -> None:
        if layout not in LAYOUTS:
            raise ViewError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
        if layout == "navigable" and graph is None:
            raise ViewError("the 'navigable' layout needs the street graph")
        self.provider = provider
        self.graph = graph
        self.layout = layout
        self.fov = fov if fov is not None else (45.0 if layout == "virl" else 60.0)
        self.pitch = pitch
        self.size = size

    def directions(self, node: str | int, heading: float) -> list[tuple[str, float]]:
        """``(label, compass heading)`` of each view at ``node`` facing ``heading``."""
        if self.layout == "velma":
            return [(lab, (heading + off) % 360.0) for lab, off in VELMA_DIRECTIONS]
        if self.layout == "virl":
            return [(lab, (heading + off) % 360.0) for lab, off in VIRL_DIRECTIONS]
        graph = self.graph
        assert graph is not None, "__init__ requires the graph for the navigable layout"
        index = graph.index(node) if isinstance(node, str) else int(node)
        out = []
        for k, h in enumerate(graph.out_headings(index).tolist()):
            target = graph.ids[graph.neighbors(index)[k]]
            out.append((f"to {target}", float(h)))
        return out

    def views(self, node: str | int, heading: float) -> dict[str, View]:
        """The views of one step."""
        return {
            label: self.provider.view(node, h, pitch=self.pitch, fov=self.fov, size=self.size)
            for label, h in self.directions(node, heading)
        }

    def observe(
        self,
        node: str | int,
        heading: float,
        *,
        scorer: LandmarkScorer | None = None,
        landmarks: Sequence[str] = (),
    ) -> Observation:
        """Views of one step and, with a scorer, the landmarks visible in any of them."""
        views = self.views(node, heading)
        found: list[LandmarkObservation] = []
        if scorer is not None and landmarks:
            found = scorer.seen_in(list(views.values()), landmarks)
        node_id = next(iter(views.values())).node if views else str(node)
        return Observation(node_id, heading % 360.0, views, found)

    async def aobserve(
        self,
        node: str | int,
        heading: float,
        *,
        scorer: LandmarkScorer | None = None,
        landmarks: Sequence[str] = (),
    ) -> Observation:
        """Async :meth:`observe` (scorers that call models run their views concurrently)."""
        views = await asyncio.to_thread(self.views, node, heading)
        found: list[LandmarkObservation] = []
        if scorer is not None and landmarks:
            found = await scorer.aseen_in(list(views.values()), landmarks)
        node_id = next(iter(views.values())).node if views else str(node)
        return Observation(node_id, heading % 360.0, views, found)

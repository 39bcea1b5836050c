"""Sensors that need no images: intersection, map landmarks, nearby places, online map.

A sensor is bound to a city once (``bind``), reset at every episode (``reset``) and read at
every step (``observe(state)``). Readings are small, JSON-ready values (ints, tuples,
dicts); :mod:`flaneur.env.verbalizer` turns them into text. Readings that depend only on the
node and heading are cached per ``(node, heading)``, so a sensor costs a dictionary lookup
after the first visit of a state.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, ClassVar, Protocol, runtime_checkable

from flaneur.env.online_map import OnlineMap
from flaneur.env.state import AgentState, direction_label, relative_angle
from flaneur.errors import FlaneurError
from flaneur.world.city import City

VIEW_NAMES = ("left", "slightly left", "ahead", "slightly right", "right")
"""The five views of :class:`MapLandmarksSensor`, centred at -90, -45, 0, 45, 90 degrees."""


@runtime_checkable
class Sensor(Protocol):
    """What the environment needs from a sensor."""

    name: ClassVar[str]

    def bind(self, city: City, online_map: OnlineMap) -> None:
        """Attach to a city (and the episode's online map)."""
        ...

    def reset(self) -> None:
        """Start of an episode."""
        ...

    def observe(self, state: AgentState) -> Any:
        """The reading in ``state``."""
        ...


class IntersectionSensor:
    """The number of streets when the agent has just reached an intersection (else 0).

    As in VELMA, the intersection is reported on arrival (and at the start), not again after
    rotating in place.
    """

    name: ClassVar[str] = "intersection"

    def bind(self, city: City, online_map: OnlineMap) -> None:
        self._degree = city.graph.degree.tolist()

    def reset(self) -> None:
        pass

    def observe(self, state: AgentState) -> int:
        d = self._degree[state.node]
        return d if d > 2 and state.prev_node != state.node else 0


class _PlacesAround:
    """Places near each node (nearest first) with their absolute bearings, cached per node."""

    def __init__(self, radius_m: float, named_only: bool) -> None:
        self.radius_m = radius_m
        self.named_only = named_only

    def bind(self, city: City) -> None:
        self.places = city.places
        self.node_xy = city.graph.xy
        self._cache: dict[int, list[tuple[int, float, float]]] = {}

    def around(self, node: int) -> list[tuple[int, float, float]]:
        """``[(place row, distance m, absolute bearing), ...]`` nearest first."""
        found = self._cache.get(node)
        if found is None:
            found = []
            places = self.places
            if len(places):
                xy = self.node_xy[node]
                rows, dist = places.within(xy, self.radius_m)
                names = places.names
                pxy = places.xy
                for r, d in zip(rows.tolist(), dist.tolist(), strict=True):
                    if self.named_only and not names[r]:
                        continue
                    dx, dy = pxy[r, 0] - xy[0], pxy[r, 1] - xy[1]
                    found.append((r, d, math.degrees(math.atan2(dx, dy)) % 360.0))
            self._cache[node] = found
        return found


class MapLandmarksSensor:
    """Named places visible from the node in five views (VELMA's landmark observation).

    A place within ``radius_m`` belongs to the view (at -90, -45, 0, +45, +90 degrees of the
    heading) whose centre is nearest to its bearing, if that is within 22.5 degrees; places
    behind the agent (more than 112.5 degrees off) are not seen. Each view lists up to
    ``max_per_view`` names, nearest first.

    Parameters
    ----------
    radius_m
        How far the agent sees.
    max_per_view
        Names per view.
    named_only
        Only places with a name (unnamed ones would be labelled by category).
    """

    name: ClassVar[str] = "landmarks"

    def __init__(
        self, radius_m: float = 30.0, max_per_view: int = 3, named_only: bool = True
    ) -> None:
        self.max_per_view = max_per_view
        self._around = _PlacesAround(radius_m, named_only)

    def bind(self, city: City, online_map: OnlineMap) -> None:
        self._around.bind(city)
        self._cache: dict[tuple[int, float], tuple[tuple[str, ...], ...]] = {}

    def reset(self) -> None:
        pass

    def observe(self, state: AgentState) -> tuple[tuple[str, ...], ...]:
        key = (state.node, state.heading)
        views = self._cache.get(key)
        if views is None:
            views = self._compute(state.node, state.heading)
            if len(self._cache) < 2_000_000:
                self._cache[key] = views
        return views

    def _compute(self, node: int, heading: float) -> tuple[tuple[str, ...], ...]:
        buckets: list[list[str]] = [[], [], [], [], []]
        places = self._around.places
        for row, _dist, bearing in self._around.around(node):
            rel = relative_angle(bearing, heading)
            if abs(rel) > 112.5:
                continue
            view = buckets[min(4, max(0, math.floor(rel / 45.0 + 0.5) + 2))]
            label = str(places.names[row]) or places[row].label
            if len(view) < self.max_per_view and label not in view:
                view.append(label)
        return tuple(tuple(b) for b in buckets)


class NearbyPlacesSensor:
    """Places around the node: ``(label, first category, distance m, direction)``, nearest
    first, up to ``max_places`` within ``radius_m``."""

    name: ClassVar[str] = "nearby"

    def __init__(self, radius_m: float = 50.0, max_places: int = 5, named_only: bool = False):
        self.max_places = max_places
        self._around = _PlacesAround(radius_m, named_only)

    def bind(self, city: City, online_map: OnlineMap) -> None:
        self._around.bind(city)
        self._cache: dict[tuple[int, float], tuple[tuple[str, str, int, str], ...]] = {}

    def reset(self) -> None:
        pass

    def observe(self, state: AgentState) -> tuple[tuple[str, str, int, str], ...]:
        key = (state.node, state.heading)
        items = self._cache.get(key)
        if items is None:
            places = self._around.places
            out = []
            for row, dist, bearing in self._around.around(state.node)[: self.max_places]:
                place = places[row]
                category = place.categories[0] if place.categories else ""
                label = direction_label(relative_angle(bearing, state.heading))
                out.append((place.label, category, round(dist), label))
            items = tuple(out)
            self._cache[key] = items
        return items


class OnlineMapSensor:
    """The online map (MapGPT): explored, accessible and unexplored nodes, by id, with the
    episode-local place numbers the verbalizer uses."""

    name: ClassVar[str] = "online_map"

    def bind(self, city: City, online_map: OnlineMap) -> None:
        self.map = online_map
        self._ids = city.graph.ids.tolist()

    def reset(self) -> None:
        pass

    def observe(self, state: AgentState) -> dict[str, Any]:
        self.map.visit(state.node)
        snap = self.map.snapshot(state.node)
        ids = self._ids
        out: dict[str, Any] = {k: [ids[v] for v in nodes] for k, nodes in snap.items()}
        out["current"] = ids[state.node]
        out["numbers"] = {ids[v]: k for v, k in self.map.observed.items()}
        return out


SENSORS: dict[str, type] = {
    "intersection": IntersectionSensor,
    "landmarks": MapLandmarksSensor,
    "nearby": NearbyPlacesSensor,
    "online_map": OnlineMapSensor,
}
"""Sensor classes by name."""


def make_sensors(spec: Iterable[str | Sensor] | str | None) -> list[Sensor]:
    """Sensors from names (``"intersection,landmarks"`` or a list) or ready instances."""
    if spec is None:
        return []
    if isinstance(spec, str):
        spec = [s for s in spec.split(",") if s.strip()]
    out: list[Sensor] = []
    for item in spec:
        if isinstance(item, str):
            try:
                out.append(SENSORS[item.strip()]())
            except KeyError:
                raise FlaneurError(
                    f"unknown sensor {item!r}; choose from {', '.join(SENSORS)}"
                ) from None
        else:
            out.append(item)
    return out


__all__ = [
    "SENSORS",
    "VIEW_NAMES",
    "IntersectionSensor",
    "MapLandmarksSensor",
    "NearbyPlacesSensor",
    "OnlineMapSensor",
    "Sensor",
    "make_sensors",
]

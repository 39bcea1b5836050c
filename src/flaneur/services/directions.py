"""Directions: the metre-shortest route between viewpoints, split into steps.

The offline form of V-IRL's Directions service. A route is split into *steps* at turns
(a heading change of at least :data:`TURN_DEG` at a junction) and where the street name
changes; the end viewpoint of each step is a *key position* (V-IRL's term). Each step has its
distance, its duration at the mode's speed and a one-line instruction
(``"Turn left onto Mannerheimintie, 240 m"``).

Every mode routes on the walking network and differs in its speed, except where a caller
asks for car-only routes (``car_only=True``, driving only): then the route keeps to the
directed edges a car may use (:attr:`flaneur.world.city.City.edge_car`, from OpenStreetMap's
``highway``, access and ``oneway`` tags): one-way streets only their way, no footways; a
city without car access data (Touchdown, CitySeeker packs) has no car-only directions.
V-IRL's VLN route collection under ``--protocol paper`` asks for them; the planners
(Diego, Peng) time their driving legs on the walking streets, as before, because their
viewpoints often stand on sidewalks no car edge reaches.

Speeds are our own constants (bicycling and driving times are estimates)::

    walking 5 km/h (1.39 m/s), bicycling 15 km/h (4.17 m/s), driving 30 km/h (8.33 m/s,
    a city-centre average with stops)

Transit needs timetables (GTFS) and is not offered.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from flaneur.env.state import relative_angle
from flaneur.geo import bearing
from flaneur.services.errors import UnreachableError
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph

SPEEDS_KMH: dict[str, float] = {"walking": 5.0, "bicycling": 15.0, "driving": 30.0}
"""Travel speed per mode in km/h (our own constants, see the module docstring)."""
TURN_DEG = 35.0
"""A heading change of at least this many degrees at a junction starts a new step."""
MIN_STEP_M = 10.0
"""A step is not cut before it is this long (footpath crossings and kinks add no step)."""
COMPASS = ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west")


def compass(heading: float) -> str:
    """The 8-way compass word of a heading (``0`` → ``"north"``, ``100`` → ``"east"``)."""
    return COMPASS[int(((heading % 360.0) + 22.5) // 45.0) % 8]


def speed_mps(mode: str) -> float:
    """Speed of a travel mode in metres per second."""
    try:
        return SPEEDS_KMH[mode] / 3.6
    except KeyError:
        raise ValueError(f"mode must be one of {', '.join(SPEEDS_KMH)}, not {mode!r}") from None


def maneuver(turn: float) -> str:
    """Words for a signed heading change in degrees (negative = left)."""
    a = abs(turn)
    side = "left" if turn < 0 else "right"
    if a < TURN_DEG:
        return "continue"
    if a < 60:
        return f"slight {side}"
    if a < 135:
        return f"turn {side}"
    if a < 165:
        return f"sharp {side}"
    return "turn around"


@dataclass(frozen=True)
class Step:
    """One step of a route: from ``start_node`` to the key position ``end_node``.

    ``heading`` is the bearing from the start to the end of the step (the way to face).
    """

    start_node: int
    end_node: int
    nodes: tuple[int, ...]
    distance_m: float
    duration_s: float
    heading: float
    street: str
    maneuver: str
    instruction: str

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "start_node": self.start_node,
            "end_node": self.end_node,
            "distance_m": round(self.distance_m, 1),
            "duration_s": round(self.duration_s, 1),
            "heading": round(self.heading, 1),
            "street": self.street,
            "maneuver": self.maneuver,
            "instruction": self.instruction,
        }


@dataclass(frozen=True)
class Route:
    """A route: its viewpoints, steps, length and duration for one mode."""

    mode: str
    nodes: tuple[int, ...]
    steps: tuple[Step, ...] = field(default=())

    @property
    def distance_m(self) -> float:
        """Total length in metres."""
        return float(sum(s.distance_m for s in self.steps))

    @property
    def duration_s(self) -> float:
        """Total duration in seconds at the mode's speed."""
        return float(sum(s.duration_s for s in self.steps))

    @property
    def key_positions(self) -> tuple[int, ...]:
        """End viewpoint of every step."""
        return tuple(s.end_node for s in self.steps)

    def to_dict(self, city: City | None = None) -> dict:
        """JSON-ready form (node ids and positions when ``city`` is given)."""
        out: dict = {
            "mode": self.mode,
            "distance_m": round(self.distance_m, 1),
            "duration_min": round(self.duration_s / 60.0, 2),
            "steps": [s.to_dict() for s in self.steps],
            "nodes": list(self.nodes),
        }
        if city is not None:
            graph = city.graph
            out["node_ids"] = [str(graph.ids[n]) for n in self.nodes]
            out["key_positions"] = [
                {"node": n, "lat": float(graph.lat[n]), "lng": float(graph.lng[n])}
                for n in self.key_positions
            ]
        return out


def _instruction(kind: str, street: str, heading: float, metres: float) -> str:
    length = f"{metres:.0f} m"
    if kind == "depart":
        return (
            f"Head {compass(heading)} on {street}, {length}"
            if street
            else (f"Head {compass(heading)}, {length}")
        )
    if kind == "continue":
        return f"Continue onto {street}, {length}" if street else f"Continue straight, {length}"
    words = {"slight": "Bear", "sharp": "Turn sharp"}.get(kind.split()[0], "Turn")
    words = "Turn around" if kind == "turn around" else f"{words} {kind.split()[-1]}"
    return f"{words} onto {street}, {length}" if street else f"{words}, {length}"


def split_steps(city: City, nodes: Sequence[int], mode: str = "walking") -> tuple[Step, ...]:
    """Cut a walk (node indices) into steps at turns and street-name changes."""
    graph = city.graph
    speed = speed_mps(mode)
    if len(nodes) < 2:
        return ()
    edges = [graph.edge_index(a, b) for a, b in itertools.pairwise(nodes)]
    if min(edges) < 0:
        raise ValueError("nodes must be a walk along graph edges")
    names = city.edge_streets if len(city.edge_streets) else np.full(graph.n_edges, "")
    degree = graph.degree
    steps: list[Step] = []
    start = 0
    kind = "depart"
    for i in range(1, len(edges) + 1):
        if i < len(edges):
            turn = relative_angle(graph.headings[edges[i]], graph.headings[edges[i - 1]])
            junction = degree[nodes[i]] > 2
            renamed = names[edges[i]] != names[edges[i - 1]]
            if not junction or (abs(turn) < TURN_DEG and not renamed):
                continue
            if float(graph.lengths[edges[start:i]].sum()) < MIN_STEP_M:
                continue
        metres = float(graph.lengths[edges[start:i]].sum())
        street = str(names[edges[start]])
        heading = float(
            bearing(
                graph.lat[nodes[start]],
                graph.lng[nodes[start]],
                graph.lat[nodes[i]],
                graph.lng[nodes[i]],
            )
        )
        steps.append(
            Step(
                start_node=int(nodes[start]),
                end_node=int(nodes[i]),
                nodes=tuple(int(n) for n in nodes[start : i + 1]),
                distance_m=metres,
                duration_s=metres / speed,
                heading=heading,
                street=street,
                maneuver=kind,
                instruction=_instruction(kind, street, heading, metres),
            )
        )
        if i < len(edges):
            kind = maneuver(turn)
            start = i
    return tuple(steps)


def has_car_access(city: City) -> bool:
    """Whether ``city`` says which of its edges a car may drive (OpenStreetMap packs)."""
    return len(city.edge_car) == city.graph.n_edges > 0


def _driving_path(city: City, origin: int, destination: int) -> list[int]:
    """The metre-shortest walk from ``origin`` to ``destination`` over car-usable edges."""
    if not has_car_access(city):
        raise UnreachableError(
            f"no driving directions in {city.name}: its city pack has no car access data "
            "(only OpenStreetMap packs have it; use walking)"
        )
    graph, car = city.graph, city.edge_car
    kept = np.concatenate([[0], np.cumsum(car)])[graph.indptr]  # CSR rows of car edges only
    cars = StreetGraph(
        graph.ids,
        graph.lat,
        graph.lng,
        kept,
        graph.targets[car],
        graph.headings[car],
        graph.lengths[car],
        check=False,
    )
    try:
        return cars.shortest_path(int(origin), int(destination), weight="length")
    except ValueError:
        raise UnreachableError(
            f"no car route in {city.name} from node {str(graph.ids[origin])!r} to node "
            f"{str(graph.ids[destination])!r} (one-way streets, footways or no road there)"
        ) from None


def directions(
    city: City, origin: int, destination: int, *, mode: str = "walking", car_only: bool = False
) -> Route:
    """The metre-shortest route from viewpoint ``origin`` to ``destination``; with
    ``car_only`` (driving only) over the edges a car may use in their direction.

    Raises
    ------
    UnreachableError
        If the destination cannot be reached on the street graph (car-only: on its
        car-usable edges), or, car-only, when the city has no car access data.
    ValueError
        For an unknown mode, or ``car_only`` with another mode than driving.
    """
    speed_mps(mode)
    if car_only and mode != "driving":
        raise ValueError(f"car_only routes are driving routes, not {mode!r}")
    if car_only:
        nodes = _driving_path(city, int(origin), int(destination))
    else:
        try:
            nodes = city.graph.shortest_path(int(origin), int(destination), weight="length")
        except ValueError as err:
            raise UnreachableError(str(err)) from None
    return Route(mode=mode, nodes=tuple(nodes), steps=split_steps(city, nodes, mode))


def directions_via(city: City, stops: Sequence[int], *, mode: str = "walking") -> Route:
    """One route through ``stops`` in the given order (legs joined)."""
    nodes: list[int] = [int(stops[0])] if len(stops) else []
    for a, b in itertools.pairwise(stops):
        leg = directions(city, a, b, mode=mode)
        nodes.extend(leg.nodes[1:])
    return Route(mode=mode, nodes=tuple(nodes), steps=split_steps(city, nodes, mode))

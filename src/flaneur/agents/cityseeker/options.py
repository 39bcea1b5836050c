"""What the CitySeeker agent sees: its navigable headings as options A, B, C, ...

In the ``headings`` scheme slot ``k`` (1-based) is the ``k``-th street of the node in
ascending compass heading. The agent presents the streets as lettered options ordered from
the most frontal to the most backward (so option A, CitySeeker's action 0, is the street
closest to straight on), each with a coarse CitySeeker direction (``FRONT`` within 45
degrees of the heading, ``LEFT`` / ``RIGHT`` up to 135, ``BACK`` beyond) and the scheme's
finer label (``front``, ``slightly left``, ...). Under ``--protocol paper`` on a city with
walkable headings (CitySeeker's data) the options are the panorama's walkable headings
instead, in the data's order (:func:`walkable_options`), and under ``paper`` every option
carries CitySeeker's label of eight instead (:func:`paper_direction`, relative to
:func:`paper_forward`'s direction of the last move).

Without views, each option is described from the map: the named places within about 50 m in
that direction (``city.places.in_view``) and what the street leads to (the next node's number
of streets). With a view provider, one perspective view per option is attached instead;
under ``--protocol paper`` the stop prompt shows the node's panorama (:func:`render_panorama`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np
from PIL import Image
from pyproj import Geod

from flaneur.env.state import direction_label, relative_angle
from flaneur.world.city import City

COMPASS = ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west")


def coarse_label(relative: float) -> str:
    """CitySeeker's direction of a relative angle: FRONT, LEFT, RIGHT or BACK."""
    a = abs(relative)
    if a <= 45.0:
        return "FRONT"
    if a <= 135.0:
        return "RIGHT" if relative > 0 else "LEFT"
    return "BACK"


PAPER_DIRECTIONS = (
    "FRONT",
    "FRONT_LEFT",
    "LEFT",
    "BACK_LEFT",
    "BACK",
    "BACK_RIGHT",
    "RIGHT",
    "FRONT_RIGHT",
)
"""CitySeeker's eight relative directions, in the order of its ``Direction`` enum
(``utils/items.py``): bin ``k`` of :func:`paper_direction` is ``PAPER_DIRECTIONS[k]``."""


def paper_direction(forward: float, heading: float) -> str:
    """CitySeeker's relative direction of ``heading`` seen from ``forward`` (both compass
    degrees), as its ``Compass.get_relative_direction`` (``utils/operation.py``) computes it.

    The angle ``r = (heading % 360 - forward % 360 + 360) % 360`` falls in bin
    ``int((r + 22.5) // 45) % 8`` of :data:`PAPER_DIRECTIONS`: ``FRONT`` for ``r`` in
    [337.5, 360) or [0, 22.5), ``FRONT_LEFT`` for [22.5, 67.5), ``LEFT`` for [67.5, 112.5),
    ... (each bin's lower edge included). Compass angles grow clockwise, so a street 90
    degrees clockwise of the forward direction - on the right - is ``LEFT``: the released
    code's bins name the sides the other way round, and this function keeps its labels.

    Parameters
    ----------
    forward
        Direction of the last move (CitySeeker's forward azimuth).
    heading
        The option's heading.

    Returns
    -------
    str
        One of :data:`PAPER_DIRECTIONS`.
    """
    relative = (heading % 360 - forward % 360 + 360) % 360
    return PAPER_DIRECTIONS[int((relative + 22.5) // 45) % 8]


@cache
def _wgs84() -> Geod:
    return Geod(ellps="WGS84")


def step_azimuth(city: City, source: int, target: int) -> float:
    """The WGS84 geodesic azimuth from node ``source`` to node ``target`` (CitySeeker's
    ``Compass.get_step_forward_azimuth``, in (-180, 180]); NaN when a node has no
    coordinates."""
    graph = city.graph
    lat = graph.lat[[source, target]]
    lng = graph.lng[[source, target]]
    if not (np.isfinite(lat).all() and np.isfinite(lng).all()):
        return math.nan
    azimuth, _, _ = _wgs84().inv(float(lng[0]), float(lat[0]), float(lng[1]), float(lat[1]))
    return float(azimuth)


def paper_forward(
    city: City, node: int, heading: float, moves: Sequence[tuple[int, bool]]
) -> float:
    """CitySeeker's forward azimuth at ``node``: the direction its relative labels are taken
    from (``src/mllm/agent.py``, ``Compass.get_step_forward_azimuth(last_position,
    curr_position)``).

    Its ``last_position`` is where the last move *the model decided* started: after an
    ordinary move the azimuth of that move (the heading the agent faces, the street's
    azimuth), after a backtrack the azimuth from there to the node backtracked to (the
    released ``_backtrack`` moves the agent without updating ``last_position``). Before any
    decided move, ``heading`` (the start heading; CitySeeker's default azimuth is 0, north,
    where its questions start).

    Parameters
    ----------
    city, node, heading
        The city, the current node and the heading the agent faces.
    moves
        The episode's steps so far, oldest first, as ``(node it stood on, walked back)``
        (stops left out).

    Returns
    -------
    float
        Compass degrees (``heading`` where a node has no coordinates).
    """
    walked_back = False
    for source, back in reversed(moves):
        if back:
            walked_back = True
            continue
        if not walked_back:
            return heading
        azimuth = step_azimuth(city, source, node)
        return heading if math.isnan(azimuth) else azimuth
    return heading


def with_paper_directions(options: Sequence[Option], forward: float) -> list[Option]:
    """``options`` labelled with CitySeeker's eight directions (:func:`paper_direction` of
    each option's heading from ``forward``) instead of FRONT / LEFT / RIGHT / BACK."""
    return [replace(o, coarse=paper_direction(forward, o.heading)) for o in options]


def compass(heading: float) -> str:
    """The eight-point compass name of a heading."""
    return COMPASS[int(((heading % 360.0) + 22.5) // 45.0) % 8]


@dataclass(frozen=True, slots=True)
class Option:
    """One navigable heading as the model sees it.

    Attributes
    ----------
    letter
        ``"A"``, ``"B"``, ...
    slot
        The environment's action slot (1-based street index of the node).
    target
        Node index the street leads to.
    heading
        Compass heading of the street.
    relative
        Angle from the agent's heading (negative = left).
    coarse
        ``FRONT`` / ``LEFT`` / ``RIGHT`` / ``BACK`` (``paper``: one of
        :data:`PAPER_DIRECTIONS`).
    fine
        The scheme's label (``front``, ``slightly left``, ...).
    length_m
        Length of the street segment to the next node.
    """

    letter: str
    slot: int
    target: int
    heading: float
    relative: float
    coarse: str
    fine: str
    length_m: float

    @property
    def label(self) -> str:
        """``"B:LEFT"`` (what step records and the memory store)."""
        return f"{self.letter}:{self.coarse}"


def build_options(city: City, node: int, heading: float) -> list[Option]:
    """The options at ``node`` for an agent facing ``heading``, most frontal first."""
    graph = city.graph
    targets_of, headings_of = graph.adjacency
    start = int(graph.indptr[node])
    raw = []
    for k, (target, h) in enumerate(zip(targets_of[node], headings_of[node], strict=True)):
        rel = relative_angle(h, heading)
        raw.append((abs(rel), rel, k + 1, target, h, float(graph.lengths[start + k])))
    raw.sort()
    return [
        Option(
            chr(ord("A") + i), slot, target, h, rel, coarse_label(rel), direction_label(rel), length
        )
        for i, (_, rel, slot, target, h, length) in enumerate(raw)
    ]


def walkable_options(city: City, node: int, heading: float) -> list[Option] | None:
    """CitySeeker's options at ``node`` (``--protocol paper``): the node's walkable headings
    in the data's order (option A = the first), each leading along the out-edge of closest
    azimuth (:mod:`flaneur.world.walkable`: no wrap at north, no tolerance; two headings may
    lead along one edge). Each option faces its walkable heading (its view and direction
    label), not its edge's. ``None`` when the city or the node has no walkable headings
    (then :func:`build_options`' graph edges apply)."""
    walkable = city.walkable
    if walkable is None:
        return None
    edges = walkable.edges(city.graph, node)
    if not edges:
        return None
    graph = city.graph
    start = int(graph.indptr[node])
    options = []
    for i, (h, k) in enumerate(zip(walkable.of(node).tolist(), edges, strict=True)):
        rel = relative_angle(h % 360.0, heading)
        target, length = int(graph.targets[start + k]), float(graph.lengths[start + k])
        options.append(
            Option(
                chr(ord("A") + i),
                k + 1,
                target,
                h % 360.0,
                rel,
                coarse_label(rel),
                direction_label(rel),
                length,
            )
        )
    return options


def node_kind(city: City, node: int) -> str:
    """``"a dead end"``, ``"a street"`` or ``"an intersection with N streets"``."""
    degree = int(city.graph.degree[node])
    if degree <= 1:
        return "a dead end"
    if degree == 2:
        return "a street (no side streets)"
    return f"an intersection with {degree} streets"


def _place_text(city: City, row: int, dist: float, rel: float | None) -> str:
    place = city.places
    name = str(place.names[row]) or "an unnamed place"
    cats = place.categories[row]
    kind = f" ({cats[0].replace('_', ' ')})" if cats else ""
    where = f", {direction_label(rel)}" if rel is not None else ""
    return f"{name}{kind} {dist:.0f} m{where}"


def places_toward(
    city: City,
    node: int,
    heading: float,
    *,
    radius_m: float = 50.0,
    fov: float = 60.0,
    limit: int = 5,
) -> list[str]:
    """Named places within ``radius_m`` inside the ``fov`` sector of ``heading``."""
    if len(city.places) == 0:
        return []
    rows, dists, rels = city.places.in_view(
        city.graph.xy[node], heading, fov=fov, radius_m=radius_m, named_only=True
    )
    return [
        _place_text(city, int(r), float(d), None)
        for r, d, _ in zip(rows[:limit], dists[:limit], rels[:limit], strict=True)
    ]


def describe_option(city: City, node: int, option: Option, *, radius_m: float = 50.0) -> str:
    """A map description of one option (places that way, where the street leads)."""
    places = places_toward(city, node, option.heading, radius_m=radius_m)
    seen = "; places that way: " + ", ".join(places) if places else "; no named places that way"
    return f"the street leads {option.length_m:.0f} m to {node_kind(city, option.target)}{seen}"


def describe_here(
    city: City, node: int, heading: float, *, radius_m: float = 50.0, limit: int = 8
) -> str:
    """A map description of the current position (for the stop prompt without views)."""
    parts = [f"You stand at {node_kind(city, node)}, facing {compass(heading)} ({heading:.0f}°)."]
    if len(city.places):
        rows, dists = city.places_near_node(node, radius_m)
        named = [
            (int(r), float(d))
            for r, d in zip(rows, dists, strict=True)
            if city.places.names[int(r)]
        ][:limit]
        if named:
            xy = city.graph.xy[node]
            texts = []
            for r, d in named:
                dx, dy = city.places.xy[r] - xy
                rel = relative_angle(math.degrees(math.atan2(dx, dy)) % 360.0, heading)
                texts.append(_place_text(city, r, d, rel if d > 1.0 else None))
            parts.append(f"Named places within {radius_m:.0f} m: " + "; ".join(texts) + ".")
        else:
            parts.append(f"No named places within {radius_m:.0f} m.")
    return " ".join(parts)


def render_views(
    views: Any, node: int, headings: list[float], *, fov: float, size: tuple[int, int]
) -> list[Any]:
    """One PIL image per heading from the view provider."""
    return [views.view(int(node), float(h), fov=fov, size=size).image for h in headings]


PANORAMA_TILE_PX = 512
"""Height (and width of each of the four 90-degree tiles) of a stitched panorama."""


def render_panorama(views: Any, node: int, node_id: str, heading: float) -> Image.Image:
    """The 360-degree panorama of ``node``, as CitySeeker's stop prompt shows it.

    A provider with panoramas of its own (``views.panorama(node_id)``, e.g. local
    equirectangular files) gives its panorama, as CitySeeker does. Any other provider gives
    a stand-in: four 90-degree views (``PANORAMA_TILE_PX`` square) side by side, from
    ``heading - 180`` on the left to ``heading + 180`` on the right, so that the middle of the
    strip faces ``heading``.
    """
    own = getattr(views, "panorama", None)
    if callable(own):
        return own(node_id)
    side = PANORAMA_TILE_PX
    strip = Image.new("RGB", (4 * side, side))
    for k, offset in enumerate((-135.0, -45.0, 45.0, 135.0)):
        tile = views.view(int(node), (heading + offset) % 360.0, fov=90.0, size=(side, side))
        strip.paste(tile.image.convert("RGB").resize((side, side)), (k * side, 0))
    return strip


__all__ = [
    "PAPER_DIRECTIONS",
    "Option",
    "build_options",
    "coarse_label",
    "compass",
    "describe_here",
    "describe_option",
    "node_kind",
    "paper_direction",
    "paper_forward",
    "places_toward",
    "render_panorama",
    "render_views",
    "step_azimuth",
    "walkable_options",
    "with_paper_directions",
]

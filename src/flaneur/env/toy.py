"""A small built-in city for examples, tests and ``gymnasium.make("flaneur/toy-v0")``.

Nodes sit on a grid of about 22 m (rows north, columns east); every street is two-way::

                         N2
                         |
                         N1
                         |
        W2 ---- W1 ---- X4 ---- E1 ---- T3 ---- E3 ---- D        (D: dead end)
                         |               |
                         S1              Y3
                         |              /  \\
        F5W ----------- F5             YL    YR                (Y3: a Y fork)
                       / | \\
                   F5SW  |  F5SE                                (F5: 5 streets)
                         F5S

X4 is a 4-way intersection, T3 a T junction, Y3 a Y fork (a 3-way node whose two branches
leave at about ±35 degrees of straight on), F5 has five streets (north, west, south-west,
south, south-east) and D is a dead end. Places: ``Cafe Aalto`` (north-east corner of X4),
``Kirja Bookshop`` (south of T3), ``Harbour Bank`` (east of F5), ``Sea Museum`` (beside D)
and an unnamed kiosk beside E1.
"""

from __future__ import annotations

from flaneur.tasks.episode import Episode
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph
from flaneur.world.places import Places

LAT0, LNG0 = 60.0, 25.0
DLAT, DLNG = 0.0002, 0.0004  # about 22 m each way at 60 N

TOY_NODES: dict[str, tuple[float, float]] = {
    "N2": (2, 0),
    "N1": (1, 0),
    "W2": (0, -2),
    "W1": (0, -1),
    "X4": (0, 0),
    "E1": (0, 1),
    "T3": (0, 2),
    "E3": (0, 3),
    "D": (0, 4),
    "S1": (-1, 0),
    "Y3": (-1, 2),
    "YL": (-2, 1.3),
    "YR": (-2, 2.7),
    "F5": (-2, 0),
    "F5W": (-2, -1.5),
    "F5SW": (-3, -1),
    "F5S": (-3, 0),
    "F5SE": (-3, 1),
}
"""Toy node ids and their (row, column) grid positions."""

TOY_STREETS = [
    ("N2", "N1"),
    ("N1", "X4"),
    ("W2", "W1"),
    ("W1", "X4"),
    ("X4", "E1"),
    ("E1", "T3"),
    ("T3", "E3"),
    ("E3", "D"),
    ("X4", "S1"),
    ("S1", "F5"),
    ("T3", "Y3"),
    ("Y3", "YL"),
    ("Y3", "YR"),
    ("F5", "F5W"),
    ("F5", "F5SW"),
    ("F5", "F5S"),
    ("F5", "F5SE"),
]
"""Two-way streets of the toy city."""


def _at(row: float, col: float) -> tuple[float, float]:
    return LAT0 + DLAT * row, LNG0 + DLNG * col


def toy_graph() -> StreetGraph:
    """The toy street graph (headings computed from the coordinates)."""
    ids = list(TOY_NODES)
    coords = [_at(*TOY_NODES[i]) for i in ids]
    src, dst = [], []
    for a, b in TOY_STREETS:
        src += [ids.index(a), ids.index(b)]
        dst += [ids.index(b), ids.index(a)]
    return StreetGraph.from_edges(ids, [c[0] for c in coords], [c[1] for c in coords], src, dst)


def toy_city() -> City:
    """The toy city with its five places."""
    records = [
        ("cafe-aalto", "Cafe Aalto", (0.3, 0.3), ("cafe",)),
        ("kirja", "Kirja Bookshop", (-0.4, 2.2), ("bookshop",)),
        ("bank", "Harbour Bank", (-2.2, 0.4), ("bank",)),
        ("museum", "Sea Museum", (0.3, 4.2), ("museum",)),
        ("kiosk", "", (-0.2, 1.0), ("kiosk",)),
    ]
    places = Places.from_records(
        [
            {"id": pid, "name": name, "lat": _at(*rc)[0], "lng": _at(*rc)[1], "categories": cats}
            for pid, name, rc, cats in records
        ]
    )
    return City(name="toy", graph=toy_graph(), places=places, source="builtin:toy")


def toy_episodes() -> list[Episode]:
    """Five toy episodes: straight, turns, a 5-way node, a revisit and a goal-only task."""

    def ep(eid: str, text: str, path: list[str], heading: float, **kw) -> Episode:
        return Episode(
            id=eid,
            city="toy",
            instruction=text,
            start_node=path[0] if path else kw.pop("start"),
            start_heading=heading,
            goal_nodes=kw.pop("goals", (path[-1],) if path else ()),
            reference_path=tuple(path),
            max_steps=kw.pop("max_steps", 20),
            **kw,
        )

    return [
        ep(
            "toy-east",
            "Walk east past the cafe to the end of the street by the museum.",
            ["W1", "X4", "E1", "T3", "E3", "D"],
            90.0,
            category="route",
        ),
        ep(
            "toy-fork",
            "Go east, turn right at the T junction and keep left at the fork.",
            ["X4", "E1", "T3", "Y3", "YL"],
            90.0,
            category="route",
        ),
        ep(
            "toy-five",
            "Head south to the five-way junction and take the street west.",
            ["N1", "X4", "S1", "F5", "F5W"],
            180.0,
            category="route",
        ),
        ep(
            "toy-back",
            "Go north one block, turn around, come back and continue east.",
            ["X4", "N1", "X4", "E1"],
            0.0,
            category="revisit",
        ),
        ep("toy-goal", "Find the museum.", [], 270.0, start="W2", goals=("D",), category="goal"),
    ]


__all__ = ["TOY_NODES", "TOY_STREETS", "toy_city", "toy_episodes", "toy_graph"]

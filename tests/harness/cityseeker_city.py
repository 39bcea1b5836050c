"""A tiny CitySeeker city (``connections.json`` + ``questions.json``) whose walkable headings
differ from its graph edges, for the tests of walkable headings (loader, pack, agents).

::

              n2
              |
              n          c's out-edges: n 0°, e 90°, s 180°, w 270°
              |          c's walkable headings, in this order: 95, 185, 5, 350, 10
        w --- c --- e      95 -> e, 185 -> s, 5 -> n, 350 -> w (|350 - 270| = 80 beats
              |                  |350 - 0| = 350: no wrap at north), 10 -> n (shared with 5)
              s          n's out-edges: c 180°, n2 0°; its one walkable heading 170 -> c,
                         so n2 cannot be reached from n by a walkable heading

Every node's coordinates are on a question's route, so nothing is placed by the loader.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from flaneur.geo import destination

CENTRE = (31.0, 121.0)
STEP_M = 20.0
ARMS = {"n": 0.0, "e": 90.0, "s": 180.0, "w": 270.0}

WALKABLE = {
    "c": [95.0, 185.0, 5.0, 350.0, 10.0],
    "n": [170.0],
    "n2": [181.0],
    "e": [10.0, 268.0],
    "s": [2.0],
    "w": [91.0],
}
"""Each node's walkable headings, in the data's order."""

MOVES = {
    "c": ["e", "s", "n", "w", "n"],
    "n": ["c"],
    "n2": ["n"],
    "e": ["c", "c"],
    "s": ["c"],
    "w": ["c"],
}
"""Where each walkable heading of :data:`WALKABLE` leads (closest azimuth, no wrap)."""


def coordinates() -> dict[str, tuple[float, float]]:
    """``{node: (lat, lng)}``."""
    coords = {"c": CENTRE}
    for name, heading in ARMS.items():
        lat, lng = destination(*CENTRE, heading, STEP_M)
        coords[name] = (float(lat), float(lng))
    lat, lng = destination(*coords["n"], 0.0, STEP_M)
    coords["n2"] = (float(lat), float(lng))
    return coords


def _edge(start: str, end: str, azimuth: float) -> dict:
    mercator = STEP_M / np.cos(np.radians(CENTRE[0]))
    return {
        "start_filename": start,
        "start_walkable_headings": WALKABLE[start],
        "end_filename": end,
        "end_walkable_headings": WALKABLE[end],
        "edge_azimuth": azimuth,
        "edge_distance": float(mercator),
    }


def _question(idx: int, names: list[str], coords: dict) -> dict:
    route = [{"filename": n, "latitude": coords[n][0], "longitude": coords[n][1]} for n in names]
    return {
        "folder": "bank",
        "question_idx": idx,
        "question": "Please find a bank.",
        "from": names[0],
        "to": names[-1],
        "complete_route": route,
        "category": "question1",
    }


def write_walkable_city(folder: Path) -> Path:
    """Write the city into ``folder`` (created); its questions start at ``c`` (to ``n2``, to
    ``e``) and at ``n`` (to ``w``)."""
    folder.mkdir(parents=True, exist_ok=True)
    edges = []
    for name, heading in ARMS.items():
        edges += [_edge("c", name, heading), _edge(name, "c", (heading + 180.0) % 360.0)]
    edges += [_edge("n", "n2", 0.0), _edge("n2", "n", 180.0)]
    coords = coordinates()
    questions = [
        _question(0, ["c", "n", "n2"], coords),
        _question(1, ["c", "e"], coords),
        _question(2, ["n", "c", "w"], coords),
        _question(3, ["c", "s"], coords),
    ]
    (folder / "connections.json").write_text(json.dumps(edges, indent=1), encoding="utf-8")
    (folder / "questions.json").write_text(json.dumps(questions, indent=1), encoding="utf-8")
    return folder

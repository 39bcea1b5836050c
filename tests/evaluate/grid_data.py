"""A data directory in the Touchdown / map2seq release layout on a small street grid.

Tests that need a long offline run through the installed ``flaneur`` command (interrupts,
kills, resume) write one with :func:`write_grid_data` and run the registered task set
``map2seq-unseen-dev-v1`` on it: every route is a walk along the grid's links.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SPACING_DEG = 0.0001  # about 8-11 m between viewpoints


def _pano(row: int, col: int) -> str:
    return f"g{row:02d}x{col:02d}"


def write_grid_data(root: Path, *, size: int = 12, routes: int = 600, seed: int = 0) -> Path:
    """Write ``touchdown/graph``, ``map2seq/unseen`` (``routes`` rows) and ``map2seq/seen``.

    The graph is a ``size`` x ``size`` grid of two-way streets (headings 0/90/180/270).
    Routes are seeded random walks of 6-30 viewpoints that never step straight back.
    """
    graph = root / "touchdown" / "graph"
    graph.mkdir(parents=True)
    nodes, links = [], []
    for r in range(size):
        for c in range(size):
            nodes.append(f"{_pano(r, c)},0,{40.75 + r * SPACING_DEG},{-73.99 + c * SPACING_DEG}\n")
            for dr, dc, heading in ((1, 0, 0), (-1, 0, 180), (0, 1, 90), (0, -1, 270)):
                if 0 <= r + dr < size and 0 <= c + dc < size:
                    links.append(f"{_pano(r, c)},{heading},{_pano(r + dr, c + dc)}\n")
    (graph / "nodes.txt").write_text("".join(nodes), encoding="utf-8")
    (graph / "links.txt").write_text("".join(links), encoding="utf-8")
    lat1, lng1 = 40.75 + size * SPACING_DEG, -73.99 + size * SPACING_DEG
    unseen = root / "map2seq" / "unseen"
    unseen.mkdir(parents=True)
    (unseen / "bbox.txt").write_text(
        f"bounding_box = [[-73.9901, 40.7499], [{lng1}, 40.7499], [{lng1}, {lat1}], "
        f"[-73.9901, {lat1}]]\n",
        encoding="utf-8",
    )
    rng = random.Random(seed)
    rows = []
    for i in range(routes):
        r, c = rng.randrange(size), rng.randrange(size)
        path, back = [(r, c)], None
        for _ in range(rng.randint(5, 29)):
            moves = [
                (dr, dc)
                for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if 0 <= r + dr < size and 0 <= c + dc < size and (dr, dc) != back
            ]
            dr, dc = rng.choice(moves)
            r, c, back = r + dr, c + dc, (-dr, -dc)
            path.append((r, c))
        rows.append(
            {
                "id": i,
                "route_panoids": [_pano(*p) for p in path],
                "navigation_text": f"Walk route {i} and stop.",
                "start_heading": rng.choice([0, 90, 180, 270]),
            }
        )
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    (unseen / "dev.json").write_text(lines, encoding="utf-8")
    seen = root / "map2seq" / "seen"
    seen.mkdir(parents=True)
    (seen / "dev.json").write_text(lines.split("\n", 1)[0] + "\n", encoding="utf-8")
    return root

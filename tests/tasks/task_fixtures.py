"""Tiny dataset files in the Touchdown, map2seq and CitySeeker layouts, written by the tests."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

# four viewpoints on a west-east street, about 8.4 m apart, two-way
PANOS = [
    ("p0", 40.7500, -73.9900),
    ("p1", 40.7500, -73.9899),
    ("p2", 40.7500, -73.9898),
    ("p3", 40.7500, -73.9897),
]
FILES = [
    ("00000001.jpg", 31.2000, 121.5000),
    ("00000002.jpg", 31.2001, 121.5000),
    ("00000003.jpg", 31.2002, 121.5000),
    ("00000004.jpg", 31.2003, 121.5000),
]


def vln_row(row_id, route, key="id", heading=90, text="Go east and stop."):
    return {
        key: row_id,
        "route_panoids": list(route),
        "navigation_text": text,
        "start_heading": heading,
    }


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def route(*names):
    coords = {name: (lat, lng) for name, lat, lng in FILES}
    return [{"filename": n, "latitude": coords[n][0], "longitude": coords[n][1]} for n in names]


def question(idx, category, folder, names, text=None, **extra):
    row = {
        "folder": folder,
        "question_idx": idx,
        "question": text or f"Please find {folder}.",
        "idx": 0,
        "from": names[0],
        "to": names[-1],
        "total_weight": 10.0 * len(names),
        "total_steps": len(names) - 1,
        "complete_route": route(*names),
        "difficulty": "easy",
        "category": category,
        "city": "tinycity",
    }
    row.update(extra)
    return row


def questions() -> list[dict]:
    a, b, c, d = (f for f, _, _ in FILES)
    ordered = question(
        2,
        "question2",
        "bank and clinic",
        [a, b, c, d],
        text="Please find the nearest bank and clinic in order.",
        stage1_route={"from": a, "to": b, "service": "bank", "route": route(a, b)},
        stage2_route={"from": b, "to": d, "service": "clinic", "route": route(b, c, d)},
    )
    return [
        question(0, "question1", "convenience store", [a, b, c]),
        question(1, "question4", "KFC or McDonald's", [b, c]),
        ordered,
        question(3, "question7", "I am thirsty", [d, c], text="I'm thirsty."),
    ]


def write_questions(path: Path, rows=None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(questions() if rows is None else rows, indent=4), encoding="utf-8")
    return path


def write_data_dir(root: Path) -> Path:
    """A data directory with every file the built-in task sets read."""
    graph = root / "touchdown" / "graph"
    graph.mkdir(parents=True)
    (graph / "nodes.txt").write_text(
        "".join(f"{n},0,{lat},{lng}\n" for n, lat, lng in PANOS), encoding="utf-8"
    )
    links = []
    for (a, *_), (b, *_) in itertools.pairwise(PANOS):
        links += [f"{a},90,{b}\n", f"{b},270,{a}\n"]
    (graph / "links.txt").write_text("".join(links), encoding="utf-8")
    bbox = root / "map2seq" / "unseen" / "bbox.txt"
    bbox.parent.mkdir(parents=True)
    bbox.write_text(
        "bounding_box = [[-73.98985, 40.7499], [-73.9896, 40.7499], [-73.9896, 40.7501], "
        "[-73.98985, 40.7501]]\n",
        encoding="utf-8",
    )
    write_jsonl(
        root / "map2seq/unseen/dev.json",
        [vln_row(1, ["p1", "p2", "p3"]), vln_row(2, ["p3", "p2"], heading=270)],
    )
    write_jsonl(root / "map2seq/seen/dev.json", [vln_row(5, ["p0", "p1"])])
    write_jsonl(
        root / "touchdown/unseen/dev.json", [vln_row(7, ["p2", "p3"], key="route_id", heading=45.5)]
    )
    seeker = root / "cityseeker" / "shanghai2"
    write_questions(seeker / "questions.json")
    edges = []
    for (a, *_), (b, *_) in itertools.pairwise(FILES):
        for s, t, az in ((a, b, 0.0), (b, a, 180.0)):
            edges.append(
                {
                    "start_filename": s,
                    "end_filename": t,
                    "edge_azimuth": az,
                    "edge_distance": 13.0,
                    "start_walkable_headings": [0.0, 180.0],
                }
            )
    (seeker / "connections.json").write_text(json.dumps(edges), encoding="utf-8")
    return root

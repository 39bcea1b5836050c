"""Annotation of a route drawn on the map: snapped ends, shortest walk, a runnable task file."""

from __future__ import annotations

import pytest

from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import read_rows
from flaneur.tasks.episode import read_episodes
from flaneur.web.annotate import drawn_episode, snap
from harness.web_client import local_client

TASK = "helsinki-needs-v1"
CONTEXT = "helsinki-needs-v1-0003"


def test_a_drawn_helsinki_route_is_a_task_file_flaneur_run_takes(tmp_path, capsys):
    from flaneur.cli import main
    from flaneur.tasks.registry import load_task
    from flaneur.web import create_app

    city, _ = load_task(TASK)
    graph = city.graph
    with local_client(create_app([tmp_path])) as client:
        area = client.get("/api/draw", params={"task": TASK, "id": CONTEXT}).json()
        assert area["steps"] == [] and area["map"]["segments"]
        ids = list(area["map"]["nodes"])
        a, b = ids[0], ids[-1]
        (ax, ay), (bx, by) = area["map"]["nodes"][a], area["map"]["nodes"][b]
        points = {"from": f"{ax + 0.4},{ay - 0.3}", "to": f"{bx},{by + 0.2}"}
        route = client.get("/api/draw", params={"task": TASK, "id": CONTEXT, **points}).json()
        assert (route["start"], route["end"]) == (a, b)  # snapped to the nearest viewpoints
        shortest = graph.shortest_path(graph.index(a), graph.index(b), weight="length")
        assert [s["node"] for s in route["steps"]] == [str(graph.ids[n]) for n in shortest]
        assert route["goals"] == [b] and route["directions"] and route["distance_m"] > 0
        assert route["map"]["nodes"][b] == [bx, by]
        body = {"task": TASK, "from": a, "to": b, "instruction": "Walk to the end.", "file": "d"}
        saved = client.post("/api/annotate", json=body).json()
        assert saved["episode_id"] == f"drawn-{a}-{b}-1" and saved["file"] == "d.jsonl"
        for bad, says in [
            ({"from": points["from"], "to": points["from"]}, "same viewpoint"),
            ({"from": "1e7,1e7", "to": points["to"]}, "more than 150 m"),
            ({"from": "east", "to": points["to"]}, "x,y in metres"),
        ]:
            answer = client.get("/api/draw", params={"task": TASK, "id": CONTEXT, **bad})
            assert answer.status_code == 400 and says in answer.json()["error"]
        wrong = client.post("/api/annotate", json={**body, "to": "no-such-node"})
        assert wrong.status_code == 404
    (episode,) = read_episodes(tmp_path / "annotations" / "d.jsonl")
    assert episode.category == "drawn" and episode.goal_nodes == (b,)
    assert episode.metadata["drawn"] is True and "source_episode" not in episode.metadata
    main(
        [
            "run",
            "--tasks",
            str(tmp_path / saved["path"]),
            "--agent",
            "oracle",
            "--out",
            str(tmp_path / "run"),
            "--progress",
            "none",
            "--json",
        ]
    )
    capsys.readouterr()
    (row,) = read_rows(tmp_path / "run" / "episodes.jsonl")[0]
    assert row["scheme"] == "turns" and row["metrics"]["tc"] is True
    assert row["path"] == [str(graph.ids[n]) for n in shortest]


def test_snap_and_drawn_episode_on_the_toy_city(toy_task):
    city, episodes = toy_task
    graph = city.graph
    node = episodes[0].reference_path[-1]
    x, y = graph.xy[graph.index(node)]
    assert snap(city, (x + 3.0, y - 2.0)) == node
    with pytest.raises(FlaneurError, match="two numbers"):
        snap(city, (float("nan"), 0.0))
    start = episodes[0].start_node
    episode, steps = drawn_episode(city, start, node)
    assert episode.reference_path[0] == start and episode.reference_path[-1] == node
    first, second = graph.index(start), graph.index(episode.reference_path[1])
    k = list(graph.neighbors(first)).index(second)
    assert episode.start_heading == pytest.approx(graph.out_headings(first)[k] % 360.0, abs=0.01)
    assert steps and episode.max_steps >= 55
    with pytest.raises(FlaneurError, match="same viewpoint"):
        drawn_episode(city, start, start)

"""The replay map's JSON: scale bar, street names, start and goals; full-size views."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

from flaneur.env.toy import toy_city, toy_episodes
from flaneur.evaluate.runlog import read_rows
from flaneur.web.replay import replay_data
from flaneur.web.world import (
    SCALE_STEPS_M,
    VIEW_SIZE,
    scale_bar_m,
    street_labels,
    street_map,
    view_size,
)
from harness.named_toy import HARBOUR, MARKET, named_toy_city

TASK = "web-toy-v1"


@pytest.mark.parametrize(
    ("span", "bar"),
    [(611.6, 100), (2000.0, 500), (4000.0, 1000), (240.0, 50), (1000.0, 200), (30.0, 5), (1.0, 1)],
)
def test_the_scale_bar_is_a_round_length_of_about_a_fifth_of_the_map(span, bar):
    assert scale_bar_m(span) == bar
    assert bar in SCALE_STEPS_M and (bar <= span / 4 or bar == 1)


def test_a_map_carries_its_scale_bar_and_no_names_for_a_city_without_them():
    city = toy_city()
    assert len(city.edge_streets) == 0
    shown = street_map(city, ["X4", "D"])
    x0, y0, x1, y1 = shown["bounds"]
    span = max(x1 - x0, y1 - y0)
    assert shown["scale_m"] in SCALE_STEPS_M and span / 10 <= shown["scale_m"] <= span / 4
    assert shown["streets"] == []
    empty = street_map(city, ["nowhere"])
    assert empty["scale_m"] == 0 and empty["streets"] == [] and empty["segments"] == []


def test_street_names_follow_each_street_west_to_east_and_north_to_south():
    city = named_toy_city()
    graph = city.graph
    shown = street_map(city, ["X4"])
    labels = {s["name"]: s for s in shown["streets"]}
    assert set(labels) == {"Harbour Street", "Market Street"}
    harbour = labels["Harbour Street"]
    expected = [graph.xy[graph.index(n)].round(1).tolist() for n in HARBOUR]
    assert harbour["points"] == expected  # west to east: text along it reads left to right
    assert harbour["length_m"] == pytest.approx(graph.path_length_m(graph.indices(HARBOUR)), 0.01)
    market = np.asarray(labels["Market Street"]["points"])
    assert len(market) == len(MARKET) and np.ptp(market[:, 0]) < 1.0  # one straight stretch
    assert [s["name"] for s in shown["streets"]] == ["Harbour Street", "Market Street"]  # longest


def test_a_forked_street_is_labelled_along_its_longest_unbranched_stretch():
    fork = {(a, b): "Fork Lane" for a, b in (("T3", "Y3"), ("Y3", "YL"), ("Y3", "YR"))}
    city = named_toy_city({**fork, **{(b, a): n for (a, b), n in fork.items()}})
    graph = city.graph
    (lane,) = [s for s in street_map(city, ["Y3"])["streets"] if s["name"] == "Fork Lane"]
    nodes = [graph.ids[graph.nodes_within_xy(p, 0.2)[0]] for p in lane["points"]]
    assert len(nodes) == 2 and "Y3" in nodes  # Y3 is a fork of the lane: its stretches end there
    assert street_labels(city, np.zeros(graph.n_nodes, dtype=bool)) == []  # nothing on the map
    assert len(street_labels(city, graph.located, limit=1)) == 1


def test_replay_json_names_the_start_and_goals_and_puts_them_on_the_map(client, served):
    rows, _ = read_rows(served / "agents" / "episodes.jsonl")
    row = next(r for r in rows if r["agent"] == "forward" and r["episode_id"] == "toy-fork-0")
    data = client.get(
        "/api/runs/agents/episode", params={"task": TASK, "agent": "forward", "id": "toy-fork-0"}
    ).json()
    episode = next(e for e in toy_episodes() if e.id == "toy-fork")
    assert data["start"] == episode.start_node == "X4" and data["goals"] == list(episode.goal_nodes)
    assert {data["start"], *data["goals"], *data["path"]} <= set(data["map"]["nodes"])
    assert data["map"]["scale_m"] in SCALE_STEPS_M and data["map"]["streets"] == []
    named = replay_data(row, named_toy_city(), episode)  # the same row in a city with names
    assert {"Harbour Street", "Market Street"} <= {s["name"] for s in named["map"]["streets"]}
    json.dumps(named)  # plain JSON


def test_a_goal_only_row_without_an_episode_starts_where_its_trajectory_does(served):
    rows, _ = read_rows(served / "agents" / "episodes.jsonl")
    row = next(r for r in rows if r["agent"] == "oracle")
    data = replay_data(row, toy_city(), None)
    assert data["start"] == row["trajectory"][0][0] and data["goals"] == []
    assert data["start"] in data["map"]["nodes"]


def test_views_come_at_a_bounded_width_on_request(client):
    def size(response):
        return Image.open(io.BytesIO(response.content)).size

    params = {"task": TASK, "node": "X4", "heading": "90"}
    assert size(client.get("/api/view", params=params)) == VIEW_SIZE
    assert size(client.get("/api/view", params={**params, "width": "960"})) == (960, 640)
    assert size(client.get("/api/view", params={**params, "width": "1280"})) == (1280, 853)
    for width in ("abc", "1e3", "960.0", "nan", "-1", "63", "1281", "9" * 40, "٩٦٠", "0x3c0"):
        answer = client.get("/api/view", params={**params, "width": width})
        assert answer.status_code == 400, width
        assert answer.json() == {"error": "width must be a whole number of pixels from 64 to 1280"}
        assert "\n" not in answer.text
    assert view_size(None) == view_size("") == VIEW_SIZE and view_size(" 64 ") == (64, 42)

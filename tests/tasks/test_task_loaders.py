"""Touchdown / map2seq / CitySeeker loaders on tiny files the tests write."""

from __future__ import annotations

import json

import pytest
from task_fixtures import FILES, question, questions, vln_row, write_jsonl, write_questions

from flaneur.errors import DataError
from flaneur.geo import bearing
from flaneur.tasks import (
    Episode,
    check_episodes,
    load_cityseeker_questions,
    load_vln_jsonl,
    read_episodes,
    write_episodes,
)
from flaneur.tasks.cityseeker_questions import CITYSEEKER_CATEGORY_TABLE, with_start_heading
from flaneur.tasks.loaders import iter_json_array, vln_max_steps
from flaneur.world import StreetGraph


def test_map2seq_rows(tmp_path):
    path = write_jsonl(tmp_path / "dev.json", [vln_row(6918, ["a", "b", "c"], heading=382)])
    (episode,) = load_vln_jsonl(path, category="map2seq-unseen")
    assert episode.id == "6918" and episode.city == "manhattan"
    assert episode.start_node == "a" and episode.goal_nodes == ("c",)
    assert episode.reference_path == ("a", "b", "c")
    assert episode.start_heading == 22.0 and episode.instruction == "Go east and stop."
    assert episode.category == "map2seq-unseen" and episode.max_steps == 55
    assert episode.metadata["source_line"] == 1 and episode.metadata["id"] == 6918
    assert episode.metadata["dataset"] == "map2seq"


def test_touchdown_rows_use_route_id_and_long_routes_get_more_steps(tmp_path):
    route = [f"n{k}" for k in range(40)]
    row = vln_row(4754, route, key="route_id", heading=0.0) | {"end_heading": 111.7}
    path = write_jsonl(tmp_path / "dev.json", [row])
    (episode,) = load_vln_jsonl(path, category="touchdown-unseen", id_field="route_id")
    assert episode.id == "4754" and episode.metadata["end_heading"] == 111.7
    assert episode.metadata["dataset"] == "touchdown"
    assert episode.max_steps == vln_max_steps(40) == 90


def test_broken_row_names_file_and_line(tmp_path):
    path = write_jsonl(tmp_path / "dev.json", [vln_row(1, ["a", "b"]), '{"id": 2, "route_'])
    with pytest.raises(DataError) as err:
        load_vln_jsonl(path, category="x")
    assert err.value.path == path and err.value.line == 2
    assert f"{path}, line 2" in str(err.value) and "invalid JSON" in str(err.value)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": 1, "route_panoids": ["a"], "start_heading": 0}, "missing field 'navigation_text'"),
        (vln_row(1, []), "'route_panoids' must be a non-empty list"),
        (vln_row(1, ["a"], heading="north"), "'start_heading' must be a number"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_malformed_fields(tmp_path, row, message):
    path = write_jsonl(tmp_path / "dev.json", [vln_row(9, ["a"]), row])
    with pytest.raises(DataError, match=message) as err:
        load_vln_jsonl(path, category="x")
    assert err.value.line == 2


def test_duplicate_ids_and_missing_file(tmp_path):
    path = write_jsonl(tmp_path / "dev.json", [vln_row(1, ["a"]), vln_row(1, ["b"])])
    with pytest.raises(DataError, match="repeats the row on line 1") as err:
        load_vln_jsonl(path, category="x")
    assert err.value.line == 2
    with pytest.raises(DataError, match="not found"):
        load_vln_jsonl(tmp_path / "nope.json", category="x")


def test_check_episodes_names_unknown_nodes(tmp_path):
    graph = StreetGraph.from_edges(["a", "b"], [0, 0], [0, 0.0001], [0, 1], [1, 0])
    path = write_jsonl(tmp_path / "dev.json", [vln_row(1, ["a", "b"]), vln_row(2, ["a", "zz"])])
    episodes = load_vln_jsonl(path, category="x")
    check_episodes(episodes[:1], graph)
    with pytest.raises(DataError) as err:
        check_episodes(episodes, graph)
    assert "1 node id(s)" in str(err.value) and "'zz' (episode '2', goal_nodes)" in str(err.value)
    many = [
        Episode(id=str(k), city="c", instruction="", start_node=f"u{k}", start_heading=0)
        for k in range(8)
    ]
    with pytest.raises(DataError, match=r"8 node id\(s\).*and 3 more"):
        check_episodes(many, graph)


def test_cityseeker_questions(tmp_path):
    path = write_questions(tmp_path / "tinycity" / "questions.json")
    basic, brand, ordered, need = load_cityseeker_questions(path)
    assert [e.id for e in (basic, brand, ordered, need)] == [f"tinycity-{k}" for k in range(4)]
    assert basic.goal_categories == ("convenience_store",) and basic.max_steps == 35
    assert basic.reference_path == tuple(f for f, _, _ in FILES[:3])
    assert basic.metadata["category_name"] == "basic POI" and basic.category == "question1"
    assert basic.metadata["difficulty"] == "easy" and basic.metadata["total_steps"] == 2
    (_, la1, ln1), (_, la2, ln2) = FILES[:2]
    assert basic.start_heading == 0.0  # CitySeeker's agents start facing north
    assert basic.metadata["route_heading"] == pytest.approx(bearing(la1, ln1, la2, ln2))
    assert basic.metadata["success_metric"] == "tcp" and basic.metadata["place_type"] == (
        "convenience store"
    )
    assert brand.goal_categories == () and brand.metadata["brand"] == "KFC or McDonald's"
    assert brand.metadata["brands"] == ["KFC", "McDonald's"]
    assert need.goal_categories == () and need.metadata["need"] == "I am thirsty"
    assert need.metadata["category_name"] == "abstract need"


def test_cityseeker_ordered_goals_keep_their_order(tmp_path):
    path = write_questions(tmp_path / "q.json")
    ordered = load_cityseeker_questions(path, city="sh")[2]
    assert ordered.id == "sh-2" and ordered.city == "sh"
    assert ordered.goal_nodes == ("00000002.jpg", "00000004.jpg")  # stage1 'to', then 'to'
    assert ordered.goal_categories == ("bank", "clinic")
    assert ordered.metadata["ordered"] is True
    assert ordered.metadata["targets"] == ["bank", "clinic"]
    assert ordered.goal_node == "00000004.jpg"


def test_cityseeker_heading_from_graph(tmp_path):
    path = write_questions(tmp_path / "q.json")
    ids = [f for f, _, _ in FILES]
    graph = StreetGraph.from_edges(
        ids,
        [x[1] for x in FILES],
        [x[2] for x in FILES],
        [0, 1, 2],
        [1, 2, 3],
        headings=[7.0, 8.0, 9.0],
    )
    basic = load_cityseeker_questions(path, graph=graph, start_heading="route")[0]
    assert basic.start_heading == 7.0
    north = load_cityseeker_questions(path, graph=graph)[0]
    assert north.start_heading == 0.0 and north.metadata["route_heading"] == 7.0
    assert with_start_heading([north], "route")[0].start_heading == 7.0
    assert with_start_heading([basic], "north")[0].start_heading == 0.0
    with pytest.raises(ValueError, match="start_heading must be one of north, route"):
        load_cityseeker_questions(path, start_heading="south")


def test_cityseeker_question_json_name_is_accepted(tmp_path):
    """CitySeeker's repository names the file question.json; flaneur's data questions.json."""
    write_questions(tmp_path / "city" / "question.json")
    for asked in ("questions.json", "question.json", ""):
        episodes = load_cityseeker_questions(
            tmp_path / "city" / asked if asked else tmp_path / "city"
        )
        assert len(episodes) == 4 and episodes[0].metadata["source_file"] == "question.json"
    with pytest.raises(DataError, match=r"questions\.json or question\.json"):
        load_cityseeker_questions(tmp_path / "nowhere" / "questions.json")


@pytest.mark.parametrize(
    ("code", "folder", "name", "place", "categories", "attribute"),
    [
        (
            "question8",
            "bank with an accessible entrance",
            "inclusive infrastructure",
            "bank",
            ("bank",),
            "with an accessible entrance",
        ),
        (
            "question8",
            "office building with an accessible entrance",
            "inclusive infrastructure",
            "office building",
            (),
            "with an accessible entrance",
        ),
        (
            "question9",
            "romantic restaurant",
            "semantic preference",
            "restaurant",
            ("restaurant",),
            "romantic",
        ),
        (
            "question9",
            "group or family-friendly restaurant",
            "semantic preference",
            "restaurant",
            ("restaurant",),
            "group or family-friendly",
        ),
        (
            "question9",
            "restaurant with outdoor seating",
            "semantic preference",
            "restaurant",
            ("restaurant",),
            "with outdoor seating",
        ),
        (
            "question1",
            "primary and secondary school",
            "basic POI",
            "primary and secondary school",
            (),
            None,
        ),
    ],
)
def test_cityseeker_categories_name_targets_without_brands(
    tmp_path, code, folder, name, place, categories, attribute
):
    a, b = (f for f, _, _ in FILES[:2])
    rows = [question(0, code, folder, [a, b])]
    (episode,) = load_cityseeker_questions(write_questions(tmp_path / "q.json", rows))
    assert episode.metadata["category_name"] == name and episode.category == code
    assert episode.metadata["place_type"] == place
    assert episode.metadata.get("attribute") == attribute
    assert episode.goal_categories == categories
    assert "brand" not in episode.metadata and "brands" not in episode.metadata
    assert episode.metadata["success_metric"] == "tcp"


def test_every_public_cityseeker_category_has_a_name_and_metric():
    codes = {f"question{k}" for k in (1, 2, 4, 5, 6, 7, 8, 9)}
    assert set(CITYSEEKER_CATEGORY_TABLE) == codes
    assert all(c.name and c.success_metric == "tcp" for c in CITYSEEKER_CATEGORY_TABLE.values())


def test_cityseeker_broken_question_names_line(tmp_path):
    rows = questions()
    del rows[1]["from"]
    path = write_questions(tmp_path / "q.json", rows)
    text = path.read_text()
    expected_line = text.count("\n", 0, text.index('"folder": "KFC'))  # the line of its '{'
    with pytest.raises(DataError, match="missing field 'from'") as err:
        load_cityseeker_questions(path)
    assert err.value.path == path and err.value.line == expected_line
    rows = questions()
    rows[2]["stage1_route"]["to"] = "elsewhere.jpg"
    with pytest.raises(DataError, match=r"stage1_route\.to"):
        load_cityseeker_questions(write_questions(tmp_path / "q2.json", rows))
    (tmp_path / "bad.json").write_text('[\n {"b": \n]')
    with pytest.raises(DataError, match="invalid JSON") as err:
        load_cityseeker_questions(tmp_path / "bad.json")
    assert err.value.line == 3


def test_iter_json_array_lines():
    text = '[\n  {"a": 1},\n  {"b": 2}\n]'
    assert list(iter_json_array(text)) == [({"a": 1}, 2), ({"b": 2}, 3)]
    assert list(iter_json_array(" [ ] ")) == []
    with pytest.raises(json.JSONDecodeError):
        list(iter_json_array('{"a": 1}'))


def test_loaded_episodes_round_trip(tmp_path):
    episodes = load_cityseeker_questions(write_questions(tmp_path / "q.json"))
    out = write_episodes(episodes, tmp_path / "eps.jsonl")
    assert read_episodes(out) == episodes
    assert load_cityseeker_questions(tmp_path / "q.json") == episodes  # deterministic

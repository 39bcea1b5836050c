"""Task registry, city cache and the ``flaneur tasks`` commands on a tiny data directory."""

from __future__ import annotations

import json

import pytest
from task_fixtures import vln_row, write_jsonl
from typer.testing import CliRunner

from flaneur.cli import app
from flaneur.errors import DataError, FlaneurError
from flaneur.tasks import (
    Episode,
    TaskSpec,
    get_task,
    list_tasks,
    load_task,
    register_task,
    registry,
    resolve_data_dir,
    write_episodes,
)
from flaneur.world import City, StreetGraph
from flaneur.world import packs as city_packs

BUILTIN = [
    "cityseeker-shanghai2-v1",
    "map2seq-seen-dev-v1",
    "map2seq-unseen-dev-v1",
    "touchdown-unseen-dev-v1",
]


def test_builtin_ids():
    ids = [spec.id for spec in list_tasks()]
    assert set(BUILTIN) <= set(ids) and ids == sorted(ids)
    assert get_task("map2seq-unseen-dev-v1").city == "touchdown-manhattan"
    with pytest.raises(FlaneurError, match=r"unknown task 'nope'.*map2seq-seen-dev-v1"):
        get_task("nope")


def test_load_map2seq_and_touchdown(data_dir):
    city, episodes = load_task("map2seq-unseen-dev-v1", data_dir)
    assert city.name == "manhattan" and city.graph.n_nodes == 4
    assert [e.id for e in episodes] == ["1", "2"]
    assert {e.category for e in episodes} == {"map2seq-unseen"}
    assert city.node_sets["unseen"].tolist() == [False, False, True, True]
    city2, (td,) = load_task("touchdown-unseen-dev-v1", data_dir)
    assert city2 is city  # same city, memoised in-process
    assert td.id == "7" and td.start_heading == 45.5 and td.category == "touchdown-unseen"


def test_city_pack_is_cached(data_dir, tmp_path, monkeypatch):
    load_task("map2seq-seen-dev-v1", data_dir)
    packs = list((tmp_path / "cache" / "cities").glob("touchdown-manhattan-*"))
    assert len(packs) == 1 and (packs[0] / "city.json").is_file()
    city_packs.forget()

    def fail(_):
        raise AssertionError("the city should come from the pack")

    source = registry.CITY_SOURCES["touchdown-manhattan"]
    monkeypatch.setitem(
        registry.CITY_SOURCES,
        "touchdown-manhattan",
        registry.CitySource(source.key, source.files, fail),
    )
    city, _ = load_task("map2seq-seen-dev-v1", data_dir)
    assert city.graph.n_nodes == 4


def test_load_cityseeker(data_dir):
    city, episodes = load_task("cityseeker-shanghai2-v1", data_dir)
    assert city.name == "shanghai2" and len(episodes) == 4
    assert episodes[0].id == "shanghai2-0" and episodes[0].city == "shanghai2"
    assert episodes[0].start_heading == 0.0  # facing north, as CitySeeker's agents start
    assert episodes[1].metadata["route_heading"] == pytest.approx(0.0)  # the edge's azimuth
    assert episodes[2].metadata["ordered"] is True


def test_load_cityseeker_from_question_json(data_dir):
    """A city folder as CitySeeker's repository names it (question.json) loads the same."""
    folder = data_dir / "cityseeker" / "shanghai2"
    (folder / "questions.json").rename(folder / "question.json")
    city, episodes = load_task("cityseeker-shanghai2-v1", data_dir)
    assert len(episodes) == 4 and episodes[0].metadata["source_file"] == "question.json"
    assert episodes[0].start_node in city.graph


def test_data_dir_errors(data_dir, tmp_path, monkeypatch):
    with pytest.raises(FlaneurError, match="FLANEUR_DATA"):
        resolve_data_dir(None, task="map2seq-seen-dev-v1")
    monkeypatch.setenv("FLANEUR_DATA", str(data_dir))
    assert resolve_data_dir(None) == data_dir
    city, _ = load_task("map2seq-seen-dev-v1")
    assert city.name == "manhattan"
    (data_dir / "touchdown" / "unseen" / "dev.json").unlink()
    with pytest.raises(DataError) as err:
        load_task("touchdown-unseen-dev-v1")
    assert "touchdown-unseen-dev-v1" in str(err.value)
    assert str(data_dir / "touchdown" / "unseen" / "dev.json") in str(err.value)
    with pytest.raises(DataError, match="does not exist"):
        resolve_data_dir(tmp_path / "nowhere", task="x")


def test_unknown_node_in_task_file(data_dir):
    write_jsonl(data_dir / "map2seq/seen/dev.json", [vln_row(5, ["p0", "ghost"])])
    with pytest.raises(DataError, match="'ghost' \\(episode '5', goal_nodes\\)"):
        load_task("map2seq-seen-dev-v1", data_dir)


def test_register_generated_task(tmp_path, monkeypatch):
    graph = StreetGraph.from_edges(["a", "b"], [0, 0], [0, 0.0001], [0, 1], [1, 0])
    city = City(name="tiny", graph=graph)
    episode = Episode(
        id="g1", city="tiny", instruction="go", start_node="a", start_heading=0, goal_nodes=("b",)
    )
    seen = []

    def build(folder):
        seen.append(folder)
        return city, [episode]

    spec = TaskSpec(id="tiny-gen-v1", description="generated", build=build)
    try:
        register_task(spec)
        with pytest.raises(FlaneurError, match="already registered"):
            register_task(spec)
        assert load_task("tiny-gen-v1") == (city, [episode]) and seen == [None]
        monkeypatch.setenv("FLANEUR_DATA", str(tmp_path))
        load_task("tiny-gen-v1")
        assert seen[-1] == tmp_path
    finally:
        registry.TASKS.unregister("tiny-gen-v1")
    with pytest.raises(FlaneurError, match="needs a generator or a build callable"):
        register_task(TaskSpec(id="broken-v1", description="", city="nowhere"))


def test_cli_tasks_ls(data_dir):
    runner = CliRunner()
    result = runner.invoke(app, ["tasks", "ls", "--data-dir", str(data_dir), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    counts = {t["id"]: t["episodes"] for t in out["tasks"]}
    assert counts["map2seq-unseen-dev-v1"] == 2 and counts["cityseeker-shanghai2-v1"] == 4
    (data_dir / "map2seq/seen/dev.json").unlink()
    out = json.loads(
        runner.invoke(app, ["tasks", "ls", "--data-dir", str(data_dir), "--json"]).stdout
    )
    seen = next(t for t in out["tasks"] if t["id"] == "map2seq-seen-dev-v1")
    assert seen["episodes"] is None and seen["status"] == "missing" and seen["missing"]
    result = runner.invoke(app, ["tasks", "ls", "--data-dir", str(data_dir)])
    assert "missing" in result.stdout and "map2seq-unseen-dev-v1" in result.stdout


def test_cli_tasks_check(data_dir, tmp_path):
    city, episodes = load_task("map2seq-unseen-dev-v1", data_dir)
    pack = city.save(tmp_path / "pack")
    good = write_episodes(episodes, tmp_path / "good.jsonl")
    runner = CliRunner()
    result = runner.invoke(app, ["tasks", "check", str(good), "--city", str(pack), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["episodes"] == 2 and info["ok"] is True and info["city"] == "manhattan"
    bad = [
        episodes[0],
        Episode(
            id="x",
            city="manhattan",
            instruction="",
            start_node="nope",
            start_heading=0,
            goal_nodes=("nope",),
        ),
    ]
    path = write_episodes(bad, tmp_path / "bad.jsonl")
    result = runner.invoke(app, ["tasks", "check", str(path), "--city", str(pack)])
    assert result.exit_code != 0 and isinstance(result.exception, DataError)
    assert "'nope'" in str(result.exception)

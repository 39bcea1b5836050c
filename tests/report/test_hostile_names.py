"""Reports and maps with hostile names: every page's scripts parse and run, names show as text.

The toy city is rebuilt with node ids, place names, instructions, episode ids, an agent name,
model output and a run folder name full of `` ` ' " < > & </script> <!-- ${...} `` and the
line separators U+2028/U+2029, then drawn by every HTML generator (city map, episode map,
report and its interactive maps).
"""

from __future__ import annotations

import html
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from flaneur.env.toy import TOY_NODES, TOY_STREETS, _at, toy_episodes
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.report.city_map import save_city_map
from flaneur.report.episode_folium import save_episode_map
from flaneur.report.escaping import html_text, script_json
from flaneur.report.run_report import build_report, load_run
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph
from flaneur.world.places import Places
from harness.html_check import (
    node_path,
    page_parts,
    run_map_scripts,
    script_syntax_errors,
    web_references,
)

pytestmark = pytest.mark.skipif(node_path() is None, reason="needs Node.js to parse scripts")

HOSTILE = "Kauppa `tick` ${alert(1)} 'single' \"double\" <b>bold</b> & amp </script><script>alert(2)</script> <!-- x \u2028y\u2029 \\ end"
"""A place name that breaks out of every context it is not escaped for."""

NAME_OF = {node: f"{node}`'\"<&>" for node in ("X4", "E1", "T3", "D")}
"""Hostile ids of some toy nodes (the others keep theirs)."""


def hostile_city() -> City:
    ids = list(TOY_NODES)
    coords = [_at(*TOY_NODES[i]) for i in ids]
    src, dst = [], []
    for a, b in TOY_STREETS:
        src += [ids.index(a), ids.index(b)]
        dst += [ids.index(b), ids.index(a)]
    graph = StreetGraph.from_edges(
        [NAME_OF.get(i, i) for i in ids], [c[0] for c in coords], [c[1] for c in coords], src, dst
    )
    records = [
        ("p1", HOSTILE, (0.3, 0.3), ("cafe",)),
        ("p2", "Kirja `</script>`", (-0.2, 1.0), ("bookshop",)),
        ("p3", "Museo <!-- ${x}", (0.3, 4.2), ("museum",)),
    ]
    places = Places.from_records(
        [
            {"id": pid, "name": name, "lat": _at(*rc)[0], "lng": _at(*rc)[1], "categories": cats}
            for pid, name, rc, cats in records
        ]
    )
    return City(name="toy", graph=graph, places=places, source="builtin:toy")


def hostile_episodes() -> list:
    out = []
    for k, e in enumerate(toy_episodes()[:3]):
        out.append(
            replace(
                e,
                id=f"ep{k}`<'\"&>",
                instruction=f"{HOSTILE} ({k})",
                start_node=NAME_OF.get(e.start_node, e.start_node),
                reference_path=tuple(NAME_OF.get(n, n) for n in e.reference_path),
                goal_nodes=tuple(NAME_OF.get(n, n) for n in e.goal_nodes),
                goal_place_ids=("p1",),
            )
        )
    return out


def map_scripts(page: str) -> list[str]:
    """The inline scripts of a map page, without Leaflet itself."""
    return [s for s in page_parts(page).scripts if "Leaflet" not in s[:400]]


def assert_map_page_safe(page: str) -> list[str]:
    """Scripts parse (node --check), run, load nothing from the web; returns the tooltips."""
    assert script_syntax_errors(page_parts(page).scripts) == []
    assert web_references(page) == []
    assert "</script><script>alert" not in page  # "${...}" inside a JSON string is inert
    return run_map_scripts(map_scripts(page))


def test_escaping_functions_by_hand():
    assert html_text("<a href='x'>&\"</a>") == "&lt;a href=&#x27;x&#x27;&gt;&amp;&quot;&lt;/a&gt;"
    assert html_text("abcdef", 4) == "abc…" and html_text("a&bc", 2) == "a…"
    assert script_json("</script><!--\u2028\u2029&`${") == (
        '"\\u003c/script\\u003e\\u003c!--\\u2028\\u2029\\u0026`${"'
    )
    assert json.loads(script_json(HOSTILE)) == HOSTILE  # still the same string for JSON


def test_city_map_with_hostile_names_parses_runs_and_shows_the_names(tmp_path):
    page = save_city_map(hostile_city(), tmp_path / "city.html").read_text(encoding="utf-8")
    tooltips = assert_map_page_safe(page)
    shown = {html.unescape(t) for t in tooltips}  # Leaflet sets the tooltip as innerHTML
    assert f"{HOSTILE} (cafe)" in shown and "Kirja `</script>` (bookshop)" in shown
    assert set(NAME_OF.values()) <= shown  # viewpoint tooltips: the node ids
    assert all("<" not in t for t in tooltips)  # no markup from data reaches innerHTML


def test_episode_map_with_hostile_names(tmp_path):
    city = hostile_city()
    graph = city.graph
    e = hostile_episodes()[0]
    reference = graph.indices(e.reference_path).tolist()
    out = save_episode_map(
        city,
        tmp_path / "ep.html",
        reference,
        reference,
        goals=[graph.index(g) for g in e.goal_nodes],
        goal_places=[0],
        near_radius_m=500,
    )
    shown = {html.unescape(t) for t in assert_map_page_safe(out.read_text(encoding="utf-8"))}
    assert f"target: {HOSTILE}" in shown
    assert f"goal ({NAME_OF['D']})" in shown and f"start ({e.reference_path[0]})" in shown
    assert any(t.startswith("Museo <!-- ${x} (") for t in shown)  # a place near the stop


@pytest.fixture
def hostile_run(tmp_path: Path) -> tuple[Path, City, list]:
    """A run of the forward agent on the hostile episodes, in a folder with a hostile name,
    with its agent renamed and model output and errors added to its rows."""
    city, episodes = hostile_city(), hostile_episodes()
    folder = tmp_path / "run `<'\"&>"
    run_benchmark(
        RunConfig(agents=("forward",), tasks=("toy",)),
        folder,
        progress="none",
        loaded={"toy": (city, episodes)},
    )
    agent = "agent`<'\"&>"
    rows = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    for row in rows:
        row["agent"] = agent
        row["records"][0]["raw_output"] = HOSTILE
        row["error"] = HOSTILE
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = json.loads((folder / "summary.json").read_text())
    for entry in summary["runs"]:
        entry["agent"] = agent
    summary["model"] = HOSTILE
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder, city, episodes


def test_report_with_hostile_names_shows_them_as_text(hostile_run, tmp_path):
    folder, city, episodes = hostile_run
    out = build_report(
        [load_run(folder)], tmp_path / "report.html", tasks={"toy": (city, episodes)}
    )
    page = out.read_text(encoding="utf-8")
    parts = page_parts(page)
    assert parts.scripts == [] and "<script" not in page  # the report itself runs no script
    text = "".join(parts.text)
    assert text.count(HOSTILE) >= 2 * len(episodes)  # model output and error of each row
    assert f"{HOSTILE} (0)"[:139] in text  # instructions are cut at 140 characters
    assert "agent`<'\"&>" in text and folder.name in text and "ep1`<'\"&>" in text
    assert "Kirja `</script>`"[:27] in text or "Museo" in text  # SVG labels of near places
    assert web_references(page) == []
    maps = sorted((tmp_path / "report_maps").glob("*.html"))
    assert len(maps) == len(episodes)
    links = [a for a in parts.attributes if a.startswith("report_maps/")]
    assert sorted((tmp_path / a).resolve() for a in links) == [m.resolve() for m in maps]
    for path in maps:
        page = path.read_text(encoding="utf-8")
        assert_map_page_safe(page)
        (script_src,) = [r for r in page_parts(page).references if r.endswith(".js")]
        assert (path.parent / script_src).is_file()  # the shared copy of Leaflet


def test_report_command_with_hostile_names_through_the_console_script(hostile_run, tmp_path):
    import subprocess
    import sys

    folder, _, _ = hostile_run
    flaneur = Path(sys.executable).with_name("flaneur")
    if not flaneur.exists():
        flaneur = Path(shutil.which("flaneur") or "flaneur")
    done = subprocess.run(
        [str(flaneur), "report", str(folder), "-o", str(tmp_path / "r.html"), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["runs"][0]["model"] == HOSTILE
    assert "<script" not in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_city_map_command_on_a_hostile_pack_through_the_console_script(tmp_path):
    import subprocess
    import sys

    pack = hostile_city().save(tmp_path / "pack")
    flaneur = Path(sys.executable).with_name("flaneur")
    done = subprocess.run(
        [str(flaneur), "city", "map", str(pack), "-o", str(tmp_path / "m.html"), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    page = Path(json.loads(done.stdout)["map"]).read_text(encoding="utf-8")
    shown = {html.unescape(t) for t in assert_map_page_safe(page)}
    assert f"{HOSTILE} (cafe)" in shown

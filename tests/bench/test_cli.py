"""``flaneur bench``: end to end on the toy city, and one-line errors of the console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flaneur.bench.sets import read_set
from flaneur.cli import app
from flaneur.env.toy import toy_city
from flaneur.testing.fake_openai import FakeOpenAIServer
from flaneur.testing.vqa_policy import ScriptedVQAPolicy

FLANEUR = Path(sys.executable).with_name("flaneur")


def _json(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def test_build_and_vqa_with_scripted_model(tmp_path: Path) -> None:
    pack = toy_city().save(tmp_path / "toy")
    out = tmp_path / "bench"
    runner = CliRunner()
    built = _json(
        runner.invoke(
            app,
            [
                "bench",
                "build",
                "--city",
                str(pack),
                "--out",
                str(out),
                "--cell-m",
                "10000",
                "--json",
            ],
        )
    )
    assert built["recognition_places"] == 3 and built["vqa_places"] == 3
    header, items = read_set(out / "vqa-v1.jsonl", "virl-vqa", 1)
    assert header["seed"] == 0 and header["writer"] == "offline"
    truth = [(it["options"], it["options"]["ABCD".index(it["answer"])]) for it in items]
    with FakeOpenAIServer(ScriptedVQAPolicy(truth, styles={"letter": 1.0})) as server:
        args = [
            "bench",
            "vqa",
            str(out),
            "--model",
            "fake-model",
            "--base-url",
            server.base_url,
            "--json",
        ]
        first = _json(runner.invoke(app, args))
        assert first["acc_circular"] == 1.0 and first["asked"] == 12
        assert server.requests[0].image_count == 1
        again = _json(runner.invoke(app, [*args, "--csv", str(tmp_path / "t.csv")]))
        assert again["acc_circular"] == 1.0 and server.chat_count == 12  # resumed: none asked
    rows = (tmp_path / "t.csv").read_text().splitlines()
    assert rows[0] == "table,name,accuracy,weight" and "type,bank,1.000000,1" in rows


@pytest.mark.skipif(not FLANEUR.is_file(), reason="console script not installed")
@pytest.mark.parametrize(
    "args, expected",
    [
        (["bench", "types", "bank,spaceport"], "'spaceport'"),
        (["bench", "build", "--types", "cafe,nope_type"], "'nope_type'"),
        (["bench", "recognition", "/no/such/folder"], "no benchmark set"),
        (["bench", "recognition", ".", "--recogniser", "clip"], "--clip-weights"),
        (["bench", "vqa", ".", "--answerer", "model"], "--model"),
        (["bench", "vln", "-r", "clip"], "--clip-weights"),
        (["bench", "vln", "-r", "vlm"], "--vlm"),
        (["bench", "report", "/no/such/folder"], "no benchmark set"),
    ],
)
def test_console_script_one_line_errors(args: list[str], expected: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(FLANEUR), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], lines


def test_polygon_with_no_places_is_an_error(tmp_path: Path) -> None:
    pack = toy_city().save(tmp_path / "toy")
    regions = tmp_path / "sea.geojson"
    regions.write_text(
        json.dumps({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]})
    )
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "build",
            "--city",
            str(pack),
            "--regions",
            str(regions),
            "--out",
            str(tmp_path / "b"),
        ],
    )
    assert result.exit_code != 0
    assert "no named place" in str(result.exception)

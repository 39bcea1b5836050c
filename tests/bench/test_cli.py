"""``flaneur bench types|recognition|vqa|report`` end to end on the toy city, and one-line
errors of the console script for hostile options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flaneur.cli import app
from flaneur.env.toy import toy_city
from flaneur.tasks.generators import generate_set

FLANEUR = Path(sys.executable).with_name("flaneur")


def _json(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bench-cli")
    city = toy_city()
    pack = city.save(folder / "toy")
    out = {"pack": pack}
    for kind in ("virl-recognition", "virl-vqa"):
        made = generate_set(kind, city, city_spec=str(pack), options={"cell_m": 10000})
        out[kind] = made.write(folder / f"{kind}.jsonl")
    return out


def test_types_json() -> None:
    listed = _json(CliRunner().invoke(app, ["bench", "types", "20", "--json"]))
    assert listed["count"] == 20 and listed["types"]["movie_theater"] == ["cinema"]


def test_short_forms_run_and_report(sets: dict[str, Path], tmp_path: Path) -> None:
    runner = CliRunner()
    recognition, table = tmp_path / "recognition", tmp_path / "t.csv"
    args = ["bench", "recognition", "--task", str(sets["virl-recognition"]), "--out"]
    figures = _json(
        runner.invoke(
            app,
            [*args, str(recognition), "--recogniser", "oracle", "--json", "--csv", str(table)],
            catch_exceptions=False,
        )
    )
    assert figures["metrics"]["top1"] == 1.0 and figures["task_metrics"]["macc"]["value"] == 1.0
    assert figures["items"] == 3 and figures["by_termination"] == {"completed": 3}
    vqa, oracle = tmp_path / "vqa", ("--answerer", "oracle", "--json")
    answered = _json(
        runner.invoke(
            app,
            ["bench", "vqa", "--task", str(sets["virl-vqa"]), "--out", str(vqa), *oracle],
        )
    )
    assert answered["task_metrics"]["macc_circular"]["value"] == 1.0
    report = _json(runner.invoke(app, ["bench", "report", str(recognition), str(vqa), "--json"]))
    toy = report["cities"]["toy"]
    assert toy["recognition"]["oracle"]["macc"] == 1.0
    assert toy["vqa"]["oracle"]["macc_plain"] == 1.0
    rows = table.read_text().splitlines()
    assert rows[0] == "table,name,accuracy,weight" and "type,bank,1.000000,1" in rows


@pytest.mark.skipif(not FLANEUR.is_file(), reason="console script not installed")
@pytest.mark.parametrize(
    "args, expected",
    [
        (["bench", "recognition", "--task", "{rec}", "--option", "nope=1"], "has no option nope"),
        (
            [
                "bench",
                "vqa",
                "--task",
                "{vqa}",
                "--answerer=model",
                "--llm=m",
                "--option",
                "with_image=3",
            ],
            "with_image=3 must be true/false",
        ),
        (["tasks", "generate", "{pack}", "--kind", "virl-vqa", "-T", "per_region=-1"], "1 to 1000"),
        (["tasks", "generate", "{pack}", "--kind", "virl-recognition", "-T", "cell_m=NaN"], "nan"),
        (["bench", "recognition", "--task", "{rec}", "--recogniser", "clip"], "needs weights"),
        (["bench", "report", "{pack}"], "not a run folder"),
    ],
)
def test_console_script_one_line_errors(
    args: list[str], expected: str, sets: dict[str, Path], tmp_path: Path
) -> None:
    fill = {"rec": sets["virl-recognition"], "vqa": sets["virl-vqa"], "pack": sets["pack"]}
    argv = [a.format(**fill) for a in args]
    if argv[0] == "tasks":
        argv += ["-o", str(tmp_path / "set.jsonl")]
    elif argv[1] != "report":
        argv += ["--out", str(tmp_path / "run")]
    done = subprocess.run(
        [str(FLANEUR), *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], lines
    assert not (tmp_path / "run").exists() and not (tmp_path / "set.jsonl").exists()

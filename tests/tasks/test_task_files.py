"""Any dataset file is a task set: format detection, city inference, the shared resolver, CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from task_fixtures import questions, vln_row, write_jsonl, write_questions
from typer.testing import CliRunner

from flaneur.cli import app
from flaneur.errors import DataError, FlaneurError
from flaneur.tasks import (
    Episode,
    detect_format,
    load_task,
    resolve_task,
    resolve_tasks,
    write_episodes,
)
from flaneur.tasks.formats import episode_facts

FLANEUR = Path(sys.executable).parent / "flaneur"


@pytest.fixture
def pack(data_dir: Path, tmp_path: Path) -> Path:
    """The tiny Manhattan city (four viewpoints p0..p3) saved as a city pack."""
    city, _ = load_task("map2seq-unseen-dev-v1", data_dir)
    return city.save(tmp_path / "pack")


def test_detect_each_format(data_dir: Path, tmp_path: Path) -> None:
    assert detect_format(data_dir / "map2seq/unseen/dev.json") == "map2seq"
    assert detect_format(data_dir / "touchdown/unseen/dev.json") == "touchdown"
    assert detect_format(data_dir / "cityseeker/shanghai2/questions.json") == "cityseeker"
    question = write_questions(tmp_path / "city" / "question.json")  # CitySeeker's own name
    assert detect_format(question) == "cityseeker"
    episode = Episode(id="e", city="x", instruction="go", start_node="p0", start_heading=0)
    assert detect_format(write_episodes([episode], tmp_path / "e.jsonl")) == "episodes"


@pytest.mark.parametrize(
    ("text", "seen"),
    [
        ('{"question": "where?", "answer": 3}\n', "first line is an object with keys answer"),
        ('[{"folder": "bank"}]', "first element of the JSON list is an object with keys folder"),
        ("[1, 2]", "first element of the JSON list is a JSON int"),
        ("", "the file is empty"),
        ("[]", "empty JSON list"),
        ("route,panoids\na,b\n", "neither a JSON object per line nor a JSON list"),
    ],
)
def test_undetectable_files_name_file_and_what_was_seen(tmp_path, text, seen) -> None:
    path = tmp_path / "mystery.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as err:
        detect_format(path)
    message = str(err.value)
    assert message.startswith(f"{path}: cannot tell the task format") and seen in message
    assert "\n" not in message


def test_map2seq_file_city_inferred_from_the_data_layout(data_dir: Path) -> None:
    path = data_dir / "map2seq/unseen/dev.json"
    spec = resolve_task(str(path))
    assert (spec.loader, spec.scheme, spec.success_metric) == ("map2seq", "turns", "tc")
    assert spec.city == f"touchdown:{data_dir.resolve()}" and spec.origin == "file"
    assert not spec.needs_data_dir
    city, episodes = load_task(str(path))
    assert city.name == "manhattan" and [e.id for e in episodes] == ["1", "2"]
    assert {e.category for e in episodes} == {"map2seq"}
    assert episodes[0].reference_path == ("p1", "p2", "p3")
    # the same city pack as the registered Touchdown/map2seq sets: one build, one memo
    assert load_task("map2seq-unseen-dev-v1", data_dir)[0] is city


def test_file_outside_a_data_layout_needs_city(data_dir, pack, tmp_path) -> None:
    path = write_jsonl(tmp_path / "elsewhere" / "routes.jsonl", [vln_row("r1", ["p0", "p1"])])
    with pytest.raises(DataError, match=r"routes\.jsonl: no city for this map2seq.*--city"):
        resolve_task(str(path))
    city, (episode,) = load_task(str(path), city=str(pack))
    assert city.name == "manhattan" and episode.id == "r1" and episode.goal_nodes == ("p1",)
    graph_dir = data_dir / "touchdown" / "graph"
    city2, _ = load_task(str(path), city=f"touchdown:{graph_dir}")  # a bare graph folder
    assert city2.graph.n_nodes == 4
    # --format overrides detection: read as Touchdown, the row has no route_id
    with pytest.raises(DataError, match=r"line 1: missing field 'route_id'"):
        load_task(str(path), city=str(pack), fmt="touchdown")
    with pytest.raises(DataError, match=r"unknown task format 'csv'; choose one of episodes"):
        resolve_task(str(path), fmt="csv", city=str(pack))


def test_unknown_node_in_a_task_file_names_episode(pack, tmp_path) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", [vln_row(9, ["p0", "ghost"])])
    with pytest.raises(DataError, match=r"'ghost' \(episode '9', goal_nodes\)"):
        load_task(str(path), city=str(pack))


def test_cityseeker_question_json(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "tinycity"
    shutil.copytree(data_dir / "cityseeker" / "shanghai2", folder)
    write_questions(folder / "question.json", questions()[:2])
    spec = resolve_task(str(folder / "question.json"))
    assert spec.city == f"cityseeker:{folder.resolve()}" and spec.loader == "cityseeker"
    assert (spec.scheme, spec.success_metric) == ("headings", "tcp")
    city, episodes = load_task(str(folder / "question.json"))
    assert city.name == "tinycity" and [e.id for e in episodes] == ["tinycity-0", "tinycity-1"]


def test_episode_files_declare_facts_by_their_goals(pack: Path, tmp_path: Path) -> None:
    route = Episode(
        id="r",
        city="manhattan",
        instruction="go",
        start_node="p0",
        start_heading=90,
        goal_nodes=("p2",),
        reference_path=("p0", "p1", "p2"),
    )
    need = Episode(
        id="n",
        city="manhattan",
        instruction="thirsty",
        start_node="p0",
        start_heading=90,
        goal_categories=("cafe",),
    )
    assert episode_facts([route]) == ("turns", "tc")
    assert episode_facts([need]) == ("headings", "tcp")
    assert episode_facts([route, need]) == ("turns", "tc")
    path = write_episodes([need], tmp_path / "needs.jsonl")
    spec = resolve_task(str(path), city=str(pack))
    assert (spec.loader, spec.scheme, spec.success_metric) == ("episodes", "headings", "tcp")
    with pytest.raises(DataError, match="no city for this flaneur episode JSONL file"):
        resolve_task(str(path))  # 'manhattan' is not a built-in city


def test_resolver_mixes_ids_and_files_and_names_unknowns(data_dir: Path) -> None:
    path = str(data_dir / "touchdown/unseen/dev.json")
    specs = resolve_tasks(f"map2seq-seen-dev-v1, {path}")
    assert [s.id for s in specs] == ["map2seq-seen-dev-v1", path]
    assert specs[0].needs_data_dir and specs[1].loader == "touchdown"
    with pytest.raises(FlaneurError, match=r"unknown task 'nope': neither .*map2seq-seen-dev-v1"):
        resolve_task("nope")
    with pytest.raises(DataError, match=r"missing/dev\.json: task file not found"):
        resolve_task("missing/dev.json")


def _run(args: list[str]) -> dict:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"
    return json.loads(result.stdout)


def test_cli_run_report_validate_and_check_on_a_task_file(data_dir, pack, tmp_path) -> None:
    path = str(
        write_jsonl(
            tmp_path / "routes.jsonl",
            [vln_row("a", ["p0", "p1", "p2"]), vln_row("b", ["p3", "p2"], heading=270)],
        )
    )
    out = tmp_path / "run"
    summary = _run(
        [
            "run",
            "--agent",
            "forward",
            "--tasks",
            f"{path},map2seq-seen-dev-v1",
            "--city",
            str(pack),
            "--data-dir",
            str(data_dir),
            "--out",
            str(out),
            "--progress",
            "none",
            "--json",
        ]
    )
    assert [(r["task"], r["episodes"], r["city"]) for r in summary["runs"]] == [
        (path, 2, "manhattan"),
        ("map2seq-seen-dev-v1", 1, "manhattan"),
    ]
    facts = summary["task_sets"][path]
    assert facts["files"] == [str(Path(path).resolve())] and facts["city"] == str(pack.resolve())
    assert summary["config"]["city"] == str(pack) and summary["config"]["task_format"] is None
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert {r["success_metric"] for r in rows} == {"tc"}
    assert next(r for r in rows if r["episode_id"] == "a")["path"][0] == "p0"
    report = _run(["report", str(out), "--json"])
    html = Path(report["report"]).read_text(encoding="utf-8")
    assert "<svg" in html  # the file task's episode maps were drawn: its city was found again
    gold = _run(["validate", "gold", "--tasks", path, "--city", str(pack), "--json"])
    assert gold["ok"] and [r["exact_paths"] for r in gold["results"]] == [2, 2, 2]
    check = _run(["tasks", "check", "--tasks", path, "--city", str(pack), "--json"])
    assert check["episodes"] == 2 and check["format"] == "map2seq" and check["ok"]
    chats = tmp_path / "chats.jsonl"
    export = _run(
        ["export", "finetune", "--tasks", path, "--city", str(pack), "-o", str(chats), "--json"]
    )
    assert export["episodes"] == 2 and export["records"] == len(chats.read_text().splitlines())


def test_installed_script_one_line_errors(tmp_path: Path) -> None:
    if not FLANEUR.is_file():
        pytest.skip("console script not installed beside this interpreter")
    mystery = tmp_path / "mystery.json"
    mystery.write_text('{"foo": 1}\n', encoding="utf-8")
    for args in (
        ["run", "--agent", "forward", "--tasks", str(mystery), "--out", str(tmp_path)],
        ["validate", "gold", "--tasks", str(tmp_path / "none.json")],
        ["tasks", "check", "--tasks", "no-such-set"],
    ):
        done = subprocess.run([str(FLANEUR), *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    assert "cannot tell the task format" in lines[0] or "no-such-set" in lines[0]

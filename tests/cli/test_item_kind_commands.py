"""The commands around a run work on task sets of every kind: `tasks check` and `report` on a
V-IRL benchmark set and its run, and the commands that serve navigation only (fine-tuning
export) refuse one in one line."""

from __future__ import annotations

import json

import pytest

from flaneur.cli import main

TASK = "helsinki-virl-recognition-v1"


def flaneur(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as done:
        return int(done.code or 0)
    return 0


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("rec") / "run"
    code = flaneur("run", "--tasks", TASK, "--agent", "oracle,offline", "--limit", "3")
    assert code == 2  # --out is required: a usage error, nothing ran
    code = flaneur(
        "run", "--tasks", TASK, "--agent", "oracle,offline", "--limit", "3", "--out", str(out),
        "--progress", "none", "--json",
    )  # fmt: skip
    assert code == 0
    return out


def test_tasks_check_counts_the_items_of_a_benchmark_set(capsys):
    assert flaneur("tasks", "check", TASK, "--json") == 0
    info = json.loads(capsys.readouterr().out)
    assert info["kind"] == "virl-recognition" and info["episodes"] > 0
    assert info["reference_not_walk"] == [] and info["ok"]


def test_report_of_a_benchmark_run_tables_and_pairs_its_solvers(run_folder, capsys):
    capsys.readouterr()
    assert flaneur("report", str(run_folder), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert (run_folder / "report.html").is_file()
    text = json.dumps(report)
    assert "oracle" in text and "offline" in text


def test_fine_tuning_export_refuses_a_benchmark_set(tmp_path, capsys):
    assert flaneur("export", "finetune", "--tasks", TASK, "-o", str(tmp_path / "ft.jsonl")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not navigation episodes" in err[0]
    assert not (tmp_path / "ft.jsonl").exists()

"""Hostile inputs: every case of :mod:`harness.runner` ends as one clear line.

Every command-line case runs in-process through :func:`flaneur.cli.main` (the same handling
as the console script); the first cases of every class also run through the installed
console script ``flaneur`` as a subprocess (in parallel, started once for the module). Each
asserts: the documented exit code (2), exactly one ``error:`` line on stderr naming what is
wrong (a usage error adds the usage line above it), no traceback and no internal error, and
no file of the workspace created or changed. The Python API cases must raise a
``FlaneurError`` subclass or ``ValueError`` naming the argument.
"""

from __future__ import annotations

import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.runner import (
    API_CASES,
    CLI_CASES,
    KINDS,
    Outcome,
    build_workspace,
    problems_of,
    run_api_case,
    run_in_process,
    run_in_subprocess,
)

SCRIPT = Path(sys.executable).with_name("flaneur")
PER_KIND = 3
"""Cases of each class that also run through the console script."""

SCRIPT_CASES = [c for kind in KINDS for c in [c for c in CLI_CASES if c.kind == kind][:PER_KIND]]
SCRIPT_CASES += [c for c in CLI_CASES if not c.in_process and c not in SCRIPT_CASES][:4]
SCRIPT_CASES += [  # V-IRL's commands: one case of each class through the console script
    next(c for c in CLI_CASES if c.kind == kind and c.argv[0] == "virl") for kind in KINDS[1:]
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> tuple[Path, Path]:
    """The case workspace and a private cache folder."""
    root = tmp_path_factory.mktemp("hostile")
    return build_workspace(root / "ws"), root / "cache"


@pytest.fixture(scope="module")
def script_outcomes(workspace) -> dict[str, Outcome]:
    """Outcomes of :data:`SCRIPT_CASES` through the console script, run 4 at a time."""
    if not SCRIPT.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    ws, cache = workspace
    with ThreadPoolExecutor(4) as pool:
        outcomes = pool.map(
            lambda c: run_in_subprocess(c, ws, cache, exe=str(SCRIPT)), SCRIPT_CASES
        )
        return {c.id: o for c, o in zip(SCRIPT_CASES, outcomes, strict=True)}


def test_the_suite_is_large_and_covers_every_class_and_command():
    ids = [c.id for c in CLI_CASES] + [c.id for c in API_CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 150
    assert {c.kind for c in CLI_CASES} == set(KINDS)
    assert {c.kind for c in SCRIPT_CASES} == set(KINDS)
    commands = {c.argv[0] for c in CLI_CASES}
    assert commands >= {
        "city",
        "tasks",
        "export",
        "demo",
        "run",
        "report",
        "validate",
        "cache",
        "fake-llm",
        "render",
        "virl",
        "bench",
    }


@pytest.mark.parametrize("case", [c for c in CLI_CASES if c.in_process], ids=lambda c: c.id)
def test_cli_case_in_process(case, workspace):
    ws, cache = workspace
    outcome = run_in_process(case, ws, cache)
    assert not problems_of(case, outcome), (outcome.stderr, outcome.stdout[-300:])


@pytest.mark.parametrize("case", SCRIPT_CASES, ids=lambda c: c.id)
def test_cli_case_through_console_script(case, script_outcomes):
    outcome = script_outcomes[case.id]
    assert not problems_of(case, outcome), (outcome.stderr, outcome.stdout[-300:])


@pytest.mark.parametrize("case", API_CASES, ids=lambda c: c.id)
def test_api_case(case):
    assert not run_api_case(case)


def test_the_checks_catch_a_broken_command(workspace):
    """The judge is not vacuous: a traceback, a second line, a wrong code, a message that
    names nothing and a file left behind are each reported."""
    case = CLI_CASES[0]
    fine = Outcome(2, "", "Usage: flaneur [OPTIONS]\nerror: No such command 'teleport'.\n", [])
    assert not problems_of(case, fine)
    for broken in (
        Outcome(1, "", "Traceback (most recent call last):\nKeyError: 'x'\n", []),
        Outcome(2, "", "error: No such command 'teleport'.\nerror: again\n", []),
        Outcome(0, "", "error: No such command 'teleport'.\n", []),
        Outcome(2, "", "error: something went wrong\n", []),
        Outcome(1, "", "internal error: ValueError: x (a bug in flaneur)\n", []),
        Outcome(2, "", "error: No such command 'teleport'.\n", ["r/episodes.jsonl"]),
    ):
        assert problems_of(case, broken)


def test_debug_variable_shows_the_traceback_of_a_bug(monkeypatch, capsys):
    """An unexpected exception is one ``internal error`` line; FLANEUR_DEBUG=1 re-raises."""
    from flaneur.cli.failures import report_failure

    try:
        raise KeyError("boom")
    except KeyError as err:
        monkeypatch.delenv("FLANEUR_DEBUG", raising=False)
        assert report_failure(err) == 1
        line = capsys.readouterr().err.strip()
        assert line.startswith("internal error: KeyError") and "FLANEUR_DEBUG=1" in line
        monkeypatch.setenv("FLANEUR_DEBUG", "1")
        with pytest.raises(KeyError):
            report_failure(err)


def test_goal_only_task_passes_check_and_validate_names_the_empty_path(workspace, tmp_path):
    """An empty reference path with a goal node is a valid goal-only task for ``tasks
    check``; ``tasks validate`` (need tasks need the gold path) reports it, exit 1."""
    import json

    ws, cache = workspace
    row = json.loads((ws / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[0])
    row.update(reference_path=[], goal_nodes=["D"])
    folder = tmp_path / "goal-only"
    shutil.copytree(ws / "pack", folder / "pack")
    (folder / "goal.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    from harness.cases import HostileCase

    check = run_in_process(
        HostileCase(
            "c", "silent", ("tasks", "check", "goal.jsonl", "--city", "pack", "--json"), ""
        ),
        folder,
        cache,
    )
    assert check.code == 0 and json.loads(check.stdout)["episodes"] == 1
    validate = run_in_process(
        HostileCase("v", "silent", ("tasks", "validate", "goal.jsonl", "--city", "pack"), ""),
        folder,
        cache,
    )
    assert validate.code == 1 and "reference path is empty" in validate.stdout
    assert "Traceback" not in validate.stderr


def test_an_eof_error_is_not_reported_as_ctrl_c(monkeypatch, capsys):
    """typer turns an EOFError into Abort; that is a truncated read (a bug), not Ctrl-C."""
    import typer

    from flaneur.cli.failures import report_failure

    monkeypatch.delenv("FLANEUR_DEBUG", raising=False)
    try:
        try:
            raise EOFError("no more data")
        except EOFError as eof:
            raise typer.Abort() from eof
    except typer.Abort as err:
        assert report_failure(err) == 1
    assert capsys.readouterr().err.startswith("internal error: EOFError: no more data")
    assert report_failure(KeyboardInterrupt()) == 130

"""Every command's flags, walked from the command tree: one meaning per short flag
(``-o`` is ``--out`` everywhere), every reporting command takes ``--json``, and every
``--help`` prints."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from flaneur.cli import app, main
from flaneur.cli.repeats import check_repeated_out

FLANEUR = str(Path(sys.executable).with_name("flaneur"))

# Commands that report nothing to a script: `serve` runs a web server until stopped.
NO_JSON = {"serve": "runs a web server until stopped; it reports nothing"}


def _leaves(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    subcommands = getattr(command, "commands", None)
    if subcommands:
        for name, sub in subcommands.items():
            yield from _leaves(sub, (*path, name))
    else:
        yield " ".join(path), command


COMMANDS = dict(_leaves(typer.main.get_command(app)))


def _options(command: Any) -> list[Any]:
    return [p for p in command.params if getattr(p, "param_type_name", "") == "option"]


def test_the_tree_holds_every_command_group():
    groups = {name.split()[0] for name in COMMANDS}
    assert {"run", "report", "tasks", "bench", "virl", "city", "serve", "agents"} <= groups
    assert len(COMMANDS) >= 35


def test_each_short_flag_has_one_meaning_across_all_commands():
    meanings: dict[str, set[str]] = {}
    for command in COMMANDS.values():
        for param in _options(command):
            longs = [o for o in param.opts if o.startswith("--")]
            for short in (o for o in param.opts if not o.startswith("--")):
                meanings.setdefault(short, set()).add(f"{longs[0] if longs else '?'}")
    assert meanings["-o"] == {"--out"}, meanings["-o"]
    ambiguous = {short: longs for short, longs in meanings.items() if len(longs) > 1}
    assert not ambiguous


def test_every_command_that_writes_a_folder_or_file_takes_o_for_it():
    for name, command in COMMANDS.items():
        for param in _options(command):
            if "--out" in param.opts:
                assert "-o" in param.opts, f"flaneur {name}: --out has no -o"


def test_every_reporting_command_takes_json():
    missing = [
        name
        for name, command in COMMANDS.items()
        if name not in NO_JSON and not any("--json" in p.opts for p in _options(command))
    ]
    assert not missing, f"commands without --json: {missing}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_prints_and_names_json(name: str):
    result = CliRunner().invoke(app, [*name.split(), "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert ("--json" in result.output) == (name not in NO_JSON)


def test_the_console_script_shows_o_as_out_and_refuses_an_option_given_to_it(tmp_path):
    shown = subprocess.run(
        [FLANEUR, "run", "--help"], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert "-o, --out" in shown.stdout
    given = subprocess.run(
        [FLANEUR, "run", "--agent", "random", "--tasks", "helsinki-needs-v1", "-o", "x.k=3"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert given.returncode == 2
    assert "looks like an option KEY=VALUE" in given.stderr
    assert "--option" in given.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv, named",
    [
        (["run", "--agent", "random", "--tasks", "t", "--out", "a", "-o", "b"], "(a, b)"),
        (["virl", "aria", "p.yaml", "--out=a", "--out=b"], "(a, b)"),
        (["bench", "vqa", "-o", "a", "--option", "k=1", "-o", "b"], "(a, b)"),
    ],
)
def test_out_given_twice_is_refused_before_anything_runs(
    argv, named, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "given 2 times" in err and named in err
    assert list(tmp_path.iterdir()) == []


def test_other_options_may_repeat_the_last_value_wins():
    root = typer.main.get_command(app)
    check_repeated_out(root, ["run", "--option", "a=1", "--option", "b=2", "--json", "--json"])
    check_repeated_out(root, ["run", "--concurrency", "1", "--concurrency", "3", "-o", "r"])
    check_repeated_out(root, ["tasks", "generate", "x", "-T", "a=1", "-T", "b=2"])
    check_repeated_out(root, ["bench", "vln", "-r", "oracle", "-r", "ocr"])

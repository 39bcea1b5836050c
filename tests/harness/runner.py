"""Hostile inputs for the ``flaneur`` command line and the public Python API.

Each :class:`HostileCase` is one malformed or hostile command line, run in a workspace of
small files that :func:`build_workspace` writes (a toy city pack, good and broken task
files, corrupt pack copies, a file in the way of a folder, a binary run summary...). The
promise it checks (see :func:`problems_of`): the command exits with code 2 (or the
documented code), prints exactly one ``error:`` line on stderr naming what is wrong (a usage
error adds the usage line above it), prints no traceback and no ``internal error``, and
leaves every file of the workspace as it was. :data:`API_CASES` do the same for Python
calls: the named exception, a message naming the argument.

Used by ``tests/cli/test_hostile_inputs.py`` (in-process for every case, through the
installed console script for a subset covering every class) and by
``benchmarks/reliability.py`` (every case through the console script).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.api_cases import API_CASES, ApiCase, run_api_case
from harness.cases import CLI_CASES as _BASE_CASES
from harness.cases import KINDS, HostileCase
from harness.virl_cases import BENCH_CASES, PERSONA_HEAD, PERSONAS, VIRL_CASES

CLI_CASES: list[HostileCase] = [*_BASE_CASES, *VIRL_CASES, *BENCH_CASES]
"""Every hostile command line: the core commands' and V-IRL's."""


@dataclass
class Outcome:
    """What one run of a case printed and left behind."""

    code: int
    stdout: str
    stderr: str
    changed: list[str]


def build_workspace(folder: Path) -> Path:
    """Write the files the cases refer to into ``folder`` (a fresh, empty folder).

    Everything is small and made here: the toy city pack (:func:`flaneur.env.toy.toy_city`)
    and broken copies of it, task files good and bad, run folders with a good, a binary and
    a non-JSON ``summary.json``, a plain file ``afile`` to stand in the way of folders, and
    an empty folder ``emptydir``.
    """
    import shutil

    from flaneur.env.toy import toy_city, toy_episodes
    from flaneur.tasks.episode import write_episodes

    folder.mkdir(parents=True, exist_ok=True)
    pack = toy_city().save(folder / "pack")
    episodes = toy_episodes()
    write_episodes(episodes, folder / "tasks.jsonl")
    good = episodes[0].to_json()

    def text(name: str, content: str) -> None:
        (folder / name).write_text(content, encoding="utf-8")

    def raw(name: str, content: bytes) -> None:
        (folder / name).write_bytes(content)

    def row(name: str, **changes: Any) -> None:
        text(name, json.dumps({**good, **changes}) + "\n")

    def broken_pack(name: str, file: str, content: bytes | None) -> None:
        shutil.copytree(pack, folder / name)
        if content is None:
            (folder / name / file).unlink()
        else:
            (folder / name / file).write_bytes(content)

    (folder / "emptydir").mkdir()
    text("afile", "a plain file standing where a folder is expected\n")
    raw("binary.jsonl", bytes(range(256)) * 8)
    raw(
        "latin1.jsonl",
        (json.dumps({**good, "instruction": "Gå öster"}, ensure_ascii=False) + "\n").encode(
            "latin-1"
        ),
    )
    text("notjson.jsonl", json.dumps(good) + "\n{not json\n")
    text("array.jsonl", "[1, 2, 3]\n")
    text("array2.json", '{"replies": "not a list"}\n')
    text("unknownfield.jsonl", json.dumps({**good, "colour": "red"}) + "\n")
    text("nostart.jsonl", json.dumps({k: v for k, v in good.items() if k != "start_node"}) + "\n")
    row("headingtext.jsonl", start_heading="north")
    row("unknownnode.jsonl", start_node="nowhere")
    text("empty.jsonl", "")
    text("blank.jsonl", "\n \n\n")
    text("dup.jsonl", (json.dumps(good) + "\n") * 2)
    row("nogoal.jsonl", goal_nodes=[], reference_path=[])
    row("steps0.jsonl", max_steps=0)
    row("stepsneg.jsonl", max_steps=-3)
    row("stepsfrac.jsonl", max_steps=2.5)
    text("nan.jsonl", json.dumps({**good, "start_heading": float("nan")}) + "\n")
    text("inf.jsonl", json.dumps({**good, "start_heading": float("inf")}) + "\n")
    row("emptyid.jsonl", id="")
    raw("trunc.osm.pbf", b"\x00\x00\x00\x0d\n\tOSMHeader\x18\x7f")
    raw("empty.osm.pbf", b"")
    text("text.osm.pbf", "this is not an OpenStreetMap extract\n")
    graph = (pack / "graph.npz").read_bytes()
    broken_pack("pack-graph", "graph.npz", graph[: len(graph) // 3])
    broken_pack("pack-graph-empty", "graph.npz", b"")
    broken_pack("pack-nograph", "graph.npz", None)
    broken_pack("pack-nodesets", "nodesets.npz", b"")
    broken_pack("pack-places-bin", "places.json", bytes(range(256)))
    broken_pack("pack-places-cut", "places.json", (pack / "places.json").read_bytes()[:40])
    broken_pack("pack-places-shape", "places.json", b'[{"colour": "red"}]')
    broken_pack("pack-meta-bin", "city.json", bytes(range(200, 256)) * 3)
    broken_pack("pack-meta-list", "city.json", b"[1, 2]")
    meta = json.loads((pack / "city.json").read_text(encoding="utf-8"))
    broken_pack(
        "pack-meta-version", "city.json", json.dumps({**meta, "format_version": 999}).encode()
    )
    for name, summary in (
        ("badrun", bytes(range(256))),
        ("textrun", b"{summary"),
        ("listrun", b"[]"),
    ):
        (folder / name).mkdir()
        raw(f"{name}/summary.json", summary)
        text(f"{name}/episodes.jsonl", "")
    _good_run(folder / "goodrun", pack, episodes)
    _virl_files(folder)
    return folder


def _virl_files(folder: Path) -> None:
    """Persona files of every V-IRL agent on the toy pack, and broken ones beside them."""
    for agent, tail in PERSONAS.items():
        (folder / f"{agent}.toml").write_text(PERSONA_HEAD + tail, encoding="utf-8")
    square = [[59.9995, 24.9993], [59.9995, 25.0015], [60.0003, 25.0015], [60.0003, 24.9993]]
    (folder / "square.json").write_text(json.dumps(square), encoding="utf-8")
    (folder / "nanpoly.json").write_text(
        "[[NaN, 25.0], [60.0, 25.001], [60.0003, 25.0]]", encoding="utf-8"
    )
    (folder / "binary.toml").write_bytes(bytes(range(256)) * 4)
    (folder / "binary.yaml").write_bytes(bytes(range(256)) * 4)
    (folder / "empty.toml").write_text("", encoding="utf-8")
    (folder / "list.yaml").write_text("- a\n- b\n", encoding="utf-8")
    (folder / "bad.toml").write_text("name = [unclosed\n", encoding="utf-8")


def _good_run(folder: Path, pack: Path, episodes: list) -> None:
    """A small finished run of the random agent on the toy episodes (for ``report``)."""
    from flaneur.evaluate.runner import RunConfig, run_benchmark
    from flaneur.world.city import City

    city = City.load(pack)
    config = RunConfig(agents=("random",), tasks=("toy",), concurrency=1, scheme="turns")
    run_benchmark(config, folder, progress="none", loaded={"toy": (city, episodes)})


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """``{relative path: (size, mtime_ns)}`` of every file and folder under ``folder``."""
    out = {}
    for path in sorted(folder.rglob("*")):
        stat = path.lstat()
        out[str(path.relative_to(folder))] = (
            stat.st_size if path.is_file() else -1,
            stat.st_mtime_ns,
        )
    return out


def changed_paths(before: dict, after: dict) -> list[str]:
    """Paths created, removed or modified between two :func:`snapshot` calls."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def case_env(case: HostileCase, workspace: Path, cache: Path) -> dict[str, str]:
    """The environment of a case: the caller's, with a private cache and no colour."""
    env = {**os.environ, "FLANEUR_CACHE_DIR": str(cache), "NO_COLOR": "1", "COLUMNS": "100"}
    env.pop("FLANEUR_DEBUG", None)
    env.pop("FLANEUR_DATA", None)
    env.update({k: v.replace("{ws}", str(workspace)) for k, v in case.env.items()})
    return env


def run_in_subprocess(
    case: HostileCase,
    workspace: Path,
    cache: Path,
    *,
    exe: str | None = None,
    timeout: float = 60.0,
) -> Outcome:
    """Run ``case`` through the installed console script (``flaneur`` next to the Python
    running this), with ``workspace`` as the working folder."""
    exe = exe or str(Path(sys.executable).with_name("flaneur"))
    before = snapshot(workspace)
    try:
        done = subprocess.run(
            [exe, *case.argv],
            cwd=workspace,
            capture_output=True,
            text=True,
            env=case_env(case, workspace, cache),
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, out = -9, str(exc.stdout or "")
        err = f"timed out after {timeout:g} s (the command did not fail fast)"
    return Outcome(code, out, err, changed_paths(before, snapshot(workspace)))


@contextlib.contextmanager
def _inside(folder: Path, env: dict[str, str]) -> Iterator[None]:
    old_cwd, old_env = Path.cwd(), dict(os.environ)
    os.chdir(folder)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)


def run_in_process(case: HostileCase, workspace: Path, cache: Path) -> Outcome:
    """Run ``case`` through :func:`flaneur.cli.main` in this process (same handling as the
    console script, without the start-up cost)."""
    from flaneur.cli import main

    before = snapshot(workspace)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with (
        _inside(workspace, case_env(case, workspace, cache)),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            main(list(case.argv))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return Outcome(code, out.getvalue(), err.getvalue(), changed_paths(before, snapshot(workspace)))


def problems_of(case: HostileCase, outcome: Outcome) -> list[str]:
    """What breaks the promise in ``outcome`` (empty when the case behaved)."""
    problems = []
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    if "Traceback" in outcome.stderr or "Traceback" in outcome.stdout:
        problems.append("printed a traceback")
    if any(line.startswith("internal error") for line in lines):
        problems.append("reported an internal error")
    if outcome.code != case.code:
        problems.append(f"exit code {outcome.code}, expected {case.code}")
    errors = [line for line in lines if line.startswith("error: ")]
    others = [line for line in lines if not line.startswith(("error: ", "Usage: "))]
    usage = [line for line in lines if line.startswith("Usage: ")]
    if len(errors) != 1 or others or len(usage) > 1 or (usage and lines[0] != usage[0]):
        problems.append(f"stderr is not one error line: {lines[:4]!r}")
    elif case.expect.lower() not in errors[0].lower():
        problems.append(f"the error does not name {case.expect!r}: {errors[0]!r}")
    if outcome.changed:
        problems.append(f"left files behind or changed: {outcome.changed[:5]}")
    return problems


def is_traceback(outcome: Outcome) -> bool:
    """Whether ``outcome`` shows a traceback or an internal error (a crash, not a message)."""
    text = outcome.stderr + outcome.stdout
    return "Traceback" in text or "internal error" in text


__all__ = [
    "API_CASES",
    "CLI_CASES",
    "KINDS",
    "ApiCase",
    "HostileCase",
    "Outcome",
    "build_workspace",
    "is_traceback",
    "problems_of",
    "run_api_case",
    "run_in_process",
    "run_in_subprocess",
    "snapshot",
]

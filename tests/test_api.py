"""The public API: ``flaneur.__all__`` is pinned, every name resolves, ``import flaneur``
imports nothing heavy, and every example of ``docs/api.md`` runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import flaneur

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"

PINNED = [
    "AGENTS", "ANSWERERS", "Action", "Agent", "City", "DETECTORS", "DataError", "EnvInfo",
    "Episode", "FlaneurError", "GENERATORS", "KINDS", "LANDMARKS", "NavigationEnv", "Planner",
    "RECOGNISERS", "Range", "RunConfig", "SCHEMES", "SOURCES", "SolveInfo", "TASKS",
    "TaskItem", "TaskSpec", "VIEWS", "city_from_osm", "generate_tasks", "list_tasks",
    "load_city", "load_task", "make_agent", "make_env", "option", "read_run",
    "register_metric", "register_task", "run",
]  # fmt: skip
"""Change deliberately, with docs/api.md."""


def test_the_public_names_are_pinned_and_resolve():
    assert flaneur.__all__ == PINNED
    for name in PINNED:
        assert getattr(flaneur, name) is not None
        assert f"`{name}`" in DOC.read_text(encoding="utf-8"), f"{name} is not in docs/api.md"
    with pytest.raises(AttributeError, match="no attribute 'teleport'"):
        flaneur.teleport  # noqa: B018


def test_import_flaneur_imports_nothing_heavy():
    code = "import sys, flaneur; print(sorted(m for m in sys.modules if m.startswith(('numpy', 'flaneur.'))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("index", range(len(_examples())))
def test_every_example_runs(index, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    try:
        code = compile(_examples()[index], f"api.md example {index + 1}", "exec", dont_inherit=True)
        exec(code, {"__name__": "api_example"})
    finally:
        flaneur.AGENTS.unregister("straight")
    assert capsys.readouterr().out.strip()

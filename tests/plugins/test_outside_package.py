"""An outside package adds an agent and a view provider that the installed ``flaneur run``
uses with no change to flaneur: only packaging metadata (entry points) connects them.

The package ships in ``tests/plugins/flaneur_wanderer``. The test "installs" it as pip
would, without a network or a build: a folder on ``PYTHONPATH`` holding the package and a
``flaneur_wanderer-0.1.dist-info`` with ``METADATA`` and ``entry_points.txt``, which
``importlib.metadata`` finds. The subprocess also gets a ``sitecustomize.py`` that registers
a data-free toy task set (``toy-plugin-v1``); task sets from files are another seam.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flaneur.agents import AGENTS, make_agent
from flaneur.errors import FlaneurError
from flaneur.views.registry import VIEWS

PACKAGE = Path(__file__).parent / "flaneur_wanderer"
FLANEUR = Path(sys.executable).with_name("flaneur")
ENTRY_POINTS = """\
[flaneur.agents]
wanderer = flaneur_wanderer.agent:WandererAgent

[flaneur.views]
flat = flaneur_wanderer.views:FlatViews
"""
SITECUSTOMIZE = """\
from flaneur.env import toy_city, toy_episodes
from flaneur.tasks.registry import TaskSpec, register_task

register_task(TaskSpec(id="toy-plugin-v1", description="toy",
                       build=lambda _: (toy_city(), toy_episodes())))
"""


def install(site: Path) -> None:
    """Lay ``flaneur_wanderer`` out in ``site`` as an installed distribution."""
    shutil.copytree(PACKAGE, site / "flaneur_wanderer")
    info = site / "flaneur_wanderer-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: flaneur-wanderer\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    install(folder)
    return folder


def flaneur(site: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site), "FLANEUR_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run(
        [str(FLANEUR), *args], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(not FLANEUR.exists(), reason="the flaneur console script is not installed")
def test_installed_flaneur_runs_an_outside_agent_with_an_outside_view_provider(site, tmp_path):
    out = tmp_path / "run"
    args = ["run", "--agent", "wanderer,random", "--tasks", "toy-plugin-v1"]
    args += ["--views", "flat:ff0000", "--option", "wanderer.steps=1", "--out", str(out)]
    done = flaneur(site, tmp_path, *args, "--progress", "none", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [r["agent"] for r in summary["runs"]] == ["wanderer", "random"]
    assert summary["config"]["per_agent_options"] == {"wanderer": {"steps": 1}}
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    mine = [r for r in rows if r["agent"] == "wanderer"]
    assert mine and all(r["termination"] == "stopped" for r in mine)
    assert all(len(r["actions"]) == 2 for r in mine)  # one move (steps=1), then stop
    assert all(r["records"][0]["thoughts"] == "saw flat 32x24" for r in mine)
    assert not any(r.get("privileged") for r in rows)


@pytest.mark.skipif(not FLANEUR.exists(), reason="the flaneur console script is not installed")
def test_an_outside_agent_option_is_checked_before_anything_runs(site, tmp_path):
    out = tmp_path / "run"
    args = ["run", "--agent", "wanderer", "--tasks", "toy-plugin-v1"]
    done = flaneur(site, tmp_path, *args, "--option", "wanderer.steps=many", "--out", str(out))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: agent 'wanderer': option steps='many' must be an integer"
    )
    assert not out.exists()


def test_in_process_the_entry_points_appear_in_the_registries(site, monkeypatch):
    monkeypatch.syspath_prepend(str(site))
    for registry in (AGENTS, VIEWS):
        monkeypatch.setattr(registry, "_scanned", False)  # read the entry points again
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))
    assert "wanderer" in AGENTS.names() and "flat" in VIEWS.names()
    agent = make_agent("wanderer", steps=3)
    assert type(agent).__module__ == "flaneur_wanderer.agent" and agent.steps == 3
    # a module:Class name works without any registration
    assert AGENTS.get("flaneur_wanderer.agent:WandererAgent") is type(agent)
    with pytest.raises(FlaneurError, match=r"not a subclass of flaneur\.agents\.Agent"):
        AGENTS.get("flaneur_wanderer.views:FlatViews")
    with pytest.raises(FlaneurError, match=r"cannot import 'no_such_pkg.mod'"):
        AGENTS.get("no_such_pkg.mod:Agent")


@pytest.mark.skipif(not FLANEUR.exists(), reason="the flaneur console script is not installed")
def test_an_agent_named_as_module_class_needs_no_registration(site, tmp_path):
    (site / "flaneur_wanderer-0.1.dist-info" / "entry_points.txt").unlink()  # no entry points
    name = "flaneur_wanderer.agent:WandererAgent"
    out = tmp_path / "run"
    args = ["run", "--agent", name, "--tasks", "toy-plugin-v1", "--option", f"{name}.steps=0"]
    done = flaneur(site, tmp_path, *args, "--out", str(out), "--progress", "none", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [(r["agent"], r["rows"]) for r in summary["runs"]] == [(name, 5)]
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert all(r["agent"] == name and r["actions"] == ["stop"] for r in rows)

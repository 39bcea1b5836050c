"""Honest ablations (issue 30, item 4): an agent that perceives only the city's named places
(map landmarks, map descriptions), in a city without any and with no views, says so once
(one warning line), lists ``"nothing to see"`` in its rows' ``ablations`` and its summary
entry says ``"perception": "none"``: VELMA's ``"no image"`` mechanism, generalised
(:mod:`flaneur.agents.ablations`)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flaneur.agents import ablations
from flaneur.agents.ablations import NOTHING_TO_SEE, nothing_to_see, perception_of
from flaneur.env import toy_city, toy_episodes
from flaneur.env.toy import toy_graph
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.episode import write_episodes
from flaneur.testing import FakeOpenAIServer
from flaneur.world.city import City

FLANEUR = Path(sys.executable).with_name("flaneur")
BARE = City(name="toy-bare", graph=toy_graph())  # the toy streets without a single place


@pytest.fixture(autouse=True)
def _said_afresh(monkeypatch, tmp_path):
    monkeypatch.setattr(ablations, "_SAID", set())
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_nothing_to_see_is_said_once_and_read_from_rows(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="flaneur.agents"):
        assert nothing_to_see("probe", toy_city(), places_only=True, hint="add X") == ()
        assert nothing_to_see("probe", BARE, places_only=False, hint="add X") == ()
        for _ in range(3):
            got = nothing_to_see("probe", BARE, places_only=True, hint="add X")
            assert got == (NOTHING_TO_SEE,)
    said = [r.getMessage() for r in caplog.records if NOTHING_TO_SEE in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0]
    assert "probe" in said[0] and "'toy-bare'" in said[0] and said[0].endswith("add X")
    blind = {"ablations": [NOTHING_TO_SEE]}
    assert perception_of([blind, {"ablations": ["no image"]}]) == "none"
    assert perception_of([blind, {"termination": "completed"}]) is None
    assert perception_of([{"ablations": ["no planning"]}]) is None
    assert perception_of([]) is None


def _run(agent: str, city: City, folder: Path, **config) -> tuple[dict, list[dict]]:
    run = RunConfig(agents=(agent,), tasks=("toy",), cache_mode="off", **config)
    episodes = toy_episodes()[:2]
    summary = run_benchmark(run, folder, progress="none", loaded={"toy": (city, episodes)})
    rows, _ = read_rows(folder / "episodes.jsonl")
    return summary["runs"][0], rows


@pytest.mark.parametrize(
    ("agent", "config"),
    [
        ("explorer", {"scheme": "headings"}),
        ("ling", {"scheme": "headings"}),
        ("mapgpt", {"scheme": "nodes", "llm": "fake-model"}),
    ],
)
def test_agents_that_see_places_only_run_blind_without_them(
    agent, config, tmp_path, caplog
) -> None:
    with FakeOpenAIServer("echo") as server:
        if "llm" in config:
            config = {**config, "llm_base_url": server.base_url}
        with caplog.at_level(logging.WARNING, logger="flaneur.agents"):
            entry, rows = _run(agent, BARE, tmp_path / "bare", **config)
        said = [r.getMessage() for r in caplog.records if NOTHING_TO_SEE in r.getMessage()]
        assert len(said) == 1 and said[0].startswith(f"{agent}: city 'toy-bare'")
        assert len(rows) == 2 and all(r["ablations"] == [NOTHING_TO_SEE] for r in rows)
        assert entry["ablations"] == [NOTHING_TO_SEE] and entry["perception"] == "none"
        entry, rows = _run(agent, toy_city(), tmp_path / "toy", **config)  # places to see
    assert "perception" not in entry and "ablations" not in entry
    assert rows and not any("ablations" in r for r in rows)


@pytest.mark.skipif(not FLANEUR.is_file(), reason="console script not installed")
def test_installed_run_says_it_once_on_stderr(tmp_path) -> None:
    pack = BARE.save(tmp_path / "bare")
    tasks = tmp_path / "walks.jsonl"
    write_episodes(toy_episodes(), tasks)
    out = tmp_path / "run"
    args = ["run", "--agent", "explorer", "--tasks", str(tasks), "--city", str(pack)]
    args += ["--scheme", "headings", "--out", str(out), "--progress", "none", "--json"]
    env = {**os.environ, "FLANEUR_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [str(FLANEUR), *args], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if NOTHING_TO_SEE in line]
    assert len(warned) == 1 and warned[0].startswith("explorer: city"), done.stderr
    (entry,) = json.loads(done.stdout)["runs"]
    assert entry["perception"] == "none" and entry["ablations"] == [NOTHING_TO_SEE]

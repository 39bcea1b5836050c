"""A small served folder for the web app tests: two toy runs and a registered toy task set."""

from __future__ import annotations

from dataclasses import replace

import pytest

from flaneur.env.toy import toy_city, toy_episodes
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.registry import register_task
from flaneur.tasks.spec import TaskSpec
from harness.web_client import local_client

TASK = "web-toy-v1"


def toy_set():
    episodes = [replace(e, id=f"{e.id}-{k}") for k in range(2) for e in toy_episodes()]
    return toy_city(), episodes


@pytest.fixture(scope="session")
def toy_task():
    """The toy city as a registered task set (turns scheme, TC)."""
    city, episodes = toy_set()
    register_task(
        TaskSpec(
            TASK,
            "toy city for the web tests",
            build=lambda _d: (city, episodes),
            city="toy",
            scheme="turns",
            success_metric="tc",
        ),
        replace=True,
    )
    return city, episodes


@pytest.fixture(scope="session")
def served(tmp_path_factory, toy_task):
    """A folder of run folders: ``agents`` (forward and oracle) and ``second`` (oracle)."""
    root = tmp_path_factory.mktemp("runs")
    run_benchmark(
        RunConfig(agents=("forward", "oracle"), tasks=(TASK,)), root / "agents", progress="none"
    )
    run_benchmark(
        RunConfig(agents=("oracle",), tasks=(TASK,), seed=1), root / "second", progress="none"
    )
    return root


@pytest.fixture()
def client(served, tmp_path):
    """A TestClient of the app serving ``served``; play and annotations go to ``tmp_path``."""
    from flaneur.web import create_app

    app = create_app([served], play_dir=tmp_path / "play", cache_dir=tmp_path / "views")
    with local_client(app) as test_client:
        yield test_client

"""What the agent tests share: the toy city and its episodes, and a model set-up that reads
no key and writes its response cache into the test's folder."""

from __future__ import annotations

import pytest

from flaneur.env import toy_city, toy_episodes


@pytest.fixture(scope="module")
def city():
    """The toy city (one per test module)."""
    return toy_city()


@pytest.fixture(scope="module")
def episodes():
    """The toy city's episodes."""
    return toy_episodes()


@pytest.fixture()
def isolated_model(monkeypatch, tmp_path):
    """No ``OPENAI_API_KEY`` from the environment; the response cache under ``tmp_path``."""
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

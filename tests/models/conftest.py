"""Fixtures of the model-layer tests: one fake OpenAI server for the session, reset per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from flaneur.models import OpenAICompatible, ResponseCache, UsageTracker
from flaneur.testing import FakeOpenAIServer

FAKE_KEY = "sk-flaneur-test-DO-NOT-LEAK-8f3a2b71c9"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """No test reads a real key or writes to the user's cache directory."""
    for var in ("OPENAI_API_KEY", "FLANEUR_TEST_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache-dir"))


@pytest.fixture
def fake_key() -> str:
    """A recognisable fake API key that must never leak."""
    return FAKE_KEY


@pytest.fixture(scope="session")
def _session_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(hang_s=10.0) as server:
        yield server


@pytest.fixture
def fake(_session_server: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """The fake server, reset to the ``echo`` policy with no faults and zeroed counters."""
    _session_server.configure("echo")
    _session_server.api_key = None
    yield _session_server
    _session_server.configure("echo")
    _session_server.api_key = None


@pytest.fixture
def cache(tmp_path) -> Iterator[ResponseCache]:
    """A response cache in a temporary file, mode ``use``."""
    c = ResponseCache(tmp_path / "llm.sqlite", "use")
    yield c
    c.close()


@pytest.fixture
async def make(fake: FakeOpenAIServer) -> AsyncIterator[Any]:
    """Build :class:`OpenAICompatible` models on the fake server, with fast retries."""
    built: list[OpenAICompatible] = []

    def factory(**kwargs: Any) -> OpenAICompatible:
        kwargs.setdefault("base_url", fake.base_url)
        kwargs.setdefault("provider", "vllm")
        kwargs.setdefault("timeout", 5.0)
        kwargs.setdefault("backoff_base", 0.01)
        kwargs.setdefault("backoff_max", 0.05)
        kwargs.setdefault("seed", 0)
        kwargs.setdefault("usage", UsageTracker())
        model = OpenAICompatible(kwargs.pop("model", "fake-model"), **kwargs)
        built.append(model)
        return model

    yield factory
    for model in built:
        await model.aclose()

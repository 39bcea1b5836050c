"""The model layer against local servers: defaults, slots, adaptive limit, preflight, dead
servers, the max_tokens cap."""

from __future__ import annotations

import asyncio
import socket

import pytest

from flaneur.models import ModelConfig, OpenAICompatible, user
from flaneur.models.errors import ModelConnectionError, ModelHTTPError, ModelTimeoutError
from flaneur.models.health import AdaptiveLimit, ModelServerDown, ServerHealth, is_fatal
from flaneur.models.registry import is_local_url, parse_model_string, transport_defaults
from flaneur.testing import FakeOpenAIServer


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_adaptive_limit_halves_on_timeouts_and_grows_back():
    limit = AdaptiveLimit(8, grow_after=3)
    limit.on_timeout()
    assert limit.limit == 4
    limit.on_timeout()
    limit.on_timeout()
    limit.on_timeout()
    assert limit.limit == 1 and limit.timeouts == 4  # never below one
    for _ in range(3):
        limit.on_success()
    assert limit.limit == 2
    for _ in range(2):
        limit.on_success()
    limit.on_timeout()  # a time-out resets the streak
    assert limit.limit == 1
    for _ in range(3 * 20):
        limit.on_success()
    assert limit.limit == 8  # up to the ceiling, no further


async def test_adaptive_limit_bounds_concurrency():
    limit = AdaptiveLimit(3)
    running, peak = 0, 0

    async def job():
        nonlocal running, peak
        async with limit:
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1

    await asyncio.gather(*(job() for _ in range(12)))
    assert peak == 3
    limit.on_timeout()
    peak = 0
    await asyncio.gather(*(job() for _ in range(12)))
    assert peak == 1


def test_server_health_threshold_resets_on_success():
    health = ServerHealth(3, where="server X")
    err = ModelConnectionError("cannot reach X")
    health.success()
    health.failure(err)
    health.failure(err)
    health.success()
    health.failure(err)
    health.failure(err)
    assert health.down is None
    health.failure(err)
    assert health.down.startswith("server X failed 3 calls in a row (cannot reach X)")
    with pytest.raises(ModelServerDown, match="--resume"):
        health.check()


def test_fatal_errors_stop_at_once_before_any_success():
    missing = ModelHTTPError(404, "model 'x' not found")
    overflow = ModelHTTPError(400, "Requested tokens (3000) exceed context window of 2048")
    assert is_fatal(missing) and is_fatal(overflow)
    assert not is_fatal(ModelHTTPError(400, "bad temperature"))
    assert not is_fatal(ModelTimeoutError("slow"))
    health = ServerHealth(3)
    health.failure(overflow)
    assert "failed the first call" in health.down and "context window" in health.down
    later = ServerHealth(3)
    later.success()
    later.failure(overflow)  # after a success, one long prompt is one failure
    assert later.down is None and later.failures_in_row == 1
    never = ServerHealth(0)
    for _ in range(50):
        never.failure(ModelConnectionError("x"))
    assert never.down is None


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434", True),
        ("http://[::1]:8000/v1", True),
        ("http://192.168.1.20:8000/v1", True),
        ("http://gpu-box.local:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://8.8.8.8/v1", False),
    ],
)
def test_is_local_url(url, local):
    assert is_local_url(url) is local


def test_transport_defaults_for_local_and_hosted_servers():
    hosted = transport_defaults(parse_model_string("openai/gpt-4o-mini"))
    assert hosted == {"timeout": 60.0, "max_retries": 4, "max_in_flight": 16}
    local = transport_defaults(parse_model_string("llama-server/m"))
    assert local == {"timeout": 300.0, "max_retries": 2, "max_in_flight": None}
    vllm = transport_defaults(parse_model_string("vllm/m"))
    assert vllm["max_in_flight"] == 16 and vllm["timeout"] == 300.0
    custom = parse_model_string("m", base_url="http://127.0.0.1:9/v1")
    assert transport_defaults(custom)["max_in_flight"] is None


@pytest.mark.parametrize(("slots", "expected_peak"), [(3, 3), (None, 1)])
async def test_local_in_flight_follows_the_server_slots(slots, expected_peak):
    with FakeOpenAIServer("echo", latency=0.05, slots=slots) as server:
        model = ModelConfig("fake-model", base_url=server.base_url, cache_mode="off").build()
        assert model.timeout == 300.0 and model.max_retries == 2
        await asyncio.gather(*(model.complete([user(str(i))]) for i in range(9)))
        await model.aclose()
        assert server.peak_in_flight == expected_peak
        assert server.counts["/v1/models"] == 1 and server.counts["/props"] == 1
        if slots:
            assert model.context_length == 32768


async def test_explicit_in_flight_wins_over_slots():
    with FakeOpenAIServer("echo", latency=0.05, slots=1) as server:
        config = ModelConfig(
            "fake-model",
            base_url=server.base_url,
            cache_mode="off",
            max_in_flight=4,
            timeout_s=7.5,
            max_retries=0,
        )
        model = config.build()
        assert (model.timeout, model.max_retries) == (7.5, 0)
        await asyncio.gather(*(model.complete([user(str(i))]) for i in range(8)))
        await model.aclose()
        assert server.peak_in_flight == 4


async def test_timeouts_lower_the_in_flight_limit():
    with FakeOpenAIServer("echo", latency=0.5) as server:
        model = OpenAICompatible(
            "fake-model",
            base_url=server.base_url,
            max_in_flight=8,
            timeout=0.15,
            max_retries=0,
            failure_threshold=0,
        )
        results = await asyncio.gather(
            *(model.complete([user(str(i))]) for i in range(8)), return_exceptions=True
        )
        assert all(isinstance(r, ModelTimeoutError) for r in results)
        assert model._state.slots.limit == 1  # eight time-outs: 8 -> 4 -> 2 -> 1
        await model.aclose()


async def test_preflight_refused_connection_is_one_clear_error():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    model = OpenAICompatible("m", base_url=url, max_retries=1, backoff_base=0.01)
    with pytest.raises(ModelServerDown, match=r"does not answer .* is it running\?"):
        await model.complete([user("x")])
    assert model.health.down is not None
    with pytest.raises(ModelServerDown):  # no further request is even tried
        await model.complete([user("y")])
    await model.aclose()


async def test_preflight_unknown_model():
    with FakeOpenAIServer("echo", models=("a-model", "b-model")) as server:
        model = OpenAICompatible("c-model", base_url=server.base_url)
        with pytest.raises(ModelServerDown, match=r"'c-model' is not served .*a-model, b-model"):
            await model.complete([user("x")])
        await model.aclose()
        assert server.chat_count == 0


async def test_dead_server_mid_run_stops_after_threshold():
    with FakeOpenAIServer("echo", faults={i: "500" for i in range(1, 50)}) as server:
        model = OpenAICompatible(
            "fake-model", base_url=server.base_url, max_retries=0, failure_threshold=2
        )
        assert (await model.complete([user("first")])).text
        for _ in range(2):
            with pytest.raises(ModelHTTPError):
                await model.complete([user("again")])
        with pytest.raises(ModelServerDown, match=r"failed 2 calls in a row .*HTTP 500"):
            await model.complete([user("more")])
        assert server.chat_count == 3
        await model.aclose()


async def test_max_tokens_cap_lowers_and_fills_in():
    with FakeOpenAIServer("echo") as server:
        model = OpenAICompatible("fake-model", base_url=server.base_url, max_tokens_cap=50)
        await model.complete([user("a")], max_tokens=400)
        await model.complete([user("b")], max_tokens=8)
        await model.complete([user("c")])
        await model.aclose()
        sent = [r.body.get("max_tokens") for r in list(server.requests)[-3:]]
        assert sent == [50, 8, 50]

"""The OpenAI-compatible backend over real HTTP against the fake server."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import socket
import time

import pytest
from PIL import Image

from flaneur.models import (
    ModelConnectionError,
    ModelHTTPError,
    ModelResponseError,
    ModelTimeoutError,
    extract_json,
    system,
    user,
)
from flaneur.testing import FakeReply, FaultPlan


async def test_text_message(fake, make):
    model = make()
    reply = await model.complete([system("be a parrot"), user("hello there")], temperature=0)
    assert reply.text == "hello there"
    assert reply.finish_reason == "stop"
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens == 2
    assert reply.latency_s > 0 and reply.attempts == 1 and not reply.cached
    assert fake.chat_count == 1
    body = fake.requests[0].body
    assert body["model"] == "fake-model" and body["temperature"] == 0
    assert body["messages"][0] == {"role": "system", "content": "be a parrot"}


async def test_image_message_arrives_as_data_url(fake, make):
    seen = {}

    def policy(req):
        seen["urls"] = req.image_urls
        return f"{req.image_count} image(s)"

    fake.configure(policy)
    img = Image.new("RGB", (12, 9), (1, 2, 3))
    reply = await make().complete([user("describe", img)])
    assert reply.text == "1 image(s)"
    (url,) = seen["urls"]
    assert url.startswith("data:image/png;base64,")
    back = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert back.size == (12, 9) and back.getpixel((0, 0)) == (1, 2, 3)
    assert reply.usage.prompt_tokens >= 85


async def test_logprobs_are_parsed(fake, make):
    fake.configure(lambda req: FakeReply("LEFT", first_token_probs={"LEFT": 0.7, "RIGHT": 0.2}))
    reply = await make().complete([user("next?")], top_logprobs=5)
    assert fake.requests[0].body["logprobs"] is True
    assert fake.requests[0].body["top_logprobs"] == 5
    top = reply.first_top_logprobs()
    assert [t for t, _ in top][:2] == ["LEFT", "RIGHT"]
    assert top[0][1] == pytest.approx(-0.35667, abs=1e-4)


async def test_json_mode(fake, make):
    fake.configure("constant:sure, going left")
    reply = await make().complete([user("answer in JSON")], json_mode=True)
    assert fake.requests[0].body["response_format"] == {"type": "json_object"}
    assert extract_json(reply.text) == {"text": "sure, going left"}


async def test_max_tokens_truncates_with_length(fake, make):
    fake.configure("constant:one two three four five")
    reply = await make().complete([user("x")], max_tokens=2)
    assert reply.text == "one two" and reply.finish_reason == "length"


async def test_429_then_success(fake, make):
    fake.configure("constant:ok", faults={0: "429"})
    model = make()
    reply = await model.complete([user("x")])
    assert reply.text == "ok" and reply.attempts == 2
    assert fake.chat_count == 2
    assert model.usage.run.retries == 1 and model.usage.run.calls == 1


async def test_retry_after_is_honoured(fake, make):
    fake.configure("constant:ok", faults={0: "429:0.3"})
    start = time.perf_counter()
    await make().complete([user("x")])
    assert time.perf_counter() - start >= 0.3


async def test_three_500s_then_clear_error(fake, make):
    fake.configure("constant:never", faults=FaultPlan.first(3, "500"))
    model = make(max_retries=2)
    with pytest.raises(ModelHTTPError) as info:
        await model.complete([user("x")])
    err = info.value
    assert err.status == 500 and err.attempts == 3
    assert "fake HTTP 500 error" in str(err) and "3 attempts" in str(err)
    assert fake.chat_count == 3
    assert model.usage.run.failed_calls == 1 and model.usage.run.calls == 0


async def test_other_4xx_fail_fast_with_server_message(fake, make):
    fake.configure("echo", faults={0: "400"})
    with pytest.raises(ModelHTTPError, match="fake HTTP 400 error") as info:
        await make().complete([user("x")])
    assert info.value.status == 400 and info.value.attempts == 1
    assert fake.chat_count == 1


async def test_timeout_is_reported(fake, make):
    fake.configure("echo", faults={0: "timeout"})
    model = make(timeout=0.3, max_retries=0)
    start = time.perf_counter()
    with pytest.raises(ModelTimeoutError, match=r"no reply within 0\.3 s"):
        await model.complete([user("x")])
    assert time.perf_counter() - start < 2.0


async def test_timeout_then_success(fake, make):
    fake.configure("constant:late but fine", faults={0: "timeout", 1: "slow:0.05"})
    reply = await make(timeout=0.3).complete([user("x")])
    assert reply.text == "late but fine" and reply.attempts == 2


@pytest.mark.parametrize("fault", ["malformed", "truncated", "missing-choices"])
async def test_malformed_reply_is_retried(fake, make, fault):
    fake.configure("constant:fine", faults={0: fault})
    reply = await make().complete([user("x")])
    assert reply.text == "fine" and reply.attempts == 2


@pytest.mark.parametrize("fault", ["malformed", "truncated"])
async def test_malformed_reply_is_reported(fake, make, fault):
    fake.configure("echo", faults=FaultPlan.first(2, fault))
    with pytest.raises(ModelResponseError, match=r"malformed reply .2 attempts.*not valid JSON"):
        await make(max_retries=1).complete([user("x")])


async def test_empty_content_is_empty_text(fake, make):
    fake.configure("echo", faults={0: "empty"})
    reply = await make().complete([user("x")])
    assert reply.text == ""


async def test_connection_refused():
    from flaneur.models import OpenAICompatible

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = OpenAICompatible(
        "m",
        base_url=f"http://127.0.0.1:{port}/v1",
        max_retries=1,
        backoff_base=0.01,
        preflight=False,
    )
    with pytest.raises(ModelConnectionError, match=r"cannot reach .*2 attempts"):
        await model.complete([user("x")])
    await model.aclose()


async def test_in_flight_bound_is_shared(fake, make):
    fake.configure("echo", latency=0.1)
    model = make(max_in_flight=4)
    start = time.perf_counter()
    replies = await asyncio.gather(*(model.complete([user(f"q{i}")]) for i in range(24)))
    wall = time.perf_counter() - start
    assert [r.text for r in replies] == [f"q{i}" for i in range(24)]
    assert fake.peak_in_flight == 4
    assert 0.55 <= wall < 2.4  # 24 * 0.1 / 4 = 0.6 s at best; serial would be 2.4 s


async def test_connections_are_split_over_small_pools_that_all_serve(fake, make):
    from flaneur.models.openai_compatible import CONNECTIONS_PER_POOL

    fake.configure("echo", latency=0.1)
    model = make(max_in_flight=CONNECTIONS_PER_POOL * 2 + 3)  # pools of 8, 8 and 3
    replies = await asyncio.gather(*(model.complete([user(f"q{i}")]) for i in range(57)))
    assert [r.text for r in replies] == [f"q{i}" for i in range(57)]
    assert fake.peak_in_flight == 19  # every pool took part, none beyond its size
    pools = model._state.pools
    sizes = [c._transport._pool._max_connections for c in pools.clients]
    assert sizes == pools.free == [8, 8, 3]  # all free again
    opened = [len(c._transport._pool.connections) for c in pools.clients]
    assert opened == [8, 8, 3]  # kept alive for reuse, not one per request
    await model.aclose()


async def test_list_models_and_bare_base_url(fake, make):
    model = make(base_url=fake.base_url.removesuffix("/v1"))
    assert model.base_url == fake.base_url
    assert await model.list_models() == ["fake-model"]
    assert fake.counts["/v1/models"] == 1


def test_complete_sync_from_plain_code(fake):
    from flaneur.models import make_model

    model = make_model("fake-model", base_url=fake.base_url)
    assert model.complete_sync([user("sync hello")]).text == "sync hello"
    assert model.complete_sync([user("again")]).text == "again"
    assert fake.chat_count == 2
    model.close_sync()


async def test_unknown_params_pass_through(fake, make):
    await make(default_params={"temperature": 0.2}).complete(
        [user("x")], seed=7, temperature=None, extra_field={"a": 1}
    )
    body = fake.requests[0].body
    assert body["seed"] == 7 and body["extra_field"] == {"a": 1}
    assert "temperature" not in body  # None drops the default
    assert json.dumps(body)  # well-formed


def test_one_model_on_two_event_loops(fake):
    from flaneur.models import make_model

    model = make_model("fake-model", base_url=fake.base_url)

    async def ask(text: str) -> str:
        try:
            return (await model.complete([user(text)])).text
        finally:
            await model.aclose()  # release this loop's connections before it closes

    assert asyncio.run(ask("first loop")) == "first loop"
    assert asyncio.run(ask("second loop")) == "second loop"

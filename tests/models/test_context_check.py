"""The preflight's context check: the first prompt must fit the server's context."""

from __future__ import annotations

import asyncio

import pytest

from flaneur.models import ModelConfig, user
from flaneur.models.context import (
    check_fits,
    context_from_listing,
    context_from_props,
)
from flaneur.models.errors import ModelContextOverflow, ModelHTTPError
from flaneur.models.health import CONTEXT_HINT, ModelServerDown, ServerHealth
from flaneur.testing.fake_openai import FakeOpenAIServer


def test_context_from_props_reads_llama_cpp_n_ctx():
    assert context_from_props({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    assert context_from_props({"default_generation_settings": {"n_ctx": 0}}) is None
    assert context_from_props({"total_slots": 1}) is None
    assert context_from_props(None) is None


def test_context_from_listing_reads_vllm_max_model_len():
    listing = {"data": [{"id": "a", "max_model_len": 2048}, {"id": "b", "max_model_len": 512}]}
    assert context_from_listing(listing, "b") == 512
    assert context_from_listing(listing, "c") is None  # two models: no guessing
    single = {"data": [{"id": "served-name", "max_model_len": 8192}]}
    assert context_from_listing(single, "any-alias") == 8192  # one model serves any name
    assert context_from_listing({"data": [{"id": "x"}]}, "x") is None
    assert context_from_listing("junk", "x") is None


def test_check_fits_boundary_and_unknowns():
    check_fits(90, 10, 100, "s")  # exactly full fits
    with pytest.raises(ModelServerDown, match=r"91 prompt tokens \+ 10 for the reply > 100"):
        check_fits(91, 10, 100, "s")
    check_fits(None, 10, 100, "s")  # unknown prompt length: not checked
    check_fits(10_000, 10, None, "s")  # unknown context: not checked
    with pytest.raises(ModelServerDown, match="--llm-max-tokens"):
        check_fits(101, None, 100, "s")


def _model(server: FakeOpenAIServer):
    return ModelConfig("fake-model", base_url=server.base_url, cache_mode="off").build()


def test_a_prompt_too_long_for_the_server_stops_before_any_chat_request():
    # the fake server's pseudo tokens of "user: street street ... ": user, :, 300 words, " "
    with FakeOpenAIServer("echo", n_ctx=200, slots=1) as server:
        model = _model(server)

        async def go():
            with pytest.raises(ModelServerDown) as first:
                await model.complete([user("street " * 300)], max_tokens=8)
            with pytest.raises(ModelServerDown):  # later calls fail at once, no request
                await model.complete([user("hi")], max_tokens=2)
            await model.aclose()
            return str(first.value)

        message = asyncio.run(go())
        assert "303 prompt tokens + 8 for the reply > 200" in message
        assert CONTEXT_HINT in message and "\n" not in message
        assert server.counts["/v1/chat/completions"] == 0
        assert server.counts["/tokenize"] == 1
        assert model.context_length == 200 and model.health.down.startswith(message)


def test_a_prompt_that_fits_goes_through_and_the_context_is_learned():
    with FakeOpenAIServer("echo", n_ctx=200, slots=1) as server:
        model = _model(server)

        async def go():
            reply = await model.complete([user("street " * 100)], max_tokens=8)
            again = await model.complete([user("hello")], max_tokens=8)
            await model.aclose()
            return reply, again

        reply, again = asyncio.run(go())
        assert reply.text and again.text
        assert model.context_length == 200
        assert server.counts["/tokenize"] == 1  # checked once, at the preflight
        assert server.counts["/v1/chat/completions"] == 2


def test_a_server_that_cannot_tokenize_is_not_checked_beforehand():
    with FakeOpenAIServer("echo", slots=None) as server:  # no /props, no /tokenize
        model = _model(server)

        async def go():
            reply = await model.complete([user("street " * 300)], max_tokens=8)
            await model.aclose()
            return reply

        assert asyncio.run(go()).text
        assert model.context_length is None
        assert server.counts["/v1/chat/completions"] == 1


def test_a_first_call_refused_for_context_names_the_fix():
    health = ServerHealth(where="model server X")
    health.failure(ModelHTTPError(400, "the request exceeds the available context size"))
    assert health.down is not None and CONTEXT_HINT in health.down
    health = ServerHealth(where="llama.cpp")
    health.failure(ModelContextOverflow("Requested tokens (900) exceed context window of 512"))
    assert health.down is not None and "--llm-n-ctx" in health.down
    other = ServerHealth()
    other.failure(ModelHTTPError(401, "bad key"))
    assert other.down is not None and "fix it" in other.down


def test_vllm_style_server_context_and_count_are_read():
    with FakeOpenAIServer("echo", n_ctx=120, flavour="vllm") as server:
        model = _model(server)

        async def go():
            with pytest.raises(ModelServerDown, match=r"\+ 8 for the reply > 120"):
                await model.complete([user("street " * 200)], max_tokens=8)
            await model.aclose()

        asyncio.run(go())
        assert model.context_length == 120
        assert server.counts["/props"] == 1 and server.counts["/apply-template"] == 1  # 404s
        assert server.counts["/v1/chat/completions"] == 0


def test_fake_server_templates_an_image_as_one_media_marker():
    """An image part counts as a marker, not as its base64 data URL (as llama.cpp does), so a
    view sent to a VLM fits the fake server's context."""
    from PIL import Image

    from flaneur.models import make_model, run_sync, user
    from flaneur.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(["B"], n_ctx=64) as server:
        model = make_model("fake-model", base_url=server.base_url)
        reply = run_sync(model.complete([user("Which one? A or B", Image.new("RGB", (800, 460)))]))
        assert reply.text == "B" and server.chat_count == 1

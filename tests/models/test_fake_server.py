"""The fake OpenAI server itself: routes, policies, faults, concurrency and its command."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import httpx
import pytest

from flaneur.models import ModelHTTPError, user
from flaneur.testing import FakeOpenAIServer, FakeReply, FaultPlan, ScriptPolicy, policy_from_name
from flaneur.testing.fake_faults import parse_fault_args, parse_rate_args


def test_routes_and_counters(fake):
    with httpx.Client(base_url=fake.base_url) as client:
        assert client.get("/models").json()["data"][0]["id"] == "fake-model"
        assert client.get("/nope").status_code == 404
        bad = client.post("/chat/completions", content=b"{not json")
        assert bad.status_code == 400 and "messages" in bad.json()["error"]["message"]
        stats = client.get(fake.base_url.removesuffix("/v1") + "/_fake/stats").json()
    assert stats["counts"] == {"/v1/models": 1, "/v1/nope": 1, "/v1/chat/completions": 1}
    assert fake.chat_count == 1


def test_reply_shape(fake):
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "go LEFT"}],
        "logprobs": True,
        "top_logprobs": 3,
    }
    reply = httpx.post(f"{fake.base_url}/chat/completions", json=body).json()
    assert reply["object"] == "chat.completion" and reply["model"] == "m"
    choice = reply["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "go LEFT"}
    content = choice["logprobs"]["content"]
    assert [c["token"] for c in content] == ["go", " LEFT"]
    assert all(len(c["top_logprobs"]) == 3 for c in content)
    assert reply["usage"]["total_tokens"] == reply["usage"]["prompt_tokens"] + 2


async def test_many_slow_requests_are_not_serialised(fake, make):
    fake.configure("echo", latency=0.2)
    model = make(max_in_flight=32)
    start = time.perf_counter()
    await asyncio.gather(*(model.complete([user(str(i))]) for i in range(32)))
    # served one after another they would take 32 x 0.2 = 6.4 s; the peak proves the overlap
    assert time.perf_counter() - start < 3.2
    assert fake.peak_in_flight >= 16


async def test_script_is_not_consumed_by_faults(fake, make):
    fake.configure(["one", "two"], faults={0: "503", 2: "429"})
    model = make()
    assert (await model.complete([user("a")])).text == "one"
    assert (await model.complete([user("b")])).text == "two"
    assert (await model.complete([user("c")])).text == "two"  # repeats the last reply
    assert fake.chat_count == 5


async def test_async_policy_and_broken_policy(fake, make):
    async def slow_teacher(req):
        await asyncio.sleep(0.01)
        return FakeReply("STOP", delay=0.01)

    fake.configure(slow_teacher)
    assert (await make().complete([user("x")])).text == "STOP"

    def broken(req):
        raise KeyError("no teacher action")

    fake.configure(broken)
    with pytest.raises(ModelHTTPError, match="fake policy failed: KeyError"):
        await make(max_retries=0).complete([user("x")])


def test_script_policy_modes():
    cyc = ScriptPolicy(["a", "b"], when_done="cycle")
    assert [cyc(None) for _ in range(5)] == ["a", "b", "a", "b", "a"]
    err = ScriptPolicy(["a"], when_done="error")
    err(None)
    with pytest.raises(RuntimeError, match="exhausted"):
        err(None)
    with pytest.raises(ValueError):
        ScriptPolicy([])


def test_policy_names():
    from flaneur.testing.fake_policies import FakeRequest, echo_policy

    req = FakeRequest(0, {"messages": [{"role": "user", "content": "hi"}]})
    assert policy_from_name("echo") is echo_policy
    assert policy_from_name("constant:GO LEFT")(req) == "GO LEFT"
    assert policy_from_name("script:A|B")(req) == "A"
    assert policy_from_name("flaneur.testing.fake_policies:echo_policy")(req) == "hi"
    a = [policy_from_name("random-action", seed=5)(req).text for _ in range(3)]
    b = [policy_from_name("random-action:5")(req).text for _ in range(3)]
    assert a[0] == b[0]
    with pytest.raises(ValueError, match="unknown fake policy"):
        policy_from_name("telepathy")


def test_fault_plan_is_seeded():
    picks = [FaultPlan(rates={"500": 0.3}, seed=7).pick(i) for i in range(1)]
    p1 = FaultPlan(rates={"500": 0.3, "timeout": 0.1}, seed=7)
    p2 = FaultPlan(rates={"500": 0.3, "timeout": 0.1}, seed=7)
    s1 = [p1.pick(i) for i in range(500)]
    assert s1 == [p2.pick(i) for i in range(500)]
    assert 100 < s1.count("500") < 200 and 25 < s1.count("timeout") < 80
    assert picks
    assert FaultPlan(at={2: "500"}).pick(2) == "500"
    with pytest.raises(ValueError):
        FaultPlan(rates={"500": 0.8, "429": 0.5})


def test_fault_arg_parsing():
    assert parse_fault_args(["0=429", "3-5=500"]) == {0: "429", 3: "500", 4: "500", 5: "500"}
    assert parse_rate_args(["500=0.1", "slow:0.2=0.5"]) == {"500": 0.1, "slow:0.2": 0.5}
    with pytest.raises(ValueError):
        parse_fault_args(["oops"])


def test_start_stop_as_context_manager():
    with FakeOpenAIServer("constant:hi") as server:
        port = server.port
        assert port > 0
        reply = httpx.post(
            f"{server.base_url}/chat/completions",
            json={"messages": [{"role": "user", "content": "x"}]},
        )
        assert reply.json()["choices"][0]["message"]["content"] == "hi"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/v1/models")


_CLI = (
    "import typer; from flaneur.cli.models import fake_llm_command; "
    "app = typer.Typer(); app.command()(fake_llm_command); app()"
)


def test_fake_llm_command(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["FORWARD", "STOP"]))
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CLI,
            "--port",
            "0",
            "--policy",
            "script",
            "--script",
            str(script),
            "--fault",
            "0=500",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            info = json.loads(proc.stdout.readline())
            url = f"{info['base_url']}/chat/completions"
            body = {"messages": [{"role": "user", "content": "x"}]}
            assert httpx.post(url, json=body).status_code == 500
            texts = [
                httpx.post(url, json=body).json()["choices"][0]["message"]["content"]
                for _ in range(3)
            ]
            assert texts == ["FORWARD", "STOP", "STOP"]
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert proc.returncode == 0

"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It speaks ``POST /v1/chat/completions`` (log-probabilities, JSON mode, usage) and
``GET /v1/models``; replies come from a policy (see :mod:`flaneur.testing.fake_policies`).
Faults can be injected per request index or at random with a seed.  It runs on uvicorn in a
background thread (``with FakeOpenAIServer(...) as server:``) or as a command
(``flaneur fake-llm``, ``python -m flaneur.testing.fake_openai``), and counts requests per
endpoint so tests can check that a cache hit sent nothing.

Fault kinds: ``429`` or ``429:<retry-after-s>``, any HTTP status (``500``, ``503``,
``400``...), ``timeout`` (hang until the client gives up), ``slow:<s>``, ``malformed`` (not
JSON), ``truncated`` (JSON cut in half), ``missing-choices``, ``wrong-action`` (a reply that
names no action), ``empty`` (empty content), ``echo-auth`` (a 401 whose message quotes the
client's Authorization header, to test redaction).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import signal
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from flaneur.testing.fake_faults import (
    WRONG_ACTION_TEXT,
    FaultPlan,
    parse_fault_args,
    parse_rate_args,
)
from flaneur.testing.fake_policies import (
    FakeReply,
    FakeRequest,
    Policy,
    ReplyLike,
    ScriptPolicy,
    policy_from_name,
    render_completion,
    tokenize,
)


def _json_response(
    obj: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    body = json.dumps(obj, separators=(",", ":")).encode()
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def _error(status: int, message: str, kind: str = "fake_error", headers=None) -> Response:
    return _json_response(
        {"error": {"message": message, "type": kind, "code": status}}, status, headers
    )


def _prompt_content(content: Any) -> str:
    """A message's content as a chat template renders it: text parts as they are, each image
    as one media marker (as llama.cpp does), never its base64 data URL as text."""
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) if p.get("type") == "text" else "<__media__>"
            for p in content
            if isinstance(p, dict)
        )
    return "" if content is None else str(content)


class FakeOpenAIServer:
    """The fake server.

    Parameters
    ----------
    policy
        A policy callable, a policy name (see :func:`policy_from_name`), or a list of replies
        (a script).
    host, port
        Where to listen; port 0 picks a free one (see :attr:`port` after :meth:`start`).
    latency
        Seconds every chat reply waits before it is sent.
    faults
        A :class:`FaultPlan`, or ``{request_index: fault}``.
    fault_rates
        ``{fault: probability}`` (with ``faults`` given as a dict or ``None``).
    seed
        Seed of random faults and of ``random-action``.
    models
        Names listed by ``/v1/models``.
    api_key
        If set, requests must carry ``Authorization: Bearer <api_key>`` (else 401).
    hang_s
        How long a ``timeout`` fault hangs (it stops early when the server stops).
    slots
        Parallel slots reported at ``GET /props`` as llama.cpp's server does
        (``total_slots``); ``None`` answers 404 there, like servers without it.
    n_ctx
        Context length the server reports.  Like llama.cpp's server it gives it at
        ``GET /props`` and answers ``POST /apply-template`` (the messages as one
        ``role: content`` prompt) and ``POST /tokenize`` (its word-like pseudo tokens).
    flavour
        ``"llama.cpp"`` (as above) or ``"vllm"``: no ``/props`` nor ``/apply-template``; the
        model listing gives ``max_model_len`` and ``POST /tokenize`` takes the messages and
        answers ``count`` and ``max_model_len``, as vLLM does.

    Attributes
    ----------
    counts
        Requests received per path (``"/v1/chat/completions"``, ``"/v1/models"``, ...).
    requests
        The last 10 000 chat requests as :class:`FakeRequest` objects.
    peak_in_flight
        Most chat requests that were being handled at the same time.
    """

    def __init__(
        self,
        policy: Policy | str | Sequence[ReplyLike] = "echo",
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        faults: FaultPlan | Mapping[int, str] | None = None,
        fault_rates: Mapping[str, float] | None = None,
        seed: int = 0,
        models: Sequence[str] = ("fake-model",),
        api_key: str | None = None,
        hang_s: float = 30.0,
        slots: int | None = 16,
        n_ctx: int = 32768,
        flavour: str = "llama.cpp",
    ):
        if flavour not in ("llama.cpp", "vllm"):
            raise ValueError(f"flavour must be 'llama.cpp' or 'vllm', not {flavour!r}")
        self.slots = slots if flavour == "llama.cpp" else None
        self.n_ctx = n_ctx
        self.flavour = flavour
        self.host = host
        self.port = port
        self.models = list(models)
        self.api_key = api_key
        self.hang_s = hang_s
        self.counts: Counter[str] = Counter()
        self.requests: deque[FakeRequest] = deque(maxlen=10_000)
        self.configure(policy, latency=latency, faults=faults, fault_rates=fault_rates, seed=seed)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/props", self._props, methods=["GET"]),
                Route("/apply-template", self._apply_template, methods=["POST"]),
                Route("/tokenize", self._tokenize, methods=["POST"]),
                Route("/_fake/stats", self._stats, methods=["GET"]),
                Route("/_fake/reset", self._reset, methods=["POST"]),
                Route("/{path:path}", self._unknown, methods=["GET", "POST", "PUT", "DELETE"]),
            ]
        )

    # -- configuration -------------------------------------------------------------------
    def configure(
        self,
        policy: Policy | str | Sequence[ReplyLike] = "echo",
        *,
        latency: float = 0.0,
        faults: FaultPlan | Mapping[int, str] | None = None,
        fault_rates: Mapping[str, float] | None = None,
        seed: int = 0,
    ) -> FakeOpenAIServer:
        """Set policy, latency and faults, and zero the counters (reuse a running server)."""
        if isinstance(policy, str):
            policy = policy_from_name(policy, seed=seed)
        elif not callable(policy):
            policy = ScriptPolicy(list(policy))
        self.policy: Policy = policy
        self.latency = float(latency)
        if not isinstance(faults, FaultPlan):
            faults = FaultPlan(at=faults, rates=fault_rates, seed=seed)
        self.faults = faults
        self.reset_counts()
        return self

    def reset_counts(self) -> None:
        """Zero the request counters and forget recorded requests."""
        self.counts.clear()
        self.requests.clear()
        self._chat_index = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self._generation = getattr(self, "_generation", 0) + 1

    @property
    def chat_count(self) -> int:
        """Chat-completion requests received so far."""
        return self.counts["/v1/chat/completions"]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    # -- handlers ------------------------------------------------------------------------
    async def _sleep(self, seconds: float, request: Request | None = None) -> None:
        """Wait; long waits end early on :meth:`stop` or when the client hangs up."""
        if seconds <= 1.0:  # short waits in one piece, precisely
            await asyncio.sleep(seconds)
            return
        end = time.monotonic() + seconds
        while not self._stopping and (left := end - time.monotonic()) > 0:
            await asyncio.sleep(min(left, 0.05))
            if request is not None and await request.is_disconnected():
                return

    async def _chat(self, request: Request) -> Response:
        self.counts[request.url.path] += 1
        generation = self._generation
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._answer(request)
        finally:
            if generation == self._generation:  # not a leftover from before a reset
                self.in_flight -= 1

    async def _answer(self, request: Request) -> Response:
        index = self._chat_index
        self._chat_index += 1
        raw = await request.body()
        expected = None if self.api_key is None else f"Bearer {self.api_key}"
        if expected is not None and request.headers.get("authorization") != expected:
            return _error(401, "invalid API key", "invalid_request_error")
        try:
            body = json.loads(raw)
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("no messages")
        except ValueError:
            return _error(
                400, "request body must be JSON with a messages array", "invalid_request_error"
            )
        req = FakeRequest(index, body)
        self.requests.append(req)
        fault = self.faults.pick(index)
        if fault is not None:
            early = await self._fault_response(fault, req, request)
            if early is not None:
                return early
        try:
            reply = self.policy(req)
            if inspect.isawaitable(reply):
                reply = await reply
        except Exception as err:  # a broken policy is the test's bug: say so in a 500
            return _error(500, f"fake policy failed: {type(err).__name__}: {err}", "server_error")
        if isinstance(reply, str):
            reply = FakeReply(reply)
        if fault == "wrong-action":
            reply = FakeReply(WRONG_ACTION_TEXT)
        elif fault == "empty":
            reply = FakeReply("")
        delay = self.latency + reply.delay
        if fault is not None and fault.startswith("slow:"):
            delay += float(fault.split(":", 1)[1])
        if delay > 0:
            await self._sleep(delay)
        payload = render_completion(req, reply)
        if fault == "truncated":
            text = json.dumps(payload)
            return Response(text[: len(text) // 2], media_type="application/json")
        if fault == "missing-choices":
            payload["choices"] = []
        return _json_response(payload)

    async def _fault_response(
        self, fault: str, req: FakeRequest, request: Request
    ) -> Response | None:
        """A response for faults that replace the reply; ``None`` for the others."""
        head, _, arg = fault.partition(":")
        if head == "429":
            headers = {"Retry-After": arg} if arg else None
            return _error(
                429, "Rate limit reached for fake-model (fake)", "rate_limit_exceeded", headers
            )
        if head.isdigit():
            return _error(
                int(head),
                f"fake HTTP {head} error",
                "server_error" if int(head) >= 500 else "invalid_request_error",
            )
        if head == "timeout":
            await self._sleep(self.hang_s, request)
            return _error(504, "fake server gave up waiting")
        if head == "malformed":
            return Response(b"<html>this is not JSON {", media_type="application/json")
        if head == "echo-auth":
            return _error(
                401, f"Incorrect API key provided: {request.headers.get('authorization', '')}"
            )
        if head in ("slow", "truncated", "missing-choices", "wrong-action", "empty"):
            return None
        return _error(500, f"unknown fake fault {fault!r}")

    async def _models(self, request: Request) -> Response:
        self.counts[request.url.path] += 1
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "flaneur"} for m in self.models
        ]
        if self.flavour == "vllm":
            data = [{**row, "max_model_len": self.n_ctx} for row in data]
        return _json_response({"object": "list", "data": data})

    async def _props(self, request: Request) -> Response:
        self.counts[request.url.path] += 1
        if self.slots is None:
            return _error(404, "no route GET /props", "not_found")
        return _json_response(
            {"total_slots": self.slots, "default_generation_settings": {"n_ctx": self.n_ctx}}
        )

    async def _apply_template(self, request: Request) -> Response:
        self.counts[request.url.path] += 1
        if self.slots is None:  # a server without llama.cpp's endpoints
            return _error(404, "no route POST /apply-template", "not_found")
        messages = (await request.json()).get("messages") or []
        lines = [f"{m.get('role', '')}: {_prompt_content(m.get('content'))}" for m in messages]
        return _json_response({"prompt": "\n".join(lines)})

    async def _tokenize(self, request: Request) -> Response:
        self.counts[request.url.path] += 1
        body = await request.json()
        if self.flavour == "vllm":
            lines = [
                f"{m.get('role', '')}: {_prompt_content(m.get('content'))}"
                for m in body["messages"]
            ]
            count = len(tokenize("\n".join(lines)))
            return _json_response({"count": count, "max_model_len": self.n_ctx, "tokens": []})
        if self.slots is None:
            return _error(404, "no route POST /tokenize", "not_found")
        content = str(body.get("content", ""))
        return _json_response({"tokens": list(range(len(tokenize(content))))})

    async def _stats(self, request: Request) -> Response:
        return _json_response(
            {"counts": dict(self.counts), "chat": self.chat_count, "peak": self.peak_in_flight}
        )

    async def _reset(self, request: Request) -> Response:
        self.reset_counts()
        return _json_response({"ok": True})

    async def _unknown(self, request: Request) -> Response:
        self.counts[request.url.path] += 1
        return _error(404, f"no route {request.method} {request.url.path}", "not_found")

    # -- lifecycle -----------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> FakeOpenAIServer:
        """Start serving in a background thread; returns once the port accepts connections."""
        if self._thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            http="h11",
            ws="none",
            loop="asyncio",
            timeout_graceful_shutdown=1,
            timeout_keep_alive=60,
            backlog=1024,
        )
        self._server = uvicorn.Server(config)
        self._stopping = False
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="fake-openai", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("fake OpenAI server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread to end."""
        if self._server is None or self._thread is None:
            return
        self._stopping = True
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_until_interrupted(self, announce=print) -> None:
        """Start, announce the base URL, and serve until SIGINT or SIGTERM."""
        done = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: done.set())
        with self:
            announce(self.base_url)
            while not done.wait(0.5):
                if self._thread is None or not self._thread.is_alive():
                    break


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m flaneur.testing.fake_openai --port 0 --policy echo``."""
    ap = argparse.ArgumentParser(description="Fake OpenAI-compatible server on 127.0.0.1.")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--policy", default="echo")
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--fault", action="append", default=[])
    ap.add_argument("--fault-rate", action="append", default=[])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    server = FakeOpenAIServer(
        args.policy,
        port=args.port,
        latency=args.latency,
        seed=args.seed,
        faults=parse_fault_args(args.fault),
        fault_rates=parse_rate_args(args.fault_rate),
    )
    server.serve_until_interrupted(lambda url: print(url, flush=True))

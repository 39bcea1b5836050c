"""Backend for any server that speaks OpenAI's ``/v1/chat/completions``.

OpenAI itself, vLLM, SGLang, Ollama and llama.cpp's ``llama-server`` all do.  One
:class:`OpenAICompatible` instance holds a pooled ``httpx.AsyncClient`` and an adaptive limit
on the requests in flight (:class:`~flaneur.models.health.AdaptiveLimit`: halved on a
time-out, grown back slowly); every episode of a run shares the instance, and so the bound.
Failed requests are retried with jittered exponential backoff on 408/429/5xx, time-outs,
dropped connections and malformed replies; other 4xx fail at once with the server's message.

The keep-alive connections are split over small ``httpx.AsyncClient`` pools of at most
:data:`CONNECTIONS_PER_POOL` connections each (a request goes to the pool with the fewest
requests in flight): httpcore checks every connection of a pool, with a system call per
idle one, whenever a request starts or ends, so one pool of 64 connections cost about 7 ms
of CPU per request where pools of 8 cost under 1 ms.

Before its first request the model checks the server once (*preflight*): ``GET /models``
must answer and list the model (a server listing a single model serves it under any name),
``max_in_flight=None`` takes the server's slot count from llama.cpp's ``GET /props``
(``total_slots``), else 1, and where the server tells its context length and can tokenize,
the first prompt and its ``max_tokens`` must fit (:mod:`flaneur.models.context`).  A server
that cannot be reached, does not know the model or is too small for the first prompt stops
the run with one line (:class:`~flaneur.models.health.ModelServerDown`).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import random
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from flaneur.models.base import BaseChatModel
from flaneur.models.cache import ResponseCache
from flaneur.models.completion import Completion, completion_from_openai
from flaneur.models.context import (
    check_fits,
    context_from_listing,
    context_from_props,
    count_prompt_tokens,
    request_json,
)
from flaneur.models.errors import (
    ModelConfigError,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelTimeoutError,
)
from flaneur.models.health import AdaptiveLimit, ModelServerDown
from flaneur.models.messages import Message, to_openai
from flaneur.models.secrets import Secret, api_key_from_env
from flaneur.models.usage import UsageTracker

log = logging.getLogger("flaneur.models")

RETRY_STATUS = frozenset({408, 425, 429})
CONNECTIONS_PER_POOL = 8
"""Keep-alive connections of one ``httpx.AsyncClient`` pool (see the module docstring)."""
_LOOPBACK = ("127.", "localhost", "::1", "[::1]")


def normalize_base_url(base_url: str) -> str:
    """Strip a trailing slash and add ``/v1`` to a bare ``http://host:port``.

    Raises
    ------
    ModelConfigError
        If the URL is not ``http(s)://host[:port][/path]``.
    """
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelConfigError(f"base URL must look like http://host:port/v1, not {base_url!r}")
    if parts.username or parts.password:
        raise ModelConfigError("put credentials in an environment variable, not in the base URL")
    if parts.path in ("", "/"):
        url += "/v1"
    return url


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host.startswith(_LOOPBACK) or host == "localhost"


def _server_message(resp: httpx.Response) -> str:
    """The error message a server put in its reply, shortened."""
    text = resp.text
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:300] or resp.reason_phrase
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("detail") or err.get("msg")
            if msg:
                return str(msg)[:300]
        elif isinstance(err, str):
            return err[:300]
        if "detail" in data:
            return str(data["detail"])[:300]
    return text.strip()[:300]


def _retry_after(resp: httpx.Response) -> float | None:
    value = resp.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class _Pools:
    """Connection pools of one event loop: each request takes the one with the most free
    connections."""

    def __init__(self, clients: list[httpx.AsyncClient], sizes: list[int]) -> None:
        self.clients = clients
        self.free = list(sizes)

    @contextlib.contextmanager
    def lease(self) -> Iterator[httpx.AsyncClient]:
        """The client with the most free connections, held for one request."""
        free = self.free
        i = max(range(len(free)), key=free.__getitem__) if len(free) > 1 else 0
        free[i] -= 1
        try:
            yield self.clients[i]
        finally:
            free[i] += 1

    async def aclose(self) -> None:
        """Close every pool."""
        for client in self.clients:
            await client.aclose()


@dataclass(slots=True)
class _LoopState:
    loop: asyncio.AbstractEventLoop
    pools: _Pools
    slots: AdaptiveLimit
    ready: asyncio.Lock

    @property
    def client(self) -> httpx.AsyncClient:
        """A client for one-off requests (preflight, model listing)."""
        return self.pools.clients[0]


@dataclass(slots=True)
class _Failure:
    kind: str  # "timeout" | "connection" | "http" | "malformed"
    detail: str
    status: int = 0
    retry_after: float | None = None


class OpenAICompatible(BaseChatModel):
    """Chat model behind an OpenAI-compatible HTTP server.

    Parameters
    ----------
    model
        Model name the server knows (e.g. ``gpt-4o-mini``, ``Qwen/Qwen2.5-VL-7B-Instruct``).
    base_url
        Server root including ``/v1`` (e.g. ``http://localhost:8000/v1``).
    provider
        Label of the provider (``openai``, ``vllm``, ...), used in :attr:`name`.
    api_key
        The key; when ``None`` it is read from ``api_key_env`` (default ``OPENAI_API_KEY``).
    api_key_env
        Name of the environment variable holding the key.
    require_key
        Fail when the variable is unset (hosted APIs); otherwise ``EMPTY`` is sent.
    timeout
        Seconds one request may take before it counts as timed out.
    max_retries
        Retries after the first attempt (so ``max_retries + 1`` requests at most).
    max_in_flight
        Most requests in flight at once, shared by every caller of this instance; ``None``
        asks the server for its slot count at preflight (llama.cpp's ``/props``), else 1.
        Time-outs lower the limit for a while (see :class:`AdaptiveLimit`).
    backoff_base, backoff_max
        Backoff before retry ``n`` is drawn from ``[d/2, d]`` with
        ``d = min(backoff_max, backoff_base * 2**(n-1))``.
    max_retry_after
        Longest ``Retry-After`` (seconds) that is honoured; longer ones are capped.
    cache, usage, default_params
        See :class:`~flaneur.models.base.BaseChatModel`.
    supports_logprobs
        Whether the server returns ``top_logprobs`` (used by action scoring).
    seed
        Seed of the backoff jitter (for reproducible tests).
    failure_threshold
        Calls failed for good in a row after which the server counts as down (``0``: never).
    preflight
        Check the server (``GET /models``, slots) before the first request.
    max_tokens_cap
        See :class:`~flaneur.models.base.BaseChatModel`.
    """

    backend_kind = "openai-compatible"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        provider: str = "openai",
        api_key: Secret | None = None,
        api_key_env: str | None = None,
        require_key: bool = False,
        timeout: float = 60.0,
        max_retries: int = 4,
        max_in_flight: int | None = 16,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        max_retry_after: float = 60.0,
        cache: ResponseCache | None = None,
        usage: UsageTracker | None = None,
        default_params: Mapping[str, Any] | None = None,
        supports_logprobs: bool = True,
        seed: int | None = None,
        failure_threshold: int = 3,
        preflight: bool = True,
        max_tokens_cap: int | None = None,
    ):
        if not model:
            raise ModelConfigError("empty model name")
        if max_in_flight is not None and max_in_flight < 1:
            raise ModelConfigError(f"max_in_flight must be at least 1, not {max_in_flight}")
        if max_retries < 0 or timeout <= 0:
            raise ModelConfigError("max_retries must be >= 0 and timeout > 0")
        super().__init__(
            f"{provider}/{model}",
            cache=cache,
            usage=usage,
            default_params=default_params,
            failure_threshold=failure_threshold,
            max_tokens_cap=max_tokens_cap,
        )
        self.model = model
        self.provider = provider
        self.base_url = normalize_base_url(base_url)
        self.url = f"{self.base_url}/chat/completions"
        self._key = (
            api_key if api_key is not None else api_key_from_env(api_key_env, required=require_key)
        )
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_in_flight = None if max_in_flight is None else int(max_in_flight)
        self.preflight = preflight
        self.server_models: list[str] | None = None
        self.context_length: int | None = None
        self._listing: Any = None
        self.health.where = f"model server {self.base_url}"
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.max_retry_after = float(max_retry_after)
        self.supports_logprobs = supports_logprobs
        self._rng = random.Random(seed)
        self._state: _LoopState | None = None

    def identity(self) -> dict[str, Any]:
        """Backend kind, base URL and model (the cache-key identity)."""
        return {"backend": self.backend_kind, "base_url": self.base_url, "model": self.model}

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._state
        if state is None or state.loop is not loop:
            slots = AdaptiveLimit(self.max_in_flight or 1)
            old, state = state, _LoopState(loop, self._pools(), slots, asyncio.Lock())
            self._state = state
            if old is not None and old.loop.is_running() and not old.loop.is_closed():
                asyncio.run_coroutine_threadsafe(old.pools.aclose(), old.loop)
        return state

    def _pools(self) -> _Pools:
        """Enough pools of :data:`CONNECTIONS_PER_POOL` connections for ``max_in_flight``
        requests (64 when the server is asked for its slots), sharing one TLS context
        (even for ``http://``, each ``httpx.AsyncClient`` would load its own)."""
        total = self.max_in_flight or 64
        count = -(-total // CONNECTIONS_PER_POOL)
        verify: Any = True
        trust_env = not _is_loopback(self.base_url)
        if count > 1 and hasattr(httpx, "create_ssl_context"):  # every client makes one
            verify = httpx.create_ssl_context(trust_env=trust_env)  # (~50 ms): share it
        clients = []
        sizes = [min(CONNECTIONS_PER_POOL, total - k * CONNECTIONS_PER_POOL) for k in range(count)]
        for size in sizes:
            clients.append(
                httpx.AsyncClient(
                    headers={
                        "Authorization": f"Bearer {self._key.reveal()}",
                        "Content-Type": "application/json",
                        "Accept": "application/json",
                    },
                    timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
                    limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                    verify=verify,
                    trust_env=trust_env,
                )
            )
        return _Pools(clients, sizes)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        ceiling = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))
        delay = ceiling / 2 + self._rng.uniform(0, ceiling / 2)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_retry_after))
        return delay

    async def _attempt(self, state: _LoopState, content: bytes) -> Completion | _Failure:
        async with state.slots:
            t0 = time.perf_counter()
            try:
                async with asyncio.timeout(self.timeout):
                    with state.pools.lease() as client:
                        resp = await client.post(self.url, content=content)
            except (TimeoutError, httpx.TimeoutException):
                state.slots.on_timeout()
                return _Failure("timeout", f"no reply within {self.timeout:g} s")
            except httpx.DecodingError as err:
                return _Failure("malformed", f"undecodable body: {type(err).__name__}")
            except httpx.RequestError as err:  # refused, reset, closed, protocol errors
                detail = self._key.redact(f"{type(err).__name__}: {err}".rstrip(": "))
                return _Failure("connection", detail)
            latency = time.perf_counter() - t0
        status = resp.status_code
        if 200 <= status < 300:
            state.slots.on_success()
            try:
                payload = json.loads(resp.content)
            except ValueError:
                snippet = self._key.redact(resp.content[:120].decode("utf-8", "replace"))
                return _Failure("malformed", f"reply is not valid JSON (truncated?): {snippet!r}")
            try:
                return completion_from_openai(payload, latency_s=latency, model=self.model)
            except ModelResponseError as err:
                return _Failure("malformed", self._key.redact(str(err)))
        message = self._key.redact(_server_message(resp))
        if status in RETRY_STATUS or status >= 500:
            return _Failure("http", message, status=status, retry_after=_retry_after(resp))
        raise ModelHTTPError(status, message, url=self.url)

    def _final_error(self, failure: _Failure, attempts: int) -> ModelError:
        tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
        if failure.kind == "http":
            err: ModelError = ModelHTTPError(
                failure.status, failure.detail, url=self.url, attempts=attempts
            )
        elif failure.kind == "timeout":
            err = ModelTimeoutError(f"{self.url}: {failure.detail} ({tries})")
        elif failure.kind == "connection":
            err = ModelConnectionError(f"cannot reach {self.url} ({tries}): {failure.detail}")
        else:
            err = ModelResponseError(f"{self.url}: malformed reply ({tries}): {failure.detail}")
        err.attempts = attempts
        return err

    async def _complete(self, messages: tuple[Message, ...], params: dict[str, Any]) -> Completion:
        body = {"model": self.model, "messages": to_openai(messages), **params}
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        state = self._loop_state()
        if self.preflight and self.server_models is None:
            async with state.ready:
                self.health.check()  # a preflight that failed while this call waited
                if self.server_models is None:
                    await self._preflight(state, body)
        attempt = 0
        while True:
            attempt += 1
            try:
                result = await self._attempt(state, content)
            except ModelHTTPError as err:
                err.attempts = attempt
                raise
            if isinstance(result, Completion):
                if attempt == 1:
                    return result
                return Completion(
                    text=result.text,
                    finish_reason=result.finish_reason,
                    usage=result.usage,
                    latency_s=result.latency_s,
                    logprobs=result.logprobs,
                    model=result.model,
                    attempts=attempt,
                )
            if attempt > self.max_retries:
                raise self._final_error(result, attempt)
            delay = self._backoff(attempt, result.retry_after)
            what = f"HTTP {result.status}" if result.kind == "http" else result.kind
            log.warning(
                "%s: %s (%s); retry %d/%d in %.2f s",
                self.url,
                what,
                result.detail[:200],
                attempt,
                self.max_retries,
                delay,
            )
            await asyncio.sleep(delay)

    async def _get_json(self, state: _LoopState, url: str) -> Any:
        """``GET url`` as JSON, or ``None`` when the server has no such endpoint."""
        return await request_json(state.client, url, timeout=min(self.timeout, 30.0))

    async def _list_with_retries(self) -> list[str]:
        attempt = 0
        while True:  # a server still starting gets the retries of any request
            attempt += 1
            try:
                return await self.list_models()
            except ModelConnectionError as err:
                if attempt > self.max_retries:
                    tries = f"{attempt} attempt{'s' if attempt > 1 else ''}"
                    raise ModelConnectionError(f"{err} ({tries})") from None
                await asyncio.sleep(self._backoff(attempt, None))

    async def _preflight(self, state: _LoopState, body: dict[str, Any]) -> None:
        """Check that the server answers and knows the model, and that the first request
        fits its context; learn its slots and context length.

        Raises
        ------
        ModelServerDown
            If the server cannot be reached, refuses the key, does not list the model, or
            says a context too small for the first prompt (``body``) and its reply.
        """
        try:
            names = await self._list_with_retries()
        except ModelHTTPError as err:
            if err.status in (401, 403):
                raise ModelServerDown(
                    f"{self.base_url} refuses the API key (HTTP {err.status}): set the "
                    "variable named by --api-key-env"
                ) from None
            names = []  # a server without a model listing: the first call will tell
        except ModelError as err:
            raise ModelServerDown(
                f"model server {self.base_url} does not answer ({err}): is it running?"
            ) from None
        if names and self.model not in names and len(names) > 1:
            shown = ", ".join(names[:8])
            raise ModelServerDown(
                f"model {self.model!r} is not served by {self.base_url} (it serves: {shown})"
            )
        root = self.base_url.removesuffix("/v1")
        props = await self._get_json(state, f"{root}/props")
        self.context_length = context_from_props(props) or context_from_listing(
            self._listing, self.model
        )
        if isinstance(props, dict):
            slots = props.get("total_slots")
            if self.max_in_flight is None and isinstance(slots, int) and slots > 0:
                state.slots.set_ceiling(slots)
        if self.context_length is not None:
            prompt_tokens = await count_prompt_tokens(
                state.client, root, self.model, body["messages"], timeout=min(self.timeout, 30.0)
            )
            check_fits(
                prompt_tokens,
                body.get("max_tokens"),
                self.context_length,
                f"model server {self.base_url}",
            )
        self.server_models = names
        log.info(
            "%s serves %s; %d request(s) in flight at most",
            self.base_url,
            names or "(no listing)",
            state.slots.ceiling,
        )

    async def list_models(self) -> list[str]:
        """Names of the models the server offers (``GET /models``).

        Raises
        ------
        ModelError
            If the server cannot be reached or answers with an error.
        """
        state = self._loop_state()
        url = f"{self.base_url}/models"
        try:
            resp = await state.client.get(url)
        except httpx.HTTPError as err:
            raise ModelConnectionError(f"cannot reach {url}: {type(err).__name__}") from None
        if resp.status_code != 200:
            raise ModelHTTPError(resp.status_code, self._key.redact(_server_message(resp)), url=url)
        try:
            self._listing = resp.json()
            return [str(m["id"]) for m in self._listing["data"]]
        except (ValueError, KeyError, TypeError):
            raise ModelResponseError(f"{url}: unexpected reply to a model listing") from None

    async def aclose(self) -> None:
        """Close the connection pool (if it belongs to the running loop).

        The pool and the in-flight bound belong to the event loop of the first call; call
        this before that loop closes (e.g. at the end of each ``asyncio.run``).  Afterwards
        the model may be used again, on any loop.
        """
        state, self._state = self._state, None
        if state is not None and state.loop is asyncio.get_running_loop():
            await state.pools.aclose()

    def __repr__(self) -> str:
        return f"OpenAICompatible({self.name!r}, base_url={self.base_url!r}, api_key={self._key!r})"

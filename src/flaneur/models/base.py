"""The :class:`ChatModel` protocol and the shared call path of every backend.

:class:`BaseChatModel.complete` does what all backends share: check the token budget,
normalise messages and parameters, look the request up in the response cache, call the
backend, count usage and store the reply.  A :class:`~flaneur.models.health.ServerHealth`
counts calls that failed for good in a row; past its threshold every call fails at once with
:class:`~flaneur.models.health.ModelServerDown` (cached replies are still served).  A
backend only implements ``_complete`` and ``identity``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from flaneur.models.cache import ResponseCache, request_key
from flaneur.models.completion import Completion
from flaneur.models.errors import ModelConfigError, ModelError
from flaneur.models.health import ServerHealth
from flaneur.models.messages import Message, key_form, normalize_messages
from flaneur.models.sync import run_sync
from flaneur.models.usage import UsageTracker

MessagesLike = Sequence[Message | dict[str, Any]]


@runtime_checkable
class ChatModel(Protocol):
    """What agents call: an async chat completion with text and image messages.

    Attributes
    ----------
    name
        ``provider/model`` as given in the model string (used for usage and prices).
    supports_logprobs
        Whether the backend can return top-k token log-probabilities.
    usage
        The tracker that counts this model's calls.
    """

    name: str
    supports_logprobs: bool
    usage: UsageTracker

    async def complete(self, messages: MessagesLike, **params: Any) -> Completion:
        """Send ``messages`` with sampling ``params`` and return the reply."""
        ...

    async def aclose(self) -> None:
        """Release connections and other resources."""
        ...


def prepare_params(defaults: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """Merge default and per-call sampling parameters into what is sent (and hashed).

    ``json_mode=True`` becomes ``response_format={"type": "json_object"}``; ``top_logprobs``
    implies ``logprobs=True``; parameters set to ``None`` are dropped.
    """
    merged = {**defaults, **params}
    json_mode = merged.pop("json_mode", None)
    out = {k: v for k, v in merged.items() if v is not None}
    if json_mode:
        out["response_format"] = {"type": "json_object"}
    if out.get("top_logprobs"):
        top = out["top_logprobs"]
        if not isinstance(top, int) or isinstance(top, bool) or not 0 < top <= 20:
            raise ModelConfigError(f"top_logprobs must be an integer from 1 to 20, not {top!r}")
        out["logprobs"] = True
    return out


class BaseChatModel:
    """Shared machinery of the backends (cache, usage, budget, parameter handling).

    Parameters
    ----------
    name
        ``provider/model`` label used for usage accounting and prices.
    cache
        Response cache, or ``None`` for none.
    usage
        Usage tracker shared by the run; a private one is made when ``None``.
    default_params
        Sampling parameters sent with every call unless overridden (e.g. ``temperature=0``).
    failure_threshold
        Calls failed for good in a row after which the backend counts as down (``0``:
        never); see :class:`~flaneur.models.health.ServerHealth`.
    max_tokens_cap
        Upper bound on every call's ``max_tokens``; calls that set none are sent this one.
    """

    backend_kind = "base"
    supports_logprobs = True

    def __init__(
        self,
        name: str,
        *,
        cache: ResponseCache | None = None,
        usage: UsageTracker | None = None,
        default_params: Mapping[str, Any] | None = None,
        failure_threshold: int = 3,
        max_tokens_cap: int | None = None,
    ):
        if max_tokens_cap is not None and max_tokens_cap < 1:
            raise ModelConfigError(f"max_tokens cap must be at least 1, not {max_tokens_cap}")
        self.max_tokens_cap = max_tokens_cap
        self.name = name
        self.health = ServerHealth(failure_threshold, where=f"model {name}")
        self.cache = cache
        self.usage = usage if usage is not None else UsageTracker()
        self.default_params = dict(default_params or {})

    def identity(self) -> dict[str, Any]:
        """What identifies this backend in cache keys (never credentials)."""
        raise NotImplementedError

    async def _complete(self, messages: tuple[Message, ...], params: dict[str, Any]) -> Completion:
        raise NotImplementedError

    async def complete(self, messages: MessagesLike, **params: Any) -> Completion:
        """Return the model's reply to ``messages``.

        Parameters
        ----------
        messages
            :class:`~flaneur.models.messages.Message` objects or OpenAI-style dicts.
        **params
            Sampling parameters passed to the server (``temperature``, ``max_tokens``,
            ``seed``, ``stop``, ``top_logprobs``, ...), plus ``json_mode=True`` for a JSON
            object reply. All of them are part of the cache key.

        Returns
        -------
        Completion
            The reply; ``cached`` is true when it came from the response cache.

        Raises
        ------
        BudgetExceeded
            If the run's token budget is already spent (nothing is sent).
        ModelError
            If the call fails for good (see the subclasses).
        """
        self.usage.check_budget()
        msgs = normalize_messages(messages)
        sent = prepare_params(self.default_params, params)
        cap = self.max_tokens_cap
        if cap is not None:
            sent["max_tokens"] = min(int(sent.get("max_tokens") or cap), cap)
        key = None
        cache = self.cache
        if cache is not None and cache.stores:
            t0 = time.perf_counter()
            key = request_key(self.identity(), sent, key_form(msgs))
            hit = cache.get(key)
            if hit is not None:
                hit["latency_s"] = time.perf_counter() - t0
                done = Completion.from_dict(hit, cached=True)
                self.usage.record(done, self.name)
                return done
        self.health.check()
        try:
            done = await self._complete(msgs, sent)
        except ModelError as err:
            self.usage.record_failure(getattr(err, "attempts", 1))
            self.health.failure(err)
            raise
        self.health.success()
        self.usage.record(done, self.name)
        if key is not None and cache is not None:
            cache.put(key, backend=self.backend_kind, model=self.name, response=done.to_dict())
        return done

    def complete_sync(self, messages: MessagesLike, **params: Any) -> Completion:
        """Blocking :meth:`complete` for synchronous callers (runs on a background loop)."""
        return run_sync(self.complete(messages, **params))

    def close_sync(self) -> None:
        """Blocking :meth:`aclose` for models used through :meth:`complete_sync`."""
        run_sync(self.aclose())

    async def aclose(self) -> None:
        """Release resources (nothing to release here)."""

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

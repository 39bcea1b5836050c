"""From a model string to a backend.

``provider/model`` picks the backend and its default server:

=================  ==============================  ===============================
model string       backend                          default base URL
=================  ==============================  ===============================
``openai/M``       :class:`OpenAICompatible`        ``https://api.openai.com/v1``
``vllm/M``         :class:`OpenAICompatible`        ``http://localhost:8000/v1``
``sglang/M``       :class:`OpenAICompatible`        ``http://localhost:30000/v1``
``ollama/M``       :class:`OpenAICompatible`        ``http://localhost:11434/v1``
``llama-server/M`` :class:`OpenAICompatible`        ``http://localhost:8080/v1``
``llamacpp/F``     :class:`LlamaCppModel`           (in-process, ``F`` a ``.gguf``)
``hf:P``           :class:`HFModel`                 (in-process, ``P`` a folder or ``.gguf``)
any other ``M``    :class:`OpenAICompatible`        ``base_url`` (required)
=================  ==============================  ===============================

``base_url`` (``--llm-base-url``) overrides the default of any provider.

Local servers get their own defaults (:func:`transport_defaults`): a server on this machine
or the local network answers one request at a time unless it says otherwise (llama.cpp's
``/props`` reports its slots; vLLM and SGLang batch, so they get 16), and a reply may take
minutes on a CPU, so the time-out is 300 s instead of 60 s.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flaneur.models.base import ChatModel
from flaneur.models.cache import ResponseCache
from flaneur.models.errors import ModelConfigError
from flaneur.models.hf import HF_PREFIX, HFModel
from flaneur.models.llamacpp import LlamaCppModel
from flaneur.models.openai_compatible import OpenAICompatible
from flaneur.models.usage import PriceTable, UsageTracker


@dataclass(frozen=True, slots=True)
class Provider:
    """Defaults of one provider prefix."""

    base_url: str
    key_required: bool


PROVIDERS: dict[str, Provider] = {
    "openai": Provider("https://api.openai.com/v1", key_required=True),
    "vllm": Provider("http://localhost:8000/v1", key_required=False),
    "sglang": Provider("http://localhost:30000/v1", key_required=False),
    "ollama": Provider("http://localhost:11434/v1", key_required=False),
    "llama-server": Provider("http://localhost:8080/v1", key_required=False),
}
LOCAL_PROVIDER = "llamacpp"
HF_PROVIDER = "hf"
IN_PROCESS = frozenset({LOCAL_PROVIDER, HF_PROVIDER})
BATCHING_PROVIDERS = frozenset({"vllm", "sglang"})

REMOTE_TIMEOUT_S = 60.0
LOCAL_TIMEOUT_S = 300.0
REMOTE_IN_FLIGHT = 16
REMOTE_RETRIES = 4
LOCAL_RETRIES = 2


def is_local_url(url: str) -> bool:
    """Whether ``url`` points at this machine or a private network (``localhost``, 127/8,
    ``::1``, 10/8, 172.16/12, 192.168/16, ``*.local``)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def transport_defaults(spec: ModelSpec) -> dict[str, Any]:
    """Time-out, retries and requests in flight suited to where the model is served.

    Returns
    -------
    dict
        ``timeout``, ``max_retries``, ``max_in_flight`` (``None``: the server's slot count
        from its ``/props``, else 1) for :class:`OpenAICompatible`.
    """
    if spec.base_url is None or not is_local_url(spec.base_url):
        return {
            "timeout": REMOTE_TIMEOUT_S,
            "max_retries": REMOTE_RETRIES,
            "max_in_flight": REMOTE_IN_FLIGHT,
        }
    in_flight = REMOTE_IN_FLIGHT if spec.provider in BATCHING_PROVIDERS else None
    return {"timeout": LOCAL_TIMEOUT_S, "max_retries": LOCAL_RETRIES, "max_in_flight": in_flight}


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed model string.

    Attributes
    ----------
    provider
        ``openai``, ``vllm``, ``sglang``, ``ollama``, ``llama-server``, ``llamacpp`` or
        ``custom`` (an unprefixed name served at an explicit base URL).
    model
        Model name sent to the server (or GGUF path for ``llamacpp``).
    base_url
        Server URL (``None`` for ``llamacpp``).
    key_required
        Whether a missing API key is an error.
    """

    provider: str
    model: str
    base_url: str | None
    key_required: bool


def parse_model_string(model: str, *, base_url: str | None = None) -> ModelSpec:
    """Split ``provider/model`` and find the server.

    Parameters
    ----------
    model
        E.g. ``openai/gpt-4o-mini``, ``vllm/Qwen/Qwen2.5-VL-7B-Instruct``, ``ollama/llava``,
        ``llamacpp/models/x.gguf``, a bare path ending in ``.gguf`` (absolute or relative;
        the in-process backend), ``hf:PATH`` (a local transformers folder or GGUF file run
        by transformers), or any name when ``base_url`` is given.
    base_url
        Explicit server URL, overriding the provider's default.

    Raises
    ------
    ModelConfigError
        For an empty name, or an unknown prefix without ``base_url``.
    """
    text = model.strip()
    if text.startswith(HF_PREFIX):
        if not text[len(HF_PREFIX) :]:
            raise ModelConfigError("hf: needs a local model folder or GGUF file, e.g. hf:runs/ft")
        return ModelSpec(HF_PROVIDER, text[len(HF_PREFIX) :], None, key_required=False)
    prefix, sep, rest = text.partition("/")
    bare_gguf = text.lower().endswith(".gguf") and prefix not in (*PROVIDERS, LOCAL_PROVIDER)
    if bare_gguf and not base_url:
        return ModelSpec(LOCAL_PROVIDER, text, None, key_required=False)  # a bare GGUF path
    if sep and prefix == LOCAL_PROVIDER:
        if not rest:
            raise ModelConfigError("llamacpp/ needs a GGUF path, e.g. llamacpp/models/model.gguf")
        return ModelSpec(LOCAL_PROVIDER, rest, None, key_required=False)
    if sep and prefix in PROVIDERS:
        if not rest:
            raise ModelConfigError(f"model string {model!r} names no model after '{prefix}/'")
        info = PROVIDERS[prefix]
        return ModelSpec(prefix, rest, base_url or info.base_url, info.key_required)
    if not text:
        raise ModelConfigError("empty model string")
    if base_url:
        return ModelSpec("custom", text, base_url, key_required=False)
    known = ", ".join(f"{p}/<model>" for p in [*PROVIDERS, LOCAL_PROVIDER])
    raise ModelConfigError(
        f"unknown model string {model!r}: use one of {known}, "
        "or give the server with --llm-base-url"
    )


def make_model(
    model: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    cache: ResponseCache | None = None,
    cache_mode: str = "off",
    cache_path: str | Path | None = None,
    usage: UsageTracker | None = None,
    default_params: Mapping[str, Any] | None = None,
    **options: Any,
) -> ChatModel:
    """Build a chat model from a model string.

    Parameters
    ----------
    model
        Model string (see :func:`parse_model_string`).
    base_url
        Server URL overriding the provider default (``--llm-base-url``).
    api_key_env
        Environment variable holding the API key (default ``OPENAI_API_KEY``; local
        servers get ``EMPTY`` when it is unset).
    cache
        A response cache to share; otherwise one is made from ``cache_mode``/``cache_path``.
    cache_mode
        ``use``, ``refresh`` or ``off`` (the default here; runners default to ``use``).
    cache_path
        Cache database (default ``$FLANEUR_CACHE_DIR/llm.sqlite`` or ``~/.cache/flaneur``).
    usage
        Usage tracker of the run.
    default_params
        Sampling parameters sent with every call (e.g. ``{"temperature": 0}``).
    **options
        Backend options: for HTTP backends ``timeout``, ``max_retries``, ``max_in_flight``,
        ``backoff_base``, ``backoff_max``, ``supports_logprobs``, ``seed``,
        ``failure_threshold``, ``preflight``, ``max_tokens_cap``; for ``llamacpp``
        ``n_ctx``, ``n_threads``, ``seed``, ``chat_format``, ``failure_threshold``,
        ``max_tokens_cap``.

    Returns
    -------
    ChatModel
        An :class:`OpenAICompatible`, :class:`LlamaCppModel` or :class:`HFModel`.
    """
    spec = parse_model_string(model, base_url=base_url)
    if cache is None and cache_mode != "off":
        cache = ResponseCache(cache_path, cache_mode)
    if spec.provider == LOCAL_PROVIDER:
        return LlamaCppModel(
            spec.model, cache=cache, usage=usage, default_params=default_params, **options
        )
    if spec.provider == HF_PROVIDER:
        return HFModel(
            spec.model, cache=cache, usage=usage, default_params=default_params, **options
        )

    assert spec.base_url is not None
    return OpenAICompatible(
        spec.model,
        base_url=spec.base_url,
        provider=spec.provider,
        api_key_env=api_key_env,
        require_key=spec.key_required,
        cache=cache,
        usage=usage,
        default_params=default_params,
        **options,
    )


@dataclass(slots=True)
class ModelConfig:
    """Everything a runner's command line says about its model, in one place.

    ``build()`` makes the model; ``cache_mode`` defaults to ``use`` so that re-runs are
    free.  ``max_in_flight``, ``timeout_s`` and ``max_retries`` left at ``None`` take the
    defaults of :func:`transport_defaults` (local servers differ from hosted APIs).
    ``max_tokens`` caps the completion length of every call (calls that set none get it);
    ``failure_threshold`` is how many calls failing in a row stop the run;
    ``backend_options`` go to the ``llamacpp`` backend (``n_ctx``, ``n_threads``).
    """

    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    cache_mode: str = "use"
    cache_path: Path | None = None
    max_in_flight: int | None = None
    timeout_s: float | None = None
    max_retries: int | None = None
    max_tokens: int | None = None
    failure_threshold: int = 3
    token_budget: int | None = None
    prices: PriceTable | None = None
    params: dict[str, Any] = field(default_factory=dict)
    backend_options: dict[str, Any] = field(default_factory=dict)

    def build(self, usage: UsageTracker | None = None) -> ChatModel:
        """Build the model, with a new :class:`UsageTracker` unless one is given."""
        if usage is None:
            usage = UsageTracker(token_budget=self.token_budget, prices=self.prices)
        spec = parse_model_string(self.model, base_url=self.base_url)
        options: dict[str, Any] = {
            "failure_threshold": self.failure_threshold,
            "max_tokens_cap": self.max_tokens,
        }
        if spec.provider in IN_PROCESS:
            options.update(self.backend_options)
        else:
            if self.backend_options:
                names = ", ".join(sorted(self.backend_options))
                raise ModelConfigError(f"{names} only apply to llamacpp/ models")
            chosen = {
                "max_in_flight": self.max_in_flight,
                "timeout": self.timeout_s,
                "max_retries": self.max_retries,
            }
            defaults = transport_defaults(spec)
            options.update({k: defaults[k] if v is None else v for k, v in chosen.items()})
        return make_model(
            self.model,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            cache_mode=self.cache_mode,
            cache_path=self.cache_path,
            usage=usage,
            default_params=self.params,
            **options,
        )

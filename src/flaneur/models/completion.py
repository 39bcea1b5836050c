"""What a model call returns: :class:`Completion`, its token log-probabilities and usage."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from flaneur.models.errors import ModelResponseError


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call, as the server reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One generated position: the sampled token and the top-k alternatives.

    Attributes
    ----------
    token
        The token that was generated at this position.
    logprob
        Its natural-log probability.
    top
        ``(token, logprob)`` pairs of the most likely tokens at this position, best first
        (may be empty if the server returned no alternatives).
    """

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Completion:
    """The result of :meth:`ChatModel.complete`.

    Attributes
    ----------
    text
        The generated message text (``""`` if the server sent none).
    finish_reason
        ``"stop"``, ``"length"``, ... as reported, or ``None``.
    usage
        Prompt and completion tokens.
    latency_s
        Wall time of this call in seconds (for a cache hit: the lookup time).
    logprobs
        Per-position token log-probabilities, or ``None`` if not requested or not given.
    model
        Model name that answered, as the server reported it.
    cached
        True if the reply came from the response cache (no request was sent).
    attempts
        Number of HTTP requests it took (retries included); 0 for a cache hit.
    """

    text: str
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    logprobs: tuple[TokenLogprob, ...] | None = None
    model: str = ""
    cached: bool = False
    attempts: int = 1

    def first_top_logprobs(self) -> tuple[tuple[str, float], ...]:
        """Top alternatives at the first generated position (empty if unknown)."""
        if not self.logprobs:
            return ()
        first = self.logprobs[0]
        return first.top or ((first.token, first.logprob),)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable form (used by the cache and by result files)."""
        out: dict[str, Any] = {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
            },
            "latency_s": self.latency_s,
            "model": self.model,
        }
        if self.logprobs is not None:
            out["logprobs"] = [
                [t.token, t.logprob, [list(p) for p in t.top]] for t in self.logprobs
            ]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, cached: bool = False) -> Completion:
        """Rebuild a completion written by :meth:`to_dict`."""
        usage = data.get("usage") or {}
        lps = data.get("logprobs")
        logprobs = None
        if lps is not None:
            logprobs = tuple(
                TokenLogprob(tok, lp, tuple((a, b) for a, b in top)) for tok, lp, top in lps
            )
        return cls(
            text=data.get("text", ""),
            finish_reason=data.get("finish_reason"),
            usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
            latency_s=float(data.get("latency_s", 0.0)),
            logprobs=logprobs,
            model=data.get("model", ""),
            cached=cached,
            attempts=0 if cached else 1,
        )


def _as_float(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return -math.inf
    return out if not math.isnan(out) else -math.inf


def parse_logprobs(block: Any) -> tuple[TokenLogprob, ...] | None:
    """Read OpenAI's ``choices[0].logprobs`` block (``content[i].top_logprobs[j]``).

    Returns ``None`` if the block is absent or not in the chat format.
    """
    if not isinstance(block, dict):
        return None
    content = block.get("content")
    if not isinstance(content, list):
        return _parse_legacy_logprobs(block)
    out: list[TokenLogprob] = []
    for pos in content:
        if not isinstance(pos, dict):
            continue
        tops = []
        for alt in pos.get("top_logprobs") or ():
            if isinstance(alt, dict) and isinstance(alt.get("token"), str):
                tops.append((alt["token"], _as_float(alt.get("logprob"))))
        out.append(
            TokenLogprob(str(pos.get("token", "")), _as_float(pos.get("logprob")), tuple(tops))
        )
    return tuple(out)


def _parse_legacy_logprobs(block: dict[str, Any]) -> tuple[TokenLogprob, ...] | None:
    """The older completions format: ``tokens``, ``token_logprobs``, ``top_logprobs``."""
    tokens = block.get("tokens")
    if not isinstance(tokens, list):
        return None
    lps = block.get("token_logprobs") or [None] * len(tokens)
    tops = block.get("top_logprobs") or [None] * len(tokens)
    out = []
    for tok, lp, top in zip(tokens, lps, tops, strict=False):
        alts = (
            sorted(top.items(), key=lambda kv: -_as_float(kv[1])) if isinstance(top, dict) else []
        )
        out.append(
            TokenLogprob(str(tok), _as_float(lp), tuple((str(a), _as_float(b)) for a, b in alts))
        )
    return tuple(out)


def completion_from_openai(
    payload: Any, *, latency_s: float, attempts: int = 1, model: str = ""
) -> Completion:
    """Turn a decoded ``/v1/chat/completions`` reply into a :class:`Completion`.

    Raises
    ------
    ModelResponseError
        If the reply has no ``choices[0].message``.
    """
    try:
        choice = payload["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        snippet = json.dumps(payload)[:200] if payload is not None else "null"
        raise ModelResponseError(f"reply has no choices[0].message (got {snippet})") from None
    if not isinstance(message, dict):
        raise ModelResponseError("reply's choices[0].message is not an object")
    text = message.get("content")
    if isinstance(text, list):  # some servers return content parts
        text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
    usage = payload.get("usage") if isinstance(payload, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    return Completion(
        text=text if isinstance(text, str) else "",
        finish_reason=choice.get("finish_reason"),
        usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
        latency_s=latency_s,
        logprobs=parse_logprobs(choice.get("logprobs")),
        model=str(payload.get("model") or model),
        attempts=attempts,
    )

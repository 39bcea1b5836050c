"""Reply policies of the fake OpenAI server, and how replies become tokens and logprobs.

A policy is any callable ``policy(request: FakeRequest) -> str | FakeReply`` (it may also be
``async``).  Built-in ones are named: ``echo``, ``constant:<TEXT>``, ``script`` (a list of
replies in order), ``random-action`` (seeded), or ``module.path:function`` for a callable
importable by name (handy with ``flaneur fake-llm``).
"""

from __future__ import annotations

import importlib
import json
import math
import random
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flaneur.models.scoring import NAV_ACTIONS

_TOKEN = re.compile(r"\s*[A-Za-z]+|\s*\d+|\s*[^\sA-Za-z\d]|\s+")
_FILLERS = (" the", " I", " We", " go", " to", " a", " Let", " and", " it", " is")
IMAGE_TOKENS = 85


def tokenize(text: str) -> list[str]:
    """Split text into word-like pseudo tokens (``"TURN_AROUND"`` → ``TURN``, ``_``, ``AROUND``)."""
    return _TOKEN.findall(text)


@dataclass(slots=True)
class FakeRequest:
    """One ``/v1/chat/completions`` request as a policy sees it.

    Attributes
    ----------
    index
        0-based index of this request among all chat requests the server got.
    body
        The decoded JSON body.
    """

    index: int
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` array."""
        return self.body.get("messages") or []

    @property
    def model(self) -> str:
        """The requested model name."""
        return str(self.body.get("model", ""))

    def texts(self, role: str | None = None) -> list[str]:
        """Text of each message (of ``role`` if given), parts joined by newlines."""
        out = []
        for m in self.messages:
            if role is not None and m.get("role") != role:
                continue
            content = m.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out.append("\n".join(p.get("text", "") for p in content if p.get("type") == "text"))
        return out

    @property
    def last_user_text(self) -> str:
        """Text of the last user message (``""`` if none)."""
        texts = self.texts("user")
        return texts[-1] if texts else ""

    @property
    def image_count(self) -> int:
        """Number of ``image_url`` parts in all messages."""
        return sum(
            1
            for m in self.messages
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if p.get("type") == "image_url"
        )

    @property
    def image_urls(self) -> list[str]:
        """The URLs (data URLs) of all image parts."""
        return [
            p["image_url"]["url"]
            for m in self.messages
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if p.get("type") == "image_url"
        ]

    @property
    def json_mode(self) -> bool:
        """Whether ``response_format`` asks for a JSON object."""
        fmt = self.body.get("response_format")
        return isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema")

    @property
    def top_logprobs(self) -> int | None:
        """Requested top-k (0 for ``logprobs`` without ``top_logprobs``), ``None`` if off."""
        if not self.body.get("logprobs"):
            return None
        return int(self.body.get("top_logprobs") or 0)


@dataclass(slots=True)
class FakeReply:
    """A reply with optional control over logprobs, usage and timing.

    Attributes
    ----------
    text
        Message content.
    first_token_probs
        ``{word: probability}`` at the first position (e.g. ``{"LEFT": 0.6, "RIGHT": 0.3}``);
        each word is reduced to its first pseudo token.  By default the generated token gets
        0.9 and the other action words share the rest when the reply starts with an action.
    finish_reason
        Reported finish reason.
    delay
        Extra seconds to wait before answering.
    """

    text: str
    first_token_probs: Mapping[str, float] | None = None
    finish_reason: str = "stop"
    delay: float = 0.0


ReplyLike = str | FakeReply
Policy = Callable[[FakeRequest], ReplyLike | Awaitable[ReplyLike]]


def echo_policy(request: FakeRequest) -> str:
    """Reply with the last user message's text."""
    return request.last_user_text


def constant_policy(text: str) -> Policy:
    """Always reply ``text``."""

    def policy(request: FakeRequest) -> str:
        return text

    return policy


class ScriptPolicy:
    """Replies from a list, one per answered request.

    Requests answered by an injected fault do not consume a reply, so a retried call gets
    the reply meant for it.

    Parameters
    ----------
    replies
        Replies in order.
    when_done
        ``"repeat"`` the last reply (default), ``"cycle"`` from the start, or ``"error"``
        (the server answers 500).
    """

    def __init__(self, replies: Sequence[ReplyLike], when_done: str = "repeat"):
        if not replies:
            raise ValueError("a script needs at least one reply")
        if when_done not in ("repeat", "cycle", "error"):
            raise ValueError(f"when_done must be repeat, cycle or error, not {when_done!r}")
        self.replies = list(replies)
        self.when_done = when_done
        self.used = 0

    def __call__(self, request: FakeRequest) -> ReplyLike:
        i = self.used
        self.used += 1
        if i < len(self.replies):
            return self.replies[i]
        if self.when_done == "cycle":
            return self.replies[i % len(self.replies)]
        if self.when_done == "error":
            raise RuntimeError(f"fake script exhausted after {len(self.replies)} replies")
        return self.replies[-1]


class RandomActionPolicy:
    """A seeded random navigation action, with a matching first-token distribution."""

    def __init__(self, seed: int = 0, actions: Sequence[str] = NAV_ACTIONS):
        self.rng = random.Random(seed)
        self.actions = tuple(actions)

    def __call__(self, request: FakeRequest) -> FakeReply:
        weights = [self.rng.random() + 1e-3 for _ in self.actions]
        total = sum(weights)
        probs = {a: w / total for a, w in zip(self.actions, weights, strict=True)}
        best = max(probs, key=probs.__getitem__)
        return FakeReply(best, first_token_probs=probs)


def policy_from_name(
    name: str, *, script: Sequence[ReplyLike] | None = None, seed: int = 0
) -> Policy:
    """Build a named policy.

    Parameters
    ----------
    name
        ``echo``, ``constant:<TEXT>``, ``script`` (needs ``script``), ``script:<A>|<B>|...``,
        ``random-action``, or ``package.module:function``.
    script
        Replies for ``script``.
    seed
        Seed of ``random-action``.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    kind, _, arg = name.partition(":")
    if kind == "echo" and not arg:
        return echo_policy
    if kind == "constant":
        return constant_policy(arg)
    if kind == "script":
        replies = list(script) if script is not None else [r for r in arg.split("|") if r]
        return ScriptPolicy(replies)
    if kind == "random-action":
        return RandomActionPolicy(int(arg) if arg else seed)
    if arg and all(part.isidentifier() for part in kind.split(".")):
        module = importlib.import_module(kind)
        func = getattr(module, arg, None)
        if callable(func):
            return func
    raise ValueError(
        f"unknown fake policy {name!r}: use echo, constant:<TEXT>, script, random-action "
        "or module:function"
    )


def _first_position(first: str, reply: FakeReply, k: int) -> list[tuple[str, float]]:
    """``(token, prob)`` alternatives at position 0, best first, including ``first``."""
    probs: dict[str, float] = {}
    if reply.first_token_probs:
        for word, p in reply.first_token_probs.items():
            toks = tokenize(word) or [word]
            probs[toks[0]] = probs.get(toks[0], 0.0) + float(p)
        probs.setdefault(first, min(probs.values()) / 2)
    else:
        is_action = any(
            a.lower().startswith(first.strip().lower()) for a in NAV_ACTIONS if first.strip()
        )
        others = [tokenize(a)[0] for a in NAV_ACTIONS] if is_action else list(_FILLERS)
        others = [o for o in others if o.strip().lower() != first.strip().lower()][: max(k - 1, 0)]
        probs[first] = 0.9
        for o in others:
            probs[o] = 0.1 / max(len(others), 1)
    return sorted(probs.items(), key=lambda kv: -kv[1])


def build_logprobs(tokens: list[str], reply: FakeReply, k: int) -> dict[str, Any]:
    """OpenAI chat ``logprobs`` block for ``tokens`` with ``k`` alternatives per position."""
    content = []
    for i, tok in enumerate(tokens):
        if i == 0:
            alts = _first_position(tok, reply, k)
        else:
            fill = [f for f in _FILLERS if f != tok][: max(k - 1, 0)]
            alts = [(tok, 0.95)] + [(f, 0.05 / max(len(fill), 1)) for f in fill]
        chosen = next(p for t, p in alts if t == tok)
        content.append(
            {
                "token": tok,
                "logprob": math.log(chosen),
                "bytes": list(tok.encode("utf-8")),
                "top_logprobs": [
                    {"token": t, "logprob": math.log(p), "bytes": list(t.encode("utf-8"))}
                    for t, p in alts[:k]
                ],
            }
        )
    return {"content": content}


def render_completion(request: FakeRequest, reply: FakeReply) -> dict[str, Any]:
    """The full ``chat.completion`` JSON object for ``reply``."""
    text = reply.text
    if request.json_mode:
        try:
            ok = isinstance(json.loads(text), dict)
        except ValueError:
            ok = False
        if not ok:
            text = json.dumps({"text": text})
    tokens = tokenize(text)
    finish = reply.finish_reason
    max_tokens = request.body.get("max_tokens") or request.body.get("max_completion_tokens")
    if isinstance(max_tokens, int) and 0 < max_tokens < len(tokens):
        tokens = tokens[:max_tokens]
        text = "".join(tokens)
        finish = "length"
    prompt_tokens = (
        sum(len(tokenize(t)) for t in request.texts()) + IMAGE_TOKENS * request.image_count
    )
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": finish,
        "logprobs": None,
    }
    k = request.top_logprobs
    if k is not None:
        choice["logprobs"] = build_logprobs(tokens, reply, k)
    return {
        "id": f"chatcmpl-fake-{request.index}",
        "object": "chat.completion",
        "created": 1_700_000_000 + request.index,
        "model": request.model,
        "system_fingerprint": "flaneur-fake",
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(tokens),
            "total_tokens": prompt_tokens + len(tokens),
        },
    }

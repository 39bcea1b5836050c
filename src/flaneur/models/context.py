"""Does the first prompt fit the server's context?  Asked once, before the first request.

A server's context length comes from what it says about itself: llama.cpp's ``GET /props``
(``default_generation_settings.n_ctx``) or vLLM's model listing (``max_model_len``).  The
prompt's length comes from the server's own tokenizer, chat template included: llama.cpp's
``POST /apply-template`` then ``POST /tokenize``, or vLLM's ``POST /tokenize`` with the
messages.  llama-cpp-python's server tells neither.  Where either is unknown the check is
skipped and the first request tells instead (a context refusal stops the run at once, see
:mod:`flaneur.models.health`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from flaneur.models.health import CONTEXT_HINT, ModelServerDown


def context_from_listing(listing: Any, model: str) -> int | None:
    """The context length a model listing (``GET /models``) gives for ``model``, if any.

    vLLM lists ``max_model_len`` per model; other servers give nothing.
    """
    rows = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(rows, list):
        return None
    lengths = {
        str(row.get("id")): row.get("max_model_len") for row in rows if isinstance(row, dict)
    }
    value = lengths.get(model)
    if value is None and len(lengths) == 1:  # a single-model server serves it under any name
        value = next(iter(lengths.values()))
    return value if isinstance(value, int) and value > 0 else None


def context_from_props(props: Any) -> int | None:
    """The context length in llama.cpp's ``GET /props`` reply, if any."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None


async def request_json(
    client: httpx.AsyncClient, url: str, body: dict | None = None, *, timeout: float = 30.0
) -> Any:
    """``POST url`` with ``body`` (``GET`` without one) as JSON, or ``None`` when the server
    has no such endpoint, fails or answers something that is not JSON."""
    try:
        if body is None:
            resp = await client.get(url, timeout=timeout)
        else:
            resp = await client.post(url, json=body, timeout=timeout)
    except httpx.HTTPError:
        return None
    if resp.status_code != 200:
        return None
    try:
        return resp.json()
    except ValueError:
        return None


async def count_prompt_tokens(
    client: httpx.AsyncClient,
    root: str,
    model: str,
    messages: Sequence[dict[str, Any]],
    *,
    timeout: float = 30.0,
) -> int | None:
    """The prompt's token count by the server's own tokenizer, or ``None`` if it has none.

    Parameters
    ----------
    client
        The model's HTTP client (its headers carry the key).
    root
        The server's root URL (the base URL without ``/v1``).
    model
        The model name (llama-cpp-python routes tokenizing by it).
    messages
        The request's messages in OpenAI's wire format.
    timeout
        Seconds per request.

    Returns
    -------
    int or None
        The count with the chat template (llama.cpp or vLLM), or ``None`` when the server
        has neither endpoint.
    """
    templated = await request_json(
        client, f"{root}/apply-template", {"messages": messages}, timeout=timeout
    )
    if isinstance(templated, dict) and isinstance(templated.get("prompt"), str):  # llama.cpp
        body = {"content": templated["prompt"], "add_special": True}
        tokens = await request_json(client, f"{root}/tokenize", body, timeout=timeout)
        if isinstance(tokens, dict) and isinstance(tokens.get("tokens"), list):
            return len(tokens["tokens"])
        return None
    body = {"model": model, "messages": list(messages), "add_generation_prompt": True}
    counted = await request_json(client, f"{root}/tokenize", body, timeout=timeout)  # vLLM
    if isinstance(counted, dict) and isinstance(counted.get("count"), int):
        return counted["count"]
    return None


def check_fits(prompt_tokens: int | None, max_tokens: int | None, context: int | None, where: str):
    """Raise :class:`ModelServerDown` if the prompt and its reply cannot fit ``context``.

    Parameters
    ----------
    prompt_tokens
        The first prompt's token count (``None``: unknown, nothing is checked).
    max_tokens
        The tokens the request asks for its reply (``None`` counts as 0).
    context
        The server's context length (``None``: unknown, nothing is checked).
    where
        The server or model, for the message.
    """
    if prompt_tokens is None or context is None:
        return
    reply = int(max_tokens or 0)
    if prompt_tokens + reply > context:
        raise ModelServerDown(
            f"the first prompt does not fit the context of {where}: {prompt_tokens} prompt tokens "
            f"+ {reply} for the reply > {context}; {CONTEXT_HINT}"
        )


__all__ = [
    "check_fits",
    "context_from_listing",
    "context_from_props",
    "count_prompt_tokens",
    "request_json",
]

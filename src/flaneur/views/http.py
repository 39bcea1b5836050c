"""HTTP plumbing shared by the online view providers: keys, requests and error mapping.

Keys come from environment variables and never appear in cache keys, logs or error
messages (every message that might hold a URL is scrubbed).
"""

from __future__ import annotations

import io
import os
from typing import Any

import httpx
from PIL import Image, UnidentifiedImageError

from flaneur.views.base import MissingKeyError, NoImageryError, ProviderError, QuotaError


def read_key(value: str | None, env: str, provider: str) -> str:
    """The key given, else the environment variable ``env``; :class:`MissingKeyError` if
    neither is set."""
    key = value if value is not None else os.environ.get(env, "")
    key = key.strip()
    if not key:
        raise MissingKeyError(
            f"{provider} needs an API key: set the environment variable {env}",
            provider=provider,
        )
    return key


def scrub(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` replaced by ``***``."""
    return text.replace(secret, "***") if secret else text


def get(
    client: httpx.Client,
    url: str,
    *,
    provider: str,
    secret: str | None,
    params: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    what: str = "request",
) -> httpx.Response:
    """GET ``url`` and map failures to :class:`ProviderError` subclasses (see :func:`send`)."""
    return send(
        client,
        "GET",
        url,
        provider=provider,
        secret=secret,
        params=params,
        headers=headers,
        what=what,
    )


def send(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    provider: str,
    secret: str | None,
    params: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    json: Any = None,
    what: str = "request",
) -> httpx.Response:
    """Send a ``method`` request (a JSON body ``json`` if given) and map failures to
    :class:`ProviderError` subclasses.

    403/401 -> :class:`ProviderError` (bad key), 404 -> :class:`NoImageryError`,
    429 -> :class:`QuotaError`, other 4xx/5xx and network failures -> :class:`ProviderError`
    (``status`` ``None`` for a network failure). ``secret`` is scrubbed from every message.
    """
    try:
        response = client.request(method, url, params=params, headers=headers, json=json)
    except httpx.HTTPError as err:
        detail = scrub(str(err), secret) or type(err).__name__
        raise ProviderError(
            f"{provider}: {what} failed: {type(err).__name__}: {detail}", provider=provider
        ) from None
    status = response.status_code
    if status < 400:
        return response
    body = scrub(response.text[:200], secret).strip().replace("\n", " ")
    hint = f" ({body})" if body else ""
    if status in (401, 403):
        raise ProviderError(
            f"{provider} refused the {what} (HTTP {status}): check the API key and that the "
            f"API is enabled for it{hint}",
            provider=provider,
            status=status,
        )
    if status == 404:
        raise NoImageryError(
            f"{provider}: nothing found for the {what} (HTTP 404){hint}",
            provider=provider,
            status=status,
        )
    if status == 429:
        raise QuotaError(
            f"{provider}: quota or rate limit exceeded (HTTP 429); wait or raise the quota",
            provider=provider,
            status=status,
        )
    raise ProviderError(
        f"{provider}: {what} failed with HTTP {status}{hint}", provider=provider, status=status
    )


def decode_image(data: bytes, *, provider: str) -> Image.Image:
    """Decode image bytes; :class:`ProviderError` if they are not an image."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            return img.convert("RGB")
    except (UnidentifiedImageError, OSError) as err:
        raise ProviderError(
            f"{provider}: the response is not an image ({err})", provider=provider
        ) from None


def image_suffix(data: bytes) -> str:
    """``".jpg"`` or ``".png"`` from the magic bytes (``".img"`` otherwise)."""
    if data[:3] == b"\xff\xd8\xff":
        return ".jpg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return ".png"
    return ".img"

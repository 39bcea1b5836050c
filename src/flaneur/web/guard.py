"""Who may talk to ``flaneur serve``: the request guard in front of every route.

* **Host**: the ``Host`` header must name the bound address (loopback names by default, or
  the ``--host`` given), so a page on another site cannot reach the API through DNS
  rebinding (a name of the attacker's that resolves to 127.0.0.1).
* **Same origin**: a state-changing request (``POST``, ``PUT``, ``PATCH``, ``DELETE``) is
  refused when the browser says it comes from another site (``Sec-Fetch-Site``) or names
  another origin (``Origin``), and it must carry the server's token (header
  :data:`TOKEN_HEADER`). The token is random per server and read by the app's pages from
  ``/api/settings``, which another site cannot read (no CORS), nor send as a custom header
  without a preflight the server never allows.
* **Size**: a request body over :data:`MAX_BODY_BYTES` is refused (413), counted as it
  arrives, whatever ``Content-Length`` says.

Every refusal is a one-line JSON error (``{"error": ...}``) and nothing behind it runs.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

TOKEN_HEADER = "x-flaneur-token"
"""Header that carries the per-server token on state-changing requests."""

MAX_BODY_BYTES = 1 << 20
"""Largest request body accepted (1 MiB; a drawn route or a play step is a few KiB)."""

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
"""Host names accepted by default (the server binds 127.0.0.1 unless ``--host`` is given)."""

STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}


def new_token() -> str:
    """A fresh random token for one server."""
    return secrets.token_urlsafe(24)


def host_name(value: str) -> str | None:
    """The host name of a ``Host`` header or an ``Origin`` (port and brackets dropped,
    lower case); None when it does not parse."""
    text = value if "//" in value else f"//{value}"
    try:
        parts = urlsplit(text)
        name = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return None
    return name.lower() if name else None


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class RequestGuard:
    """ASGI middleware: refuses requests as the module docstring says.

    Parameters
    ----------
    app
        The application behind the guard.
    token
        The server's token (:func:`new_token`).
    hosts
        Host names accepted in ``Host`` (default :data:`LOOPBACK_HOSTS`).
    max_body
        Largest request body in bytes.
    """

    def __init__(
        self,
        app: Any,
        *,
        token: str,
        hosts: Iterable[str] = LOOPBACK_HOSTS,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        self.app, self.token, self.max_body = app, token, max_body
        self.hosts = {h.lower().strip("[]") for h in hosts}
        self.any_host = "*" in self.hosts

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            self._check_host(headers)
            if scope["method"] in STATE_CHANGING:
                self._check_origin(headers)
                self._check_token(headers)
                self._check_length(headers)
        except _Refused as refused:
            await _refuse(send, refused.status, str(refused))
            return
        await self.app(scope, self._limited(receive, send), send)

    def _check_host(self, headers: dict[str, str]) -> None:
        name = host_name(headers.get("host", ""))
        if name not in self.hosts and not (self.any_host and name):
            shown = headers.get("host", "")[:80]
            raise _Refused(400, f"host {shown!r} is not this server's address")

    def _check_origin(self, headers: dict[str, str]) -> None:
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            raise _Refused(403, f"cross-site request refused (Sec-Fetch-Site: {site[:40]})")
        origin = headers.get("origin")
        if origin is None:
            return
        if origin == "null" or urlsplit(origin).netloc.lower() != headers.get("host", "").lower():
            raise _Refused(403, f"request from another origin refused ({origin[:80]})")

    def _check_token(self, headers: dict[str, str]) -> None:
        given = headers.get(TOKEN_HEADER, "")
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            raise _Refused(403, f"missing or wrong {TOKEN_HEADER} header (see /api/settings)")

    def _check_length(self, headers: dict[str, str]) -> None:
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            raise _Refused(413, f"request body over {self.max_body} bytes")

    def _limited(self, receive: Any, send: Any) -> Any:
        """``receive`` that fails once more than ``max_body`` bytes have arrived."""
        seen = 0

        async def receive_limited() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise BodyTooLarge(self.max_body)
            return message

        return receive_limited


class BodyTooLarge(Exception):
    """A request body grew past the guard's limit while it was read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body over {limit} bytes")


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

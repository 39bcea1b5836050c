"""A Starlette ``TestClient`` that talks to the web app as its own pages do: to a loopback
host, with the server's token on every request (see :mod:`flaneur.web.guard`)."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from flaneur.web.guard import TOKEN_HEADER


def local_client(app: Any) -> TestClient:
    """A client of ``app`` (use it as a context manager, as ``TestClient``)."""
    return TestClient(app, base_url="http://127.0.0.1", headers={TOKEN_HEADER: app.state.token})

"""Fixtures of the view tests: the hand-made toy city and a synthetic provider."""

from __future__ import annotations

import pytest

from flaneur.views.synthetic import SyntheticViews
from flaneur.views.toy import grid_city
from harness.http_stub import LocalHTTP


@pytest.fixture(scope="session")
def toy():
    """The toy grid city (built once)."""
    return grid_city()


@pytest.fixture(scope="session")
def toy_views(toy):
    """A synthetic provider of the toy city (in-memory cache)."""
    return SyntheticViews(toy).prepare()


class FakeHTTP(LocalHTTP):
    """A local HTTP server whose answers the test sets per path; it records every request.

    ``routes[path] = handler(query: dict, headers: dict) -> (status, content_type, body)``;
    ``requests`` holds ``(path, query, headers)`` of each request.
    """

    def __init__(self) -> None:
        self.routes: dict = {}
        self.requests: list[tuple[str, dict, dict]] = []
        super().__init__(self._answer)

    def _answer(self, request: dict) -> tuple[int, str, object]:
        self.requests.append((request["path"], request["query"], request["headers"]))
        handler = self.routes.get(request["path"])
        if handler is None:
            return 404, "text/plain", b"no route"
        return handler(request["query"], request["headers"])


@pytest.fixture
def fake_http():
    """A running :class:`FakeHTTP` on 127.0.0.1 (stopped after the test)."""
    server = FakeHTTP()
    yield server
    server.close()


def jpeg_bytes(size=(64, 48), colour=(200, 60, 40)) -> bytes:
    """A small JPEG image."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, format="JPEG")
    return buf.getvalue()


@pytest.fixture
def jpeg():
    """Factory of small JPEG images."""
    return jpeg_bytes

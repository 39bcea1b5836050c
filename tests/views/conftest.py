"""Fixtures of the view tests: the hand-made toy city and a synthetic provider."""

from __future__ import annotations

import pytest

from flaneur.views.synthetic import SyntheticViews
from flaneur.views.toy import grid_city


@pytest.fixture(scope="session")
def toy():
    """The toy grid city (built once)."""
    return grid_city()


@pytest.fixture(scope="session")
def toy_views(toy):
    """A synthetic provider of the toy city (in-memory cache)."""
    return SyntheticViews(toy).prepare()


class FakeHTTP:
    """A local HTTP server whose answers the test sets per path; it records every request.

    ``routes[path] = handler(query: dict, headers: dict) -> (status, content_type, body)``.
    """

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import parse_qs, urlsplit

        self.routes: dict = {}
        self.requests: list[tuple[str, dict, dict]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                headers = {k.lower(): v for k, v in self.headers.items()}
                fake.requests.append((parts.path, query, headers))
                handler = fake.routes.get(parts.path)
                if handler is None:
                    status, ctype, body = 404, "text/plain", b"no route"
                else:
                    status, ctype, body = handler(query, headers)
                if isinstance(body, str):
                    body = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


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

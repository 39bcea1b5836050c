"""A local HTTP server for tests of clients of web APIs (Street View, Mapillary, Places):
each request is read into a dict and answered by a function the test gives."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Answer = Callable[[dict[str, Any]], tuple[int, str, Any]]
"""``answer(request) -> (status, content type, body)``; ``request`` has ``method``,
``path``, ``query`` (first value of each key), ``headers`` (lower-case names) and ``json``
(the decoded body, or ``None``)."""


class LocalHTTP:
    """An HTTP server on 127.0.0.1 (a free port, its own thread) answering GET and POST with
    ``answer``; ``url`` is its address, ``close()`` stops it."""

    def __init__(self, answer: Answer) -> None:
        class Handler(BaseHTTPRequestHandler):
            def _reply(self, method: str) -> None:
                parts = urlsplit(self.path)
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b""
                status, ctype, body = answer(
                    {
                        "method": method,
                        "path": parts.path,
                        "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "json": json.loads(raw) if raw else None,
                    }
                )
                data = body if isinstance(body, bytes) else str(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._reply("GET")

            def do_POST(self) -> None:
                self._reply("POST")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        """Stop the server and free its port."""
        self.server.shutdown()
        self.server.server_close()

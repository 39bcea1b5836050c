"""A Starlette ``TestClient`` that talks to the web app as its own pages do: to a loopback
host, with the server's token on every request (see :mod:`flaneur.web.guard`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from flaneur.web.guard import TOKEN_HEADER


def local_client(app: Any) -> TestClient:
    """A client of ``app`` (use it as a context manager, as ``TestClient``)."""
    return TestClient(app, base_url="http://127.0.0.1", headers={TOKEN_HEADER: app.state.token})


@contextmanager
def browser_site(root: Path, served: Path, **app_options: Any) -> Iterator[dict[str, Any]]:
    """The web app serving a copy of the run folders ``served`` (in ``root/runs``; play and
    the view cache in ``root`` too) on 127.0.0.1 in a thread, and a Chromium browser:
    ``{"url", "browser", "root", "runs"}``. ``app_options`` go to ``create_app``."""
    # lazy: playwright and the app are only needed by the browser tests
    from playwright.sync_api import sync_playwright

    from flaneur.web import create_app
    from flaneur.web.browser import launch
    from flaneur.web.server import serve_in_thread

    runs = root / "runs"
    shutil.copytree(served, runs, dirs_exist_ok=True)
    app = create_app([runs], play_dir=root / "play", cache_dir=root / "views", **app_options)
    with serve_in_thread(app) as url, sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            yield {"url": url, "browser": browser, "root": root, "runs": runs}
        finally:
            browser.close()

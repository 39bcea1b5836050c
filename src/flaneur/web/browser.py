"""Driving Debian's Chromium with Playwright (browser tests, the web benchmark).

Playwright's own browser download is not used: the system executable is launched with
flags that keep it offline and quiet.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run")  # fmt: skip


def chromium_path() -> str | None:
    """The Chromium executable (``$FLANEUR_CHROMIUM``, ``/usr/bin/chromium``, or on PATH)."""
    for candidate in (os.environ.get("FLANEUR_CHROMIUM"), "/usr/bin/chromium"):
        if candidate and Path(candidate).is_file():
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing_browser() -> str | None:
    """Why browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return "no Chromium executable (apt-get install -y chromium)"
    return None


def launch(playwright):  # type: ignore[no-untyped-def]
    """A headless Chromium browser from a started ``sync_playwright()``."""
    return playwright.chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_ARGS),
                                      headless=True)  # fmt: skip

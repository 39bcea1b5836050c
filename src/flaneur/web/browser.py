"""Driving Debian's Chromium with Playwright (browser tests, the web benchmark).

Playwright's own browser download is not used: the system executable is launched with
flags that keep it offline and quiet.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from flaneur.env.schemes.turns import TURN_ACTIONS

if TYPE_CHECKING:  # playwright comes with the test extra
    from playwright.sync_api import Browser, Page, Playwright

CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


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


def launch(playwright: Playwright) -> Browser:
    """A headless Chromium browser from a started ``sync_playwright()``."""
    return playwright.chromium.launch(
        executable_path=chromium_path(), args=list(CHROMIUM_ARGS), headless=True
    )


TURN_KEYS = {
    "forward": "ArrowUp",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "turn_around": "ArrowDown",
    "stop": "Enter",
}
"""The play page's keys for the ``turns`` actions."""


def key_for(slot: int, scheme: str) -> str:
    """The key the play page takes for action ``slot`` of ``scheme``."""
    if slot == 0:
        return "Enter"
    if scheme == "turns":
        return TURN_KEYS[TURN_ACTIONS[slot]]
    if not 0 < slot < 10:
        raise ValueError(f"slot {slot} has no key (the play page takes 1-9)")
    return str(slot)


def play_with_keyboard(
    page: Page,
    slots: list[int],
    scheme: str,
    *,
    done: int = 0,
    timeout_ms: float = 15000,
) -> None:
    """Press the keys of ``slots`` on an open play page (``done`` steps already taken),
    waiting for each step to show."""
    for k, slot in enumerate(slots, start=done + 1):
        page.keyboard.press(key_for(slot, scheme))
        if slot == 0:
            page.wait_for_selector("#result", timeout=timeout_ms)
            return
        page.wait_for_function(
            "k => { const s = document.getElementById('status');"
            " return document.getElementById('result')"
            " || (s && s.textContent.startsWith('step ' + k + ' of')); }",
            arg=k,
            timeout=timeout_ms,
        )

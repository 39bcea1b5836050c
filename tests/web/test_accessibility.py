"""Every page of the web app under axe-core (the engine of axe-playwright-python) in
Chromium: no serious or critical violation, each page in the state a user sees it (the runs
page with a run open, a replay, the live page, human play with an episode started, the
annotation page with a task chosen). Screenshots go to the test's folder."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from flaneur.web.browser import missing_browser
from harness.web_client import browser_site

pytestmark = pytest.mark.skipif(
    missing_browser() is not None, reason=f"browser tests: {missing_browser()}"
)
TASK = "web-toy-v1"
SERIOUS = ("serious", "critical")


@pytest.fixture(scope="module")
def site(served, tmp_path_factory):
    """The app on 127.0.0.1 in a thread and a Chromium page (axe is injected past the
    pages' script policy, as the other browser tests do)."""
    with browser_site(tmp_path_factory.mktemp("a11y"), served) as found:
        page = found["browser"].new_page(viewport={"width": 1200, "height": 860}, bypass_csp=True)
        yield {**found, "page": page}


def serious_violations(page) -> list[str]:  # type: ignore[no-untyped-def]
    """``id (impact): targets`` of each serious or critical axe violation on ``page``."""
    found = Axe().run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:4]}"
        for v in found
        if v["impact"] in SERIOUS
    ]


PAGES = {
    "runs": ("/?run=agents", "#run h3"),
    "replay": (f"/replay?run=agents&task={TASK}&agent=oracle&id=toy-fork-0", "body[data-ready]"),
    "live": ("/live?run=agents", "#progress, main"),
    "play": ("/play", "main"),
    "annotate": ("/annotate", "main"),
    "glossary": ("/glossary", "body[data-ready]"),
    "compare": ("/compare?run=agents&run=second", "body[data-ready]"),
}


@pytest.mark.parametrize("name", [*PAGES, "play-started"])
def test_a_page_has_no_serious_accessibility_violation(site, name):
    page = site["page"]
    path, ready = PAGES[name.removesuffix("-started")]
    page.goto(site["url"] + path)
    page.wait_for_selector(ready)
    if name == "play-started":  # an episode under way: instruction, views, choices
        page.select_option("#task", TASK)
        page.fill("#player", "a11y")
        page.click("#start")
        page.wait_for_selector("#choices button")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=site["root"] / f"{name}.png", full_page=True)
    assert serious_violations(page) == []


def test_the_checker_finds_a_violation_when_there_is_one(site):
    page = site["page"]
    page.goto(site["url"] + "/play")
    page.wait_for_selector("main")
    page.evaluate(
        "() => { const i = document.createElement('input'); document.body.append(i);"
        " const p = document.createElement('p'); p.textContent = 'faint';"
        " p.style.color = '#eee'; p.style.background = '#fff'; document.body.append(p); }"
    )
    found = serious_violations(page)
    assert any(v.startswith("label") for v in found)
    assert any(v.startswith("color-contrast") for v in found)


def test_the_runs_page_works_from_the_keyboard_and_announces_its_sort(site):
    page = site["page"]
    page.goto(site["url"] + "/?run=agents")
    page.wait_for_selector("#run h3")
    table = page.locator("#run table").first
    header = table.get_by_role("columnheader", name="TC", exact=True)
    assert header.get_attribute("aria-sort") == "none"
    header.get_by_role("button").focus()
    page.keyboard.press("Enter")
    assert header.get_attribute("aria-sort") == "ascending"
    page.keyboard.press("Space")
    assert header.get_attribute("aria-sort") == "descending"
    assert table.locator("tbody tr").first.locator("td").first.text_content() == "oracle"
    others = table.locator("th[aria-sort='none']")
    assert others.count() == table.locator("th").count() - 1
    episodes = page.locator("#run table").last
    episodes.locator("tbody tr").first.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("body[data-ready]")
    assert "/replay?" in page.url

"""The web app on a phone-sized screen (390 x 844) and from the keyboard alone, in Debian's
Chromium: no page scrolls sideways (wide tables scroll inside themselves), maps and views
scale to the width, the play page's actions stay on screen; an episode is played from page
load to the goal with key presses only, game keys stay quiet while a form control has the
keys, and the replay steps from its slider and buttons. Screenshots go to the test folder."""

from __future__ import annotations

from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe

from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.teacher import gold_rollout
from flaneur.evaluate.runlog import read_rows
from flaneur.web.browser import missing_browser, play_with_keyboard
from harness.web_client import browser_site

pytestmark = pytest.mark.skipif(
    missing_browser() is not None, reason=f"browser tests: {missing_browser()}"
)
TASK = "web-toy-v1"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1200, "height": 860}
REPLAY = f"/replay?run=agents&task={TASK}&agent=oracle&id=toy-fork-0"
IMAGES_LOADED = (
    "[...document.querySelectorAll('#views img')].every(i => i.complete && i.naturalWidth > 0)"
)


@pytest.fixture(scope="module")
def site(served, tmp_path_factory):
    """The app on 127.0.0.1 in a thread, a Chromium browser, and the folders it writes."""
    with browser_site(tmp_path_factory.mktemp("phone"), served) as found:
        yield found


@pytest.fixture()
def open_page(site):
    """``open_page(path, viewport)``: a page of a fresh browser context (its own storage)
    at ``path``; page errors are collected and must be none at the end of the test."""
    contexts: list[Any] = []
    errors: list[str] = []

    def open_page(path: str, viewport: dict[str, int] = PHONE) -> Any:
        context = site["browser"].new_context(viewport=viewport, bypass_csp=True)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(site["url"] + path)
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert errors == []


def focused(page: Any, what: str = "id") -> str | None:
    """The focused element's ``id`` (or ``data-slot`` with ``what="slot"``)."""
    return page.evaluate(
        "what => { const e = document.activeElement;"
        " return e ? (what === 'slot' ? e.dataset.slot : e.id) || null : null; }",
        what,
    )


def tab_to(page: Any, done: str, limit: int = 30) -> None:
    """Press Tab until the JavaScript condition ``done`` (on ``e``, the focused element)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(f"(() => {{ const e = document.activeElement; return {done}; }})()"):
            return
    raise AssertionError(f"Tab never reached {done}")


def start_with_keyboard(page: Any, player: str, episode_id: str) -> None:
    """From the loaded play page: type the name, choose the episode, press start."""
    page.wait_for_function("document.querySelectorAll('#episode option').length > 1")
    assert focused(page) == "player"  # the page starts in the name field
    page.keyboard.type(player)
    page.keyboard.press("Tab")
    assert focused(page) == "task"
    page.keyboard.press("Tab")
    assert focused(page) == "episode"
    for _ in range(30):
        if page.eval_on_selector("#episode", "e => e.value") == episode_id:
            break
        page.keyboard.press("ArrowDown")
    assert page.eval_on_selector("#episode", "e => e.value") == episode_id
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert focused(page) == "start"
    page.keyboard.press("Enter")
    page.wait_for_selector("#choices button")


PAGES = {
    "runs": ("/?run=agents", "#run h3"),
    "replay": (REPLAY, "body[data-ready]"),
    "live": ("/live?run=agents", "#finished"),
    "play": (f"/play?task={TASK}", "#start"),
    "annotate": (f"/annotate?task={TASK}", "#views img"),
    "annotate-draw": (f"/annotate?task={TASK}&mode=draw", "svg.map.drawable"),
}
WIDTHS = """() => ({page: document.documentElement.scrollWidth, screen: window.innerWidth,
  maps: [...document.querySelectorAll('svg.map')].map(m => m.getBoundingClientRect().right),
  views: [...document.querySelectorAll('#views img')].map(i => i.getBoundingClientRect().right),
  tables: [...document.querySelectorAll('table')].map(t => t.getBoundingClientRect().right),
  wide: [...document.querySelectorAll('table')].filter(t => t.scrollWidth > t.clientWidth + 1).length,
  controls: [...document.querySelectorAll('button, select, input, textarea')]
    .filter(c => !c.closest('table')).map(c => c.getBoundingClientRect().right)})"""


@pytest.mark.parametrize("name", PAGES)
def test_a_page_fits_a_phone_screen(site, open_page, name):
    path, ready = PAGES[name]
    page = open_page(path)
    page.wait_for_selector(ready)
    page.wait_for_load_state("networkidle")
    page.screenshot(path=site["root"] / f"phone-{name}.png", full_page=True)
    sizes = page.evaluate(WIDTHS)
    screen = sizes["screen"]
    assert sizes["page"] <= screen + 1, sizes  # no sideways scroll of the page
    for key in ("maps", "views", "tables", "controls"):
        assert all(right <= screen + 1 for right in sizes[key]), (key, sizes)
    if name in ("runs", "live"):
        assert sizes["wide"] >= 1  # a wide table scrolls inside itself
    if name.startswith("annotate") or name == "replay":
        assert sizes["maps"] and max(sizes["maps"]) > screen * 0.8  # the map takes the width


def test_play_on_a_phone_keeps_the_actions_on_screen(site, open_page):
    page = open_page(f"/play?task={TASK}")
    start_with_keyboard(page, "Phone", "")
    page.wait_for_function(IMAGES_LOADED)
    page.screenshot(path=site["root"] / "phone-play-started.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    for box in [b.bounding_box() for b in page.locator("#choices button").all()]:
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        assert box["y"] + box["height"] <= PHONE["height"]  # visible without scrolling
        assert box["height"] >= 36  # a finger's size
    page.keyboard.press("Enter")  # stop
    page.wait_for_selector("#result")
    page.screenshot(path=site["root"] / "phone-play-done.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1


def test_phone_pages_have_no_serious_accessibility_violation(open_page):
    for name in ("runs", "live", "replay"):
        path, ready = PAGES[name]
        page = open_page(path)
        page.wait_for_selector(ready)
        found = Axe().run(page).response["violations"]
        assert [v["id"] for v in found if v["impact"] in ("serious", "critical")] == [], name


def test_a_route_drawn_on_a_phone_sized_map(open_page, toy_task):
    """The map is drawn smaller than its 420 units: a tap still lands where it is drawn."""
    city, episodes = toy_task
    graph = city.graph
    page = open_page(f"/annotate?task={TASK}&mode=draw")
    page.wait_for_selector("svg.map.drawable")
    context = page.eval_on_selector("#episode", "e => e.value")
    area = page.evaluate(
        "q => fetch('/api/draw?' + new URLSearchParams(q)).then(r => r.json())",
        {"task": TASK, "id": context},
    )
    box = page.locator("svg.map").bounding_box()
    assert box is not None and box["width"] < 420
    x0, y0, x1, y1 = area["map"]["bounds"]
    span = max(x1 - x0, y1 - y0)
    cx, cy = (x0 + x1) / 2 - span / 2, (y0 + y1) / 2 - span / 2
    start, end = episodes[0].start_node, episodes[0].reference_path[-1]
    for node in (start, end):
        x, y = graph.xy[graph.index(node)]
        scale = box["width"] / span
        page.mouse.click(box["x"] + (x - cx) * scale, box["y"] + box["height"] - (y - cy) * scale)
    page.wait_for_selector("#drawing[data-ready]")
    assert f"{start} → {end}" in page.text_content("#draw-status")


def test_play_an_episode_to_the_goal_with_the_keyboard_only(site, open_page, toy_task):
    """From page load to the goal with key presses only: Tab and type to start, Tab to an
    action button and Space to press it (focus stays on it), the game keys for the rest."""
    city, episodes = toy_task
    episode = episodes[1]
    slots, _ = gold_rollout(TurnsScheme(city.graph), city.graph, episode)
    page = open_page(f"/play?task={TASK}", DESKTOP)
    start_with_keyboard(page, "Keys Ada", episode.id)
    assert page.text_content("#instruction") == episode.instruction
    assert focused(page) == "instruction"  # the game keys work from here
    names = [b.get_attribute("aria-keyshortcuts") for b in page.locator("#choices button").all()]
    assert names == ["Enter", "ArrowUp", "ArrowLeft", "ArrowRight", "ArrowDown"]
    for name in ("stop (Enter)", "forward", "left", "right", "turn around"):
        assert page.get_by_role("button", name=name).count() == 1  # named for what it does
    tab_to(page, f"e.dataset.slot === '{slots[0]}'")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"  # focus is visible
    page.keyboard.press("Space")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('step 1 of')")
    assert focused(page, "slot") == str(slots[0])  # still on the button just pressed
    play_with_keyboard(page, slots[1:2], "turns", done=1)
    assert focused(page) == "status"  # after a game key: the step line, and Enter stops
    play_with_keyboard(page, slots[2:], "turns", done=2)
    assert "Reached the goal" in page.text_content("#result")
    assert focused(page) == "again"
    (row,) = read_rows(site["root"] / "play" / "human-Keys_Ada" / "episodes.jsonl")[0]
    assert row["episode_id"] == episode.id and row["metrics"]["tc"] is True
    assert row["path"] == list(episode.reference_path)
    page.keyboard.press("Enter")  # the focused "next episode" button
    page.wait_for_function("document.body.dataset.done === '0'")
    assert focused(page) == "instruction"


def test_game_keys_are_quiet_while_a_form_control_has_the_keys(open_page):
    page = open_page(f"/play?task={TASK}", DESKTOP)
    start_with_keyboard(page, "Quiet", "")
    first = page.text_content("#instruction")
    page.focus("#player")
    for key in ("1", "n", "ArrowUp", "Enter"):  # typing a name, Enter mid-episode included
        page.keyboard.press(key)
    page.focus("#episode")
    page.keyboard.press("ArrowDown")  # changes the choice, not a step
    page.focus("#instruction")
    page.keyboard.press("Alt+ArrowUp")  # a browser shortcut, not the game's
    page.keyboard.press("Control+1")
    page.wait_for_timeout(300)
    assert page.text_content("#status").startswith("step 0 of")
    assert page.text_content("#instruction") == first
    assert page.input_value("#player") == "Quiet1n"
    page.keyboard.press("ArrowUp")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('step 1 of')")


def test_the_replay_steps_from_the_keyboard(open_page):
    page = open_page(REPLAY, DESKTOP)
    page.wait_for_selector("body[data-ready]")
    label = "document.getElementById('step-label').textContent.trim()"
    assert page.get_by_role("button", name="next step").count() == 1
    assert page.get_by_role("button", name="previous step").count() == 1
    assert page.get_by_role("slider", name="step").count() == 1
    tab_to(page, "e.id === 'step'")
    page.keyboard.press("ArrowRight")
    assert page.evaluate(label).startswith("step 1 of 7")
    page.keyboard.press("End")
    assert page.evaluate(label).startswith("step 7 of 7")
    page.keyboard.press("Home")
    assert page.evaluate(label).startswith("step 0 of 7")
    page.keyboard.press("Tab")
    assert focused(page) == "next"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.keyboard.press("Enter")
    page.keyboard.press("Space")
    assert page.evaluate(label).startswith("step 2 of 7")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert focused(page) == "prev"
    page.keyboard.press("Enter")
    assert page.evaluate(label).startswith("step 1 of 7")
    page.keyboard.press("Alt+ArrowRight")  # the browser's, not a step
    assert page.evaluate(label).startswith("step 1 of 7")

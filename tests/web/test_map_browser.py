"""The replay map, full-size views and drawing on a narrow screen, in Chromium (Playwright)."""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe

from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.registry import register_task
from flaneur.tasks.spec import TaskSpec
from flaneur.web.browser import missing_browser
from harness.named_toy import named_toy_city
from harness.web_client import browser_site

TASK = "web-toy-v1"
NAMED = "web-toy-named-v1"
REPLAY = f"/replay?run=agents&task={TASK}&agent=forward&id=toy-fork-0"
PHONE = {"width": 390, "height": 844}
pytestmark = pytest.mark.skipif(
    missing_browser() is not None, reason=f"browser tests: {missing_browser()}"
)


@pytest.fixture(scope="module")
def site(served, toy_task, tmp_path_factory):
    """The app on 127.0.0.1 with the toy runs and a run in the toy city with street names."""
    city, episodes = named_toy_city(), toy_task[1]
    build = lambda _d: (city, episodes)  # noqa: E731
    spec = TaskSpec(NAMED, "toy city with street names", build=build, city="toy", scheme="turns")
    register_task(spec, replace=True)
    root = tmp_path_factory.mktemp("maps")
    config = RunConfig(agents=("oracle",), tasks=(NAMED,), limit=1)
    run_benchmark(config, root / "runs" / "named", progress="none")
    with browser_site(root, served) as found:
        yield found


@pytest.fixture()
def page(site):
    """A fresh desktop-sized page that records script errors (checked at the end)."""
    page = site["browser"].new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    yield page
    page.close()
    assert errors == []


def open_replay(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready]")
    page.wait_for_function(
        "[...document.querySelectorAll('#views img')].every(i => i.complete && i.naturalWidth)"
    )


def test_the_replay_map_has_a_scale_a_legend_labelled_ends_and_the_agent_on_top(site, page):
    open_replay(page, site["url"] + REPLAY)
    order = page.eval_on_selector_all("svg.map polyline", "ps => ps.map(p => p.classList[0])")
    assert order.index("reference") < order.index("agent")  # the agent's path drawn over it
    labels = page.eval_on_selector_all("svg.map g.mark", "gs => gs.map(g => g.textContent)")
    assert labels.count("start") == 1 and labels.count("goal") == 1
    assert re.fullmatch(r"\d+ (m|km)", page.text_content("svg.map g.scale text"))
    bar = page.eval_on_selector("svg.map g.scale path", "p => p.getBBox().width")
    data = page.evaluate(
        "() => fetch('/api/runs/agents/episode?task=web-toy-v1&agent=forward&id=toy-fork-0')"
        ".then(r => r.json())"
    )
    x0, y0, x1, y1 = data["map"]["bounds"]
    assert bar == pytest.approx(data["map"]["scale_m"] / max(x1 - x0, y1 - y0) * 420, abs=0.5)
    legend = page.text_content("#legend")
    for entry in ("reference path", "agent's path", "start", "goal"):
        assert entry in legend
    assert page.locator("svg.map textPath").count() == 0  # the toy city has no street names
    page.screenshot(path=site["root"] / "replay-map.png", full_page=True)


def test_street_names_are_written_along_the_streets_without_overlapping(site, page):
    url = f"/replay?run=named&task={NAMED}&agent=oracle&id=toy-east-0"
    open_replay(page, site["url"] + url)
    names = page.eval_on_selector_all("svg.map textPath", "ts => ts.map(t => t.textContent)")
    assert "Harbour Street" in names and set(names) <= {"Harbour Street", "Market Street"}
    for name in names:  # each along a path of the map
        href = page.eval_on_selector(
            f"svg.map textPath >> text={name}", "t => t.getAttribute('href')"
        )
        assert page.locator(f"svg.map path{href}").count() == 1
    boxes = page.eval_on_selector_all(
        "svg.map text.street-name",
        "ts => ts.map(t => { const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })",
    )
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
    page.screenshot(path=site["root"] / "replay-named.png")


def test_a_view_opens_at_full_size_from_the_keyboard_and_closes_with_escape(site, page):
    open_replay(page, site["url"] + REPLAY)
    thumbnail = page.locator("#views button.view-open").nth(1)
    assert thumbnail.get_attribute("aria-label") == "open view ahead at full size"
    thumbnail.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('full-view').open")
    page.wait_for_function("document.getElementById('full-view-img').naturalWidth === 960")
    assert "width=960" in page.get_attribute("#full-view-img", "src")
    assert page.evaluate("document.activeElement.id") == "full-view-close"
    assert page.text_content("#full-view-title").startswith("step 0 · at X4 · ahead")
    found = Axe().run(page).response["violations"]
    assert [v["id"] for v in found if v["impact"] in ("serious", "critical")] == []
    page.keyboard.press("ArrowRight")  # the replay does not step under the dialog
    assert page.text_content("#step-label").strip().startswith("step 0 of")
    page.keyboard.press("Escape")
    assert page.evaluate("document.getElementById('full-view').open") is False
    assert page.evaluate("document.activeElement.getAttribute('aria-label')").endswith("full size")
    page.keyboard.press("ArrowRight")
    assert page.text_content("#step-label").strip().startswith("step 1 of")
    page.locator("#views button.view-open").first.click()  # and with the mouse, then the button
    page.wait_for_function("document.getElementById('full-view').open")
    page.click("#full-view-close")
    assert page.evaluate("document.getElementById('full-view').open") is False


def node_on_screen(page, node_xy, bounds, size=420):  # type: ignore[no-untyped-def]
    """Where the browser draws metres ``node_xy`` of a map with ``bounds``: a dot put there
    in the map's own units and measured by layout (not by the page's code)."""
    x0, y0, x1, y1 = bounds
    span = max(x1 - x0, y1 - y0)
    cx, cy = (x0 + x1) / 2 - span / 2, (y0 + y1) / 2 - span / 2
    px, py = (node_xy[0] - cx) / span * size, size - (node_xy[1] - cy) / span * size
    return page.eval_on_selector(
        "svg.map",
        """(svg, [x, y]) => {
            const dot = document.createElementNS("http://www.w3.org/2000/svg", "circle");
            dot.setAttribute("cx", x); dot.setAttribute("cy", y); dot.setAttribute("r", 2);
            svg.append(dot);
            const box = dot.getBoundingClientRect();
            dot.remove();
            return [box.x + box.width / 2, box.y + box.height / 2];
        }""",
        [px, py],
    )


@pytest.mark.parametrize("layout", ["phone", "letterboxed"])
def test_drawing_on_a_narrow_screen_snaps_to_the_node_nearest_the_click(site, toy_task, layout):
    """At 390x844 the map is scaled by CSS (and, letterboxed, drawn inside a box of another
    shape): a click a few metres from a node must choose that node, at both ends."""
    graph = toy_task[0].graph
    page = site["browser"].new_page(viewport=PHONE, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(site["url"] + f"/annotate?task={TASK}&mode=draw")
    page.wait_for_selector("svg.map.drawable")
    if layout == "letterboxed":
        page.add_style_tag(content="svg.map{width:100%;height:300px;border-width:6px}")
    context = page.eval_on_selector("#episode", "e => e.value")
    area = page.evaluate(
        "q => fetch('/api/draw?' + new URLSearchParams(q)).then(r => r.json())",
        {"task": TASK, "id": context},
    )
    box = page.locator("svg.map").bounding_box()
    assert box["width"] < 390  # scaled down from its 420 units
    for node, (dx, dy) in (("W2", (4.0, 3.0)), ("D", (-4.0, -3.0))):  # 22 m from W1, E3
        x, y = graph.xy[graph.index(node)]
        page.mouse.click(*node_on_screen(page, (x + dx, y + dy), area["map"]["bounds"]))
    page.wait_for_selector("#drawing[data-ready]")
    assert page.text_content("#draw-status").startswith("route W2 → D")
    page.screenshot(path=site["root"] / f"annotate-{layout}.png", full_page=True)
    page.close()
    assert errors == []

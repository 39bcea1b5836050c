"""The web app in a real browser: Playwright driving Debian's Chromium (skipped without)."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from flaneur.evaluate.runlog import read_rows
from flaneur.web.browser import missing_browser, play_with_keyboard
from harness.web_client import browser_site

TASK = "web-toy-v1"
pytestmark = pytest.mark.skipif(
    missing_browser() is not None, reason=f"browser tests: {missing_browser()}"
)


@pytest.fixture(scope="module")
def site(served, tmp_path_factory):
    """The app on 127.0.0.1 in a thread, a browser page, and the folders it writes."""
    with browser_site(tmp_path_factory.mktemp("site"), served, poll_s=0.1) as found:
        page = found["browser"].new_page(viewport={"width": 1200, "height": 860}, bypass_csp=True)
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.on(
            "dialog", lambda dialog: (errors.append(f"dialog {dialog.message}"), dialog.dismiss())
        )
        yield {**found, "page": page, "errors": errors}


def test_runs_page_tables_sort_and_link(site):
    page = site["page"]
    page.goto(site["url"] + "/?run=agents")
    page.wait_for_selector("#run h3")
    assert page.locator("text=paired comparison").count() == 1
    first = page.locator("#run table").first.locator("tbody tr").first.locator("td").first
    before = first.text_content()
    page.locator("#run table").first.get_by_role("columnheader", name="TC", exact=True).click()
    page.locator("#run table").first.get_by_role("columnheader", name="TC", exact=True).click()
    assert first.text_content() != before  # sorted by TC, descending: oracle first
    page.screenshot(path=site["root"] / "runs.png", full_page=True)
    page.locator("#run tr", has_text="toy-fork-0").filter(has_text="oracle").click()
    page.wait_for_selector("body[data-ready]")
    assert "replay" in page.url and site["errors"] == []


def test_runs_page_filters_exports_charts_and_compares(site):
    page = site["page"]
    page.goto(site["url"] + "/?run=agents")
    page.wait_for_selector("body[data-ready]")
    lines = page.locator("main > div.scroll table tbody tr")
    assert lines.count() == 3  # agents: forward and oracle; second: oracle
    assert page.locator("main > div.scroll table", has_text="[").count() == 1  # intervals
    assert page.locator("#episode-count").text_content().startswith("20 episodes shown")
    page.select_option("select[name=agent]", "oracle")
    page.wait_for_function("document.querySelector('#episode-count').textContent.startsWith('10 ')")
    href = page.locator("#exports a", has_text="CSV").get_attribute("href")
    assert "agent=oracle" in href and "format=csv" in href
    page.fill("input[name=q]", "fork-0")
    page.wait_for_function(
        "!document.querySelector('#episode-count').textContent.startsWith('10 ')"
    )
    shown = page.locator("#episodes tbody tr")
    assert shown.count() >= 1 and all("fork-0" in t for t in shown.all_text_contents())
    chart = page.locator("img.chart").first
    chart.wait_for()
    page.wait_for_function("document.querySelector('img.chart').naturalWidth > 0")
    assert "TC by category" in chart.get_attribute("alt")
    head = page.locator("#run table").first.get_by_role("button", name="TC", exact=True)
    assert "goal" in head.get_attribute("title")  # the glossary's definition
    page.screenshot(path=site["root"] / "runs-filtered.png", full_page=True)
    page.check("#cmp-agents")
    page.check("#cmp-second")
    page.click("#compare-link")
    page.wait_for_selector("body[data-ready]")
    assert page.locator("h3", has_text="paired comparison of the runs").count() == 1
    assert page.locator("table tbody tr", has_text="second:oracle").count() == 1
    page.screenshot(path=site["root"] / "compare.png", full_page=True)
    assert site["errors"] == []


def test_replay_steps_with_keyboard_and_shows_views(site):
    page = site["page"]
    page.goto(site["url"] + f"/replay?run=agents&task={TASK}&agent=oracle&id=toy-fork-0")
    page.wait_for_selector("body[data-ready]")
    assert page.text_content("#instruction").startswith("Go east, turn right")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.text_content("#step-label").strip().startswith("step 2 of")
    page.wait_for_function(
        "[...document.querySelectorAll('#views img')].every(i => i.complete && i.naturalWidth > 0)"
    )
    assert page.locator("#views img").count() == 3
    page.keyboard.press("ArrowLeft")
    assert page.text_content("#step-label").strip().startswith("step 1 of")
    assert page.locator("svg.map polyline").count() >= 2
    page.screenshot(path=site["root"] / "replay.png", full_page=True)
    assert site["errors"] == []


def test_live_page_shows_rows_as_they_are_appended(site):
    page = site["page"]
    folder = site["runs"] / "growing"
    folder.mkdir()
    rows = (site["runs"] / "second" / "episodes.jsonl").read_text().splitlines(keepends=True)
    (folder / "episodes.jsonl").write_text("".join(rows[:3]))
    shutil.copy(site["runs"] / "second" / "run.json", folder / "run.json")  # 10 planned
    page.goto(site["url"] + "/live?run=growing")
    page.wait_for_function("document.querySelectorAll('#rows tr').length === 4")
    assert page.text_content("#count") == "3 of 10 episodes"
    with (folder / "episodes.jsonl").open("a") as handle:
        handle.write("".join(rows[3:7]))
    page.wait_for_function("document.querySelectorAll('#rows tr').length === 8")
    page.wait_for_function("document.getElementById('count').textContent.startsWith('7 of')")
    assert page.text_content("#count") == "7 of 10 episodes"
    assert page.get_attribute("#bar", "value") == "7" and page.get_attribute("#bar", "max") == "10"
    assert "7 rows · 7 successes" in page.text_content("#progress")
    (line,) = page.locator("#per-agent tbody tr").all_text_contents()  # one agent: oracle
    assert line.startswith(f"{TASK}oracle7") and "1\u00a0[" in line  # n 7, success [interval]
    page.screenshot(path=site["root"] / "live.png", full_page=True)
    shutil.copy(site["runs"] / "second" / "summary.json", folder / "summary.json")
    page.wait_for_selector("#finished")
    assert site["errors"] == []


def test_play_one_episode_to_the_goal_with_the_keyboard(site, toy_task):
    from flaneur.env.schemes.turns import TurnsScheme
    from flaneur.env.teacher import gold_rollout

    city, episodes = toy_task
    episode = episodes[1]
    slots, _ = gold_rollout(TurnsScheme(city.graph), city.graph, episode)
    page = site["page"]
    page.goto(site["url"] + f"/play?task={TASK}")
    page.fill("#player", "Browser Ada")
    page.wait_for_function("document.querySelectorAll('#episode option').length > 1")
    page.select_option("#episode", episode.id)
    page.click("#start")
    page.wait_for_selector("#choices")
    assert page.text_content("#instruction") == episode.instruction
    page.wait_for_function(
        "[...document.querySelectorAll('#views img')].every(i => i.complete && i.naturalWidth > 0)"
    )
    page.screenshot(path=site["root"] / "play.png", full_page=True)
    play_with_keyboard(page, slots, "turns")
    assert "Reached the goal" in page.text_content("#result")
    (row,) = read_rows(site["root"] / "play" / "human-Browser_Ada" / "episodes.jsonl")[0]
    assert row["agent"] == "human" and row["player"] == "Browser_Ada"
    assert row["episode_id"] == episode.id and row["metrics"]["tc"] is True
    assert row["path"] == list(episode.reference_path)
    assert site["errors"] == []


def test_data_is_never_run_as_markup(site):
    page = site["page"]
    folder = site["runs"] / "hostile"
    folder.mkdir()
    (row,) = [r for r in read_rows(site["runs"] / "second" / "episodes.jsonl")[0]][:1]
    evil = "<img src=x onerror=alert(1)><script>alert(2)</script>"
    row = {**row, "agent": evil, "episode_id": row["episode_id"], "category": evil}
    (folder / "episodes.jsonl").write_text(json.dumps(row) + "\n")
    page.goto(site["url"] + "/?run=hostile")
    page.wait_for_selector("#run table")
    assert page.locator("#run td", has_text="<script>alert(2)</script>").count() >= 1
    assert page.locator("#run img:not(.chart)").count() == 0
    assert page.locator("#run script").count() == 0
    for chart in page.locator("#run img.chart").all():  # an image: its text is never markup
        assert chart.get_attribute("src").startswith("/api/runs/hostile/chart.svg?")
    assert site["errors"] == []


def wait_until(page, expression, timeout_s=30.0):
    """Evaluate ``expression`` in ``page`` until it is true (a page whose Content-Security-Policy
    forbids eval cannot run Playwright's own polling)."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"not true within {timeout_s} s: {expression}"
        time.sleep(0.05)


def map_pixel(bounds, x, y, size=420):
    """Where common.js's streetMap draws metres (x, y) inside its SVG."""
    x0, y0, x1, y1 = bounds
    span = max(x1 - x0, y1 - y0)
    cx, cy = (x0 + x1) / 2 - span / 2, (y0 + y1) / 2 - span / 2
    return (x - cx) / span * size, size - (y - cy) / span * size


def test_annotate_a_route_drawn_on_the_map(site, toy_task):
    """Click a start and an end on the map: the route between the snapped viewpoints is the
    shortest walk, its views show step by step, and the instruction is saved as a task."""
    from flaneur.tasks.episode import read_episodes

    city, episodes = toy_task
    graph = city.graph
    page = site["page"]
    page.goto(site["url"] + f"/annotate?task={TASK}&mode=draw")
    page.wait_for_selector("svg.map.drawable")
    context = page.eval_on_selector("#episode", "e => e.value")
    area = page.evaluate(
        "q => fetch('/api/draw?' + new URLSearchParams(q)).then(r => r.json())",
        {"task": TASK, "id": context},
    )
    start, end = episodes[0].start_node, episodes[0].reference_path[-1]
    box = page.locator("svg.map").bounding_box()
    for node, off in ((start, 4.0), (end, -3.0)):
        x, y = graph.xy[graph.index(node)]
        px, py = map_pixel(area["map"]["bounds"], x + off, y + off)
        page.mouse.click(box["x"] + px, box["y"] + py)
    page.wait_for_selector("#drawing[data-ready]")
    shortest = [
        str(graph.ids[n])
        for n in graph.shortest_path(graph.index(start), graph.index(end), weight="length")
    ]
    assert page.text_content("#step-label").strip() == f"node 1 of {len(shortest)}"
    assert f"{start} → {end}" in page.text_content("#draw-status")
    page.fill("#step", str(len(shortest) - 1))
    page.dispatch_event("#step", "input")
    assert page.text_content("#step-label").strip() == f"node {len(shortest)} of {len(shortest)}"
    page.wait_for_function(
        "[...document.querySelectorAll('#views img')].every(i => i.complete && i.naturalWidth > 0)"
    )
    page.fill("#instruction", "Head east and stop at the museum.")
    page.fill("#file", "drawn")
    page.click("#save")
    page.wait_for_function("document.getElementById('saved').textContent.startsWith('saved')")
    page.screenshot(path=site["root"] / "annotate.png", full_page=True)
    (saved,) = read_episodes(site["root"] / "play" / "annotations" / "drawn.jsonl")
    assert saved.id == f"drawn-{start}-{end}-1" and saved.category == "drawn"
    assert list(saved.reference_path) == shortest and saved.goal_nodes == (end,)
    assert saved.instruction == "Head east and stop at the museum."
    assert site["errors"] == []


PAGES = (
    "/",
    f"/replay?run=agents&task={TASK}&agent=oracle&id=toy-fork-0",
    "/live?run=second",
    f"/play?task={TASK}",
    f"/annotate?task={TASK}&mode=draw",
)


def test_without_tiles_no_page_references_a_web_address(site):
    """Offline by default: every request of every page goes to the app itself, and no page,
    script, style or header names another address."""
    import re
    import urllib.request

    from flaneur.web.app import STATIC

    page, url = site["page"], site["url"]
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    for path in PAGES:
        page.goto(url + path)
        page.wait_for_load_state("networkidle")
        assert page.locator("svg.map g.tiles image").count() == 0
    assert requested and all(r.startswith(url + "/") for r in requested)
    for file in STATIC.iterdir():
        found = set(re.findall(r"https?://[^\s\"'`)]+", file.read_text()))
        assert found <= {"http://www.w3.org/2000/svg"}, (file.name, found)  # a namespace name
    with urllib.request.urlopen(url + "/") as response:
        assert "http" not in response.headers["Content-Security-Policy"]
    assert site["errors"] == []


def test_a_tile_layer_only_with_the_option(site, served, tmp_path):
    """`--tiles URL_TEMPLATE`: tiles are requested from that server, under the streets, and
    the Content-Security-Policy allows that origin for images."""
    import io
    import urllib.request

    from PIL import Image
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from flaneur.web import create_app
    from flaneur.web.server import serve_in_thread

    buffer = io.BytesIO()
    Image.new("RGB", (256, 256), (200, 230, 200)).save(buffer, format="PNG")
    asked: list[tuple[int, int, int]] = []

    async def tile(request):
        p = request.path_params
        asked.append((int(p["z"]), int(p["x"]), int(p["y"])))
        return Response(buffer.getvalue(), media_type="image/png")

    tile_server = Starlette(routes=[Route("/{z}/{x}/{y}.png", tile)])
    with serve_in_thread(tile_server) as tiles_url:
        app = create_app(
            [served],
            play_dir=tmp_path,
            cache_dir=tmp_path / "views",
            tiles=tiles_url + "/{z}/{x}/{y}.png",
        )
        with serve_in_thread(app) as url:
            with urllib.request.urlopen(url + "/replay") as response:
                policy = response.headers["Content-Security-Policy"]
            assert f"img-src 'self' data: {tiles_url};" in policy
            page = site["browser"].new_page(viewport={"width": 1200, "height": 860})  # CSP on
            page.goto(url + PAGES[1])
            page.wait_for_selector("body[data-ready]")
            # polled from here: with the page's script policy on, wait_for_function's own
            # polling is refused (no eval), and the first check can come before the tiles
            wait_until(page, "[...document.querySelectorAll('svg.map g.tiles image')].length > 0")
            wait_until(
                page,
                f"performance.getEntriesByType('resource').some(e => e.name.startsWith('{tiles_url}'))",
            )
            first = page.locator("svg.map > *").first
            assert first.get_attribute("class") == "tiles"  # drawn under the streets
            page.screenshot(path=site["root"] / "tiles.png")
            page.close()
    assert asked and len({z for z, _, _ in asked}) == 1 and asked[0][0] >= 10

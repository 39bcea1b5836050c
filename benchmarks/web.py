"""The web app in Chromium: a human baseline played through the browser, and page timings.

Usage::

    python benchmarks/web.py --json [--episodes 20] [--screenshots docs/images] [--check]
    python benchmarks/web.py --json --quick --check        # CI: 3 episodes, fewer timings

1. Runs the ``random`` and ``forward`` baselines on the first N episodes of
   ``helsinki-needs-v1`` (``flaneur run``'s runner) into a served folder.
2. Serves it with ``flaneur serve``'s app on 127.0.0.1 and, in Debian's Chromium driven by
   Playwright, plays the same N episodes on the play page with the keyboard as player
   ``oracle-driver``, pressing the keys of the oracle's (the teacher's) actions, saving them
   beside the baselines: the rows (agent ``human``) land in ``baselines/episodes.jsonl`` like
   any agent's; the script reports their metrics and the paired comparisons of
   ``flaneur report`` (human against each baseline).
3. Resumes the baselines' run (``run_benchmark(..., resume=True)``, as ``flaneur run
   --resume``) with the human rows in its folder: they must stay as they are and be listed
   in its summary.
4. Times, with the browser's clock (``performance.now()``), medians of several runs: opening
   the replay page of an episode with 40 steps (navigation to the page drawn with its first
   views loaded), and a step of that replay whose views the server has cached (key press to
   every view decoded), against the same step rendered cold.

``--screenshots DIR`` saves the runs page, a replay, the live page (k of N), human play and
the annotation of a route drawn on the map there. ``--check`` exits 1 unless every played
episode reached its goal (TCP 1.0), a row exists per episode, the resume kept them, and a
cached step is faster than a cold one. Needs ``playwright`` (pip) and a
Chromium at /usr/bin/chromium (or ``$FLANEUR_CHROMIUM``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from flaneur.env.schemes import make_scheme
from flaneur.env.teacher import gold_rollout
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.report.run_report import load_run, paired_comparisons
from flaneur.tasks.registry import load_task, register_task
from flaneur.tasks.spec import TaskSpec
from flaneur.web.browser import launch, missing_browser, play_with_keyboard
from flaneur.web.guard import TOKEN_HEADER

TASK = "helsinki-needs-v1"
LONG_TASK = "helsinki-needs-long-v1"
PLAYER = "oracle-driver"
VIEWS_READY = (
    "() => { const i = [...document.querySelectorAll('#views img')];"
    " return i.length > 0"
    " && i.every(x => x.complete && x.naturalWidth > 0); }"
)
STEP_TIMER = """async (n) => {
  const ready = () => { const i = [...document.querySelectorAll('#views img')];
    return i.length > 0 && i.every(x => x.complete && x.naturalWidth > 0); };
  const times = [];
  for (let k = 0; k < n; k++) {
    const t = performance.now();
    document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}));
    await new Promise((done) => {
      const look = () => ready() ? done() : setTimeout(look, 1);
      look();
    });
    times.push(performance.now() - t);
  }
  return times;
}"""


def median_ms(values: list[float]) -> float:
    """Median, rounded to 0.1 ms."""
    return round(statistics.median(values), 1)


def long_task(steps: int = 40) -> None:
    """Register ``helsinki-needs-long-v1``: the first episodes with a ``steps`` step limit."""
    city, episodes = load_task(TASK)
    longer = [dataclasses.replace(e, max_steps=steps) for e in episodes[:3]]
    register_task(
        TaskSpec(
            LONG_TASK,
            "helsinki needs, 40-step limit (web benchmark)",
            build=lambda _d: (city, longer),
            city="helsinki",
            scheme="headings",
            success_metric="tcp",
        ),
        replace=True,
    )


def long_walk(city, episode, moves: int = 39) -> list[int]:  # type: ignore[no-untyped-def]
    """Headings slots of a walk of ``moves`` moves from the episode's start that prefers
    streets to nodes not yet visited, closest to straight ahead, then the stop."""
    scheme = make_scheme("headings", city.graph)
    graph = city.graph
    state = scheme.start(graph.index(episode.start_node), episode.start_heading)
    seen = {state.node}
    slots = []
    for _ in range(moves):
        targets = graph.neighbors(state.node).tolist()
        heads = graph.out_headings(state.node).tolist()
        turn = [abs((h - state.heading + 180.0) % 360.0 - 180.0) for h in heads]
        best = min(range(len(targets)), key=lambda k: (targets[k] in seen, turn[k]))
        slot = scheme.slot_of(state, targets[best])
        state = scheme.step(state, slot)
        seen.add(state.node)
        slots.append(slot)
    return [*slots, 0]


def walk_40_steps(url: str, slots: list[int]) -> str:
    """Play the 40-step walk of :func:`long_walk` through the HTTP API; the episode id."""
    import httpx

    with httpx.Client(base_url=url, timeout=60) as client:
        token = client.get("/api/settings").json()["token"]  # as the app's pages do
        client.headers[TOKEN_HEADER] = token
        state = client.post("/api/play", json={"task": LONG_TASK, "player": "walker"}).json()
        for slot in slots:
            state = client.post(f"/api/play/{state['session']}", json={"slot": slot}).json()
    if state["steps"] != 40:
        raise RuntimeError(f"the long episode took {state['steps']} steps, not 40")
    return str(state["episode_id"])


def play_all(page, url: str, episodes: list, city, shots: Path | None) -> list[float]:  # type: ignore[no-untyped-def]
    """Play ``episodes`` on the play page following the oracle; seconds per episode."""
    scheme = make_scheme("headings", city.graph)
    seconds = []
    for k, episode in enumerate(episodes):
        slots, _ = gold_rollout(scheme, city.graph, episode)
        start = time.perf_counter()
        page.goto(f"{url}/play?task={TASK}")
        page.fill("#player", PLAYER)
        page.wait_for_function("document.querySelectorAll('#episode option').length > 1")
        page.select_option("#into", "baselines")  # beside the baselines: paired tests
        page.wait_for_function("document.querySelectorAll('#episode option').length > 1")
        page.select_option("#episode", "")  # next unplayed: resumes where the player left off
        page.click("#start")
        page.wait_for_selector("#choices")
        if page.text_content("h2").split(" · ")[0] != episode.id:
            raise RuntimeError(f"next unplayed should be {episode.id}")
        if k == 0 and shots is not None:
            play_with_keyboard(page, slots[:2], "headings")
            page.wait_for_function(VIEWS_READY)
            page.screenshot(path=shots / "web-play.png", full_page=True)
            play_with_keyboard(page, slots[2:], "headings", done=2)
        else:
            play_with_keyboard(page, slots, "headings")
        seconds.append(time.perf_counter() - start)
    return seconds


def resume_keeps_human_rows(folder: Path, episodes: int) -> bool:
    """Resume the baselines' run (as ``flaneur run --resume``) with human rows in its folder:
    whether they stayed as they were and the summary lists them."""
    before = [r for r in read_rows(folder / "episodes.jsonl")[0] if r["agent"] == "human"]
    summary = run_benchmark(
        RunConfig(agents=("random", "forward"), tasks=(TASK,), limit=episodes),
        folder,
        resume=True,
        progress="none",
    )
    after = [r for r in read_rows(folder / "episodes.jsonl")[0] if r["agent"] == "human"]
    listed = [e["rows"] for e in summary["runs"] if e["agent"] == "human"]
    return bool(before) and after == before and listed == [len(before)]


def draw_and_annotate(page, url: str, city, episode, shots: Path) -> None:  # type: ignore[no-untyped-def]
    """Draw a route on the annotation page (a click near its start, one near its goal),
    step to its middle and write an instruction; screenshot."""
    page.goto(f"{url}/annotate?task={TASK}&mode=draw")
    page.wait_for_selector("svg.map.drawable")
    page.select_option("#episode", episode.id)
    page.wait_for_selector("svg.map.drawable")
    area = page.evaluate(
        "q => fetch('/api/draw?' + new URLSearchParams(q)).then(r => r.json())",
        {"task": TASK, "id": episode.id},
    )
    x0, y0, x1, y1 = area["map"]["bounds"]
    span = max(x1 - x0, y1 - y0)
    cx, cy = (x0 + x1) / 2 - span / 2, (y0 + y1) / 2 - span / 2
    box = page.locator("svg.map").bounding_box()
    graph = city.graph
    for node in (episode.start_node, episode.reference_path[-1]):
        x, y = graph.xy[graph.index(node)]
        page.mouse.click(box["x"] + (x - cx) / span * 420, box["y"] + 420 - (y - cy) / span * 420)
    page.wait_for_selector("#drawing[data-ready]")
    middle = page.eval_on_selector("#step", "e => Math.floor(Number(e.max) / 2)")
    page.fill("#step", str(middle))
    page.dispatch_event("#step", "input")
    page.click("#directions summary")
    page.fill("#instruction", "Walk down to the second crossing, turn right and stop by the café.")
    page.wait_for_function(VIEWS_READY)
    page.screenshot(path=shots / "web-annotate.png", full_page=True)


def time_replay(browser, url: str, query: str, repeats: int) -> dict:  # type: ignore[no-untyped-def]
    """Open/step timings of one replay page (fresh browser contexts: no browser cache)."""
    opens, cold, cached = [], [], []
    for attempt in range(repeats + 1):
        context = browser.new_context(viewport={"width": 1200, "height": 900}, bypass_csp=True)
        page = context.new_page()
        page.goto(f"{url}/replay?{query}")
        page.wait_for_selector("body[data-ready]")
        page.wait_for_function(VIEWS_READY)
        opened = page.evaluate("performance.now()")
        steps = page.evaluate("document.getElementById('step').max")
        times = page.evaluate(STEP_TIMER, int(steps))
        if attempt == 0:
            cold += times  # the server renders each view the first time
        else:
            opens.append(opened)
            cached += times
        context.close()
    return {
        "steps": int(steps),
        "open_ms": median_ms(opens),
        "cold_step_ms": median_ms(cold),
        "cached_step_ms": median_ms(cached),
        "open_runs": len(opens),
        "cached_step_samples": len(cached),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5, help="Timed page openings.")
    parser.add_argument("--screenshots", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="Keep the served folder here.")
    parser.add_argument("--quick", action="store_true", help="3 episodes, 2 timed openings.")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    reason = missing_browser()
    if reason:
        print(f"web benchmark skipped: {reason}", file=sys.stderr)
        return 0 if not args.check else 1
    if args.quick:
        args.episodes, args.repeats = 3, 2
    from playwright.sync_api import sync_playwright

    from flaneur.web import create_app
    from flaneur.web.server import serve_in_thread

    started = time.perf_counter()
    root = args.out or Path(tempfile.mkdtemp(prefix="flaneur-web-"))
    if args.out and root.exists():
        shutil.rmtree(root)
    city, episodes = load_task(TASK)
    chosen = episodes[: args.episodes]
    run_benchmark(
        RunConfig(agents=("random", "forward"), tasks=(TASK,), limit=args.episodes),
        root / "baselines",
        progress="none",
    )
    long_task()
    shots = args.screenshots
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    app = create_app([root], play_dir=root, cache_dir=root / "view-cache", poll_s=0.2)
    with serve_in_thread(app) as url, sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1200, "height": 900}, bypass_csp=True)
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        seconds = play_all(page, url, chosen, city, shots)
        with ThreadPoolExecutor(1) as thread:  # the runner's own event loop, off Playwright's
            resumed_ok = thread.submit(
                resume_keeps_human_rows, root / "baselines", args.episodes
            ).result()
        long_id = walk_40_steps(url, long_walk(city, episodes[0]))
        query = f"run=human-walker&task={LONG_TASK}&agent=human&id={long_id}"
        timings = time_replay(browser, url, query, args.repeats)
        if shots is not None:
            page.goto(f"{url}/?run=baselines")
            page.wait_for_selector("#run h3")
            page.screenshot(path=shots / "web-runs.png", full_page=False)
            page.goto(f"{url}/replay?run=baselines&task={TASK}&agent=random&id={chosen[0].id}")
            page.wait_for_selector("body[data-ready]")
            for _ in range(3):
                page.keyboard.press("ArrowRight")
            page.wait_for_function(VIEWS_READY)
            page.screenshot(path=shots / "web-replay.png", full_page=True)
            growing = root / "growing"
            growing.mkdir()
            lines = (root / "baselines" / "episodes.jsonl").read_text().splitlines(keepends=True)
            (growing / "episodes.jsonl").write_text("".join(lines[: max(1, len(lines) // 2)]))
            shutil.copy(root / "baselines" / "run.json", growing / "run.json")  # its N
            page.goto(f"{url}/live?run=growing")
            page.wait_for_selector("#rows tr:nth-child(2)")
            page.wait_for_selector("#count")
            page.screenshot(path=shots / "web-live.png", full_page=False)
            shutil.rmtree(growing)
            draw_and_annotate(page, url, city, chosen[min(2, len(chosen) - 1)], shots)
        browser.close()
    human = [
        r for r in read_rows(root / "baselines" / "episodes.jsonl")[0] if r["agent"] == "human"
    ]
    paired = paired_comparisons(load_run(root / "baselines"))  # as `flaneur report` pairs them
    tcp = [bool(r["metrics"]["tcp"]) for r in human]
    result = {
        "task": TASK,
        "player": PLAYER,
        "episodes": len(chosen),
        "human_rows": len(human),
        "human_tcp": sum(tcp) / len(tcp) if tcp else None,
        "human_spl": round(statistics.mean(r["metrics"]["spl"] for r in human), 4)
        if human
        else None,
        "seconds_per_played_episode": round(statistics.median(seconds), 3),
        "paired": [
            {k: c[k] for k in ("a", "b", "paired", "wins", "losses", "diff", "p_value")}
            for c in paired
            if "human" in (c["a"], c["b"])
        ],
        "resume_keeps_human_rows": resumed_ok,
        "replay": timings,
        "page_errors": errors,
        "served_folder": str(root),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    if args.out is None:
        shutil.rmtree(root, ignore_errors=True)
    ok = (
        len(human) == len(chosen)
        and all(tcp)
        and resumed_ok
        and not errors
        and timings["cached_step_ms"] < timings["cold_step_ms"]
    )
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())

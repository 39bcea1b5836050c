"""flaneur's forward and random baselines against VELMA's released baseline rule.

Usage::

    python benchmarks/velma_baselines.py --data-dir ../shared/data --json [--check]
        [--limit N] [--tasks map2seq-unseen-dev-v1,touchdown-unseen-dev-v1]
        [--protocols paper,flaneur]

VELMA's repository (github.com/raphael-sch/VELMA) releases ``run_baselines.py`` but not its
outputs: no forward or random baseline actions are published (its ``outputs/`` folder holds
only the GPT-3/GPT-4 runs with images). This script therefore compares flaneur's runs with
an **independent re-implementation of VELMA's baseline rule, written here from reading its
code** (``run_baselines.py``, ``vln/agent.py``, ``vln/base_navigator.py``, ``vln/env.py``,
``vln/prompt_builder.py``). It imports none of flaneur's graph, scheme or agent code; it
reads the raw graph files (for map2seq VELMA's map2seq graph: Touchdown's less the two links
of :data:`MAP2SEQ_MISSING_LINKS`) and the task files.

The reference, as VELMA runs it (``python run_baselines.py --baseline forward|random``):

- the navigator keeps ``(panorama, round(heading))`` states; map2seq episodes begin with an
  unvalidated ``forward`` (``Agent.run``: ``actions = ['init', 'forward']``); Touchdown start
  headings are snapped to the nearest street;
- each step the baseline answers ``stop`` once ``pano_length`` (1 + one per ``forward``
  answered; 2 on map2seq after the forced move) reaches 40, else ``forward``; the random
  baseline draws ``random.choice(['forward', 'left', 'right'])`` when the line before the
  cue of its verbalized prompt ends with ``intersection.``, from Python's ``random`` seeded
  once with ``--seed 1`` and shared by all episodes in file order;
- answers pass ``validate_action`` (dead end: ``stop`` unless ``turn_around``; 2-way node:
  ``left``/``right`` become ``forward``); the loop runs while ``step_id <= --max_steps 55``.

VELMA's Touchdown random baseline raises ``IndexError`` on the first episode whose start is
not an intersection (its prompt template is empty, so the prompt has one line and
``prompt.split('\\n')[-2]`` fails): those reference episodes are reported as ``crashes``
and not compared; ``random, reference patched`` compares against the reading that runs (a
one-line prompt draws nothing), which flaneur's ``paper`` protocol follows.

Prints one JSON object: per task, protocol and agent the number of episodes whose actions are
identical, and examples of the others. ``--check`` exits 1 when any episode of a ``paper``
run differs.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flaneur.evaluate.runner import RunConfig, run_benchmark

TASKS = {
    "map2seq-unseen-dev-v1": ("map2seq", "map2seq/unseen/dev.json"),
    "touchdown-unseen-dev-v1": ("touchdown", "touchdown/unseen/dev.json"),
}
AGENTS = ("forward", "random")
PATCHED = "random, reference patched"
"""Touchdown's random baseline against the reference whose one-line first prompt draws
nothing (VELMA's code raises there)."""
VELMA_SEED = 1  # run_baselines.py: --seed 1, random.seed(opts.seed) once at import
MAX_STEPS = 55  # run_baselines.py: --max_steps 55
MAP2SEQ_MISSING_LINKS = frozenset(
    {
        ("ARRlZyTkG-pDfJj_Iq-CqQ", "dkdD_nTxswtMHmL4CgLBQw"),
        ("dkdD_nTxswtMHmL4CgLBQw", "ARRlZyTkG-pDfJj_Iq-CqQ"),
    }
)
"""Links of Touchdown's ``links.txt`` that VELMA's map2seq graph lacks (as in fidelity.py)."""


class Crash(Exception):
    """VELMA's released code raises on this episode."""


# ----------------------------------------------------------------------------- the reference
def read_graph(graph_dir: Path, drop: frozenset[tuple[str, str]]) -> dict[str, dict[float, str]]:
    """``{panorama: {link heading: neighbour}}`` in ``links.txt`` order (VELMA's dicts)."""
    out: dict[str, dict[float, str]] = {}
    for line in (graph_dir / "nodes.txt").read_text().splitlines():
        out[line.split(",")[0]] = {}
    for line in (graph_dir / "links.txt").read_text().splitlines():
        start, heading, end = line.strip().split(",")
        if (start, end) not in drop:
            out[start][float(heading)] = end
    return out


def nearest(heading: float, headings: list[float]) -> float:
    """The heading of ``headings`` closest to ``heading`` (the first one on a tie)."""
    return min(headings, key=lambda h: 180 - abs(abs(heading - h) - 180))


def signed(frm: float, to: float) -> float:
    """Angle from ``frm`` to ``to`` in (-180, 180]."""
    a = to - frm
    if a > 180:
        a -= 360
    if a <= -180:
        a += 360
    return a


class Walker:
    """A navigator with VELMA's state and transition rules."""

    def __init__(self, links: dict[str, dict[float, str]], pano: str, heading: float) -> None:
        self.links = links
        self.states: list[tuple[str, float]] = [(pano, round(heading))]
        self.actions = ["init"]

    def prev_pano(self) -> str | None:
        return self.states[-2][0] if len(self.states) > 1 else None

    def degree(self) -> int:
        return len(self.links[self.states[-1][0]])

    def checked(self, action: str) -> str:
        """VELMA's ``validate_action``."""
        d = self.degree()
        if d <= 1 and action not in ("stop", "turn_around"):
            return "stop"
        if d == 2 and action in ("left", "right"):
            return "forward"
        return action

    def move(self, action: str) -> None:
        pano, heading = self.states[-1]
        nbs = self.links[pano]
        if action == "stop":
            nxt = (pano, heading)
        elif action == "forward" and heading in nbs:
            nxt = (nbs[heading], heading)
        elif action == "turn_around":
            nxt = (pano, nearest((heading - 180) % 360, list(nbs)))
        elif len(nbs) <= 1 and self.prev_pano() not in (None, pano):
            nxt = (pano, heading)
        elif len(nbs) == 2:
            h = nearest(heading, list(nbs))
            nxt = (nbs[h] if action == "forward" else pano, h)
        elif len(nbs) > 2:
            h = self.crossing_heading(action)
            nxt = (nbs[h] if action == "forward" else pano, h)
        else:
            raise Crash(f"no heading for {action!r} at {pano}")
        self.actions.append(action)
        self.states.append((nxt[0], round(nxt[1])))

    def crossing_heading(self, action: str) -> float:
        pano, heading = self.states[-1]
        prev = self.prev_pano()
        nbs = self.links[pano]
        outs = list(nbs)
        ahead = heading
        if prev is not None and prev != pano:
            back = [h for h, p in nbs.items() if p == prev]
            if not back:
                raise Crash(f"no link back from {pano} to {prev}")
            outs.remove(back[0])
            ordered = sorted(outs, key=lambda h: signed(heading, h))
            n = len(ordered)
            if n % 2 == 0:
                ahead = nearest(heading, [ordered[n // 2 - 1], ordered[n // 2]])
            else:
                ahead = ordered[n // 2]
            if len(nbs) == 3 and action in ("left", "right"):
                return ordered[0] if action == "left" else ordered[-1]
        if action == "forward":
            return ahead
        others = set(outs) - {ahead}
        if action == "left":
            return min(others, key=lambda h: (ahead - h) % 360)
        return min(others, key=lambda h: (h - ahead) % 360)


def observation_line(walker: Walker, k: int) -> str:
    """VELMA's observation text at state ``k`` without images: the intersection only."""
    pano = walker.states[k][0]
    prev = walker.states[k - 1][0] if k > 0 else None
    ways = len(walker.links[pano])
    return f"There is a {ways}-way intersection." if ways > 2 and pano != prev else ""


def lines_from(walker: Walker, k: int) -> list[str]:
    """The navigation lines of states ``k..`` and the cue (``get_navigation_lines``)."""
    out = []
    for i in range(k, len(walker.actions)):
        if walker.actions[i] != "init":
            out.append(f"{i}. {walker.actions[i]}")
        seen = observation_line(walker, i)
        if seen:
            out.append(seen)
    if walker.actions[-1] != "stop":
        out.append(f"{len(walker.actions)}.")
    return out


def reference_actions(
    links: dict[str, dict[float, str]],
    row: dict[str, Any],
    dataset: str,
    agent: str,
    rng: Any,
    patched: bool = False,
) -> list[str]:
    """The actions of VELMA's ``agent`` baseline on one task row (``init`` left out);
    ``patched``: a one-line prompt draws nothing instead of raising."""
    heading = row["start_heading"]
    pano = row["route_panoids"][0]
    if dataset == "touchdown":
        heading = nearest(heading, list(links[pano]))
    walker = Walker(links, pano, heading)
    if dataset == "map2seq":
        walker.move("forward")
    panos = 2 if dataset == "map2seq" else 1
    lines: list[str] = []
    k = 0
    while k <= MAX_STEPS:
        lines = lines[:-1] + lines_from(walker, k)
        k = len(walker.actions)
        answer = "stop" if panos == 40 else "forward"
        if answer != "stop" and agent == "random":
            if len(lines) < 2 and not patched:
                raise Crash("IndexError: the prompt has one line")
            if len(lines) >= 2 and lines[-2].endswith("intersection."):
                answer = rng.choice(["forward", "left", "right"])
            if dataset != "map2seq" and panos == 0:  # never true: panos starts at 1
                answer = rng.choice(["forward", "turn_around"])
        if answer == "forward":
            panos += 1
        answer = walker.checked(answer)
        walker.move(answer)
        if answer == "stop":
            break
    return walker.actions[1:]


def reference_run(
    data_dir: Path, task: str, agent: str, limit: int | None, patched: bool = False
) -> tuple[list[str], dict[str, list[str] | str]]:
    """Episode ids in file order and each one's reference actions (or the crash text).

    The random baseline's stream is shared by all episodes; after a crash VELMA's run ends,
    so later episodes are not defined either (marked as crashes too)."""
    dataset, rel = TASKS[task]
    drop = MAP2SEQ_MISSING_LINKS if dataset == "map2seq" else frozenset()
    links = read_graph(data_dir / "touchdown" / "graph", drop)
    rows = [json.loads(x) for x in (data_dir / rel).read_text().splitlines() if x.strip()]
    rows = rows[:limit] if limit is not None else rows
    rng = random.Random(VELMA_SEED)
    ids: list[str] = []
    out: dict[str, list[str] | str] = {}
    crashed = ""
    for row in rows:
        key = str(row["id"] if dataset == "map2seq" else row["route_id"])
        ids.append(key)
        if crashed and agent == "random":
            out[key] = f"after a crash: {crashed}"
            continue
        try:
            out[key] = reference_actions(links, row, dataset, agent, rng, patched)
        except Crash as err:
            crashed = str(err)
            out[key] = crashed
    return ids, out


# ----------------------------------------------------------------------------- comparison
def flaneur_rows(data_dir: Path, tasks: list[str], protocol: str, limit: int | None) -> list:
    """Rows of flaneur's forward and random baselines under ``protocol``."""
    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(
            agents=AGENTS,
            tasks=tuple(tasks),
            data_dir=str(data_dir),
            limit=limit,
            protocol=protocol,
        )
        run_benchmark(config, Path(tmp) / "run", progress="none")
        text = Path(tmp, "run", "episodes.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def compare(
    rows: list[dict[str, Any]], ids: list[str], ref: dict[str, list[str] | str]
) -> dict[str, Any]:
    """Identical episodes, crashes of the reference and examples of differences."""
    mine = {str(r["episode_id"]): r for r in rows}
    same = crashes = 0
    examples = []
    for key in ids:
        expected = ref[key]
        if isinstance(expected, str):
            crashes += 1
            continue
        got = list(mine[key]["actions"]) if key in mine else None
        if got == expected:
            same += 1
            continue
        if len(examples) < 5:
            at = next(
                (i for i, (a, b) in enumerate(zip(got or [], expected, strict=False)) if a != b),
                min(len(got or []), len(expected)),
            )
            examples.append(
                {
                    "episode": key,
                    "first_difference_at": at,
                    "flaneur": (got or [])[max(0, at - 2) : at + 3],
                    "velma": expected[max(0, at - 2) : at + 3],
                    "lengths": [len(got or []), len(expected)],
                }
            )
    compared = len(ids) - crashes
    return {
        "episodes": len(ids),
        "compared": compared,
        "identical": same,
        "differ": compared - same,
        "reference_crashes": crashes,
        "examples": examples,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument("--check", action="store_true", help="exit 1 on a paper difference")
    parser.add_argument("--limit", type=int, default=None, help="first N episodes of each set")
    parser.add_argument("--tasks", default="map2seq-unseen-dev-v1")
    parser.add_argument("--protocols", default="paper,flaneur")
    args = parser.parse_args(argv)
    data_dir = args.data_dir.resolve()
    tasks = [t for t in args.tasks.split(",") if t]
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        parser.exit(
            2, f"velma_baselines.py: unknown task(s) {unknown}; choose from {list(TASKS)}\n"
        )
    start = time.perf_counter()
    result: dict[str, Any] = {"limit": args.limit, "seed": VELMA_SEED, "tasks": {}}
    refs = {(t, a): reference_run(data_dir, t, a, args.limit) for t in tasks for a in AGENTS}
    for task in tasks:  # Touchdown's random baseline crashes: also a reading that runs
        if TASKS[task][0] == "touchdown":
            refs[(task, PATCHED)] = reference_run(data_dir, task, "random", args.limit, True)
    for protocol in [p for p in args.protocols.split(",") if p]:
        rows = flaneur_rows(data_dir, tasks, protocol, args.limit)
        for (task, agent), (ids, ref) in refs.items():
            name = "random" if agent == PATCHED else agent
            mine = [r for r in rows if r["task"] == task and r["agent"] == name]
            entry = result["tasks"].setdefault(task, {}).setdefault(protocol, {})
            entry[agent] = compare(mine, ids, ref)
    result["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    paper = [e for t in result["tasks"].values() for a in t.get("paper", {}).values() for e in [a]]
    if args.check and any(e["differ"] for e in paper):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

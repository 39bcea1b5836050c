"""One engine: every V-IRL agent and benchmark runs through ``flaneur run``, gives the same
rows at any concurrency and after a SIGKILL + ``--resume``, and runs on a city that is not
Helsinki.

Usage::

    python benchmarks/one_engine.py --json            # larger limits (about 10 minutes)
    python benchmarks/one_engine.py --quick --check   # small limits, gates (about 6 minutes)

Per task set (``tasks``; the installed ``flaneur`` console script, offline, seed 0): the
nine agents on their ``helsinki-virl-<agent>-v1`` sets (Hiro with ``--views synthetic``)
and the four benchmarks with a real solver and the oracle (recognition: ``offline``, VQA:
``embedder``, detection: ``scene``, VLN: ``ling``), each run three times on its first
``--limit`` items: concurrency 1, concurrency 4, and concurrency 1 killed with SIGKILL once
``episodes.jsonl`` holds a row, then the same command with ``--resume``. Rows are compared
by ``(task, agent, episode_id)`` without the timing fields (``started_at``,
``duration_s``, latency-like counters inside ``usage``): ``identical_concurrency`` (1 vs
4), ``identical_resume`` (1 vs killed + resumed), ``killed_mid_run`` (false when
every row was written before the kill landed: said, not faked; the runner writes rows in
batches of up to 0.2 s, so a set that runs within 0.2 s of its first row cannot be cut),
``seconds`` (the concurrency-1 run).

The other city (``town``): the small OpenStreetMap extract shipped with pyrosm
(``pyrosm.get_data("test_pbf")``, Karhula near Kotka, 26.95 E 60.53 N) cut by
:func:`flaneur.world.sources.osm.city_from_osm` and saved as a pack; for every kind of
``flaneur tasks kinds``, ``flaneur tasks generate PACK --kind K`` and ``flaneur run --tasks
FILE --city PACK --agent <the kind's solvers>``. A kind the town cannot serve must end in
one error line (exit 2), reported as ``error``. An agent whose kind makes nothing there
still has to run: RX-399 and Imani on sets of the street furniture the town maps (``-T
labels``), Local, Ling, Diego and Vivek on a persona of the town (``flaneur virl NAME FILE
--city PACK``, the one runner too); ``agents`` says how each ran.

``--check`` exits 1 on rows that differ, a failed or errored run (``agent_error`` /
``task_error`` rows), a traceback or "internal error", a kind that fails other than with
one error line, or a V-IRL agent that did not run on the town.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flaneur.evaluate.runlog import FINISHED, read_rows, row_key

FLANEUR = Path(sys.executable).with_name("flaneur")
TIMING = ("started_at", "duration_s")
LATENCY = re.compile(r"latency|seconds|_s$|_ms$")
"""Keys inside a row's ``usage`` that measure time, not work."""
ERRORED = ("agent_error", "task_error", "model_error")
POLL_S = 0.002
VIRL_AGENTS = ("aria", "vivek", "peng", "diego", "local", "ling", "rx399", "imani", "hiro")


@dataclass(frozen=True)
class Case:
    """A task set, its solvers, the items run (``None``: all) and extra ``flaneur run``
    arguments."""

    task: str
    agents: tuple[str, ...]
    quick: int | None
    full: int | None
    extra: tuple[str, ...] = ()


SYNTHETIC = ("--views", "synthetic")
CASES = (
    Case("helsinki-virl-aria-v1", ("aria",), 8, None),
    Case("helsinki-virl-vivek-v1", ("vivek",), None, None),
    Case("helsinki-virl-peng-v1", ("peng",), 6, None),
    Case("helsinki-virl-diego-v1", ("diego",), 6, None),
    Case("helsinki-virl-local-v1", ("local",), None, None),
    Case("helsinki-virl-ling-v1", ("ling",), None, None),
    Case("helsinki-virl-rx399-v1", ("rx399",), 3, 10),
    Case("helsinki-virl-imani-v1", ("imani",), 2, 6),
    Case("helsinki-virl-hiro-v1", ("hiro",), 2, 4, SYNTHETIC),
    Case("helsinki-virl-recognition-v1", ("offline", "oracle"), 4, 30),
    Case("helsinki-virl-vqa-v1", ("embedder", "oracle"), 4, 30),
    Case("helsinki-virl-detection-v1", ("scene", "oracle"), 3, 12),
    Case("helsinki-virl-vln-v1", ("ling", "oracle"), None, None),
)

TOWN_BBOX = (26.93, 60.52, 26.97, 60.54)
"""West, south, east, north: the whole street network of pyrosm's test extract."""
KIND_SOLVERS = {
    "needs": ("explorer",),
    "virl-vln": ("ling", "oracle"),
    "virl-recognition": ("offline", "oracle"),
    "virl-vqa": ("embedder", "oracle"),
    "virl-detection": ("scene", "oracle"),
}
"""Solvers of a kind on the town; any other ``virl-<agent>`` kind: its agent."""
TOWN_RUN_EXTRA = {"virl-hiro": SYNTHETIC}
TOWN_LIMITS = {"quick": {"virl-hiro": 1, "virl-imani": 2, "*": 4}, "full": {"virl-hiro": 2}}
SMALL_TOWN_OPTIONS = {
    "virl-rx399": ('labels=["bus shelter"]',),
    "virl-imani": ('labels=["bus shelter"]', "min_objects=1"),
}
"""``-T`` options for the street furniture the town maps (it has no bins or benches)."""
_VISITOR = {
    "name": "Visitor",
    "start": "Neste Huttunen",
    "background": "A visitor who does not know the town.",
}
PERSONAS = {
    "local": {**_VISITOR, "intention": "Buy milk.", "question": "How do I get to Erkinkulma?"},
    "ling": {**_VISITOR, "intention": "Buy milk.", "question": "How do I get to Erkinkulma?"},
    "diego": {
        **_VISITOR,
        "intention": "See the garden centre and the school.",
        "budget": 60,
        "wishes": ["Piispan Puutarha", "Helilän koulu"],
        "feedback": "",
        "status": {"hunger": 20, "energy": 80},
    },
    "vivek": {
        **_VISITOR,
        "intention": "Rent a flat near a bus stop.",
        "budget": 1500,
        "synthetic_listings": 30,
        "amenities": ["bus_stop"],
    },
}
"""Scenarios of the town (places of the extract) for agents whose kind makes nothing there."""


@dataclass
class Outcome:
    """A finished console-script call."""

    rc: int
    seconds: float
    out: str
    err: str

    @property
    def crashed(self) -> bool:
        """A traceback or an internal error in what it printed."""
        text = self.out + self.err
        return "Traceback (most recent call last)" in text or "internal error" in text.lower()


def flaneur(args: list[str], crashes: list[str]) -> Outcome:
    """Run the installed ``flaneur`` with ``args`` (stdin closed); a crash goes to
    ``crashes``."""
    start = time.perf_counter()
    done = subprocess.run(
        [str(FLANEUR), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    outcome = Outcome(done.returncode, time.perf_counter() - start, done.stdout, done.stderr)
    if outcome.crashed:
        tail = outcome.err.strip().splitlines()[-1:] or ["?"]
        crashes.append(f"flaneur {' '.join(args[:6])}: {tail[0]}")
    return outcome


def comparable(row: dict) -> dict:
    """A row without its timing fields."""
    out = {k: v for k, v in row.items() if k not in TIMING}
    if isinstance(out.get("usage"), dict):
        out["usage"] = {k: v for k, v in out["usage"].items() if not LATENCY.search(k)}
    return out


def keyed_rows(folder: Path) -> tuple[dict, int]:
    """``({(task, agent, episode_id): row without timing}, duplicate rows)`` of a run."""
    rows, _ = read_rows(folder / "episodes.jsonl")
    keyed = {row_key(r): comparable(r) for r in rows}
    return keyed, len(rows) - len(keyed)


def difference(a: dict, b: dict) -> str | None:
    """Where two keyed row sets first differ (``None``: identical)."""
    if a.keys() != b.keys():
        return f"rows {sorted(a.keys() ^ b.keys())[:3]} in one run only"
    for key in sorted(a):
        fields = sorted(k for k in a[key].keys() | b[key].keys() if a[key].get(k) != b[key].get(k))
        if fields:
            return f"{'/'.join(key)}: {', '.join(fields)}"
    return None


def terminations(folder: Path) -> dict[str, dict[str, int]]:
    """``{agent: {termination: rows}}`` of a run folder."""
    rows, _ = read_rows(folder / "episodes.jsonl")
    counts: dict[str, Counter] = {}
    for row in rows:
        counts.setdefault(row["agent"], Counter())[row["termination"]] += 1
    return {agent: dict(c) for agent, c in counts.items()}


def killed_run(args: list[str], out: Path, crashes: list[str]) -> tuple[bool, int]:
    """Start ``flaneur run`` (``args`` without ``--out``), SIGKILL it once ``episodes.jsonl``
    holds a row; ``(killed while running, rows then)``."""
    log, err_file = out / "episodes.jsonl", out.parent / f"{out.name}.err"
    with open(err_file, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [str(FLANEUR), *args, "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            stdin=subprocess.DEVNULL,
        )
        killed, deadline = False, time.monotonic() + 1800
        while proc.poll() is None and time.monotonic() < deadline:
            if log.is_file() and b"\n" in log.read_bytes():
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                break
            time.sleep(POLL_S)
        proc.wait()
    text = err_file.read_text(encoding="utf-8")
    if "Traceback (most recent call last)" in text:
        crashes.append(f"flaneur {' '.join(args[:6])} (to be killed): traceback")
    return killed, len(read_rows(log)[0])


def measure_case(case: Case, folder: Path, quick: bool, crashes: list[str]) -> dict:
    """The three runs of a task set and their comparison."""
    limit = case.quick if quick else case.full
    args = ["run", "--agent", ",".join(case.agents), "--tasks", case.task, "--seed", "0"]
    args += [*case.extra, "--progress", "none"] + (["--limit", str(limit)] if limit else [])
    outs = {run: folder / f"{case.task}-{run}" for run in ("c1", "c4", "killed")}
    seconds = {}
    for concurrency in (1, 4):
        out = outs[f"c{concurrency}"]
        done = flaneur([*args, "--concurrency", str(concurrency), "--out", str(out)], crashes)
        seconds[concurrency] = (done.rc, round(done.seconds, 1))
    one, _ = keyed_rows(outs["c1"])
    four, dup_four = keyed_rows(outs["c4"])
    serial = [*args, "--concurrency", "1"]
    killed, at_kill = killed_run(serial, outs["killed"], crashes)
    resume = flaneur([*serial, "--out", str(outs["killed"]), "--resume"], crashes)
    resumed, dup_resumed = keyed_rows(outs["killed"])
    conc_diff, resume_diff = difference(one, four), difference(one, resumed)
    result = {
        "agents": list(case.agents),
        "limit": limit,
        "rows": len(one),
        "identical_concurrency": bool(one) and conc_diff is None and not dup_four,
        "identical_resume": bool(one) and resume_diff is None and not dup_resumed,
        "killed_mid_run": killed and at_kill < len(one),
        "rows_at_kill": at_kill,
        "seconds": seconds[1][1],
        "seconds_concurrency_4": seconds[4][1],
        "exit_codes": [seconds[1][0], seconds[4][0], resume.rc],
        "terminations": terminations(outs["c1"]),
    }
    if conc_diff or resume_diff:
        result["difference"] = conc_diff or resume_diff
    return result


def build_town(folder: Path) -> tuple[Path, dict]:
    """The town's pack (cut from pyrosm's test extract) and its size."""
    from pyrosm import get_data

    from flaneur.world.packs import save_pack
    from flaneur.world.sources.osm import city_from_osm

    city = city_from_osm(get_data("test_pbf"), bbox=TOWN_BBOX, name="pyrosm-test")
    pack = folder / "town"
    save_pack(city, pack, replace=True)
    summary = city.summary()
    keys = ("nodes", "edges", "places", "named_places", "buildings", "furniture")
    return pack, {"bbox": list(TOWN_BBOX), **{k: summary[k] for k in keys}}


def town_run(pack: Path, kind: str, file: Path, out: Path, limit: int | None, crashes) -> dict:
    """``flaneur run`` of a generated set on the town; its exit code and terminations."""
    agents = KIND_SOLVERS.get(kind) or (kind.removeprefix("virl-"),)
    args = ["run", "--tasks", str(file), "--city", str(pack), "--agent", ",".join(agents)]
    args += [*TOWN_RUN_EXTRA.get(kind, ()), "--out", str(out), "--progress", "none"]
    args += ["--concurrency", "2"] + (["--limit", str(limit)] if limit else [])
    done = flaneur(args, crashes)
    return {"agents": list(agents), "exit": done.rc, "terminations": terminations(out)}


def town_kind(pack: Path, kind: str, folder: Path, limit: int | None, crashes) -> dict:
    """Generate ``kind`` on the town and run it; the kind's row of the town table."""
    entry: dict[str, Any] = {"kind": kind}
    for label, options in (("", ()), ("small_town", SMALL_TOWN_OPTIONS.get(kind))):
        if options is None or (label and "items" in entry):
            continue
        file = folder / f"{kind}{'-' + label if label else ''}.jsonl"
        args = ["tasks", "generate", str(pack), "--kind", kind, "-o", str(file), "--json"]
        args += [x for o in options for x in ("-T", o)]
        made = flaneur(args, crashes)
        target = entry.setdefault(label, {}) if label else entry
        if label:
            target["options"] = list(options)
        if made.rc != 0:
            lines = [x for x in made.err.strip().splitlines() if x.strip()]
            target.update(exit=made.rc, error=" ".join(lines))
            target["one_error_line"] = made.rc == 2 and len(lines) == 1
            continue
        target["items"] = json.loads(made.out)["items"]
        target["run"] = town_run(pack, kind, file, file.with_suffix(""), limit, crashes)
    return entry


def persona_run(pack: Path, agent: str, folder: Path, crashes: list[str]) -> dict:
    """``flaneur virl AGENT PERSONA --city PACK`` (the one runner on a one-item task)."""
    persona = folder / f"{agent}.yaml"
    persona.write_text(json.dumps({**PERSONAS[agent], "city": "town"}), encoding="utf-8")
    out = folder / f"persona-{agent}"
    done = flaneur(["virl", agent, str(persona), "--city", str(pack), "-o", str(out)], crashes)
    return {"exit": done.rc, "terminations": terminations(out).get(agent, {})}


def finished(counts: dict[str, int]) -> int:
    """Rows of a termination count that ran to an end."""
    return sum(n for t, n in counts.items() if t in FINISHED)


def town_agents(pack: Path, kinds: list[dict], folder: Path, crashes: list[str]) -> dict:
    """How each V-IRL agent ran on the town: its kind's set, a small-town set or a persona."""
    ran: dict[str, dict] = {}
    for entry in kinds:
        for label, part in (("", entry), ("small_town", entry.get("small_town") or {})):
            run = part.get("run") or {}
            for agent, counts in (run.get("terminations") or {}).items():
                if agent in VIRL_AGENTS and finished(counts) and agent not in ran:
                    via = entry["kind"] + (f" -T {' -T '.join(part['options'])}" if label else "")
                    ran[agent] = {"via": via, "terminations": counts}
    for agent in VIRL_AGENTS:
        if agent not in ran and agent in PERSONAS:
            ran[agent] = {"via": "persona", **persona_run(pack, agent, folder, crashes)}
    return {a: ran.get(a, {"via": None, "terminations": {}}) for a in VIRL_AGENTS}


def measure_town(folder: Path, quick: bool, crashes: list[str]) -> dict:
    """The other city: pack, every kind generated and run, every V-IRL agent run."""
    folder.mkdir(parents=True, exist_ok=True)
    pack, size = build_town(folder)
    listed = flaneur(["tasks", "kinds", "--json"], crashes)
    names = [k["kind"] for k in json.loads(listed.out)["kinds"]]
    limits = TOWN_LIMITS["quick" if quick else "full"]
    kinds = [
        town_kind(pack, kind, folder, limits.get(kind, limits.get("*")), crashes) for kind in names
    ]
    agents = town_agents(pack, kinds, folder, crashes)
    return {"source": "pyrosm test_pbf", "pack": size, "kinds": kinds, "agents": agents}


def problems_of(result: dict) -> list[str]:
    """What ``--check`` fails on."""
    found = [f"crash: {c}" for c in result["crashes"]]
    for task, fig in result["tasks"].items():
        if not (fig["identical_concurrency"] and fig["identical_resume"]):
            found.append(f"{task}: rows differ ({fig.get('difference')})")
        if fig["rows"] == 0 or any(fig["exit_codes"]):
            found.append(f"{task}: exit codes {fig['exit_codes']}, {fig['rows']} rows")
        for agent, counts in fig["terminations"].items():
            if any(counts.get(t) for t in ERRORED):
                found.append(f"{task}: errored rows of {agent} {counts}")
    for entry in result["town"]["kinds"]:
        for part in (entry, entry.get("small_town") or {}):
            if "error" in part and not part["one_error_line"]:
                found.append(f"town {entry['kind']}: not one error line: {part['error'][:200]}")
            run = part.get("run") or {}
            if run.get("exit"):
                found.append(f"town {entry['kind']}: flaneur run exited {run['exit']}")
            for agent, counts in (run.get("terminations") or {}).items():
                if any(counts.get(t) for t in ERRORED):
                    found.append(f"town {entry['kind']}: errored rows of {agent} {counts}")
    for agent, how in result["town"]["agents"].items():
        if not finished(how["terminations"]):
            found.append(f"town: {agent} did not run ({how})")
    return found


def show(result: dict) -> None:
    """Print the two tables."""
    head = f"{'task':30s} {'rows':>5s} {'conc':>5s} {'resume':>6s} {'killed':>6s} {'s':>7s}"
    print(head)
    for task, fig in result["tasks"].items():
        print(
            f"{task:30s} {fig['rows']:5d} {fig['identical_concurrency']!s:>5s} "
            f"{fig['identical_resume']!s:>6s} {fig['killed_mid_run']!s:>6s} {fig['seconds']:7.1f}"
        )
    print(f"\ntown {result['town']['pack']}")
    for entry in result["town"]["kinds"]:
        made = entry.get("items", entry.get("error"))
        print(f"{entry['kind']:18s} {made}  {(entry.get('run') or {}).get('terminations', '')}")
        if entry.get("small_town"):
            small = entry["small_town"]
            print(f"{'':18s} -T {small['options']}: {small.get('items', small.get('error'))}")
    for agent, how in result["town"]["agents"].items():
        print(f"{agent:8s} via {how['via']}: {how['terminations']}")
    print(f"\n{result['seconds']} s, {len(result['problems'])} problem(s)")


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--quick", action="store_true", help="small limits (a few minutes)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a gate fails")
    ap.add_argument("--out", type=Path, help="keep the runs here (default: a temporary folder)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    crashes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="one-engine-") as tmp:
        folder = args.out or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        tasks = {c.task: measure_case(c, folder, args.quick, crashes) for c in CASES}
        town = measure_town(folder / "town", args.quick, crashes)
    result = {"quick": args.quick, "tasks": tasks, "town": town, "crashes": crashes}
    result["seconds"] = round(time.perf_counter() - start, 1)
    result["problems"] = problems_of(result)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        show(result)
    for problem in result["problems"] if args.check else []:
        print(f"check failed: {problem}", file=sys.stderr)
    return 1 if args.check and result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())

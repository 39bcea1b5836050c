"""V-IRL's benchmarks on the built-in Helsinki city (or any city pack), offline, through the
one runner (:func:`flaneur.evaluate.runner.run_benchmark`).

Recognition and VQA: the sets of the ``virl-recognition`` / ``virl-vqa`` generators (grid
regions, V-IRL's 96 types, seed 0, ``--per-region`` places per region), scored by the
offline recogniser (PP-OCR + MiniLM) and the oracle; VQA by a scripted model served by
flaneur's fake OpenAI-compatible server (the ``model`` answerer with the model matcher, the
view attached), by the offline embedder answerer and by the oracle. One VQA run gives both
the circular and the plain (first-pass) scores.

Detection (``virl-detection``): V-IRL's 20 types, a seeded sample of ``--det-per-region``
viewpoints per region (1 with ``--quick``), 13 views each; AR and the accuracy of matched
boxes of the OCR storefront detector and of the scene detector simulator on the first
``--det-viewpoints`` viewpoints (3 with ``--quick``).

VLN: the navigation oracle on every route of the city's V-IRL VLN set
(``helsinki-virl-vln-v1`` for Helsinki), a check of the routes and of V-IRL's Success.
TODO(vln): the tourist with the OCR landmark recogniser (``vln_ocr_success``) returns once
V-IRL's tourist is a navigation agent of the runner (it is being ported).

Usage::

    python benchmarks/virl_bench.py --json            # 5 places per region
    python benchmarks/virl_bench.py --quick --check   # 2 places per region, gates
    python benchmarks/virl_bench.py --city helsinki --city path/to/pack  # per-city rows

With several ``--city`` the top-level figures (and ``--check``'s gates) are the first
city's; ``cities`` holds one row of headline figures per city, beside ``paper``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.cities import absolute_city_spec
from flaneur.tasks.generators import generate_set
from flaneur.testing.fake_openai import FakeOpenAIServer
from flaneur.world.builtin import load_city

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/harness
from harness.vqa_policy import ScriptedVQAPolicy


def make_set(kind: str, city: str, out: Path, *, seed: int, options: dict) -> tuple[Path, dict]:
    """Generate a task set of ``kind`` on ``city`` into ``out``; its file and report."""
    spec = absolute_city_spec(city, Path.cwd())
    made = generate_set(kind, load_city(spec), city_spec=spec, seed=seed, options=options)
    return made.write(out / f"{kind}.jsonl"), made.report


def run(task: Path | str, agents: tuple[str, ...], out: Path, **config: Any) -> dict:
    """Run ``agents`` on ``task`` into ``out``; the summary entries by agent."""
    summary = run_benchmark(
        RunConfig(agents=agents, tasks=(str(task),), **config), out, progress="none"
    )
    return {entry["agent"]: entry for entry in summary["runs"]}


def means(entry: dict) -> dict:
    """The means of an entry's row metrics."""
    metrics = ((entry.get("summary") or {}).get("overall") or {}).get("metrics") or {}
    return {name: m["mean"] for name, m in metrics.items()}


def value(entry: dict, name: str) -> Any:
    """A task-set figure of an entry."""
    return (entry.get("task_metrics") or {}).get(name, {}).get("value")


def rows(out: Path, agent: str) -> list[dict]:
    """The rows of one agent in a run folder."""
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r["agent"] == agent]


def measure_recognition(city: str, out: Path, per_region: int, seed: int) -> dict:
    """Recognition with the offline recogniser and the oracle."""
    options = {"per_region": per_region}
    task, report = make_set("virl-recognition", city, out, seed=seed, options=options)
    entries = run(task, ("offline", "oracle"), out / "recognition", concurrency=1)
    offline = entries["offline"]
    figures = {f"recognition_{k}_offline": v for k, v in means(offline).items()}
    return {
        "regions": report["regions"],
        "recognition_places": offline["episodes"],
        "recognition_macc_offline": value(offline, "macc"),
        "recognition_acc_offline": value(offline, "acc"),
        "recognition_macc_ci95_offline": offline["task_metrics"]["macc"]["ci95"],
        **figures,
        "recognition_top1_oracle": means(entries["oracle"])["top1"],
    }


def measure_vqa(city: str, out: Path, per_region: int, seed: int) -> dict:
    """VQA with the scripted model (fake server), the embedder answerer and the oracle."""
    options = {"per_region": per_region}
    task, _ = make_set("virl-vqa", city, out, seed=seed, options=options)
    questions = [json.loads(x) for x in task.read_text(encoding="utf-8").splitlines()[1:]]
    truth = [(q["options"], q["options"][q["answer"]]) for q in questions]
    with FakeOpenAIServer(ScriptedVQAPolicy(truth, seed=seed)) as server:
        folder = out / "vqa-model"
        model = run(
            task,
            ("model",),
            folder,
            llm="fake-model",
            llm_base_url=server.base_url,
            cache_mode="off",
            concurrency=4,
        )["model"]
        requests = server.chat_count
    read_by = [how for r in rows(folder, "model") for how in r["result"]["read_by"]]
    entries = run(task, ("embedder", "oracle"), out / "vqa", concurrency=1)
    embedder = entries["embedder"]
    return {
        "vqa_places": model["episodes"],
        "vqa_macc_circular": value(model, "macc_circular"),
        "vqa_macc_plain": value(model, "macc_plain"),
        "vqa_acc_circular": value(model, "acc_circular"),
        "vqa_acc_plain": value(model, "acc_plain"),
        "vqa_questions_asked": len(read_by),
        "vqa_none_replies": read_by.count("none"),
        "vqa_matcher_used": read_by.count("matcher") + read_by.count("none"),
        "fake_server_requests": requests,
        "vqa_macc_circular_embedder": value(embedder, "macc_circular"),
        "vqa_macc_plain_embedder": value(embedder, "macc_plain"),
        "vqa_correct_oracle": means(entries["oracle"])["correct"],
    }


def measure_detection(city: str, out: Path, per_region: int, viewpoints: int | None, seed: int):
    """Place detection with the OCR storefront detector and the scene simulator."""
    options = {"types": "20", "per_region": per_region}
    task, report = make_set("virl-detection", city, out, seed=seed, options=options)
    figures: dict = {"detection_set_places": report.get("places")}
    for name in ("ocr", "scene"):
        t0 = time.perf_counter()
        entry = run(task, (name,), out / f"detection-{name}", limit=viewpoints, concurrency=1)[name]
        mine = rows(out / f"detection-{name}", name)
        figures[f"detection_ar_{name}"] = value(entry, "ar")
        figures[f"detection_ar_localisation_{name}"] = value(entry, "ar_localisation")
        figures[f"detection_box_accuracy_{name}"] = value(entry, "box_accuracy")
        for count in ("boxes", "matched_boxes"):
            figures[f"detection_{count}_{name}"] = sum(r["metrics"][count] for r in mine)
        figures[f"detection_seconds_{name}"] = round(time.perf_counter() - t0, 1)
        figures["detection_viewpoints"] = entry["rows"]
        figures["detection_places"] = sum(r["metrics"]["places"] for r in mine)
    return figures


def measure_vln(city: str, out: Path, seed: int) -> dict:
    """The navigation oracle on the city's V-IRL VLN routes (V-IRL's Success)."""
    if city == "helsinki":
        task: Path | str = "helsinki-virl-vln-v1"
    else:
        task, _ = make_set("virl-vln", city, out, seed=seed, options={})
    entry = run(task, ("oracle",), out / "vln", city=city, concurrency=4)["oracle"]
    return {"vln_routes": entry["episodes"], "vln_oracle_success": means(entry)["virl_success"]}


def measure(
    out: Path,
    per_region: int,
    seed: int,
    det_per_region: int = 2,
    det_viewpoints: int | None = None,
    city: str = "helsinki",
) -> dict:
    """Every offline figure of ``city`` (sets and runs in ``out``)."""
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    return {
        "city": city,
        "seed": seed,
        "per_region": per_region,
        **measure_vln(city, out, seed),
        **measure_detection(city, out, det_per_region, det_viewpoints, seed),
        **measure_recognition(city, out, per_region, seed),
        **measure_vqa(city, out, per_region, seed),
        "seconds": round(time.perf_counter() - t0, 1),
    }


HEADLINES = (
    "recognition_macc_offline",
    "vqa_macc_circular",
    "vqa_macc_plain",
    "vqa_macc_circular_embedder",
    "detection_ar_ocr",
    "detection_ar_scene",
    "vln_oracle_success",
)
PAPER_HEADLINES = {
    "recognition_macc_offline": "CLIP 0.182-0.413 (Table 4)",
    "vqa_macc_circular": "0.601-0.776 (Table 4)",
    "vqa_macc_plain": "0.821-0.849 (Table 7)",
    "detection_ar_ocr": "AR20 0.058-0.237 (Table 3)",
    "detection_ar_scene": "AR20 0.058-0.237 (Table 3)",
    "vln_oracle_success": "0.88 (Table 8, the tourist with oracle landmarks)",
}
PAPER_NOTE = (
    "The paper measured 14 districts in 12 cities with Google Street View and real models; "
    "these rows come from the named city packs with synthetic views and flaneur's offline "
    "runners. City and imagery differ: same metric definitions, not comparable one to one."
)


def headline(figures: dict) -> dict:
    """The per-city row: the headline figures and the set sizes."""
    keys = (*HEADLINES, "vln_routes", "recognition_places", "vqa_places", "detection_places")
    return {k: figures[k] for k in keys}


def check(result: dict) -> list[str]:
    """Correctness gates (no wall-time gates)."""
    problems = []
    if result["recognition_places"] < 5 or result["vqa_places"] < 5:
        problems.append("benchmark sets are too small")
    for key, got in result.items():
        bounded = key.startswith(("recognition_macc", "vqa_macc")) and "ci95" not in key
        if bounded and (got is None or not 0.0 <= got <= 1.0):
            problems.append(f"{key}={got} outside [0, 1]")
    if result["recognition_top1_oracle"] != 1.0 or result["vqa_correct_oracle"] != 1.0:
        problems.append("an oracle was not always right")
    if (
        result["vqa_macc_circular"] > result["vqa_macc_plain"] + 1e-9
        and result["vqa_acc_circular"] > result["vqa_acc_plain"] + 1e-9
    ):
        problems.append("circular accuracy above single-pass accuracy")
    if result["vqa_matcher_used"] == 0:
        problems.append("the scripted model's text replies never reached the matcher")
    if result["vln_routes"] < 5 or result["vln_oracle_success"] < 0.85:
        problems.append("VLN: too few routes or oracle Success below 0.85")
    if result["detection_places"] < 1:
        problems.append("detection: no ground-truth place near the scored viewpoints")
    for name in ("ocr", "scene"):
        for key in (f"detection_ar_{name}", f"detection_ar_localisation_{name}"):
            if result[key] is None or not 0.0 <= result[key] <= 1.0:
                problems.append(f"{key}={result[key]} outside [0, 1]")
    if not result["detection_ar_scene"]:
        problems.append("detection: the scene simulator recalled no storefront at all")
    if result["vqa_acc_plain"] < 0.5:
        problems.append("the scripted model (mostly right) scored below 0.5 single-pass")
    return problems


def _print(result: dict, cities: list[str]) -> None:
    for key, got in result.items():
        if key in ("cities", "paper", "paper_note"):
            continue
        print(f"{key:34s} {got:.4f}" if isinstance(got, float) else f"{key:34s} {got}")
    print(f"\n{'per city':24s} " + " ".join(f"{c[:14]:>14s}" for c in cities) + "  paper")
    for key in HEADLINES:
        row = " ".join(f"{result['cities'][c][key]:14.3f}" for c in cities)
        print(f"{key:24s} {row}  {PAPER_HEADLINES.get(key, '')}")
    print(PAPER_NOTE)


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--quick", action="store_true", help="2 places per region (CI)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a gate fails")
    ap.add_argument("--per-region", type=int, default=5, help="places per region (default 5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--det-per-region",
        type=int,
        default=2,
        help="detection viewpoints sampled per region (default 2)",
    )
    ap.add_argument(
        "--det-viewpoints",
        type=int,
        default=None,
        help="score only the first N detection viewpoints (default all)",
    )
    ap.add_argument(
        "--city",
        action="append",
        help="built-in city or city pack folder; repeat for per-city rows (default helsinki)",
    )
    ap.add_argument("--out", type=Path, help="keep the sets and runs here (one folder a city)")
    args = ap.parse_args(argv)
    per_region = 2 if args.quick else args.per_region
    cities = args.city or ["helsinki"]
    per_city: dict = {}
    with tempfile.TemporaryDirectory(prefix="virl-bench-") as tmp:
        for city in cities:
            per_city[city] = measure(
                (args.out or Path(tmp)) / Path(city).name,
                per_region,
                args.seed,
                det_per_region=1 if args.quick else args.det_per_region,
                det_viewpoints=3 if args.quick else args.det_viewpoints,
                city=city,
            )
    result = dict(per_city[cities[0]])
    result["cities"] = {city: headline(fig) for city, fig in per_city.items()}
    result["paper"] = PAPER_HEADLINES
    result["paper_note"] = PAPER_NOTE
    problems = check(result) if args.check else []
    if args.json:
        print(json.dumps(result))
    else:
        _print(result, cities)
    for p in problems:
        print(f"check failed: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

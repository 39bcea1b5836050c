"""V-IRL's perception benchmarks on the built-in Helsinki city, offline.

Builds the recognition and VQA sets (grid regions, V-IRL's 96 types, seed 0), then scores:
the offline recogniser (PP-OCR + MiniLM) on recognition; a scripted model served by flaneur's
fake OpenAI-compatible server (through the model layer, with the model matcher) and the
offline embedder answerer on VQA, circular and plain. Prints one JSON object with ``--json``.

VLN (``flaneur.bench.vln_*``, set ``helsinki-virl-vln-v1``): the tourist's Success with the
oracle landmark recogniser on every route and with the OCR recogniser on the first 10
routes (3 with ``--quick``; ``benchmarks/virl_vln.py`` runs them all).

Detection (``flaneur.bench.detection*``): V-IRL's 20 types, viewpoints on a 20 m grid in each
region (a seeded sample of ``--det-per-region`` per region, 2 by default, 1 with
``--quick``), 13 views each (fov 60/90/120 all around, pitch 10); AR and the accuracy of
matched boxes of the OCR storefront detector and of the scene detector simulator, on the
same viewpoints (the first ``--det-viewpoints``; 3 with ``--quick``).

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

from flaneur.bench.answerers import EmbedderAnswerer, ModelAnswerer
from flaneur.bench.detection_run import build_detection, run_detection
from flaneur.bench.parse import AnswerParser, ModelMatcher
from flaneur.bench.recognisers import OfflineRecogniser
from flaneur.bench.runner import build_sets, run_recognition, run_vqa
from flaneur.bench.sets import read_set
from flaneur.bench.vln_eval import OCRRecogniser, OracleRecogniser, evaluate
from flaneur.bench.vln_set import helsinki_virl_vln_v1
from flaneur.models import make_model
from flaneur.perception.ocr import OCR
from flaneur.testing.fake_openai import FakeOpenAIServer
from flaneur.testing.vqa_policy import ScriptedVQAPolicy


def vln_set(city: str) -> tuple:
    """The VLN routes of a city: ``helsinki-virl-vln-v1`` for Helsinki (cached), else
    collected now on the pack's 500 m grid cells (seed 0)."""
    if city == "helsinki":
        return helsinki_virl_vln_v1()
    from flaneur.bench.vln_routes import collect_routes, route_episodes
    from flaneur.world.builtin import load_city

    city_obj = load_city(city)
    return city_obj, route_episodes(city_obj, collect_routes(city_obj, None, seed=0))


def measure_vln(ocr_routes: int, city: str = "helsinki") -> dict:
    """V-IRL VLN on the city's route set (flaneur.bench.vln_*): oracle on every route,
    OCR on the first ``ocr_routes`` (PP-OCR on synthetic views is the slow part)."""
    city_obj, episodes = vln_set(city)
    oracle = evaluate(city_obj, episodes, OracleRecogniser(city_obj))["metrics"]
    ocr = evaluate(city_obj, episodes[:ocr_routes], OCRRecogniser(city_obj))["metrics"]
    return {
        "vln_routes": len(episodes),
        "vln_oracle_success": oracle["success"],
        "vln_ocr_success": ocr["success"],
        "vln_ocr_routes": min(ocr_routes, len(episodes)),
        "vln_oracle_metrics": oracle,
        "vln_ocr_metrics": ocr,
    }


def measure_detection(
    out: Path, per_region: int, viewpoints: int | None, seed: int, city: str = "helsinki"
) -> dict:
    """Place detection with the OCR storefront detector and the scene simulator."""
    built = build_detection(city, out, types="20", per_region=per_region, seed=seed)
    figures: dict = {
        "detection_grid_viewpoints": built["detection_grid_viewpoints"],
        "detection_set_viewpoints": built["detection_viewpoints"],
        "detection_set_places": built["detection_places"],
    }
    for name in ("ocr", "scene"):
        t0 = time.perf_counter()
        res = run_detection(
            built["detection_set"],
            name,
            limit=viewpoints,
            resume=False,
            show_progress=False,
            seed=seed,
        )
        figures[f"detection_ar_{name}"] = res["ar"]
        figures[f"detection_ar_localisation_{name}"] = res["ar_localisation"]
        figures[f"detection_box_accuracy_{name}"] = res["box_accuracy"]
        figures[f"detection_boxes_{name}"] = res["boxes"]
        figures[f"detection_matched_boxes_{name}"] = res["matched_boxes"]
        figures[f"detection_seconds_{name}"] = round(time.perf_counter() - t0, 1)
        figures["detection_viewpoints"] = res["viewpoints"]
        figures["detection_views"] = res["views"]
        figures["detection_places"] = res["places"]
        figures["detection_types_with_places"] = res["types_with_places"]
    return figures


def measure(
    out: Path,
    per_region: int,
    seed: int,
    ocr_routes: int = 10,
    det_per_region: int = 2,
    det_viewpoints: int | None = None,
    city: str = "helsinki",
) -> dict:
    """Build the sets of ``city`` in ``out`` and run every offline evaluator; the figures."""
    t0 = time.perf_counter()
    detection = measure_detection(out, det_per_region, det_viewpoints, seed, city)
    sizes = build_sets(city, out, per_region=per_region, seed=seed)
    ocr = OCR()
    rec = run_recognition(
        sizes["recognition_set"], OfflineRecogniser(ocr=ocr), resume=False, show_progress=False
    )
    _, vqa_items = read_set(sizes["vqa_set"], "virl-vqa", 1)
    truth = [(it["options"], it["options"]["ABCD".index(it["answer"])]) for it in vqa_items]
    figures: dict = {}
    with FakeOpenAIServer(ScriptedVQAPolicy(truth, seed=seed)) as server:
        model = make_model("fake-model", base_url=server.base_url)
        for mode, circular in (("circular", True), ("plain", False)):
            parser = AnswerParser(ModelMatcher(model))
            res = run_vqa(
                sizes["vqa_set"],
                ModelAnswerer(model).answer,
                parser,
                "scripted",
                circular=circular,
                resume=False,
                show_progress=False,
            )
            figures[f"vqa_macc_{mode}"] = res["macc_circular" if circular else "macc_plain"]
            figures[f"vqa_acc_{mode}"] = res["acc_circular" if circular else "acc_plain"]
            figures[f"vqa_none_replies_{mode}"] = res["none_replies"]
            figures[f"vqa_matcher_used_{mode}"] = res["matcher_used"]
            figures[f"vqa_questions_asked_{mode}"] = res["asked"]
        figures["fake_server_requests"] = server.chat_count
    emb = {}
    for mode, circular in (("circular", True), ("plain", False)):
        res = run_vqa(
            sizes["vqa_set"],
            EmbedderAnswerer(ocr=ocr).answer,
            AnswerParser(),
            "embedder",
            circular=circular,
            resume=False,
            show_progress=False,
        )
        emb[mode] = res["macc_circular" if circular else "macc_plain"]
    vln = measure_vln(ocr_routes, city)
    return {
        "city": city,
        "seed": seed,
        "per_region": per_region,
        **vln,
        **detection,
        "regions": sizes["regions"],
        "recognition_places": sizes["recognition_places"],
        "vqa_places": sizes["vqa_places"],
        "recognition_macc_offline": rec["macc"],
        "recognition_acc_offline": rec["acc"],
        "recognition_top1_offline": rec["top1"],
        "recognition_top3_offline": rec["top3"],
        "recognition_top5_offline": rec["top5"],
        **figures,
        "vqa_macc_circular_embedder": emb["circular"],
        "vqa_macc_plain_embedder": emb["plain"],
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
    "vln_ocr_success",
)
PAPER_HEADLINES = {
    "recognition_macc_offline": "CLIP 0.182-0.413 (Table 4)",
    "vqa_macc_circular": "0.601-0.776 (Table 4)",
    "vqa_macc_plain": "0.821-0.849 (Table 7)",
    "detection_ar_ocr": "AR20 0.058-0.237 (Table 3)",
    "detection_ar_scene": "AR20 0.058-0.237 (Table 3)",
    "vln_oracle_success": "0.88 (Table 8)",
    "vln_ocr_success": "PP-OCR 0.28 (Table 5, mini)",
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
    for key, value in result.items():
        if key.startswith(("recognition_macc", "vqa_macc")) and not 0.0 <= value <= 1.0:
            problems.append(f"{key}={value} outside [0, 1]")
    if (
        result["vqa_macc_circular"] > result["vqa_macc_plain"] + 1e-9
        and result["vqa_acc_circular"] > result["vqa_acc_plain"] + 1e-9
    ):
        problems.append("circular accuracy above single-pass accuracy")
    if result["vqa_matcher_used_circular"] == 0:
        problems.append("the scripted model's text replies never reached the matcher")
    if result["vln_routes"] < 5 or result["vln_oracle_success"] < 0.85:
        problems.append("VLN: too few routes or oracle Success below 0.85")
    if result["detection_places"] < 1:
        problems.append("detection: no ground-truth place near the scored viewpoints")
    for name in ("ocr", "scene"):
        for key in (f"detection_ar_{name}", f"detection_ar_localisation_{name}"):
            if not 0.0 <= result[key] <= 1.0:
                problems.append(f"{key}={result[key]} outside [0, 1]")
    if result["detection_ar_scene"] <= 0.0:
        problems.append("detection: the scene simulator recalled no storefront at all")
    if result["vqa_acc_plain"] < 0.5:
        problems.append("the scripted model (mostly right) scored below 0.5 single-pass")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--quick", action="store_true", help="2 places per region (CI)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a gate fails")
    ap.add_argument("--per-region", type=int, default=5, help="places per region (default 5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--vln-ocr-routes",
        type=int,
        default=10,
        help="VLN routes scored with the OCR recogniser (default 10)",
    )
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
    ap.add_argument("--out", type=Path, help="keep the sets and results here (one folder a city)")
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
                ocr_routes=3 if args.quick else args.vln_ocr_routes,
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
        for key, value in result.items():
            if key in ("cities", "paper", "paper_note"):
                continue
            print(f"{key:34s} {value:.4f}" if isinstance(value, float) else f"{key:34s} {value}")
        print(f"\n{'per city':24s} " + " ".join(f"{c[:14]:>14s}" for c in cities) + "  paper")
        for key in HEADLINES:
            row = " ".join(f"{result['cities'][c][key]:14.3f}" for c in cities)
            print(f"{key:24s} {row}  {PAPER_HEADLINES.get(key, '')}")
        print(PAPER_NOTE)
    for p in problems:
        print(f"check failed: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""V-IRL's vision-language navigation benchmark on built-in Helsinki (offline, seed 0).

    python benchmarks/virl_vln.py --json [--quick] [--check]

Prints one JSON object:

* ``vln_routes`` - routes in ``helsinki-virl-vln-v1`` (V-IRL's filters, 500 m grid regions,
  at most 10 per region; see ``flaneur.bench.vln_routes``).
* ``vln_oracle_success`` / ``vln_ocr_success`` - V-IRL's Success of the tourist (offline
  landmark-driven rule) with the oracle (map, 20 m) and the OCR (PP-OCR on synthetic
  views) landmark recognisers.
* ``oracle`` / ``ocr`` - V-IRL's six metrics per recogniser, with the counts behind them.
* ``paper`` - V-IRL's oracle row (full set, Table 8) and PP-OCR + GPT-3.5 row (mini set,
  Table 5), for comparison only: the city and the imagery differ.
* ``seconds`` - wall time per recogniser.

``--quick`` scores all routes with the oracle (seconds) and only the first 3 with OCR (one
PP-OCR read of an 800x460 view per intersection check, a few seconds each on a shared CPU;
results are cached on disk under ``$FLANEUR_CACHE_DIR/ocr``). ``--check`` exits 1 when the
oracle's Success is below 0.85 (the issue's bar; V-IRL's full oracle: 0.88) or when a metric
lies outside [0, 1].
"""

from __future__ import annotations

import argparse
import json
import sys
import time

PAPER = {
    "oracle_full_table8": {
        "success": 0.88,
        "start_reaction": 1.0,
        "intersection_arrival": 0.95,
        "intersection_reaction": 0.99,
        "stop_arrival": 0.96,
        "stop_reaction": 0.88,
    },
    "ppocr_gpt35_mini_table5": {
        "success": 0.28,
        "start_reaction": 0.89,
        "intersection_arrival": 0.73,
        "intersection_reaction": 0.94,
        "stop_arrival": 0.72,
        "stop_reaction": 0.28,
    },
}


def main() -> int:
    """Run the benchmark and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a few routes only (for CI)")
    parser.add_argument("--check", action="store_true", help="fail below the success bar")
    args = parser.parse_args()

    from flaneur.bench.vln_eval import OCRRecogniser, OracleRecogniser, evaluate
    from flaneur.bench.vln_metrics import METRICS
    from flaneur.bench.vln_set import helsinki_virl_vln_v1

    city, episodes = helsinki_virl_vln_v1()
    out: dict = {"vln_routes": len(episodes), "quick": args.quick, "seconds": {}}
    limits = {"oracle": None, "ocr": 3 if args.quick else None}
    for name, make in (("oracle", OracleRecogniser), ("ocr", OCRRecogniser)):
        chosen = episodes[: limits[name]] if limits[name] else episodes
        start = time.perf_counter()
        result = evaluate(city, chosen, make(city))
        out["seconds"][name] = round(time.perf_counter() - start, 1)
        out[name] = result["metrics"]
        out[f"vln_{name}_success"] = result["metrics"]["success"]
    out["paper"] = PAPER
    text = json.dumps(out, indent=None if args.json else 1)
    print(text)
    if args.check:
        bad = [
            f"{r}.{m}"
            for r in ("oracle", "ocr")
            for m in METRICS
            if out[r][m] is not None and not 0.0 <= out[r][m] <= 1.0
        ]
        if bad or out["vln_oracle_success"] < 0.85:
            print(
                f"check failed: oracle success {out['vln_oracle_success']}, bad {bad}",
                file=sys.stderr,
            )
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""V-IRL's vision-language navigation benchmark on built-in Helsinki (offline, seed 0).

    python benchmarks/virl_vln.py --json [--quick] [--check]

Runs ``flaneur run --tasks helsinki-virl-vln-v1 --agent ling`` through the runner
(:func:`flaneur.cli.bench_vln.run_vln`) and prints one JSON object:

* ``vln_routes`` - routes in ``helsinki-virl-vln-v1`` (V-IRL's filters, 500 m grid regions,
  at most 10 per region; see ``flaneur.bench.vln_routes``).
* ``vln_oracle_success`` / ``vln_ocr_success`` - V-IRL's Success of Ling (offline rule)
  with ``--landmarks map`` (V-IRL's oracle row, 20 m) and ``--landmarks ocr --views
  synthetic`` (PP-OCR on synthetic views).
* ``oracle`` / ``ocr`` - V-IRL's six metrics of each run (the navigation kind's task-set
  figures: value, n, ci95).
* ``oracle_agent_success`` - the shortest-path ``oracle`` solver (1.0 by construction).
* ``paper`` - V-IRL's oracle row (full set, Table 8) and PP-OCR + GPT-3.5 row (mini set,
  Table 5), for comparison only: the city and the imagery differ.
* ``seconds`` - wall time per run.

``--quick`` scores all routes with the map and only the first 3 with OCR (one PP-OCR read
per view looked at, a few seconds each on a shared CPU). ``--check`` exits 1 when the map
row's Success is below 0.85 (V-IRL's full oracle: 0.88) or a metric lies outside [0, 1].
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flaneur.bench.vln_metrics import METRICS
from flaneur.cli.bench_vln import DEFAULT_TASK, run_vln

PAPER = {
    "oracle_full_table8": dict(zip(METRICS, (0.88, 1.0, 0.95, 0.99, 0.96, 0.88), strict=True)),
    "ppocr_gpt35_mini_table5": dict(
        zip(METRICS, (0.28, 0.89, 0.73, 0.94, 0.72, 0.28), strict=True)
    ),
}


def measure_vln(ocr_routes: int | None, task: str = DEFAULT_TASK) -> dict[str, Any]:
    """Ling with map landmarks on every route of ``task`` (a registered id or an episode
    file), with OCR on the first ``ocr_routes`` (all: ``None``), and the oracle solver."""
    out: dict[str, Any] = {"seconds": {}}
    with tempfile.TemporaryDirectory(prefix="flaneur-vln-") as scratch:
        runs = (("oracle", "oracle", "ling", None), ("ocr", "ocr", "ling", ocr_routes))
        for name, recogniser, agent, limit in (*runs, ("oracle_agent", "oracle", "oracle", None)):
            started = time.perf_counter()
            result = run_vln(task, [recogniser], Path(scratch) / name, agent=agent, limit=limit)
            out["seconds"][name] = round(time.perf_counter() - started, 1)
            figures = result["figures"][recogniser]
            if name == "oracle":
                out["vln_routes"] = result["routes"]
            if name == "oracle_agent":
                out["oracle_agent_success"] = figures["success"]["value"]
                continue
            out[name] = figures
            out[f"vln_{name}_success"] = figures["success"]["value"]
            out[f"vln_{name}_routes"] = result["routes"]
    return out


def main() -> int:
    """Run the benchmark and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a few OCR routes only (for CI)")
    parser.add_argument("--check", action="store_true", help="fail below the success bar")
    args = parser.parse_args()
    out = {"quick": args.quick, **measure_vln(3 if args.quick else None), "paper": PAPER}
    print(json.dumps(out, indent=None if args.json else 1))
    if args.check:
        bad = [
            f"{row}.{m}"
            for row in ("oracle", "ocr")
            for m in METRICS
            if out[row][m]["value"] is not None and not 0.0 <= out[row][m]["value"] <= 1.0
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

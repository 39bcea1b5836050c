"""Per-city tables of V-IRL's benchmarks from run folders, beside the paper's numbers.

A run of a V-IRL benchmark (``flaneur bench recognition|vqa --out DIR``, ``flaneur run``) is
a run folder: ``summary.json`` holds each (task set, solver) entry with its city, the means
of the row metrics and the kind's task-set figures (``task_metrics``: mAcc, ...), and
``episodes.jsonl`` its rows. :func:`report_rows` turns any number of runs into
``(city, benchmark, runner, table, name, metric, value)`` rows: ``table`` is ``overall``
(from the summary), ``type`` or ``region`` (from the rows, for recognition and VQA).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from flaneur.bench.metrics import mean_accuracy

__all__ = ["PAPER", "PAPER_NOTE", "ReportRow", "benchmark_of", "breakdown", "report_rows"]

PAPER: dict[tuple[str, str], str] = {
    ("recognition", "macc"): "CLIP B/32 0.182 .. CLIP L/14@336 0.413 (Table 4, 96 types)",
    ("vqa", "macc_circular"): "LLaVA-1.5-7B 0.601 .. InternVL-1.5 0.776 (Table 4)",
    ("vqa", "macc_plain"): "InternVL 0.821, GPT-4V 0.831, Qwen-VL-max 0.849 (Table 7)",
    ("detection", "ar"): "AR20: GroundingDINO 0.058 .. CLIP on GLIP 0.237 (Table 3)",
    ("vln", "virl_success"): "oracle 0.88, CLIP L/14@336 0.22 (Table 8, full set)",
}
"""The paper's numbers, as fractions like flaneur's, for each headline metric."""

PAPER_NOTE = (
    "The paper measured 14 districts in 12 cities with Google Street View photos and real "
    "models; flaneur's rows come from the city pack named in each row with its imagery "
    "(synthetic views offline) and the runner named. The city and the imagery differ: the "
    "metric definitions are the paper's, the values are not comparable one to one."
)

BENCHMARKS = {"virl-recognition": "recognition", "virl-vqa": "vqa", "virl-detection": "detection"}
"""Task kinds of V-IRL's benchmarks and their names in the tables."""

ReportRow = tuple[str, str, str, str, str, str, Any]
"""``(city, benchmark, runner, table, name, metric, value)``."""


def benchmark_of(entry: dict[str, Any], summary: dict[str, Any]) -> str | None:
    """The benchmark of a summary entry (``None``: not one of V-IRL's): its kind's, or
    ``vln`` for navigation sets scored by V-IRL's Success."""
    kind = str(entry.get("kind") or "navigation")
    if kind in BENCHMARKS:
        return BENCHMARKS[kind]
    facts = (summary.get("task_sets") or {}).get(entry.get("task")) or {}
    return "vln" if facts.get("success_metric") == "virl_success" else None


def breakdown(rows: Sequence[dict[str, Any]], metric: str) -> dict[str, dict[str, list[float]]]:
    """Per-type and per-region accuracy of a recognition or VQA run's rows.

    Returns
    -------
    dict
        ``{"type": {type: [accuracy, weight]}, "region": {region: [accuracy, places]}}``
        where a type's weight is its places counted ``1/k`` (see
        :func:`flaneur.bench.metrics.mean_accuracy`); only rows with metrics count.
    """
    done = [r for r in rows if (r.get("metrics") or {}).get(metric) is not None]
    per_type = mean_accuracy((r["result"].get("types") or [], r["metrics"][metric]) for r in done)
    regions: dict[str, list[bool]] = {}
    for r in done:
        regions.setdefault(str(r["result"].get("region") or ""), []).append(r["metrics"][metric])
    return {
        "type": {t: [a, w] for t, (a, w) in per_type.per_type.items()},
        "region": {k: [sum(v) / len(v), float(len(v))] for k, v in sorted(regions.items())},
    }


def _overall(entry: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for name, figure in (entry.get("task_metrics") or {}).items():
        yield name, figure.get("value") if isinstance(figure, dict) else figure
    metrics = ((entry.get("summary") or {}).get("overall") or {}).get("metrics") or {}
    for name, value in metrics.items():
        yield name, value.get("mean") if isinstance(value, dict) else value


def report_rows(runs: Iterable[tuple[dict[str, Any], list[dict[str, Any]]]]) -> Iterator[ReportRow]:
    """The table rows of runs given as ``(summary, rows)``: every V-IRL benchmark entry's
    overall figures, then its per-type and per-region accuracy (recognition: top-1, VQA:
    circular)."""
    for summary, rows in runs:
        for entry in summary.get("runs") or []:
            bench = benchmark_of(entry, summary)
            if bench is None:
                continue
            city, runner = str(entry.get("city")), str(entry.get("agent"))
            for metric, value in _overall(entry):
                yield city, bench, runner, "overall", "", metric, value
            if bench not in ("recognition", "vqa"):
                continue
            mine = [r for r in rows if (r.get("task"), r.get("agent")) == (entry["task"], runner)]
            metric = "top1" if bench == "recognition" else "correct"
            for table, groups in breakdown(mine, metric).items():
                for name, (accuracy, weight) in groups.items():
                    yield city, bench, runner, table, name, "accuracy", accuracy
                    yield city, bench, runner, table, name, "places", weight

"""Per-city results tables of the V-IRL benchmarks, beside the paper's numbers.

:func:`collect` reads one benchmark folder (``flaneur bench build`` / ``bench detection`` /
``bench vln -o <folder>/vln.json``): the sets name the city, and every results file next to
them is summarised again from its per-item lines (so a table never disagrees with the
files). :func:`rows` flattens any number of folders into ``(city, benchmark, runner, table,
name, metric, value)`` rows for a CSV: ``table`` is ``overall``, ``type`` or ``region``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from flaneur.bench.detection import summarize_detection
from flaneur.bench.recognition import summarize_recognition
from flaneur.bench.runner import resume_results
from flaneur.bench.sets import BenchSetError, read_set
from flaneur.bench.vqa import summarize_vqa

__all__ = ["PAPER", "PAPER_NOTE", "collect", "rows"]

PAPER: dict[tuple[str, str], str] = {
    ("recognition", "macc"): "CLIP B/32 0.182 .. CLIP L/14@336 0.413 (Table 4, 96 types)",
    ("vqa", "macc_circular"): "LLaVA-1.5-7B 0.601 .. InternVL-1.5 0.776 (Table 4)",
    ("vqa", "macc_plain"): "InternVL 0.821, GPT-4V 0.831, Qwen-VL-max 0.849 (Table 7)",
    ("detection", "ar"): "AR20: GroundingDINO 0.058 .. CLIP on GLIP 0.237 (Table 3)",
    ("vln", "success"): "oracle 0.88, CLIP L/14@336 0.22 (Table 8, full set)",
}
"""The paper's numbers, as fractions like flaneur's, for each headline metric."""

PAPER_NOTE = (
    "The paper measured 14 districts in 12 cities with Google Street View photos and real "
    "models; flaneur's rows come from the city pack named in each row with its imagery "
    "(synthetic views offline) and the runner named. The city and the imagery differ: the "
    "metric definitions are the paper's, the values are not comparable one to one."
)

HEADLINES = {
    "recognition": ("macc", "acc", "top1", "top5"),
    "vqa": ("macc_circular", "macc_plain", "acc_circular", "acc_plain"),
    "detection": ("ar", "ar_localisation", "box_accuracy"),
}


def _runner(path: Path, set_path: Path) -> str:
    return path.name[len(set_path.stem) + 1 : -len(".results.jsonl")]


def collect(folder: str | Path) -> list[dict[str, Any]]:
    """Summaries of every results file in a benchmark folder.

    Returns
    -------
    list of dict
        ``{"city", "benchmark", "runner", "summary"}`` per results file (and per recogniser
        of ``vln.json``), ordered by benchmark then runner.

    Raises
    ------
    BenchSetError
        The folder holds no benchmark set, or a set is malformed (named, one line).
    """
    folder = Path(folder)
    out: list[dict[str, Any]] = []
    sets = {
        "recognition": ("recognition-v1.jsonl", "virl-recognition", "place_id"),
        "vqa": ("vqa-v1.jsonl", "virl-vqa", "place_id"),
        "detection": ("detection-v1.jsonl", "virl-detection", "node"),
    }
    for bench, (name, kind, key) in sets.items():
        set_path = folder / name
        if not set_path.is_file():
            continue
        header, _ = read_set(set_path, kind, 1)
        city = str(header.get("city_name") or header.get("city"))
        for res in sorted(folder.glob(f"{set_path.stem}.*.results.jsonl")):
            results = list(resume_results(res, key).values())
            runner = _runner(res, set_path)
            if bench == "recognition":
                summary = summarize_recognition(results)
            elif bench == "vqa":
                summary = summarize_vqa(results, circular=runner.endswith(".circular"))
            else:
                summary = summarize_detection(results, header["places"], header["types"])
            out.append({"city": city, "benchmark": bench, "runner": runner, "summary": summary})
    vln = folder / "vln.json"
    if vln.is_file():
        try:
            data = json.loads(vln.read_text(encoding="utf-8"))
            for rec, res in data["results"].items():
                out.append(
                    {
                        "city": str(data["city"]),
                        "benchmark": "vln",
                        "runner": rec,
                        "summary": {**res["metrics"], "routes": data["routes"]},
                    }
                )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise BenchSetError(f"{vln}: not a `flaneur bench vln -o` result ({err})") from None
    if not out and not any((folder / n).is_file() for n, _, _ in sets.values()):
        raise BenchSetError(f"{folder}: no benchmark set here; build one with `flaneur bench`")
    return out


def _value(summary: dict[str, Any], metric: str) -> float | None:
    value = summary.get(metric)
    return None if value is None else float(value)


def rows(folders: Iterable[str | Path]) -> Iterator[tuple[str, str, str, str, str, str, Any]]:
    """``(city, benchmark, runner, table, name, metric, value)`` rows of every folder."""
    for folder in folders:
        for entry in collect(folder):
            city, bench, runner, s = (
                entry["city"],
                entry["benchmark"],
                entry["runner"],
                entry["summary"],
            )
            if bench == "vln":
                for metric, value in s.items():
                    yield city, bench, runner, "overall", "", metric, value
                continue
            for metric in HEADLINES[bench]:
                yield city, bench, runner, "overall", "", metric, _value(s, metric)
            for name, row in (s.get("per_type") or {}).items():
                if isinstance(row, dict):  # detection
                    yield city, bench, runner, "type", name, "recall", row["recall"]
                    yield city, bench, runner, "type", name, "places", row["places"]
                else:  # [accuracy, weight]
                    yield city, bench, runner, "type", name, "accuracy", row[0]
                    yield city, bench, runner, "type", name, "places", row[1]
            for name, row in (s.get("per_region") or {}).items():
                if isinstance(row, dict):
                    yield city, bench, runner, "region", name, "ar", row["ar"]
                    yield city, bench, runner, "region", name, "places", row["places"]
                else:
                    yield city, bench, runner, "region", name, "accuracy", row[0]
                    yield city, bench, runner, "region", name, "places", row[1]

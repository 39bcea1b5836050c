"""Build the recognition and VQA sets of a city and run them with resume and progress.

Files (in one folder, default ``bench/<city>-virl``): ``recognition-v1.jsonl`` and
``vqa-v1.jsonl`` (sets: header + items), and per-run results ``<set>.<runner>.results.jsonl``
(one line per place, appended as it is scored; a rerun skips the places already there).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from PIL import Image

from flaneur.bench.recognition import (
    RECOGNITION_VERSION,
    Recogniser,
    build_recognition_set,
    evaluate_recognition,
)
from flaneur.bench.sets import read_set, write_set
from flaneur.bench.types import load_type_list
from flaneur.bench.vqa import VQA_VERSION, build_vqa_set, evaluate_vqa
from flaneur.services.errors import RegionError
from flaneur.services.region import grid_regions, read_regions
from flaneur.world.builtin import load_city
from flaneur.world.city import City

__all__ = [
    "BenchRun",
    "build_sets",
    "open_run",
    "progress",
    "resume_results",
    "run_recognition",
    "run_vqa",
    "view_loader",
]

T = TypeVar("T")


def progress(items: Sequence[T], label: str, show: bool = True) -> Iterator[T]:
    """Iterate with a Rich bar on stderr (only on a terminal and when ``show``)."""
    if not show or not sys.stderr.isatty():
        yield from items
        return
    from rich.progress import track

    yield from track(items, description=label, transient=True)


def build_sets(
    city_spec: str,
    out_dir: str | Path,
    *,
    regions: str | Path | None = None,
    types: str = "96",
    seed: int = 0,
    per_region: int = 20,
    cell_m: float = 500.0,
    writer: Callable[[dict[str, Any]], tuple[list[str], int] | None] | None = None,
) -> dict[str, Any]:
    """Write ``recognition-v1.jsonl`` and ``vqa-v1.jsonl`` for a city; return their sizes.

    Raises
    ------
    RegionError
        When no region holds a usable place (a polygon with no viewpoints or places).
    """
    type_list = load_type_list(types)  # before the city: a bad list fails at once
    given_regions = read_regions(regions) if regions else None
    city = load_city(city_spec)
    region_list = given_regions or grid_regions(city, cell_m)
    items = build_recognition_set(city, region_list, type_list, seed=seed, per_region=per_region)
    if not items:
        where = regions or f"grid of {cell_m:g} m cells"
        raise RegionError(
            f"{where}: no named place of the type list within 40 m of a street viewpoint"
        )
    out = Path(out_dir)
    header = {
        "city": city_spec,
        "city_name": city.name,
        "seed": seed,
        "types": list(type_list),
        "regions": [r.name for r in region_list],
        "per_region": per_region,
    }
    rec_path = write_set(
        out / f"recognition-v{RECOGNITION_VERSION}.jsonl",
        {"benchmark": "virl-recognition", "version": RECOGNITION_VERSION, **header},
        items,
    )
    index = {pid: i for i, pid in enumerate(city.places.ids.tolist())}
    vqa_items, fallbacks = build_vqa_set(
        items, lambda pid: city.places.categories[index[pid]], seed=seed, writer=writer
    )
    vqa_path = write_set(
        out / f"vqa-v{VQA_VERSION}.jsonl",
        {
            "benchmark": "virl-vqa",
            "version": VQA_VERSION,
            **header,
            "writer": "llm" if writer else "offline",
        },
        vqa_items,
    )
    per_region_counts: dict[str, int] = {}
    for it in items:
        per_region_counts[it["region"]] = per_region_counts.get(it["region"], 0) + 1
    return {
        "recognition_set": str(rec_path),
        "recognition_places": len(items),
        "vqa_set": str(vqa_path),
        "vqa_places": len(vqa_items),
        "llm_fallbacks": fallbacks,
        "regions": len(region_list),
        "places_per_region": per_region_counts,
    }


def view_loader(city: City) -> Callable[[dict[str, Any]], Image.Image]:
    """Render an item's view offline (SyntheticViews), or open its ``image`` file if given."""
    from flaneur.views.synthetic import SyntheticViews

    views = SyntheticViews(city)

    def load(item: dict[str, Any]) -> Image.Image:
        if item.get("image"):
            return Image.open(item["image"]).convert("RGB")
        return views.view(item["node"], item["heading"], pitch=item["pitch"], fov=item["fov"]).image

    return load


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "run"


def resume_results(path: Path, key: str = "place_id") -> dict[str, dict[str, Any]]:
    """Per-item results already in a results file, by ``key`` (a cut last line is dropped)."""
    done: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by an interrupted run is scored again
        if isinstance(row, dict) and key in row:
            done[str(row[key])] = row
    return done


def _appender(path: Path) -> Callable[[dict[str, Any]], None]:
    def append(row: dict[str, Any]) -> None:
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")

    return append


@dataclass(frozen=True)
class BenchRun:
    """What every runner needs: the set, the items to score, the results file and resume.

    Attributes
    ----------
    header, items
        The set's header and its items (the first ``limit`` when limited).
    results
        The per-item results file (``<set>.<suffix>.results.jsonl``).
    done
        Results already there, by item key (empty without resume; the file is then removed).
    on_result
        Appends a new per-item result to ``results``.
    """

    header: dict[str, Any]
    items: list[dict[str, Any]]
    results: Path
    done: dict[str, dict[str, Any]]
    on_result: Callable[[dict[str, Any]], None]


def open_run(
    set_path: str | Path,
    benchmark: str,
    version: int,
    suffix: str,
    *,
    key: str = "place_id",
    limit: int | None = None,
    resume: bool = True,
) -> BenchRun:
    """Read a set and prepare its results file for a resumable run (see :class:`BenchRun`)."""
    header, items = read_set(set_path, benchmark, version)
    items = items[:limit] if limit else items
    results = Path(set_path).with_suffix(f".{_safe(suffix)}.results.jsonl")
    done = resume_results(results, key) if resume else {}
    if not resume:
        results.unlink(missing_ok=True)
    return BenchRun(header, items, results, done, _appender(results))


def run_recognition(
    set_path: str | Path,
    recogniser: Recogniser,
    *,
    limit: int | None = None,
    resume: bool = True,
    show_progress: bool = True,
    image_of: Callable[[dict[str, Any]], Image.Image] | None = None,
) -> dict[str, Any]:
    """Evaluate a recogniser on a recognition set (results appended next to the set)."""
    run = open_run(
        set_path,
        "virl-recognition",
        RECOGNITION_VERSION,
        recogniser.name,
        limit=limit,
        resume=resume,
    )
    image_of = image_of or view_loader(load_city(run.header["city"]))
    summary = evaluate_recognition(
        progress(run.items, f"recognition ({recogniser.name})", show_progress),
        run.header["types"],
        recogniser,
        image_of,
        done=run.done,
        on_result=run.on_result,
    )
    return {**summary, "recogniser": recogniser.name, "results_file": str(run.results)}


def run_vqa(
    set_path: str | Path,
    answer: Callable[[Image.Image, str], str],
    parser: Any,
    name: str,
    *,
    circular: bool = True,
    limit: int | None = None,
    resume: bool = True,
    show_progress: bool = True,
    image_of: Callable[[dict[str, Any]], Image.Image] | None = None,
) -> dict[str, Any]:
    """Evaluate an answerer on a VQA set (circular by default; results appended)."""
    mode = "circular" if circular else "plain"
    run = open_run(
        set_path, "virl-vqa", VQA_VERSION, f"{_safe(name)}.{mode}", limit=limit, resume=resume
    )
    image_of = image_of or view_loader(load_city(run.header["city"]))
    summary = evaluate_vqa(
        progress(run.items, f"vqa ({name})", show_progress),
        lambda item, prompt: answer(image_of(item), prompt),
        parser,
        circular=circular,
        done=run.done,
        on_result=run.on_result,
    )
    return {**summary, "answerer": name, "results_file": str(run.results)}


def summary_rows(summary: dict[str, Any]) -> Iterable[tuple[str, str]]:
    """Key/value rows of a summary without the per-place lists (for printing)."""
    for key, value in summary.items():
        if key not in ("results", "per_type", "per_region", "places_per_region"):
            yield key, f"{value:.4f}" if isinstance(value, float) else str(value)

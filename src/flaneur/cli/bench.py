"""``flaneur bench``: V-IRL's perception benchmarks (place recognition, place VQA) on a city."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from flaneur.errors import FlaneurError

bench_app = typer.Typer(
    rich_markup_mode=None,
    help=(
        "V-IRL's benchmarks on any city pack: build versioned benchmark sets (regions, place "
        "types, storefront views, VQA questions), then score recognisers and answerers with "
        "the paper's metrics (top-1/3/5, mAcc, circular evaluation). Offline by default."
    ),
    no_args_is_help=True,
)

DEFAULT_OUT = Path("bench")


def _emit(summary: dict[str, Any], as_json: bool) -> None:
    from flaneur.bench.runner import summary_rows

    if as_json:
        typer.echo(json.dumps({k: v for k, v in summary.items() if k != "results"}))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(show_header=False)
    for key, value in summary_rows(summary):
        table.add_row(key, value)
    Console().print(table)
    per_type = summary.get("per_type") or {}
    if per_type:
        t = Table("type", "accuracy", "places (1/k weighted)")
        for name, (acc, weight) in per_type.items():
            t.add_row(name, f"{acc:.3f}", f"{weight:.2f}")
        Console().print(t)


def _write_csv(summary: dict[str, Any], path: Path | None) -> None:
    """Per-type and per-region rows: ``table,name,accuracy,weight``."""
    if path is None:
        return
    import csv

    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["table", "name", "accuracy", "weight"])
        for table in ("per_type", "per_region"):
            for name, (acc, weight) in (summary.get(table) or {}).items():
                out.writerow([table.removeprefix("per_"), name, f"{acc:.6f}", f"{weight:g}"])


CSV_HELP = "Also write per-type (and per-region) accuracy to this CSV file."


def _model(spec: str, base_url: str | None) -> Any:
    from flaneur.models import make_model

    return make_model(spec, base_url=base_url)


@bench_app.command("types")
def types_command(
    types: str = typer.Argument("96", help="'20', '96' or a file with one V-IRL type a line."),
) -> None:
    """Show a V-IRL type list and the flaneur categories each type maps to."""
    from flaneur.bench.types import VIRL_TO_FLANEUR, load_type_list

    for t in load_type_list(types):
        typer.echo(f"{t}\t{', '.join(VIRL_TO_FLANEUR[t]) or '(no counterpart)'}")


@bench_app.command("build")
def build_command(
    city: str = typer.Option("helsinki", help="Built-in city name or city pack folder."),
    out: Path = typer.Option(None, help="Output folder (default: bench/<city>-virl)."),
    regions: Path = typer.Option(
        None, help="GeoJSON polygons named by properties.name (default: a grid over the city)."
    ),
    cell_m: float = typer.Option(500.0, help="Grid cell size in metres (without --regions)."),
    types: str = typer.Option("96", help="Type list: '20', '96' or a file, one type a line."),
    per_region: int = typer.Option(20, min=1, help="Places per region at most."),
    seed: int = typer.Option(0, help="Seed of the sample and of the VQA options."),
    llm: str = typer.Option(None, help="Model string: write VQA options with this LLM."),
    llm_base_url: str = typer.Option(None, help="Server URL for --llm."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build the recognition and VQA sets (recognition-v1.jsonl, vqa-v1.jsonl)."""
    from flaneur.bench.runner import build_sets
    from flaneur.bench.vqa_llm import LLMOptionWriter

    writer = LLMOptionWriter(_model(llm, llm_base_url), seed=seed) if llm else None
    folder = out or DEFAULT_OUT / f"{Path(city).name}-virl"
    summary = build_sets(
        city,
        folder,
        regions=regions,
        types=types,
        seed=seed,
        per_region=per_region,
        cell_m=cell_m,
        writer=writer,
    )
    _emit(summary, as_json)


def _set_path(path: Path, name: str) -> Path:
    if path.is_dir():
        path = path / name
    if not path.is_file():
        raise FlaneurError(f"{path}: no benchmark set here; build one with `flaneur bench build`")
    return path


@bench_app.command("recognition")
def recognition_command(
    bench_set: Path = typer.Argument(..., help="Folder of `bench build` or recognition set."),
    recogniser: str = typer.Option(
        "offline", help="offline (OCR + MiniLM), clip (open_clip) or vlm (--model)."
    ),
    model: str = typer.Option(None, help="Model string for --recogniser vlm."),
    base_url: str = typer.Option(None, help="Server URL for --model."),
    clip_model: str = typer.Option("ViT-B-32", help="open_clip architecture."),
    clip_weights: str = typer.Option(None, help="open_clip weights: a file or pretrained tag."),
    limit: int = typer.Option(None, min=1, help="Only the first N places."),
    resume: bool = typer.Option(True, help="Skip places already in the results file."),
    csv_path: Path = typer.Option(None, "--csv", help=CSV_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Score a recogniser: top-1/3/5 accuracy and mAcc over types."""
    from flaneur.bench import recognisers as rec
    from flaneur.bench.runner import run_recognition

    if recogniser == "offline":
        r: Any = rec.OfflineRecogniser()
    elif recogniser == "clip":
        if not clip_weights:
            raise FlaneurError("--recogniser clip needs --clip-weights (a file or open_clip tag)")
        r = rec.CLIPRecogniser(clip_model, clip_weights)
    elif recogniser == "vlm":
        if not model:
            raise FlaneurError("--recogniser vlm needs --model (e.g. openai/gpt-4o-mini)")
        r = rec.VLMRecogniser(_model(model, base_url))
    else:
        raise FlaneurError(f"--recogniser: expected offline, clip or vlm, got {recogniser!r}")
    path = _set_path(bench_set, "recognition-v1.jsonl")
    summary = run_recognition(path, r, limit=limit, resume=resume, show_progress=not as_json)
    _write_csv(summary, csv_path)
    _emit(summary, as_json)


@bench_app.command("vqa")
def vqa_command(
    bench_set: Path = typer.Argument(..., help="Folder of `bench build` or VQA set."),
    answerer: str = typer.Option("model", help="model (--model) or embedder (offline OCR)."),
    model: str = typer.Option(None, help="Model string of the answerer (and matcher)."),
    base_url: str = typer.Option(None, help="Server URL for --model."),
    matcher: str = typer.Option(
        "auto",
        help="Reads replies that are not a letter: model, embedder, none; auto = model "
        "when --model is given, else embedder.",
    ),
    with_image: bool = typer.Option(
        True, "--image/--no-image", help="Send the view with the question (a VLM)."
    ),
    plain: bool = typer.Option(False, "--plain", help="One pass instead of circular evaluation."),
    limit: int = typer.Option(None, min=1, help="Only the first N places."),
    resume: bool = typer.Option(True, help="Skip places already in the results file."),
    csv_path: Path = typer.Option(None, "--csv", help=CSV_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Score an answerer on place VQA: circular and first-pass accuracy and mAcc."""
    from flaneur.bench.answerers import EmbedderAnswerer, ModelAnswerer
    from flaneur.bench.parse import AnswerParser, EmbedderMatcher, ModelMatcher
    from flaneur.bench.runner import run_vqa

    chat = _model(model, base_url) if model else None
    if answerer == "model":
        if chat is None:
            raise FlaneurError("--answerer model needs --model (e.g. openai/gpt-4o-mini)")
        a: Any = ModelAnswerer(chat, with_image=with_image)
        name = f"model-{model}"
    elif answerer == "embedder":
        a, name = EmbedderAnswerer(), "embedder"
    else:
        raise FlaneurError(f"--answerer: expected model or embedder, got {answerer!r}")
    if matcher == "auto":
        matcher = "model" if chat is not None else "embedder"
    if matcher == "model" and chat is None:
        raise FlaneurError("--matcher model needs --model")
    matchers = {
        "model": lambda: ModelMatcher(chat),
        "embedder": EmbedderMatcher,
        "none": lambda: None,
    }
    if matcher not in matchers:
        raise FlaneurError(f"--matcher: expected model, embedder or none, got {matcher!r}")
    parser = AnswerParser(matchers[matcher]())
    path = _set_path(bench_set, "vqa-v1.jsonl")
    summary = run_vqa(
        path,
        a.answer,
        parser,
        name,
        circular=not plain,
        limit=limit,
        resume=resume,
        show_progress=not as_json,
    )
    _write_csv(summary, csv_path)
    _emit(summary, as_json)


@bench_app.command("report")
def report_command(
    folders: list[Path] = typer.Argument(
        ..., help="Benchmark folders, one per city (of `bench build` / `bench detection`)."
    ),
    csv_path: Path = typer.Option(
        None,
        "--csv",
        help="Write every row (city, benchmark, runner, table, name, metric, value) here.",
    ),
    detail: bool = typer.Option(
        False, "--detail", help="Also print the per-type and per-region rows of each city."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Per-city results of every benchmark run in the folders, beside the paper's numbers."""
    import csv

    from flaneur.bench.tables import PAPER, PAPER_NOTE, rows

    found = list(rows(folders))
    if csv_path is not None:
        with csv_path.open("w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(["city", "benchmark", "runner", "table", "name", "metric", "value"])
            out.writerows(found)
    overall = [r for r in found if r[3] == "overall"]
    if as_json:
        cities: dict[str, Any] = {}
        for city, bench, runner, _, _, metric, value in overall:
            cities.setdefault(city, {}).setdefault(bench, {}).setdefault(runner, {})[metric] = value
        typer.echo(json.dumps({"cities": cities, "note": PAPER_NOTE}))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("city", "benchmark", "runner", "metric", "flaneur", "paper (V-IRL)")
    for city, bench, runner, _, _, metric, value in overall:
        shown = "-" if value is None else f"{value:.3f}" if isinstance(value, float) else value
        table.add_row(city, bench, runner, metric, str(shown), PAPER.get((bench, metric), ""))
    Console().print(table)
    if detail:
        rest = Table("city", "benchmark", "runner", "table", "name", "metric", "value")
        for city, bench, runner, kind, name, metric, value in found:
            if kind != "overall":
                shown = f"{value:.3f}" if isinstance(value, float) else str(value)
                rest.add_row(city, bench, runner, kind, name, metric, shown)
        Console().print(rest)
    Console().print(PAPER_NOTE)


def _add_vln_commands() -> None:
    """``flaneur bench vln`` lives in :mod:`flaneur.cli.bench_vln`; one ``bench`` group."""
    from flaneur.cli.bench_vln import bench_vln_app

    bench_app.registered_commands.extend(bench_vln_app.registered_commands)


_add_vln_commands()


def _add_detection_command() -> None:
    """``flaneur bench detection`` lives in :mod:`flaneur.cli.bench_detection`."""
    from flaneur.cli.bench_detection import bench_detection_app

    bench_app.registered_commands.extend(bench_detection_app.registered_commands)


_add_detection_command()

"""``flaneur bench detection``: V-IRL's place detection benchmark on a city."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from flaneur.errors import FlaneurError

bench_detection_app = typer.Typer(help="V-IRL's place detection benchmark.")

PAPER_AR = {
    "GroundingDINO": (11.7, 5.8),
    "Owl-ViT": (7.1, 7.1),
    "GLIP": (15.4, 9.0),
    "OpenSeeD": (17.7, 16.7),
    "Owl-ViT v2": (0.0, 3.4),
    "CLIP on GLIP proposals": (26.9, 23.7),
}
"""V-IRL Table 3: AR10 / AR20 (%) on its 14 districts with Google Street View imagery."""

PAPER_NOTE = (
    "The paper's numbers come from 14 districts in 12 cities with Google Street View photos "
    "and real detectors; these come from the chosen city pack with its imagery (synthetic "
    "views offline). The city, the imagery and the detectors differ: compare the definition, "
    "not the value."
)


def _table(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    head = Table(show_header=False)
    for key in (
        "city",
        "detector",
        "viewpoints",
        "views",
        "places",
        "ar",
        "ar_localisation",
        "box_accuracy",
        "boxes",
        "matched_boxes",
        "correct_boxes",
        "results_file",
    ):
        value = summary.get(key)
        head.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    console.print(head)
    types = Table("type", "places", "recall", "localisation", title="per type")
    for name, row in summary["per_type"].items():
        types.add_row(
            name, str(row["places"]), f"{row['recall']:.3f}", f"{row['localisation']:.3f}"
        )
    console.print(types)
    regions = Table("region", "viewpoints", "places", "AR", "box accuracy", title="per region")
    for name, row in summary["per_region"].items():
        regions.add_row(
            name,
            str(row["viewpoints"]),
            str(row["places"]),
            f"{row['ar']:.3f}",
            f"{row['box_accuracy']:.3f}",
        )
    console.print(regions)
    paper = Table("V-IRL Table 3", "AR10 (%)", "AR20 (%)", title="beside the paper")
    for name, (ar10, ar20) in PAPER_AR.items():
        paper.add_row(name, f"{ar10:.1f}", f"{ar20:.1f}")
    paper.add_row(
        f"flaneur {summary['detector']} on {summary['city']}",
        "",
        f"{100 * summary['ar']:.1f} ({summary['types_with_places']} types with places)",
    )
    console.print(paper)
    console.print(PAPER_NOTE)


def _check_same_build(path: Path, types: str, per_region: int | None, seed: int) -> None:
    """Refuse to score an existing set built with other options (one line: use --rebuild)."""
    from flaneur.bench.detection import DETECTION_VERSION
    from flaneur.bench.sets import read_set
    from flaneur.bench.types import load_type_list

    header, _ = read_set(path, "virl-detection", DETECTION_VERSION)
    wanted = {"types": list(load_type_list(types)), "per_region": per_region, "seed": seed}
    differ = [k for k, v in wanted.items() if header.get(k) != v]
    if differ:
        raise FlaneurError(
            f"{path}: built with other {', '.join(differ)} "
            f"({', '.join(f'{k}={header.get(k)!r}' for k in differ)}); pass --rebuild"
        )


@bench_detection_app.command("detection")
def detection_command(
    folder: Path = typer.Argument(
        None, help="Benchmark folder (default: bench/<city>-virl); the set is built if missing."
    ),
    city: str = typer.Option("helsinki", help="Built-in city name or city pack folder."),
    detector: str = typer.Option(
        "ocr", help="ocr (PP-OCR storefront detector) or scene (the scene detector simulator)."
    ),
    regions: Path = typer.Option(
        None, help="GeoJSON polygons named by properties.name (default: a grid over the city)."
    ),
    cell_m: float = typer.Option(500.0, help="Grid cell size in metres (without --regions)."),
    types: str = typer.Option("20", help="Type list: '20', '96', a file or 'bank,cafe'."),
    per_region: int = typer.Option(
        None, min=1, help="Viewpoints per region at most (a seeded sample; default all)."
    ),
    seed: int = typer.Option(0, help="Seed of the viewpoint sample and of the simulator."),
    rebuild: bool = typer.Option(False, help="Rebuild the set even if the folder has one."),
    threshold: float = typer.Option(
        None, min=0.0, max=1.0, help="Box score threshold (default: the detector's own)."
    ),
    limit: int = typer.Option(None, min=1, help="Only the first N viewpoints."),
    resume: bool = typer.Option(True, help="Skip viewpoints already in the results file."),
    csv_path: Path = typer.Option(
        None, "--csv", help="Also write per-type and per-region rows to this CSV file."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Place detection: viewpoints on a 20 m grid, views at fov 60/90/120 all around, boxes
    matched to the nearest place within 25 m in their heading span; recall per type, AR and
    the accuracy of matched boxes (V-IRL Table 3)."""
    from flaneur.bench.detection_run import (
        DETECTORS,
        SET_NAME,
        build_detection,
        run_detection,
        write_detection_csv,
    )

    if detector not in DETECTORS:
        raise FlaneurError(f"--detector: expected one of {', '.join(DETECTORS)}, got {detector!r}")
    folder = folder or Path("bench") / f"{Path(city).name}-virl"
    path = folder / SET_NAME
    built: dict[str, Any] = {}
    if path.is_file() and not rebuild:
        _check_same_build(path, types, per_region, seed)
    if rebuild or not path.is_file():
        built = build_detection(
            city,
            folder,
            regions=regions,
            types=types,
            cell_m=cell_m,
            per_region=per_region,
            seed=seed,
        )
    summary = run_detection(
        path,
        detector,
        limit=limit,
        resume=resume,
        show_progress=not as_json,
        threshold=threshold,
        seed=seed,
    )
    if csv_path is not None:
        write_detection_csv(summary, csv_path)
    if as_json:
        typer.echo(json.dumps({**built, **{k: v for k, v in summary.items() if k != "results"}}))
    else:
        _table(summary)

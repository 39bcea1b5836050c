"""``flaneur bench detection``: V-IRL's place detection, a short form of ``flaneur run``.

It runs one detector (``--detector NAME``: any of
:data:`~flaneur.perception.detection.DETECTORS`, plug-ins too) on a ``virl-detection`` task
set (a registered id, by default ``helsinki-virl-detection-v1``, or an item file of
``flaneur tasks generate CITY --kind virl-detection``) on the views of ``--views`` (as
``flaneur run`` takes them; default the city's synthetic views) through
:func:`flaneur.evaluate.runner.run_benchmark` into ``--out`` and prints the task-set figures
(AR, AR10, AR20, localisation AR, matched-box accuracy) beside V-IRL's Table 3. A
detector's options go through ``flaneur run --option NAME.KEY=VALUE``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from flaneur.cli import run_options as ro
from flaneur.cli.bench_runs import figure_table, run_figures, run_short_form, show_run
from flaneur.cli.run import check_views
from flaneur.evaluate.protocol import check_protocol

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
    "and real detectors; these come from the task set's city with its imagery (synthetic "
    "views offline). The city, the imagery and the detectors differ: compare the definition, "
    "not the value."
)

FIGURES = ("ar", "ar10", "ar20", "ar_localisation", "box_accuracy")
"""The task-set figures shown, in order."""


def _percent(figure: dict[str, Any] | None) -> str:
    value = (figure or {}).get("value")
    return "-" if value is None else f"{100 * value:.1f}"


def _tables(figures: dict[str, Any]) -> list[Any]:
    """The task-set figures, and AR10 / AR20 beside V-IRL's Table 3."""

    found = figures["task_metrics"]
    head = figure_table(figures["task"], [(name, found.get(name) or {}) for name in FIGURES])
    paper = Table("V-IRL Table 3", "AR10 (%)", "AR20 (%)", title="beside the paper")
    for name, (ar10, ar20) in PAPER_AR.items():
        paper.add_row(name, f"{ar10:.1f}", f"{ar20:.1f}")
    mine = f"flaneur {figures['solver']} on {figures['city']}"
    paper.add_row(mine, _percent(found.get("ar10")), _percent(found.get("ar20")))
    return [head, paper, PAPER_NOTE]


@bench_detection_app.command("detection")
def detection_command(
    out: Path = typer.Option(..., "-o", "--out", help="Run folder (episodes.jsonl, summary.json)."),
    task: str = typer.Option(
        "helsinki-virl-detection-v1",
        "--task",
        help="Registered task id or item file (tasks generate CITY --kind virl-detection).",
    ),
    detector: str = typer.Option(
        "scene",
        "--detector",
        help="scene (simulator), oracle, ocr, yolo-world, yolo, owlvit or a plug-in; its "
        "options: flaneur run --option NAME.KEY=VALUE. scene and oracle need synthetic views.",
    ),
    views: str | None = ro.VIEWS,
    seed: int = typer.Option(0, "--seed", min=0, help="Run seed."),
    protocol: str = ro.PROTOCOL,
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N viewpoints."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Place detection: views at fov 60/90/120 all around each viewpoint, boxes matched to the
    nearest place within 25 m in their heading span; AR, AR10, AR20 and the accuracy of
    matched boxes (V-IRL Table 3)."""

    check_views(views)
    progress = "none" if as_json else "rich"
    summary = run_short_form(
        "virl-detection",
        task,
        detector,
        out,
        options=[],
        resume=resume,
        progress=progress,
        seed=seed,
        protocol=check_protocol(protocol),
        limit=limit,
        views=views,
        concurrency=2,
    )
    figures = run_figures(summary, detector, out)
    show_run(figures, summary, as_json, more_json={"paper_ar10_ar20": PAPER_AR}, tables=_tables)

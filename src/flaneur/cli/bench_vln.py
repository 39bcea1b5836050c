"""``flaneur bench vln``: V-IRL's vision-language navigation benchmark, a short form of
``flaneur run --tasks TASK --agent ling --landmarks L`` that prints V-IRL's six metrics
beside the paper's rows.

Each recogniser is one run of the runner into ``OUT/<recogniser>``: ``oracle`` is Ling with
``--landmarks map`` (V-IRL's oracle row), ``ocr``, ``clip`` and ``vlm`` are Ling with that
landmark scorer on synthetic views (or ``--views``). ``--agent oracle`` runs the shortest-path
oracle solver instead of Ling. The six metrics are the navigation kind's task-set figures
(:mod:`flaneur.bench.vln_metrics`); other cities: make a route set first with ``flaneur
tasks generate CITY --kind virl-vln -o routes.jsonl``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from flaneur.cli import run_options as ro
from flaneur.cli.bench_runs import run_short_form
from flaneur.cli.output import console, print_json
from flaneur.cli.run import check_views
from flaneur.errors import FlaneurError
from flaneur.evaluate.protocol import check_protocol

bench_vln_app = typer.Typer(
    rich_markup_mode=None,
    help="V-IRL's benchmarks on flaneur's cities (vln: vision-language navigation).",
    no_args_is_help=True,
)

PAPER_ROWS = {
    "oracle (V-IRL full, Table 8)": (0.88, 1.0, 0.95, 0.99, 0.96, 0.88),
    "PP-OCR + GPT-3.5 (V-IRL mini, Table 5)": (0.28, 0.89, 0.73, 0.94, 0.72, 0.28),
}
"""The paper's rows (Success, Start reaction, Int. arrival, Int. reaction, Stop arrival,
Stop reaction)."""
LANDMARKS = {"oracle": "map", "ocr": "ocr", "clip": "clip", "vlm": "vlm"}
"""``--recogniser`` → Ling's ``--landmarks``."""
DEFAULT_TASK = "helsinki-virl-vln-v1"


def run_vln(
    task: str,
    recognisers: list[str],
    out: Path,
    *,
    agent: str = "ling",
    clip_weights: str | None = None,
    views: str | None = None,
    resume: bool = False,
    **run: Any,
) -> dict[str, Any]:
    """One run per recogniser into ``out/<recogniser>`` (``run``: ``city``, ``llm``,
    ``llm_base_url``, ``limit``); ``{"routes": n, "figures": {recogniser: six metrics},
    "runs": {recogniser: folder}}``."""

    unknown = [r for r in recognisers if r not in LANDMARKS]
    if unknown:
        raise FlaneurError(
            f"--recogniser: unknown {unknown[0]!r} (expected {', '.join(LANDMARKS)})"
        )
    if agent not in ("ling", "oracle"):
        raise FlaneurError(f"--agent: expected ling or oracle, not {agent!r}")
    result: dict[str, Any] = {"task": task, "figures": {}, "runs": {}}
    for name in dict.fromkeys(recognisers):
        landmarks = LANDMARKS[name] if agent == "ling" else None
        looks = landmarks not in (None, "map")
        options = {"clip_weights": clip_weights} if clip_weights and agent == "ling" else None
        summary = run_short_form(
            None,
            task,
            agent,
            out / name,
            options=options,
            resume=resume,
            progress="none",
            views=(views or "synthetic") if looks else views,
            landmarks=landmarks,
            **run,
        )
        entry = summary["runs"][0]
        result.update(city=entry["city"], routes=entry["rows"])
        result["figures"][name] = entry.get("task_metrics") or {}
        result["runs"][name] = str(out / name)
    return result


def _table(result: dict[str, Any]) -> None:

    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.bench.vln_metrics import METRICS

    table = Table(
        title=f"V-IRL VLN on {result.get('city', '?')} ({result.get('routes', 0)} routes; "
        "the paper's rows: other cities, Google Street View)"
    )
    table.add_column("recogniser")
    for label in ("Success", "Start reac", "Int arr", "Int reac", "Stop arr", "Stop reac"):
        table.add_column(label, justify="right")
    for name, figures in result["figures"].items():
        values = [(figures.get(m) or {}).get("value") for m in METRICS]
        table.add_row(f"{name} (flaneur)", *("-" if v is None else f"{v:.2f}" for v in values))
    for name, row in PAPER_ROWS.items():
        table.add_row(name, *(f"{v:.2f}" for v in row))
    console.print(table)


@bench_vln_app.command("vln")
def vln_command(
    task: str = typer.Argument(
        DEFAULT_TASK, help="Route set: a registered id or an episode file (virl-vln)."
    ),
    recogniser: list[str] = typer.Option(
        ["oracle"],
        "--recogniser",
        "-r",
        help="Landmark recogniser(s): oracle (the map, 20 m), ocr (PP-OCR on views), clip "
        "(open_clip, --clip-weights), vlm (the --llm model); one run each.",
    ),
    agent: str = typer.Option("ling", "--agent", help="ling, or oracle (the oracle solver)."),
    city: str | None = typer.Option(None, "--city", help="City of an episode file."),
    views: str | None = ro.VIEWS,
    clip_weights: str | None = typer.Option(
        None, "--clip-weights", help="open_clip weights for -r clip: a file or pretrained tag."
    ),
    llm: str | None = typer.Option(
        None, "--llm", help="Model choosing Ling's actions (and the vlm recogniser)."
    ),
    llm_base_url: str | None = typer.Option(
        None, "--llm-base-url", help="OpenAI-compatible server URL."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="The first N routes."),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="Run folder (one sub-folder per recogniser)."
    ),
    resume: bool = typer.Option(False, "--resume", help="Finish the runs in --out."),
    protocol: str = ro.PROTOCOL,
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """V-IRL's VLN benchmark through the runner, scored with V-IRL's six metrics."""
    check_views(views)
    if resume and out is None:
        raise FlaneurError("--resume needs --out (the folder of the runs to finish)")
    with tempfile.TemporaryDirectory(prefix="flaneur-vln-") as scratch:
        result = run_vln(
            task,
            list(recogniser),
            out or Path(scratch),
            resume=resume,
            agent=agent,
            city=city,
            views=views,
            clip_weights=clip_weights,
            limit=limit,
            llm=llm,
            llm_base_url=llm_base_url,
            protocol=check_protocol(protocol),
        )
    if out is None:
        result.pop("runs")
    if json_out:
        print_json({**result, "paper": PAPER_ROWS})
    else:
        _table(result)

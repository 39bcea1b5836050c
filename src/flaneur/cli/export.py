"""``flaneur export``: datasets made from task sets (``export finetune``)."""

from __future__ import annotations

from pathlib import Path

import typer

from flaneur.cli.failures import check_output_path
from flaneur.cli.output import console, print_json
from flaneur.cli.task_options import CITY_OPTION, TASKS_HELP
from flaneur.errors import FlaneurError

export_app = typer.Typer(
    rich_markup_mode=None, help="Export datasets made from task sets.", no_args_is_help=True
)

DATA_DIR_HELP = (
    "Folder holding the datasets (touchdown/, map2seq/, cityseeker/); default $FLANEUR_DATA."
)


@export_app.command("finetune")
def finetune_command(
    tasks: str = typer.Option(..., "--tasks", help=TASKS_HELP),
    city: str | None = CITY_OPTION,
    out: Path = typer.Option(..., "-o", "--out", help="Output JSONL file."),
    data_dir: Path | None = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="At most N episodes of each task set."
    ),
    fmt: str = typer.Option(
        "step", "--format", help="step (one chat per decision) or episode (one multi-turn chat)."
    ),
    k_shot: int = typer.Option(
        0, "--k-shot", min=0, help="In-context examples in each prompt (VELMA fine-tunes with 0)."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the in-context example choice."),
    metadata: bool = typer.Option(
        False, "--metadata", help="Add task, episode id and step to every record."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Write VELMA gold-path verbalizations as chat JSONL for fine-tuning.

    Every episode is walked by the turns teacher and verbalized as the velma agent sees it
    (rule-based landmarks, map observations); records are {"messages": [...]} with the
    gold action words as assistant messages.
    """
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.agents.velma.finetune import FORMATS, export_finetune
    from flaneur.tasks.registry import load_task, navigation_episodes

    check_output_path(out, "--out", folder=False)
    if fmt not in FORMATS:
        raise FlaneurError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    ids = [t.strip() for t in tasks.split(",") if t.strip()]
    if not ids:
        raise FlaneurError("--tasks names no task set")
    loaded = []
    for task in ids:
        the_city, items = load_task(task, data_dir, city=city)
        loaded.append((task, the_city, navigation_episodes(items, task=task)))
    stats = export_finetune(
        loaded, out, fmt=fmt, k_shot=k_shot, seed=seed, limit=limit, metadata=metadata
    )
    result = {"out": str(out), "format": fmt, "tasks": ids, "k_shot": k_shot, **stats.to_dict()}
    if json_out:
        print_json(result)
        return
    console.print(
        f"wrote {stats.records} records ({stats.episodes} episodes, {stats.steps} actions) "
        f"to {out}" + (f"; skipped {len(stats.skipped)} episodes" if stats.skipped else "")
    )

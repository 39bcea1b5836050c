"""``flaneur train``: train the language model of an agent (``train velma``)."""

from __future__ import annotations

from pathlib import Path

import typer

from flaneur.cli.output import console, print_json
from flaneur.cli.task_options import TASKS_HELP
from flaneur.errors import FlaneurError

train_app = typer.Typer(
    rich_markup_mode=None,
    help="Train an agent's language model on task sets (needs pip install 'flaneur[train]').",
    no_args_is_help=True,
)


def _ids(text: str | None) -> tuple[str, ...]:
    return tuple(t.strip() for t in (text or "").split(",") if t.strip())


@train_app.command("velma")
def velma_command(
    tasks: str = typer.Option(..., "--tasks", help="Training task sets. " + TASKS_HELP),
    model: str = typer.Option(
        ...,
        "--model",
        help="Local model to start from: a transformers folder or a GGUF file "
        "(llama-architecture GGUF is de-quantized to float32). Nothing is downloaded.",
    ),
    out: Path = typer.Option(
        ..., "-o", "--out", help="Output folder: checkpoints/, summary.json and the chosen model."
    ),
    method: str = typer.Option(
        "ft",
        "--method",
        help="ft: supervised on the gold verbalizations; rbl: VELMA's response-based "
        "learning (teacher forcing with probability --lam, else the model walks and the "
        "teacher corrects it).",
    ),
    dev: str | None = typer.Option(
        None, "--dev", help="Dev task sets: the checkpoint with the best TC on them is chosen."
    ),
    epochs: int = typer.Option(3, "--epochs", min=1, help="Passes over the training episodes."),
    lora: bool = typer.Option(
        True, "--lora/--full", help="LoRA adapters (peft; default) or every weight."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of LoRA, shuffling and RBL's coins."),
    lam: float = typer.Option(0.5, "--lam", help="RBL: probability of teacher forcing."),
    lr: float | None = typer.Option(
        None, "--lr", help="Learning rate (default 2e-4 with LoRA, 2e-5 with --full)."
    ),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Episodes per update."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="At most N training episodes of each task set."
    ),
    dev_limit: int | None = typer.Option(
        None, "--dev-limit", min=1, help="At most N dev episodes of each dev task set."
    ),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="Folder holding the datasets; default $FLANEUR_DATA."
    ),
    progress: str = typer.Option("rich", "--progress", help="rich, plain or none."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Fine-tune VELMA's model on gold verbalizations (FT) or by response-based learning (RBL).

    The examples are the prompts the velma agent sends (k_shot 0, rule-based landmarks),
    with the loss on the action words only. Every epoch is checkpointed in OUT/checkpoints
    (run the same command again to resume after a kill) and, with --dev, run on the dev
    task sets by the runner; the chosen model is written into OUT. Run it with:
    flaneur run --agent velma --llm hf:OUT --option velma.k_shot=0 --option velma.extract=rules
    """
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.train.loop import TrainSettings
    from flaneur.train.run import PROGRESS_MODES, train_velma

    if progress not in PROGRESS_MODES:
        raise FlaneurError(f"--progress must be one of {', '.join(PROGRESS_MODES)}")
    settings = TrainSettings(
        tasks=_ids(tasks),
        model=str(model),
        out=out,
        method=method,
        dev=_ids(dev),
        epochs=epochs,
        lora=lora,
        seed=seed,
        lam=lam,
        lr=lr,
        batch_size=batch_size,
        data_dir=str(data_dir) if data_dir else None,
        limit=limit,
        dev_limit=dev_limit,
    )
    _print_result(train_velma(settings, progress=progress), out, json_out)


def _print_result(summary: dict, out: Path, json_out: bool) -> None:
    if json_out:
        print_json(summary)
        return
    chosen = summary["chosen"]
    dev_text = f", dev TC {chosen['dev']['tc']}" if chosen["dev"] else ""
    console.print(f"chose epoch {chosen['epoch']}{dev_text}; model in {out}")
    console.print(f"run it: {summary['run_with']}")

"""Run a whole training (:func:`train_velma`): progress, epochs, the chosen model, summary."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from flaneur.train.checkpoints import checkpoint_dir
from flaneur.train.examples import AGENT_OPTIONS
from flaneur.train.loop import Loaded, TrainSettings, build_trainer, choose, finish_epoch, run_epoch

PROGRESS_MODES = ("rich", "plain", "none")


def train_velma(
    settings: TrainSettings, *, loaded: Loaded | None = None, progress: str = "rich"
) -> dict[str, Any]:
    """Train (or resume training) and write the chosen model and ``summary.json``.

    Parameters
    ----------
    settings
        What to train (see :class:`~flaneur.train.loop.TrainSettings`).
    loaded
        Pre-loaded ``{task_id: (city, episodes)}`` for training and dev task sets (tests).
    progress
        ``rich`` (a bar on stderr), ``plain`` (a line per epoch) or ``none``.

    Returns
    -------
    dict
        The summary (also written to ``settings.out / "summary.json"``).
    """
    started = time.time()
    settings.out.mkdir(parents=True, exist_ok=True)
    trainer = build_trainer(settings, loaded)
    done = len(trainer.history["train"])
    per_epoch = len(trainer.gold)
    remaining = max(settings.epochs - done, 0)
    console = Console(stderr=True)
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]}"),
        TimeElapsedColumn(),
        console=console,
        disable=progress != "rich",
    )
    with bar:
        task = bar.add_task("training episodes", total=remaining * per_epoch, loss="-")
        for epoch in range(done + 1, settings.epochs + 1):
            bar.update(task, description=f"epoch {epoch}/{settings.epochs}")
            figures = run_epoch(trainer, epoch, lambda n: bar.advance(task, n))
            bar.update(task, loss=figures["loss"])
            finish_epoch(trainer, epoch, figures, loaded)
            if progress == "plain":
                dev = trainer.history["dev"][-1:] if settings.dev else []
                print(
                    f"epoch {epoch}: {json.dumps(figures)} dev {json.dumps(dev)}", file=sys.stderr
                )
    return write_result(settings, trainer.history, time.time() - started)


def write_result(
    settings: TrainSettings, history: dict[str, list[dict[str, Any]]], wall_s: float
) -> dict[str, Any]:
    """Copy the chosen checkpoint's model into ``out`` and write ``summary.json``."""
    epoch = choose(history, settings.epochs)
    chosen = checkpoint_dir(settings.out, epoch) / "model"
    for item in chosen.iterdir():
        if item.is_file():
            shutil.copy2(item, settings.out / item.name)
    dev = next((d for d in history["dev"] if d["epoch"] == epoch), None)
    summary = {
        "command": "flaneur train velma",
        "settings": settings.fingerprint() | {"epochs": settings.epochs},
        "agent_options": dict(AGENT_OPTIONS),
        "chosen": {"epoch": epoch, "checkpoint": str(chosen), "dev": dev},
        "train": history["train"][: settings.epochs],
        "dev": [d for d in history["dev"] if d["epoch"] <= settings.epochs],
        "run_with": (
            f"flaneur run --agent velma --llm hf:{settings.out} "
            + " ".join(f"--option velma.{k}={v}" for k, v in AGENT_OPTIONS.items())
        ),
        "wall_s": round(wall_s, 2),
    }
    path = Path(settings.out) / "summary.json"
    tmp = path.with_name("summary.json.tmp")
    tmp.write_text(json.dumps(summary, indent=1), encoding="utf-8")
    tmp.replace(path)
    return summary


__all__ = ["PROGRESS_MODES", "train_velma"]

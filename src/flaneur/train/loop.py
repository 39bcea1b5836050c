"""``flaneur train velma``: epochs of FT or RBL, dev evaluation, resumable checkpoints.

Per epoch the training episodes are shuffled (seeded by the run seed and the epoch) and
taken ``batch_size`` at a time; each batch's examples give one AdamW step, the loss being
the mean cross-entropy of the action-word tokens (:mod:`flaneur.train.tokens`):

* ``ft``: every episode gives its gold steps (teacher forcing);
* ``rbl`` (VELMA's Algorithm 1): with probability ``lam`` an episode gives its gold steps,
  otherwise the model as it is now walks it and gives its own or the teacher's corrected
  actions (:mod:`flaneur.train.examples`).

After each epoch the model is exported and, with dev task sets, run on them by the runner;
the checkpoint is saved (:mod:`flaneur.train.checkpoints`). At the end the checkpoint with
the best dev task completion (the earliest of equals; the last without dev sets) is copied
into ``out`` as a ``transformers`` folder (``--llm hf:OUT``) and ``out/summary.json`` holds
the settings, the per-epoch figures and the choice.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.teacher import TeacherError
from flaneur.errors import FlaneurError
from flaneur.models.hf import HFModel, import_torch_transformers
from flaneur.train.checkpoints import (
    check_same_run,
    last_checkpoint,
    load_checkpoint,
    save_checkpoint,
    staging_dir,
)
from flaneur.train.dev import evaluate_dev
from flaneur.train.examples import (
    Example,
    corrected_examples,
    gold_examples,
    student_walk,
)
from flaneur.train.packing import by_episode, packed_loss
from flaneur.train.setup import check_memory, export_model, trainable_model, trainable_state
from flaneur.world.city import City

METHODS = ("ft", "rbl")
Loaded = dict[str, tuple[City, list[Any]]]


@dataclass(frozen=True)
class TrainSettings:
    """What ``flaneur train velma`` does (see the command's help)."""

    tasks: tuple[str, ...]
    model: str
    out: Path
    method: str = "ft"
    dev: tuple[str, ...] = ()
    epochs: int = 3
    lora: bool = True
    seed: int = 0
    lam: float = 0.5
    lr: float | None = None
    batch_size: int = 8
    lora_rank: int = 8
    data_dir: str | None = None
    limit: int | None = None
    dev_limit: int | None = None

    @property
    def learning_rate(self) -> float:
        """``lr``, else 2e-4 with LoRA and 2e-5 for full fine-tuning."""
        return self.lr if self.lr is not None else (2e-4 if self.lora else 2e-5)

    def fingerprint(self) -> dict[str, Any]:
        """The settings a resumed run must share (``epochs`` may grow)."""
        data = asdict(self)
        data.pop("epochs")
        data["out"] = str(self.out)
        data["lr"] = self.learning_rate
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}  # as JSON


@dataclass
class Trainer:
    """The state of one training run (model, optimizer, data, figures)."""

    settings: TrainSettings
    torch: Any
    model: Any
    tokenizer: Any
    optimizer: Any
    data: list[tuple[City, list[Any]]]
    gold: dict[tuple[int, int], list[Example]]
    history: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"train": [], "dev": []}
    )
    student: HFModel | None = None


def check_settings(settings: TrainSettings) -> None:
    """One-line errors for settings that cannot work."""
    if settings.method not in METHODS:
        raise FlaneurError(f"--method must be one of {', '.join(METHODS)}, not {settings.method!r}")
    if not 0.0 <= settings.lam <= 1.0:
        raise FlaneurError(f"--lam must be in [0, 1], not {settings.lam}")
    if settings.epochs < 1 or settings.batch_size < 1:
        raise FlaneurError("--epochs and --batch-size must be at least 1")
    if not settings.tasks:
        raise FlaneurError("--tasks names no task set")


def load_data(settings: TrainSettings, loaded: Loaded | None) -> list[tuple[City, list[Any]]]:
    """``(city, navigation episodes)`` of every training task set."""
    # lazy: the task registry and its loaders are only needed here
    from flaneur.tasks.registry import load_task, navigation_episodes

    data = []
    for task in settings.tasks:
        if loaded is not None and task in loaded:
            city, items = loaded[task]
        else:
            city, items = load_task(task, settings.data_dir)
        episodes = navigation_episodes(items, task=task)
        data.append((city, episodes[: settings.limit] if settings.limit else episodes))
    return data


def gold_table(data: list[tuple[City, list[Any]]]) -> dict[tuple[int, int], list[Example]]:
    """The gold examples of every episode the teacher can walk, by (task, episode) index."""
    table: dict[tuple[int, int], list[Example]] = {}
    for t, (city, episodes) in enumerate(data):
        scheme = TurnsScheme(city.graph)
        for i, episode in enumerate(episodes):
            try:
                table[(t, i)] = gold_examples(scheme, city, episode)
            except (TeacherError, FlaneurError):
                continue  # the teacher cannot walk it: left out, as by the exporter
    if not table:
        raise FlaneurError("no training episode can be walked by the teacher")
    return table


def build_trainer(settings: TrainSettings, loaded: Loaded | None) -> Trainer:
    """Check memory, load the data and the model, resume from the last checkpoint."""
    check_settings(settings)
    torch, _ = import_torch_transformers()
    check_memory(settings.model, lora=settings.lora)
    data = load_data(settings, loaded)
    gold = gold_table(data)
    torch.manual_seed(settings.seed)  # LoRA's initial adapters
    model, tokenizer = trainable_model(settings.model, lora=settings.lora, rank=settings.lora_rank)
    trained = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trained, lr=settings.learning_rate)
    trainer = Trainer(settings, torch, model, tokenizer, optimizer, data, gold)
    last = last_checkpoint(settings.out)
    if last is not None:
        epoch, state = last
        check_same_run(state, settings.fingerprint(), settings.out)
        load_checkpoint(torch, settings.out, epoch, model, optimizer)
        trainer.history = state["history"]
    return trainer


def instance_examples(
    trainer: Trainer, key: tuple[int, int], rng: random.Random, counts: dict[str, int]
) -> list[Example]:
    """The examples one training episode gives this time (see the module docstring)."""
    settings = trainer.settings
    if settings.method == "ft" or rng.random() < settings.lam:
        counts["teacher_forced"] += 1
        return trainer.gold[key]
    city, episodes = trainer.data[key[0]]
    if trainer.student is None:
        trainer.student = HFModel("student", model=trainer.model, tokenizer=trainer.tokenizer)
    trainer.model.eval()
    walk = asyncio.run(student_walk(trainer.student, city, episodes[key[1]]))
    trainer.model.train()
    examples, own = corrected_examples(walk, TurnsScheme(city.graph), city)
    counts["student_own" if own else "student_corrected"] += 1
    return examples


def train_step(trainer: Trainer, examples: list[Example]) -> float:
    """One AdamW step on ``examples`` (each episode's packed into one sequence,
    :mod:`flaneur.train.packing`); their mean action-token loss."""
    torch, model = trainer.torch, trainer.model
    packed = by_episode(trainer.tokenizer, examples)
    tokens = sum(p.labelled for p in packed)
    trainer.optimizer.zero_grad()
    total = 0.0
    for sequence in packed:
        loss, _ = packed_loss(torch, model, sequence)
        (loss / max(tokens, 1)).backward()
        total += float(loss.detach())
    trainer.optimizer.step()
    if trainer.student is not None:
        trainer.student.forget_prefixes()  # its kept keys and values came from the old weights
    return total / max(tokens, 1)


def run_epoch(trainer: Trainer, epoch: int, advance: Callable[[int], None]) -> dict[str, Any]:
    """One pass over the training episodes; the epoch's training figures."""
    settings = trainer.settings
    rng = random.Random(f"{settings.seed}:{epoch}")
    trainer.torch.manual_seed(settings.seed * 1009 + epoch)
    keys = sorted(trainer.gold)
    rng.shuffle(keys)
    counts = {"teacher_forced": 0, "student_own": 0, "student_corrected": 0}
    losses, examples_seen = [], 0
    for start in range(0, len(keys), settings.batch_size):
        batch = keys[start : start + settings.batch_size]
        examples = [e for key in batch for e in instance_examples(trainer, key, rng, counts)]
        losses.append(train_step(trainer, examples))
        examples_seen += len(examples)
        advance(len(batch))
    return {
        "epoch": epoch,
        "loss": round(sum(losses) / len(losses), 5),
        "examples": examples_seen,
        **counts,
    }


def finish_epoch(
    trainer: Trainer, epoch: int, figures: dict[str, Any], loaded: Loaded | None
) -> None:
    """Export the model, run the dev sets on it, save the checkpoint."""
    settings = trainer.settings
    staging = staging_dir(settings.out, epoch)
    export_model(trainer.model, trainer.tokenizer, staging / "model")
    trainer.history["train"].append(figures)
    if settings.dev:
        dev = evaluate_dev(
            staging / "model",
            settings.dev,
            staging / "dev",
            data_dir=settings.data_dir,
            limit=settings.dev_limit,
            seed=settings.seed,
            loaded=loaded,
        )
        trainer.history["dev"].append({"epoch": epoch, **dev})
    state = {"epoch": epoch, "settings": settings.fingerprint(), "history": trainer.history}
    save_checkpoint(
        trainer.torch,
        settings.out,
        epoch,
        trainable_state(trainer.model),
        trainer.optimizer,
        state,
    )


def choose(history: dict[str, list[dict[str, Any]]], epochs: int) -> int:
    """The chosen epoch: best dev TC (earliest of equals), else the last."""
    dev = [d for d in history["dev"] if d["epoch"] <= epochs and d.get("tc") is not None]
    if not dev:
        return epochs
    return max(dev, key=lambda d: (d["tc"], -d["epoch"]))["epoch"]


__all__ = ["METHODS", "TrainSettings", "Trainer", "build_trainer", "choose", "run_epoch"]

"""Epoch checkpoints that survive a kill: ``DIR/checkpoints/epoch-N/``.

Each holds ``trainable.safetensors`` (the trained parameters), ``optimizer.pt`` (AdamW's
state), ``model/`` (the exported ``transformers`` folder the dev set is run on) and
``state.json`` (the run's settings, the figures so far). A checkpoint is written to
``epoch-N.tmp`` and renamed when complete, so a run killed at any moment leaves only whole
checkpoints; :func:`last_checkpoint` finds the newest, and training resumes after it (each
epoch's shuffling and coin flips are seeded by the run seed and the epoch number, so a
resumed run computes what an uninterrupted one does).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from flaneur.errors import FlaneurError

STATE = "state.json"


def checkpoint_dir(out: Path, epoch: int) -> Path:
    """The folder of epoch ``epoch``'s checkpoint."""
    return out / "checkpoints" / f"epoch-{epoch}"


def last_checkpoint(out: Path) -> tuple[int, dict[str, Any]] | None:
    """``(epoch, state)`` of the newest complete checkpoint in ``out``, or ``None``."""
    found = []
    for folder in (out / "checkpoints").glob("epoch-*"):
        tail = folder.name.removeprefix("epoch-")
        if tail.isdigit() and (folder / STATE).is_file():
            found.append(int(tail))
    if not found:
        return None
    epoch = max(found)
    state = json.loads((checkpoint_dir(out, epoch) / STATE).read_text(encoding="utf-8"))
    return epoch, state


def check_same_run(state: dict[str, Any], settings: dict[str, Any], out: Path) -> None:
    """Refuse to resume a checkpoint made with other settings."""
    old = state.get("settings", {})
    differ = sorted(k for k in settings if old.get(k) != settings[k])
    if differ:
        raise FlaneurError(
            f"{out} holds a training run with other settings ({', '.join(differ)}): "
            "give another --out, or remove it"
        )


def save_checkpoint(
    torch: Any, out: Path, epoch: int, trained: dict[str, Any], optimizer: Any, state: dict
) -> Path:
    """Write epoch ``epoch``'s checkpoint atomically (see the module docstring); the caller
    writes ``model/`` into the returned temporary folder first."""
    # lazy: the train extra
    from safetensors.torch import save_file

    final = checkpoint_dir(out, epoch)
    tmp = final.with_name(final.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in trained.items()}, str(tmp / "trainable.safetensors"))
    torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    (tmp / STATE).write_text(json.dumps(state, indent=1), encoding="utf-8")
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)
    return final


def staging_dir(out: Path, epoch: int) -> Path:
    """The temporary folder of epoch ``epoch``'s checkpoint (emptied)."""
    tmp = checkpoint_dir(out, epoch).with_name(f"epoch-{epoch}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    return tmp


def load_checkpoint(torch: Any, out: Path, epoch: int, model: Any, optimizer: Any) -> None:
    """Put epoch ``epoch``'s trained parameters and optimizer state back."""
    # lazy: the train extra
    from safetensors.torch import load_file

    folder = checkpoint_dir(out, epoch)
    trained = load_file(str(folder / "trainable.safetensors"))
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    if set(trained) != names:
        raise FlaneurError(f"checkpoint {folder} does not match the model being trained")
    model.load_state_dict(trained, strict=False)
    optimizer.load_state_dict(torch.load(folder / "optimizer.pt", weights_only=True))


__all__ = [
    "check_same_run",
    "checkpoint_dir",
    "last_checkpoint",
    "load_checkpoint",
    "save_checkpoint",
    "staging_dir",
]

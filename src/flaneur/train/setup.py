"""The model to train: the memory check, loading, LoRA adapters, the exported folder.

:func:`check_memory` counts the model's parameters on PyTorch's ``meta`` device (no weights
read) and compares what training needs with the memory available, so a model too large for
this machine stops with one line instead of swapping or being killed. The estimate, in
float32: weights 4 bytes per parameter, plus gradients and AdamW's two moments (12 more per
trained parameter; LoRA trains well under 1 %), plus a quarter for activations and the copy
that exporting a checkpoint makes.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from flaneur.errors import FlaneurError
from flaneur.models.hf import import_torch_transformers, load_causal_lm, resolve_model_path

BYTES_WEIGHTS = 4
BYTES_TRAINED = 12
OVERHEAD = 1.25
LORA_TRAINED_SHARE = 0.01


class NotEnoughMemory(FlaneurError):
    """The model does not fit in this machine's memory for the training asked for."""


def import_peft() -> Any:
    """Import ``peft`` or explain how to install it."""
    try:
        # optional extra flaneur[train]
        import peft
    except ImportError:
        raise FlaneurError("--lora needs peft: pip install 'flaneur[train]'") from None
    return peft


def available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``; ``None`` when unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def count_parameters(path: str | Path) -> int:
    """Parameters of the model at ``path``, counted without reading its weights."""
    torch, transformers = import_torch_transformers()
    where = resolve_model_path(str(path))
    folder, extra = (where.parent, {"gguf_file": where.name}) if where.is_file() else (where, {})
    config = transformers.AutoConfig.from_pretrained(str(folder), local_files_only=True, **extra)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    return int(sum(p.numel() for p in model.parameters()))


def needed_bytes(parameters: int, *, lora: bool) -> int:
    """Estimated bytes to train a model of ``parameters`` (see the module docstring)."""
    trained = parameters * LORA_TRAINED_SHARE if lora else parameters
    return int(OVERHEAD * (BYTES_WEIGHTS * parameters + BYTES_TRAINED * trained))


def check_memory(path: str | Path, *, lora: bool, available: int | None = None) -> int:
    """Raise :class:`NotEnoughMemory` when training the model would not fit; the count of
    its parameters otherwise."""
    parameters = count_parameters(path)
    need = needed_bytes(parameters, lora=lora)
    have = available_memory() if available is None else available
    if have is not None and need > have:
        how = "with LoRA" if lora else "fully (--full)"
        hint = "a smaller model" if lora else "--lora, or a smaller model"
        raise NotEnoughMemory(
            f"model {path} ({parameters / 1e6:.1f} M parameters) needs about "
            f"{need / 2**30:.2f} GB to train {how}, but {have / 2**30:.2f} GB of memory are "
            f"available: use {hint}"
        )
    return parameters


def trainable_model(path: str | Path, *, lora: bool, rank: int = 8) -> tuple[Any, Any]:
    """``(model, tokenizer)`` ready to train: LoRA adapters on the attention projections
    (``peft``'s defaults for the architecture), or every weight with ``lora=False``."""
    model, tokenizer = load_causal_lm(path)
    if lora:
        peft = import_peft()
        config = peft.LoraConfig(
            r=rank, lora_alpha=2 * rank, lora_dropout=0.0, bias="none", task_type="CAUSAL_LM"
        )
        model = peft.get_peft_model(model, config)
    model.train()
    return model, tokenizer


def trainable_state(model: Any) -> dict[str, Any]:
    """The trained parameters (LoRA's adapters, or all), detached copies by name."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def forget_gguf(model: Any) -> Any:
    """``model`` without the marks of a GGUF file it was loaded from: its weights are already
    de-quantized to float32, but transformers keeps GGUF as its quantization and refuses
    ``save_pretrained`` ("quantized with gguf and is not serializable")."""
    quant = getattr(model.config, "quantization_config", None)
    method = (
        quant.get("quant_method")
        if isinstance(quant, dict)
        else getattr(quant, "quant_method", None)
    )
    if str(method).lower().endswith("gguf"):
        model.hf_quantizer = None
        del model.config.quantization_config
    return model


def export_model(model: Any, tokenizer: Any, folder: Path) -> None:
    """Save a plain ``transformers`` folder (LoRA merged into a copy of the weights; a model
    loaded from GGUF saved as the float32 weights it holds)."""
    plain = model
    if hasattr(model, "merge_and_unload"):
        plain = copy.deepcopy(model).merge_and_unload()
    folder.mkdir(parents=True, exist_ok=True)
    forget_gguf(plain).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))


__all__ = [
    "NotEnoughMemory",
    "available_memory",
    "check_memory",
    "count_parameters",
    "export_model",
    "forget_gguf",
    "needed_bytes",
    "trainable_model",
    "trainable_state",
]

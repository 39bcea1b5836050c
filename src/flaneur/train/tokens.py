"""Examples as token ids, with the loss on the action words only.

The prompt is rendered by :func:`flaneur.models.hf.render_chat` (the function the ``hf:``
backend renders with at inference) and tokenized on its own; the target word is tokenized
after it and is the only part with labels (every prompt position is ``-100``), so the loss
is the cross-entropy of the action word's tokens given the very text the agent sends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flaneur.models.hf import render_chat
from flaneur.train.examples import Example

IGNORE = -100
"""The label of positions without loss (PyTorch's ``ignore_index``)."""


def encode(tokenizer: Any, example: Example) -> tuple[list[int], list[int]]:
    """``(input ids, labels)`` of one example; labels are ``-100`` on the prompt."""
    messages = [
        {"role": "system", "content": example.system},
        {"role": "user", "content": example.user},
    ]
    prompt = tokenizer(render_chat(tokenizer, messages), add_special_tokens=False)["input_ids"]
    target = tokenizer(example.target, add_special_tokens=False)["input_ids"]
    return list(prompt) + list(target), [IGNORE] * len(prompt) + list(target)


def collate(torch: Any, encoded: Sequence[tuple[list[int], list[int]]], pad_id: int) -> dict:
    """Right-padded tensors ``input_ids``, ``attention_mask`` and ``labels``."""
    width = max(len(ids) for ids, _ in encoded)
    ids = [a + [pad_id] * (width - len(a)) for a, _ in encoded]
    labels = [b + [IGNORE] * (width - len(b)) for _, b in encoded]
    mask = [[1] * len(a) + [0] * (width - len(a)) for a, _ in encoded]
    return {
        "input_ids": torch.tensor(ids, dtype=torch.long),
        "attention_mask": torch.tensor(mask, dtype=torch.long),
        "labels": torch.tensor(labels, dtype=torch.long),
    }


def summed_loss(torch: Any, model: Any, batch: dict) -> tuple[Any, int]:
    """Summed cross-entropy of the labelled tokens of ``batch`` and their count."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    labels = batch["labels"][:, 1:]
    flat = logits[:, :-1].reshape(-1, logits.shape[-1]).float()
    loss = torch.nn.functional.cross_entropy(
        flat, labels.reshape(-1), ignore_index=IGNORE, reduction="sum"
    )
    return loss, int((labels != IGNORE).sum())


def action_loss(
    torch: Any, model: Any, tokenizer: Any, examples: Sequence[Example], *, batch_size: int = 8
) -> float:
    """Mean cross-entropy per action-word token of ``examples`` (no gradients)."""
    pad = pad_id(tokenizer)
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(examples), batch_size):
            chunk = [encode(tokenizer, e) for e in examples[start : start + batch_size]]
            loss, n = summed_loss(torch, model, collate(torch, chunk, pad))
            total, count = total + float(loss), count + n
    return total / max(count, 1)


def pad_id(tokenizer: Any) -> int:
    """The tokenizer's padding id (its EOS, else 0, when it has none)."""
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if isinstance(value, int):
            return value
    return 0


__all__ = ["IGNORE", "action_loss", "collate", "encode", "pad_id", "summed_loss"]

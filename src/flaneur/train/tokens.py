"""Examples as token ids: the prompt exactly as the ``hf:`` backend renders it, and the
target word.

The prompt is rendered by :func:`flaneur.models.hf.render_chat` (the function the ``hf:``
backend renders with at inference) and tokenized on its own; the target word is tokenized
after it. Only the target's tokens carry the loss (:mod:`flaneur.train.packing`), so the
loss is the cross-entropy of the action word's tokens given the very text the agent sends.
"""

from __future__ import annotations

from typing import Any

from flaneur.models.hf import render_chat
from flaneur.train.examples import Example

IGNORE = -100
"""The target of positions without loss (PyTorch's ``ignore_index``)."""


def encode(tokenizer: Any, example: Example) -> tuple[list[int], list[int]]:
    """``(prompt ids, target ids)`` of one example."""
    messages = [
        {"role": "system", "content": example.system},
        {"role": "user", "content": example.user},
    ]
    prompt = tokenizer(render_chat(tokenizer, messages), add_special_tokens=False)["input_ids"]
    target = tokenizer(example.target, add_special_tokens=False)["input_ids"]
    return list(prompt), list(target)


__all__ = ["IGNORE", "encode"]

"""The decisions of one episode as one sequence: their shared prompt text computed once.

An episode's examples are its decisions, and each decision's prompt is the previous one with
one more step of the walk, so the examples share most of their tokens. Run one by one, a
40-step episode computes its first few hundred tokens 40 times. Packed, the longest prompt is
the *trunk*, computed once; every example becomes a short *branch* after it - the tokens of its
prompt after the part it shares with the trunk, then its target word - that attends to the
trunk up to that shared part and to itself, at the positions it has alone
(:func:`pack_examples` builds the token ids, positions, per-position targets and the 4-D
attention mask; :func:`packed_loss` runs it). Each target token is predicted from the same
tokens at the same positions as in its own example, so the loss equals the examples' summed
loss up to float rounding (tested against the examples run one by one).

A branch always keeps its prompt's last token, so no two examples read their first target
token from one shared position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flaneur.models.hf_prefix import common_prefix
from flaneur.train.examples import Example
from flaneur.train.tokens import IGNORE, encode


@dataclass(frozen=True)
class Packed:
    """One packed sequence: ``ids``, their ``positions``, the token each position must
    predict (``targets``, :data:`~flaneur.train.tokens.IGNORE` where none) and ``allowed``
    (``allowed[i, j]``: position ``i`` attends to ``j``)."""

    ids: list[int]
    positions: list[int]
    targets: list[int]
    allowed: np.ndarray

    @property
    def labelled(self) -> int:
        """Number of target tokens."""
        return sum(1 for t in self.targets if t != IGNORE)


def pack_examples(encoded: Sequence[tuple[list[int], list[int]]]) -> Packed:
    """Pack ``(prompt ids, target ids)`` pairs (see the module docstring)."""
    if not encoded:
        raise ValueError("nothing to pack")
    longest = max((p for p, _ in encoded), key=len)
    shared = [min(common_prefix(p, longest), len(p) - 1) for p, _ in encoded]
    trunk = longest[: max(shared)]
    ids, positions = list(trunk), list(range(len(trunk)))
    targets = [IGNORE] * len(trunk)
    spans: list[tuple[int, int, int]] = []  # (start, end, shared) of each branch
    for (prompt, target), n in zip(encoded, shared, strict=True):
        start = len(ids)
        branch = prompt[n:] + target[:-1]
        ids += branch
        positions += range(n, n + len(branch))
        targets += [IGNORE] * (len(prompt) - n - 1) + list(target)
        spans.append((start, len(ids), n))
    allowed = np.zeros((len(ids), len(ids)), dtype=bool)
    allowed[: len(trunk), : len(trunk)] = np.tril(np.ones((len(trunk),) * 2, dtype=bool))
    for start, end, n in spans:
        allowed[start:end, :n] = True
        allowed[start:end, start:end] = np.tril(np.ones((end - start,) * 2, dtype=bool))
    return Packed(ids, positions, targets, allowed)


def packed_loss(torch: Any, model: Any, packed: Packed) -> tuple[Any, int]:
    """Summed cross-entropy of the target tokens of ``packed`` and their count."""
    ids = torch.tensor([packed.ids], dtype=torch.long)
    positions = torch.tensor([packed.positions], dtype=torch.long)
    allowed = torch.from_numpy(packed.allowed)
    dtype = next(model.parameters()).dtype
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)
    logits = model(input_ids=ids, position_ids=positions, attention_mask=mask[None, None]).logits
    targets = torch.tensor(packed.targets, dtype=torch.long)
    loss = torch.nn.functional.cross_entropy(
        logits[0].float(), targets, ignore_index=IGNORE, reduction="sum"
    )
    return loss, packed.labelled


def by_episode(tokenizer: Any, examples: Sequence[Example]) -> list[Packed]:
    """One packed sequence per episode of ``examples`` (in first-seen order)."""
    groups: dict[str, list[tuple[list[int], list[int]]]] = {}
    for example in examples:
        groups.setdefault(example.episode_id, []).append(encode(tokenizer, example))
    return [pack_examples(encoded) for encoded in groups.values()]


def action_loss(torch: Any, model: Any, tokenizer: Any, examples: Sequence[Example]) -> float:
    """Mean cross-entropy per action-word token of ``examples`` (no gradients)."""
    total, count = 0.0, 0
    with torch.no_grad():
        for packed in by_episode(tokenizer, examples):
            loss, n = packed_loss(torch, model, packed)
            total, count = total + float(loss), count + n
    return total / max(count, 1)


__all__ = ["Packed", "action_loss", "by_episode", "pack_examples", "packed_loss"]

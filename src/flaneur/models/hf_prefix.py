"""Key-value caches of recent prompts, so a prompt that extends one is not computed again.

An agent's prompts grow step by step: VELMA's next prompt is its last one with one more
observation and action, so most of its tokens were already run through the model. A
:class:`PrefixCaches` keeps the key-value cache of the last few token sequences the ``hf:``
backend ran (prompt and reply); a new prompt takes the one sharing its longest token prefix,
cut back to that prefix, and only the remaining tokens are computed. The logits equal a full
computation up to float rounding (the same tokens at the same positions attend to the same
keys), so a greedy reply is the same except where two tokens tie to within that rounding.

Only caches whose layers can be cut back are kept (full-attention layers; a model with
sliding-window or recurrent layers is computed from scratch every time). The caches are only
valid for the weights that made them: :meth:`PrefixCaches.clear` after any weight update.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

DEFAULT_SLOTS = 4
"""Token sequences kept (a few episodes run at once each keep theirs)."""


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def croppable(cache: Any) -> bool:
    """Whether every layer of ``cache`` can be cut back to a shorter prefix exactly."""
    layers = getattr(cache, "layers", None)
    if not layers or not hasattr(cache, "crop") or not hasattr(cache, "get_seq_length"):
        return False
    return all(type(layer).__name__ == "DynamicLayer" for layer in layers)


class PrefixCaches:
    """The key-value caches of the last ``slots`` token sequences (see the module docstring).

    Parameters
    ----------
    slots
        How many sequences to keep; 0 keeps none (every prompt computed in full).
    """

    def __init__(self, slots: int = DEFAULT_SLOTS) -> None:
        self.slots = max(0, int(slots))
        self._kept: list[tuple[list[int], Any]] = []
        self.reused_tokens = 0
        self.computed_tokens = 0

    def take(self, ids: Sequence[int]) -> tuple[int, Any]:
        """``(n, cache)``: a cache of ``ids[:n]`` taken out of the kept ones (``n`` at most
        ``len(ids) - 1``, so at least one token is computed), or ``(0, None)``."""
        best, best_n = -1, 0
        for k, (kept, _) in enumerate(self._kept):
            n = min(common_prefix(kept, ids), len(ids) - 1)
            if n > best_n:
                best, best_n = k, n
        if best < 0:
            self.computed_tokens += len(ids)
            return 0, None
        kept, cache = self._kept.pop(best)
        surplus = int(cache.get_seq_length()) - best_n
        if surplus > 0:
            cache.crop(-surplus)
        self.reused_tokens += best_n
        self.computed_tokens += len(ids) - best_n
        return best_n, cache

    def put(self, ids: Sequence[int], cache: Any) -> None:
        """Keep ``cache`` as the keys and values of ``ids`` (the newest; the oldest goes)."""
        if self.slots == 0 or not croppable(cache):
            return
        if int(cache.get_seq_length()) != len(ids):
            return  # not the cache of these tokens: never reuse it
        self._kept.append((list(ids), cache))
        del self._kept[: -self.slots]

    def clear(self) -> None:
        """Forget every kept cache (call after the weights change)."""
        self._kept.clear()


__all__ = ["DEFAULT_SLOTS", "PrefixCaches", "common_prefix", "croppable"]

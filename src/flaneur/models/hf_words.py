"""The log-likelihood of whole words as the reply to a prompt (``score_words``).

VELMA's actions are words a tokenizer may split (SmolLM2 reads ``TURN_AROUND`` as several
tokens), so the top-k of the first generated position cannot rank them fairly. The ``hf:``
backend runs the model in process and can score each word exactly: the summed
log-probability of the word's tokens after the prompt - the quantity
``flaneur train velma`` trains (its loss is the cross-entropy of the target word's tokens
after the same rendered prompt). The prompt is computed once (reusing a kept key-value cache,
:mod:`flaneur.models.hf_prefix`); each word then costs its own few tokens, the cache cut back
after each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flaneur.models.hf_prefix import PrefixCaches, croppable


def word_logprobs(
    torch: Any,
    model: Any,
    prompt: Sequence[int],
    words: Sequence[Sequence[int]],
    prefixes: PrefixCaches,
    cache_kwargs: Any,
    cache_of: Any,
) -> list[float]:
    """Summed log-probability of each word's token ids after ``prompt``.

    ``cache_kwargs(model, cache)`` and ``cache_of(output)`` adapt to the transformers
    version (:mod:`flaneur.models.hf`). Without a croppable cache every word is computed
    with its prompt in full.
    """
    ids = torch.tensor([list(prompt)], dtype=torch.long)
    with torch.no_grad():
        reused, kept = prefixes.take(prompt)
        extra = {} if kept is None else cache_kwargs(model, kept)
        out = model(input_ids=ids[:, reused:], use_cache=True, **extra)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        cache = cache_of(out)
        scores = []
        for word in words:
            total = float(first[word[0]])
            if len(word) > 1:
                total += _rest(torch, model, prompt, word, cache, cache_kwargs)
            scores.append(total)
        prefixes.put(prompt, cache)
    return scores


def _rest(
    torch: Any, model: Any, prompt: Sequence[int], word: Sequence[int], cache: Any, kwargs: Any
) -> float:
    """Log-probability of ``word[1:]`` after ``prompt + word[:1]``."""
    if croppable(cache):
        step = torch.tensor([list(word[:-1])], dtype=torch.long)
        logits = model(input_ids=step, use_cache=True, **kwargs(model, cache)).logits[0]
        cache.crop(-len(step[0]))
    else:
        full = torch.tensor([[*prompt, *word[:-1]]], dtype=torch.long)
        logits = model(input_ids=full).logits[0, len(prompt) :]
    logp = torch.log_softmax(logits.float(), dim=-1)
    return float(sum(logp[k, t] for k, t in enumerate(word[1:])))


__all__ = ["word_logprobs"]

"""Prompts that extend an earlier one reuse its keys and values (``flaneur.models.hf_prefix``):
the same replies and log-probabilities as computing every prompt in full, fewer tokens
computed, and nothing reused after the weights change."""

from __future__ import annotations

import pytest

from flaneur.models.hf import HFModel, load_causal_lm
from flaneur.models.hf_prefix import PrefixCaches, common_prefix
from harness.train_extra import needs_train_extra


def test_common_prefix_by_hand():
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([7], [8]) == 0


def _prompts() -> list[list[dict[str, str]]]:
    """A growing navigation text, as VELMA's prompts grow."""
    text, prompts = "Go east . turn left at the light .", []
    for k in range(5):
        text += f" {k + 1} . FORWARD"
        prompts.append([{"role": "system", "content": "Act ."}, {"role": "user", "content": text}])
    return prompts


def _replies(model: HFModel) -> list[tuple[str, list[tuple[str, list[tuple[str, float]]]]]]:
    out = []
    for messages in _prompts():
        reply = model._run(messages, {"max_tokens": 4, "logprobs": True, "top_logprobs": 5})
        tops = [(p.token, [(t, round(v, 4)) for t, v in p.top]) for p in reply.logprobs or ()]
        out.append((reply.text, tops))
    return out


@needs_train_extra
def test_reused_prefixes_give_the_full_computations_replies(tiny_model):
    model, tokenizer = load_causal_lm(tiny_model)
    full = HFModel("tiny", model=model, tokenizer=tokenizer, prefix_slots=0)
    reusing = HFModel("tiny", model=model, tokenizer=tokenizer)
    assert _replies(reusing) == _replies(full)
    assert full.prefixes.reused_tokens == 0
    stats = reusing.prefixes
    assert stats.reused_tokens > stats.computed_tokens  # most of each prompt came from before


@needs_train_extra
def test_a_weight_change_forgets_the_kept_caches(tiny_model):
    import torch

    model, tokenizer = load_causal_lm(tiny_model)
    reusing = HFModel("tiny", model=model, tokenizer=tokenizer)
    messages = _prompts()[0]
    reusing._run(messages, {"max_tokens": 2})
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p, generator=torch.Generator().manual_seed(1)))
    reusing.forget_prefixes()
    fresh = HFModel("tiny", model=model, tokenizer=tokenizer, prefix_slots=0)
    after = reusing._run(_prompts()[1], {"max_tokens": 3, "logprobs": True, "top_logprobs": 3})
    want = fresh._run(_prompts()[1], {"max_tokens": 3, "logprobs": True, "top_logprobs": 3})
    assert after.text == want.text
    assert [p.logprob for p in after.logprobs or ()] == pytest.approx(
        [p.logprob for p in want.logprobs or ()], abs=1e-4
    )


@needs_train_extra
def test_the_slots_keep_the_newest_sequences():
    import torch
    from transformers import DynamicCache

    caches = PrefixCaches(slots=2)
    for k in range(3):
        cache = DynamicCache()
        cache.update(torch.zeros(1, 1, 3, 2), torch.zeros(1, 1, 3, 2), 0)
        caches.put([k, 1, 2], cache)
    assert caches.take([0, 1, 2, 3]) == (0, None)  # the oldest went
    n, cache = caches.take([2, 1, 9])
    assert n == 2 and cache.get_seq_length() == 2  # cut back to the shared prefix

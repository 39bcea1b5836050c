"""Whole words scored by the ``hf:`` backend (``flaneur.models.hf_words``): each word's summed
log-probability after the prompt, equal to computing prompt + word in full, and VELMA's
action choice reading them."""

from __future__ import annotations

import asyncio

import pytest

from flaneur.models import score_actions, system, user
from flaneur.models.hf import HFModel, load_causal_lm, render_chat
from harness.train_extra import needs_train_extra

MESSAGES = [{"role": "system", "content": "Act ."}, {"role": "user", "content": "Go east ."}]
WORDS = ["FORWARD", "LEFT", "STOP LEFT RIGHT"]  # the last is three tokens of the tiny vocabulary


def _by_hand(model, tokenizer, words):
    import torch

    prompt = tokenizer(render_chat(tokenizer, MESSAGES), add_special_tokens=False)["input_ids"]
    out = []
    for word in words:
        ids = tokenizer(word, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([prompt + ids])).logits[0]
        logp = torch.log_softmax(logits.float(), dim=-1)
        out.append(sum(float(logp[len(prompt) - 1 + k, t]) for k, t in enumerate(ids)))
    return out


@needs_train_extra
@pytest.mark.parametrize("slots", [4, 0])
def test_scored_words_equal_the_full_computation(tiny_model, slots):
    model, tokenizer = load_causal_lm(tiny_model)
    assert len(tokenizer("STOP LEFT RIGHT", add_special_tokens=False)["input_ids"]) == 3
    hf = HFModel("tiny", model=model, tokenizer=tokenizer, prefix_slots=slots)
    reply = hf._run(MESSAGES, {"score_words": WORDS})
    got = dict(reply.logprobs[0].top)
    want = dict(zip(WORDS, _by_hand(model, tokenizer, WORDS), strict=True))
    assert got == pytest.approx(want, abs=1e-4)
    assert reply.text == max(want, key=want.get) and reply.usage.completion_tokens == 0
    again = hf._run(MESSAGES, {"score_words": WORDS})  # the kept prompt cache, cut back right
    assert dict(again.logprobs[0].top) == pytest.approx(want, abs=1e-4)


@needs_train_extra
def test_velmas_choice_reads_the_whole_words(tiny_model):
    model, tokenizer = load_causal_lm(tiny_model)
    hf = HFModel("tiny", model=model, tokenizer=tokenizer)
    actions = ("FORWARD", "LEFT", "RIGHT", "TURN_AROUND", "STOP")
    score, reply = asyncio.run(score_actions(hf, [system("Act ."), user("Go east .")], actions))
    assert score.method == "logprobs" and set(score.scores) == set(actions)
    assert score.choice == max(score.scores, key=score.scores.get) == reply.text

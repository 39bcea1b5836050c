"""An episode's decisions packed into one sequence (``flaneur.train.packing``): the layout
pinned by hand, and the loss equal to the decisions run one by one."""

from __future__ import annotations

import numpy as np
import pytest

from flaneur.env import toy_city, toy_episodes
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.train.packing import by_episode, pack_examples, packed_loss
from flaneur.train.tokens import IGNORE, encode
from harness.train_extra import needs_train_extra

X = IGNORE


def test_the_layout_by_hand():
    # prompts [1 2 3] and [1 2 3 4 5] share 1 2 3; targets [7] and [8 9]
    packed = pack_examples([([1, 2, 3], [7]), ([1, 2, 3, 4, 5], [8, 9])])
    # trunk: the longest prompt up to the most any branch shares (4 tokens, as the second
    # branch keeps its last prompt token); the first branch keeps 3, the second 5
    assert packed.ids == [1, 2, 3, 4, 3, 5, 8]
    assert packed.positions == [0, 1, 2, 3, 2, 4, 5]
    assert packed.targets == [X, X, X, X, 7, 8, 9]
    assert packed.labelled == 3
    want = np.array(
        [
            [1, 0, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0, 0],
            [1, 1, 1, 0, 0, 0, 0],
            [1, 1, 1, 1, 0, 0, 0],
            [1, 1, 0, 0, 1, 0, 0],  # first branch: trunk[:2] and itself
            [1, 1, 1, 1, 0, 1, 0],  # second branch: trunk[:4] and itself
            [1, 1, 1, 1, 0, 1, 1],
        ],
        dtype=bool,
    )
    assert (packed.allowed == want).all()


def test_prompts_sharing_nothing_still_pack():
    packed = pack_examples([([1, 2], [5]), ([3, 4], [6])])
    assert packed.ids == [1, 2, 3, 4]  # trunk [1]; branches [2] and [3 4]
    assert packed.positions == [0, 1, 0, 1]
    assert packed.targets == [X, 5, X, 6]
    want = [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]]
    assert (packed.allowed == np.array(want, dtype=bool)).all()


def _one_by_one(torch, model, tokenizer, examples) -> float:
    total = 0.0
    for example in examples:
        prompt, target = encode(tokenizer, example)
        ids = torch.tensor([prompt + target])
        logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1]
        total += float(
            torch.nn.functional.cross_entropy(logits, torch.tensor(target), reduction="sum")
        )
    return total


@needs_train_extra
def test_the_packed_loss_equals_the_decisions_one_by_one(tiny_model):
    import torch

    from flaneur.models.hf import load_causal_lm
    from flaneur.train.examples import gold_examples

    city = toy_city()
    examples = [
        e for ep in toy_episodes()[:2] for e in gold_examples(TurnsScheme(city.graph), city, ep)
    ]
    model, tokenizer = load_causal_lm(tiny_model)
    packed = by_episode(tokenizer, examples)
    assert len(packed) == 2  # one sequence per episode
    assert sum(len(p.ids) for p in packed) < sum(
        len(a) + len(b) for a, b in (encode(tokenizer, e) for e in examples)
    )
    with torch.no_grad():
        total = sum(float(packed_loss(torch, model, p)[0]) for p in packed)
        assert total == pytest.approx(_one_by_one(torch, model, tokenizer, examples), rel=1e-5)

"""Usage accounting per episode and per run, prices and the token budget."""

from __future__ import annotations

import asyncio
import json

import pytest

from flaneur.errors import FlaneurError
from flaneur.models import (
    BudgetExceeded,
    ModelConfigError,
    ModelError,
    UsageTracker,
    current_episode,
    load_price_table,
    user,
)


async def test_episodes_and_run_counters(fake, make, cache):
    usage = UsageTracker(prices={"fake-model": (1.0, 2.0)})
    model = make(usage=usage, cache=cache)

    async def episode(name: str, n: int) -> None:
        with usage.episode(name):
            assert current_episode() == name
            for i in range(n):
                await model.complete([user(f"{name} step {i}")])
                await asyncio.sleep(0)

    await asyncio.gather(episode("e1", 3), episode("e2", 2))
    assert current_episode() is None
    with usage.episode("e3"):
        await model.complete([user("e1 step 0")])  # cached: same request as e1's first
    run, eps = usage.run, usage.episodes
    assert (run.calls, run.cached_calls) == (5, 1)
    assert (eps["e1"].calls, eps["e2"].calls, eps["e3"].calls, eps["e3"].cached_calls) == (
        3,
        2,
        0,
        1,
    )
    assert run.prompt_tokens == sum(e.prompt_tokens for e in eps.values())
    assert run.completion_tokens == 5 * 4  # "e1 step 0" echoes as e|1| step| 0
    expected_cost = (run.prompt_tokens * 1.0 + run.completion_tokens * 2.0) / 1e6
    assert run.cost_usd == pytest.approx(expected_cost)
    summary = usage.summary()
    assert json.dumps(summary) and summary["run"]["total_tokens"] == run.total_tokens


async def test_unpriced_model(fake, make):
    usage = UsageTracker(prices={"other": (1, 1)})
    await make(usage=usage).complete([user("x")])
    assert usage.run.cost_usd == 0 and usage.run.unpriced_calls == 1


async def test_budget_stops_the_run_cleanly(fake, make):
    usage = UsageTracker(token_budget=20)
    model = make(usage=usage)
    done = 0
    with pytest.raises(BudgetExceeded) as info:
        for _ in range(100):
            await model.complete([user("a few words here")])  # 4 + 4 tokens per call
            done += 1
    assert done == 3 and fake.chat_count == 3  # nothing sent once the budget is spent
    err = info.value
    assert isinstance(err, FlaneurError) and not isinstance(err, ModelError)
    assert err.used == 24 and err.budget == 20 and "budget" in str(err)
    assert usage.exhausted and usage.remaining_tokens == 0


def test_price_table_file(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"gpt-4o-mini": [0.15, 0.6]}))
    assert load_price_table(path) == {"gpt-4o-mini": (0.15, 0.6)}
    path.write_text(json.dumps({"x": "cheap"}))
    with pytest.raises(ModelConfigError, match="usd_per_1M"):
        load_price_table(path)
    with pytest.raises(ModelConfigError, match="not found"):
        load_price_table(tmp_path / "none.json")
    with pytest.raises(ModelConfigError):
        UsageTracker(token_budget=0)


def test_price_lookup_by_bare_name():
    from flaneur.models.usage import price_for

    assert price_for({"gpt-4o-mini": (1, 2)}, "openai/gpt-4o-mini") == (1, 2)
    assert price_for({"openai/gpt-4o-mini": (3, 4)}, "openai/gpt-4o-mini") == (3, 4)
    assert price_for(None, "x") is None

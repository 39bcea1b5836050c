"""Tokens, calls and money spent, per episode and per run, with an optional token budget.

A runner makes one :class:`UsageTracker` per run and hands it to every model it builds.
Calls are attributed to the episode named by the innermost ``with tracker.episode(id):``
block of the calling task (a context variable, so concurrent episodes in separate asyncio
tasks are kept apart).  When the run's prompt + completion tokens reach ``token_budget``,
the next call raises :class:`~flaneur.models.errors.BudgetExceeded` before sending anything.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from flaneur.models.completion import Completion
from flaneur.models.errors import BudgetExceeded, ModelConfigError

PriceTable = Mapping[str, tuple[float, float]]
"""``{model: (usd_per_1M_input_tokens, usd_per_1M_output_tokens)}``."""

_current_episode: ContextVar[str | None] = ContextVar("flaneur_episode", default=None)


def current_episode() -> str | None:
    """The episode id set by the innermost :meth:`UsageTracker.episode` block, if any."""
    return _current_episode.get()


@dataclass(slots=True)
class UsageCounters:
    """Counters of one episode or of a whole run.

    ``prompt_tokens``, ``completion_tokens`` and ``cost_usd`` count only calls that reached
    a backend; cache hits are counted in ``cached_calls`` and cost nothing.
    """

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, with ``total_tokens`` added."""
        out = asdict(self)
        out["total_tokens"] = self.total_tokens
        out["cost_usd"] = round(self.cost_usd, 6)
        return out


def price_for(prices: PriceTable | None, model: str) -> tuple[float, float] | None:
    """Look ``model`` up in ``prices``: exact name first, then without its provider prefix."""
    if not prices:
        return None
    if model in prices:
        return prices[model]
    bare = model.split("/", 1)[1] if "/" in model else model
    return prices.get(bare)


def load_price_table(path: str | Path) -> dict[str, tuple[float, float]]:
    """Read a JSON price table ``{"model": [usd_per_1M_in, usd_per_1M_out], ...}``.

    Raises
    ------
    ModelConfigError
        If the file is missing or not in that shape.
    """
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
        return {str(k): (float(v[0]), float(v[1])) for k, v in raw.items()}
    except FileNotFoundError:
        raise ModelConfigError(f"price table not found: {p}") from None
    except (ValueError, TypeError, IndexError, AttributeError) as err:
        raise ModelConfigError(
            f"{p}: a price table maps model names to [usd_per_1M_input, usd_per_1M_output] ({err})"
        ) from None


class UsageTracker:
    """Usage of one run, split by episode.

    Parameters
    ----------
    token_budget
        Stop the run (raise :class:`BudgetExceeded` on the next call) once this many prompt +
        completion tokens are spent; ``None`` for no limit.
    prices
        Optional price table used to report cost.
    """

    def __init__(self, *, token_budget: int | None = None, prices: PriceTable | None = None):
        if token_budget is not None and token_budget <= 0:
            raise ModelConfigError(f"token budget must be positive, not {token_budget}")
        self.token_budget = token_budget
        self.prices = dict(prices) if prices else {}
        self.run = UsageCounters()
        self.episodes: dict[str, UsageCounters] = {}
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def episode(self, episode_id: str) -> Iterator[UsageCounters]:
        """Attribute the calls made inside the block (in this task) to ``episode_id``."""
        with self._lock:
            counters = self.episodes.setdefault(str(episode_id), UsageCounters())
        token = _current_episode.set(str(episode_id))
        try:
            yield counters
        finally:
            _current_episode.reset(token)

    def _targets(self) -> list[UsageCounters]:
        ep = _current_episode.get()
        if ep is None:
            return [self.run]
        return [self.run, self.episodes.setdefault(ep, UsageCounters())]

    @property
    def exhausted(self) -> bool:
        """True once the run has spent its token budget."""
        return self.token_budget is not None and self.run.total_tokens >= self.token_budget

    @property
    def remaining_tokens(self) -> int | None:
        """Tokens left in the budget (``None`` without a budget)."""
        if self.token_budget is None:
            return None
        return max(0, self.token_budget - self.run.total_tokens)

    def check_budget(self) -> None:
        """Raise :class:`BudgetExceeded` if the budget is spent."""
        if self.exhausted:
            raise BudgetExceeded(self.run.total_tokens, self.token_budget or 0)

    def record(self, completion: Completion, model: str) -> None:
        """Count one finished call (a cache hit if ``completion.cached``)."""
        price = None if completion.cached else price_for(self.prices, model)
        with self._lock:
            for c in self._targets():
                if completion.cached:
                    c.cached_calls += 1
                    continue
                c.calls += 1
                c.retries += max(0, completion.attempts - 1)
                c.prompt_tokens += completion.usage.prompt_tokens
                c.completion_tokens += completion.usage.completion_tokens
                if price is None:
                    c.unpriced_calls += 1
                else:
                    c.cost_usd += (
                        completion.usage.prompt_tokens * price[0]
                        + completion.usage.completion_tokens * price[1]
                    ) / 1e6

    def record_failure(self, attempts: int = 1) -> None:
        """Count one call that failed for good after ``attempts`` requests."""
        with self._lock:
            for c in self._targets():
                c.failed_calls += 1
                c.retries += max(0, attempts - 1)

    def summary(self) -> dict[str, Any]:
        """``{"run": {...}, "episodes": {id: {...}}, "token_budget": n}`` as plain data."""
        with self._lock:
            return {
                "run": self.run.to_dict(),
                "episodes": {k: v.to_dict() for k, v in self.episodes.items()},
                "token_budget": self.token_budget,
            }

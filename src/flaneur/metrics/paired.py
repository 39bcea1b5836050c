"""Paired comparison of agents that ran the same episodes.

Each agent's own 95 % interval (see :mod:`flaneur.metrics.summary`) says how precisely its
success rate is known, but two overlapping intervals do not mean that the agents are equally
good: when both ran the *same* episodes, the outcomes are paired and most of the episode
difficulty cancels out. For two agents ``a`` and ``b`` on ``n`` shared episodes the 2×2 table
is

=================  ===============  ===============
                   ``b`` succeeds   ``b`` fails
=================  ===============  ===============
``a`` succeeds     ``both``         ``wins``
``a`` fails        ``losses``       ``neither``
=================  ===============  ===============

Only the discordant episodes (``wins`` and ``losses``) carry information about which agent is
better. :func:`mcnemar_exact` tests ``wins`` against ``losses``; :func:`paired_difference`
gives the difference of the success rates, ``(wins - losses) / n``, with Newcombe's interval
for paired proportions; :func:`compare_agents` does both for every pair of agents of a run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from flaneur.errors import DataError
from flaneur.metrics.summary import wilson_interval

PAIRED_FIELDS = (
    "task",
    "a",
    "b",
    "paired",
    "a_success",
    "b_success",
    "wins",
    "losses",
    "diff",
    "diff_low",
    "diff_high",
    "p_value",
)
"""Keys of each comparison returned by :func:`compare_agents`."""


def mcnemar_exact(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p-value of ``wins`` against ``losses``.

    Under the null hypothesis that both agents succeed equally often, each discordant episode
    is a win or a loss with probability 1/2, so ``wins`` is binomial with ``wins + losses``
    trials and ``p = 0.5`` (:func:`scipy.stats.binomtest`, two-sided).

    Parameters
    ----------
    wins
        Episodes where the first agent succeeds and the second fails.
    losses
        Episodes where the second agent succeeds and the first fails.

    Returns
    -------
    float
        The p-value; ``1.0`` when there is no discordant episode.

    Raises
    ------
    DataError
        If a count is negative.
    """
    from scipy.stats import binomtest  # scipy.stats takes ~0.4 s to import: only when used

    if wins < 0 or losses < 0:
        raise DataError(f"wins and losses must be counts >= 0, got {wins} and {losses}")
    discordant = int(wins) + int(losses)
    if discordant == 0:
        return 1.0
    return float(binomtest(int(wins), discordant, 0.5, alternative="two-sided").pvalue)


def paired_difference(
    a: ArrayLike, b: ArrayLike, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Difference of two paired success rates with Newcombe's hybrid score interval.

    The interval is method 10 of Newcombe (1998): with the Wilson score intervals
    ``(l1, u1)`` of ``p1 = mean(a)`` and ``(l2, u2)`` of ``p2 = mean(b)``, and the phi
    correlation of the 2×2 table ``phi = (both·neither - wins·losses) /
    sqrt((both+wins)(losses+neither)(both+losses)(wins+neither))`` (0 when a margin is 0),

    - ``low = d - sqrt((p1-l1)² - 2·phi·(p1-l1)(u2-p2) + (u2-p2)²)``
    - ``high = d + sqrt((u1-p1)² - 2·phi·(u1-p1)(p2-l2) + (p2-l2)²)``

    where ``d = p1 - p2``. It has no continuity correction (that is method 11), stays inside
    ``[-1, 1]`` and, unlike the Wald interval, keeps a width when there are few or no
    discordant pairs.

    Parameters
    ----------
    a, b
        Boolean success arrays of two agents on the same episodes, in the same order.
    confidence
        Coverage of the interval, in ``(0, 1)``.

    Returns
    -------
    tuple of float
        ``(diff, low, high)`` with ``diff = mean(a) - mean(b)``.

    Raises
    ------
    DataError
        If the arrays are empty, not one-dimensional or of different lengths, or
        ``confidence`` is outside ``(0, 1)``.

    References
    ----------
    Newcombe, R. G. (1998). Improved confidence intervals for the difference between binomial
    proportions based on paired data. *Statistics in Medicine* 17, 2635-2650.
    """
    # lazy: scipy.stats takes 0.8 s to import
    from scipy.stats import norm

    x = np.asarray(a, dtype=bool)
    y = np.asarray(b, dtype=bool)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise DataError(
            f"paired success arrays must be one-dimensional and of equal length, got shapes "
            f"{x.shape} and {y.shape}"
        )
    n = int(x.size)
    if n == 0:
        raise DataError("paired success arrays are empty: no episode ran by both agents")
    if not 0.0 < confidence < 1.0:
        raise DataError(f"confidence must be in (0, 1), got {confidence}")
    both = int(np.sum(x & y))
    wins = int(np.sum(x & ~y))
    losses = int(np.sum(~x & y))
    neither = n - both - wins - losses
    z = float(norm.ppf(0.5 + confidence / 2))
    p1, p2 = (both + wins) / n, (both + losses) / n
    l1, u1 = wilson_interval(both + wins, n, z)
    l2, u2 = wilson_interval(both + losses, n, z)
    margins = (both + wins) * (losses + neither) * (both + losses) * (wins + neither)
    phi = (both * neither - wins * losses) / math.sqrt(margins) if margins else 0.0
    diff = p1 - p2
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    eps = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return diff, max(-1.0, diff - delta), min(1.0, diff + eps)


def _field(row: Mapping[str, Any], key: str) -> str:
    try:
        return str(row[key])
    except KeyError:
        raise DataError(f"run row without {key!r}: {sorted(row)}") from None


def compare_agents(
    rows: Sequence[Mapping[str, Any]],
    success_of: Callable[[Mapping[str, Any]], bool],
    *,
    confidence: float = 0.95,
) -> list[dict[str, Any]]:
    """Paired comparison of every two agents of a run, per task, on their shared episodes.

    Parameters
    ----------
    rows
        Run rows with ``task``, ``agent`` and ``episode_id`` (for example the lines of
        ``episodes.jsonl``); a later row of the same (task, agent, episode) replaces an
        earlier one.
    success_of
        ``row -> bool``, whether the episode succeeded (for example
        :func:`flaneur.evaluate.runlog.row_success`).
    confidence
        Coverage of the interval of the difference.

    Returns
    -------
    list of dict
        For each task and each pair of its agents (``a`` before ``b`` in order of first
        appearance in ``rows``; each pair once), the keys of :data:`PAIRED_FIELDS`:
        ``paired`` (episodes both ran; the others are left out), ``a_success`` and
        ``b_success`` (rates on those episodes), ``wins`` (``a`` succeeds, ``b`` fails),
        ``losses`` (the reverse), ``diff`` = ``a_success - b_success`` with its interval
        ``diff_low``/``diff_high`` (:func:`paired_difference`) and ``p_value``
        (:func:`mcnemar_exact`). Pairs without a shared episode have ``paired = 0``, rates
        and difference ``None`` and ``p_value = 1.0``.
    """
    outcomes: dict[str, dict[str, dict[str, bool]]] = {}
    for row in rows:
        task, agent = _field(row, "task"), _field(row, "agent")
        episode = _field(row, "episode_id")
        outcomes.setdefault(task, {}).setdefault(agent, {})[episode] = bool(success_of(row))
    out: list[dict[str, Any]] = []
    for task, by_agent in outcomes.items():
        agents = list(by_agent)
        for i, name_a in enumerate(agents):
            for name_b in agents[i + 1 :]:
                left, right = by_agent[name_a], by_agent[name_b]
                shared = [e for e in left if e in right]
                sa = [left[e] for e in shared]
                sb = [right[e] for e in shared]
                wins = sum(1 for x, y in zip(sa, sb, strict=True) if x and not y)
                losses = sum(1 for x, y in zip(sa, sb, strict=True) if y and not x)
                entry: dict[str, Any] = {
                    "task": task,
                    "a": name_a,
                    "b": name_b,
                    "paired": len(shared),
                    "a_success": None,
                    "b_success": None,
                    "wins": wins,
                    "losses": losses,
                    "diff": None,
                    "diff_low": None,
                    "diff_high": None,
                    "p_value": mcnemar_exact(wins, losses),
                }
                if shared:
                    diff, low, high = paired_difference(sa, sb, confidence)
                    entry.update(
                        a_success=sum(sa) / len(sa),
                        b_success=sum(sb) / len(sb),
                        diff=diff,
                        diff_low=low,
                        diff_high=high,
                    )
                out.append(entry)
    return out

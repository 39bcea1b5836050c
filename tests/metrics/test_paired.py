"""Paired comparison of agents: exact McNemar test, Newcombe's interval, per-task pairing."""

from __future__ import annotations

import math

import pytest

from flaneur.errors import FlaneurError
from flaneur.metrics import compare_agents, mcnemar_exact, paired_difference
from flaneur.metrics.paired import PAIRED_FIELDS

Z = 1.959963984540054  # the 0.975 quantile of the standard normal distribution


def table(both: int, wins: int, losses: int, neither: int) -> tuple[list[bool], list[bool]]:
    """Success arrays of two agents with the given 2×2 table."""
    a = [True] * both + [True] * wins + [False] * losses + [False] * neither
    b = [True] * both + [False] * wins + [True] * losses + [False] * neither
    return a, b


def wilson_by_hand(x: int, n: int) -> tuple[float, float]:
    """Wilson limits in Newcombe's form (2x + z² ± z·sqrt(z² + 4x(n-x)/n)) / (2(n + z²))."""
    root = Z * math.sqrt(Z * Z + 4 * x * (n - x) / n)
    return (2 * x + Z * Z - root) / (2 * (n + Z * Z)), (2 * x + Z * Z + root) / (2 * (n + Z * Z))


def test_mcnemar_exact_is_twice_the_binomial_tail():
    tail = sum(math.comb(21, k) for k in range(6)) / 2**21  # P(X <= 5 | n = 21, 1/2)
    assert mcnemar_exact(16, 5) == pytest.approx(2 * tail, rel=1e-12)
    assert mcnemar_exact(5, 16) == pytest.approx(2 * tail, rel=1e-12)
    assert mcnemar_exact(16, 5) == pytest.approx(0.026604, abs=1e-6)
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 2**6)  # all six discordant pairs one way


def test_mcnemar_exact_without_evidence_is_one():
    assert mcnemar_exact(0, 0) == 1.0  # no discordant pairs
    assert mcnemar_exact(3, 3) == pytest.approx(1.0)
    assert mcnemar_exact(1, 0) == pytest.approx(1.0)
    with pytest.raises(FlaneurError):
        mcnemar_exact(-1, 2)


def test_newcombe_interval_step_by_step():
    # 2×2 table: 36 both succeed, 12 only A, 2 only B, none both fail (n = 50)
    both, wins, losses, neither = 36, 12, 2, 0
    n = 50
    p1, p2 = 48 / 50, 38 / 50
    l1, u1 = wilson_by_hand(48, n)
    l2, u2 = wilson_by_hand(38, n)
    phi = (both * neither - wins * losses) / math.sqrt(48 * 2 * 38 * 12)  # -24 / sqrt(43776)
    assert phi == pytest.approx(-0.114708, abs=1e-6)
    low = (p1 - p2) - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = (p1 - p2) + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)

    diff, lo, hi = paired_difference(*table(both, wins, losses, neither))
    assert diff == pytest.approx(0.2)  # (12 - 2) / 50
    assert lo == pytest.approx(low, abs=1e-12) and hi == pytest.approx(high, abs=1e-12)
    assert (round(lo, 4), round(hi, 4)) == (0.0569, 0.3404)  # pinned as a regression check


def test_newcombe_interval_with_a_zero_margin_uses_phi_zero():
    # both agents succeed on all ten episodes: phi is 0 and the limits come from the Wilson
    # interval of 10/10, whose lower limit is n / (n + z²)
    diff, lo, hi = paired_difference([True] * 10, [True] * 10)
    lower = 10 / (10 + Z * Z)
    assert diff == 0.0
    assert lo == pytest.approx(lower - 1, abs=1e-12) and hi == pytest.approx(1 - lower, abs=1e-12)


def test_paired_difference_is_antisymmetric_and_checks_input():
    a, b = table(5, 7, 2, 6)
    diff, lo, hi = paired_difference(a, b)
    assert -1 <= lo < diff < hi <= 1
    assert paired_difference(b, a) == pytest.approx((-diff, -hi, -lo))
    narrow = paired_difference(a, b, confidence=0.8)
    assert lo < narrow[1] < narrow[2] < hi
    with pytest.raises(FlaneurError):
        paired_difference([True, False], [True])
    with pytest.raises(FlaneurError):
        paired_difference([], [])
    with pytest.raises(FlaneurError):
        paired_difference(a, b, confidence=1.0)


def rows_of(task: str, agent: str, outcomes: dict[str, bool]) -> list[dict]:
    return [{"task": task, "agent": agent, "episode_id": e, "ok": ok} for e, ok in outcomes.items()]


def test_compare_agents_pairs_by_episode_per_task():
    rows = (
        rows_of("t1", "x", {"e1": True, "e2": True, "e3": False, "e4": True})
        + rows_of("t1", "y", {"e1": False, "e2": True, "e3": True, "e5": True})
        + rows_of("t1", "z", {"e1": False, "e2": False, "e3": False, "e4": False})
        + rows_of("t2", "y", {"f1": True, "f2": False})
        + rows_of("t2", "x", {"f1": False, "f2": False, "f3": True})
        + rows_of("t3", "x", {"g1": True})  # one agent only: nothing to compare
    )
    out = compare_agents(rows, lambda r: r["ok"])
    assert [(c["task"], c["a"], c["b"]) for c in out] == [
        ("t1", "x", "y"),
        ("t1", "x", "z"),
        ("t1", "y", "z"),
        ("t2", "y", "x"),
    ]
    assert all(tuple(c) == PAIRED_FIELDS for c in out)
    xy, xz, yz, yx = out
    # x vs y share e1-e3 (e4 only x, e5 only y): x wins e1, loses e3
    assert (xy["paired"], xy["wins"], xy["losses"]) == (3, 1, 1)
    assert xy["a_success"] == pytest.approx(2 / 3) and xy["b_success"] == pytest.approx(2 / 3)
    assert xy["diff"] == pytest.approx(0.0) and xy["p_value"] == pytest.approx(1.0)
    # x vs z share e1-e4: x wins e1, e2, e4
    assert (xz["paired"], xz["wins"], xz["losses"]) == (4, 3, 0)
    assert (xz["a_success"], xz["b_success"], xz["diff"]) == pytest.approx((0.75, 0.0, 0.75))
    assert xz["p_value"] == pytest.approx(2 / 2**3)
    expected = paired_difference([True, True, False, True], [False] * 4)
    assert (xz["diff"], xz["diff_low"], xz["diff_high"]) == pytest.approx(expected)
    # y vs z share e1-e3: y wins e2, e3
    assert (yz["paired"], yz["wins"], yz["losses"], yz["p_value"]) == (3, 2, 0, pytest.approx(0.5))
    # t2: y appears first; they share f1, f2 and y wins f1
    assert (yx["paired"], yx["wins"], yx["losses"]) == (2, 1, 0)
    assert yx["diff"] == pytest.approx(0.5) and yx["diff_low"] < 0.5 < yx["diff_high"]


def test_compare_agents_without_shared_episodes_and_bad_rows():
    rows = rows_of("t", "x", {"e1": True}) + rows_of("t", "y", {"e2": False})
    (c,) = compare_agents(rows, lambda r: r["ok"])
    assert (c["paired"], c["wins"], c["losses"], c["p_value"]) == (0, 0, 0, 1.0)
    assert c["diff"] is None and c["a_success"] is None and c["diff_low"] is None
    with pytest.raises(FlaneurError, match="episode_id"):
        compare_agents([{"task": "t", "agent": "x"}], lambda r: True)

"""Metrics of V-IRL's perception benchmarks, as the paper computes them.

* **mAcc** (recognition and VQA): each place adds ``1/k`` of its outcome to each of its
  ``k`` types, and ``1/k`` to each type's total; a type's accuracy is the ratio, and mAcc is
  the mean over the types that occur. Overall accuracy is the plain mean over places.
* **top-k** (recognition): correct when any of the ``k`` best-scored types is a true type.
* **Circular evaluation** (VQA): the options are asked 4 times, rotated by one each time
  (the options list shifts left, so the true letter moves back by one); a place counts as
  correct only if every pass is right. V-IRL stops at the first wrong pass; so does flaneur.

:func:`accuracy_figures` gives mAcc and accuracy of a task set with a 95% interval from a
seeded bootstrap over places (the same places give the same interval).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

LETTERS = ("A", "B", "C", "D")

BOOTSTRAP_REPS = 1000
"""Resamples of the bootstrap intervals."""
BOOTSTRAP_SEED = 0
"""Seed of the bootstrap resamples (fixed: an interval depends on the places alone)."""


@dataclass(frozen=True)
class MeanAccuracy:
    """Accuracy over places and mean accuracy over types.

    Attributes
    ----------
    acc
        Correct places / places (0 when there are none).
    macc
        Mean over types of (sum of correct/k) / (sum of 1/k); NaN when no place has a type.
    per_type
        ``{type: (accuracy, weight)}`` where weight is the sum of ``1/k`` (places, fractionally).
    places
        Number of places.
    """

    acc: float
    macc: float
    per_type: dict[str, tuple[float, float]]
    places: int


def mean_accuracy(outcomes: Iterable[tuple[Sequence[str], bool | float]]) -> MeanAccuracy:
    """mAcc as V-IRL defines it.

    Parameters
    ----------
    outcomes
        ``(types, correct)`` per place; ``correct`` is a bool or a score in [0, 1].

    Returns
    -------
    MeanAccuracy

    Examples
    --------
    >>> r = mean_accuracy([(["cafe"], True), (["cafe", "bar"], False), (["bar"], True)])
    >>> round(r.macc, 4)  # cafe: 1 / 1.5, bar: 1 / 1.5
    0.6667
    """
    tp: dict[str, float] = {}
    total: dict[str, float] = {}
    n = correct_sum = 0.0
    for types, correct in outcomes:
        value = float(correct)
        n += 1
        correct_sum += value
        unique = list(dict.fromkeys(types))
        for t in unique:
            tp[t] = tp.get(t, 0.0) + value / len(unique)
            total[t] = total.get(t, 0.0) + 1.0 / len(unique)
    per_type = {t: (tp[t] / total[t], total[t]) for t in sorted(total)}
    macc = float(np.mean([a for a, _ in per_type.values()])) if per_type else float("nan")
    return MeanAccuracy(
        acc=correct_sum / n if n else 0.0, macc=macc, per_type=per_type, places=int(n)
    )


def rank_labels(scores: ArrayLike, labels: Sequence[str]) -> list[str]:
    """``labels`` from the best score to the worst.

    Ties keep the label order (a stable sort on descending score), so a recogniser that
    scores everything equal ranks the first labels first, not a lucky pick.
    """
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return [labels[int(i)] for i in order]


def topk_hits(
    ranked: Sequence[str], truth: Iterable[str], ks: Sequence[int] = (1, 3, 5)
) -> dict[int, bool]:
    """Whether a true label is among the first ``k`` of ``ranked``, for each ``k``."""
    wanted = set(truth)
    return {k: bool(wanted.intersection(ranked[:k])) for k in ks}


def rotate_options(options: Sequence[str], answer: int, shift: int) -> tuple[list[str], int]:
    """Options shifted left ``shift`` times, and the index of the true option afterwards."""
    n = len(options)
    shift %= n
    return list(options[shift:]) + list(options[:shift]), (answer - shift) % n


def expected_letter(answer: int, shift: int, n: int = 4) -> str:
    """The true letter of circular pass ``shift`` (see :func:`rotate_options`)."""
    return LETTERS[(answer - shift) % n]


def circular_correct(letters: Sequence[str], answer: int, n: int = 4) -> bool:
    """Whether the letters answered in the ``n`` rotated passes are all the true ones (a run
    stopped at its first wrong pass has fewer letters: not correct)."""
    return len(letters) == n and all(
        letter == expected_letter(answer, shift, n) for shift, letter in enumerate(letters)
    )


def bootstrap_counts(n: int, reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """How often each of ``n`` places is drawn in each of ``reps`` resamples (seeded)."""
    if not n:
        return np.zeros((reps, 0))
    return np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=reps)


def type_means(counts: np.ndarray, total: np.ndarray, hits: np.ndarray) -> np.ndarray:
    """Per resample (a row of :func:`bootstrap_counts`), the mean over the types it holds of
    each type's share ``hits / total`` (``total``, ``hits``: per place and type)."""
    total, hits = counts @ total, counts @ hits
    with np.errstate(invalid="ignore", divide="ignore"):
        per_type = np.where(total > 0, hits / np.where(total > 0, total, 1.0), np.nan)
    present = np.isfinite(per_type).sum(axis=1)
    return np.where(present > 0, np.nansum(per_type, axis=1) / np.maximum(present, 1), np.nan)


def interval95(samples: np.ndarray) -> list[float] | None:
    """The 2.5 and 97.5 percentiles of the finite ``samples`` (``None``: none is finite)."""
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return None
    lo, hi = np.percentile(finite, [2.5, 97.5])
    return [float(lo), float(hi)]


def _figure(value: float, n: int, samples: np.ndarray) -> dict[str, Any]:
    ci = interval95(samples)
    if not math.isfinite(value) or ci is None:
        return {"value": None, "n": n, "ci95": None}
    return {"value": float(value), "n": n, "ci95": ci}


def accuracy_figures(
    outcomes: Sequence[tuple[Sequence[str], bool | float]],
    *,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, dict[str, Any]]:
    """mAcc and accuracy of ``(types, correct)`` per place, each ``{"value", "n", "ci95"}``.

    The interval is the 2.5 and 97.5 percentiles over ``reps`` bootstrap resamples of the
    places (drawn with ``seed``: the same outcomes in the same order give the same interval);
    a resample's mAcc is the mean over the types it holds. ``value`` is ``None`` (and
    ``ci95`` too) when no place has a type.
    """
    n = len(outcomes)
    if n == 0:
        return {}
    whole = mean_accuracy(outcomes)
    types = list(whole.per_type)
    column = {t: j for j, t in enumerate(types)}
    weight = np.zeros((n, len(types)))
    for i, (names, _) in enumerate(outcomes):
        unique = list(dict.fromkeys(names))
        for t in unique:
            weight[i, column[t]] = 1.0 / len(unique)
    correct = np.array([float(c) for _, c in outcomes])
    counts = bootstrap_counts(n, reps, seed)
    acc = counts @ correct / n
    macc = type_means(counts, weight, weight * correct[:, None])
    return {"macc": _figure(whole.macc, n, macc), "acc": _figure(whole.acc, n, acc)}

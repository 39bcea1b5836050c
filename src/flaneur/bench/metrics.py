"""Metrics of V-IRL's perception benchmarks, as the paper computes them.

* **mAcc** (recognition and VQA): each place adds ``1/k`` of its outcome to each of its
  ``k`` types, and ``1/k`` to each type's total; a type's accuracy is the ratio, and mAcc is
  the mean over the types that occur. Overall accuracy is the plain mean over places.
* **top-k** (recognition): correct when any of the ``k`` best-scored types is a true type.
* **Circular evaluation** (VQA): the options are asked 4 times, rotated by one each time
  (the options list shifts left, so the true letter moves back by one); a place counts as
  correct only if every pass is right. V-IRL stops at the first wrong pass; so do we.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["LETTERS", "MeanAccuracy", "mean_accuracy", "rotate_options", "topk_hits"]

LETTERS = ("A", "B", "C", "D")


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


def topk_hits(
    scores: ArrayLike, labels: Sequence[str], truth: Iterable[str], ks: Sequence[int] = (1, 3, 5)
) -> dict[int, bool]:
    """Whether a true label is among the ``k`` best scores, for each ``k``.

    Ties are broken by the label order (a stable sort on descending score), so a
    recogniser that scores everything equal gets the first labels, not a lucky pick.
    """
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    ranked = [labels[i] for i in order]
    wanted = set(truth)
    return {k: bool(wanted.intersection(ranked[:k])) for k in ks}


def rotate_options(options: Sequence[str], answer: int, shift: int) -> tuple[list[str], int]:
    """Options shifted left ``shift`` times, and the index of the true option afterwards."""
    n = len(options)
    shift %= n
    return list(options[shift:]) + list(options[:shift]), (answer - shift) % n


def circular_correct(
    ask: Callable[[list[str], int], bool], options: Sequence[str], answer: int
) -> tuple[bool, int]:
    """Run circular evaluation: ``ask(options, answer_index)`` per rotation.

    Returns ``(all passes right, passes asked)``; stops at the first wrong pass.
    """
    for shift in range(len(options)):
        opts, idx = rotate_options(options, answer, shift)
        if not ask(opts, idx):
            return False, shift + 1
    return True, len(options)

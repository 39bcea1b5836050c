"""Aggregate per-episode result rows: overall and per group means, counts and 95% intervals.

Boolean metrics are rates: their interval is the Wilson score interval (a normal
approximation that stays inside ``[0, 1]`` and behaves at rates of 0 or 1). Numeric metrics
get the normal approximation ``mean ± 1.96 · s / sqrt(n)``. ``None`` values (metric not
applicable) are left out and the count ``n`` says how many episodes a value rests on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flaneur.metrics.table import ROW_FIELDS

Z95 = 1.959963984540054
"""Two-sided 95% quantile of the standard normal distribution."""

_SKIP = frozenset(ROW_FIELDS)


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a rate ``successes / n``.

    ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with ``p = successes / n``.
    """
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """Normal-approximation interval ``mean ± z · s / sqrt(n)`` (sample standard deviation)."""
    n = len(values)
    if n == 0:
        return (math.nan, math.nan)
    mean = math.fsum(values) / n
    if n == 1:
        return (mean, mean)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return (mean - half, mean + half)


def _metric_names(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    for row in rows:
        for key, value in row.items():
            if key in _SKIP or key in seen:
                continue
            if isinstance(value, bool | int | float) and not isinstance(value, str):
                seen.add(key)
                names.append(key)
    return names


def aggregate(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """``{"episodes": N, "metrics": {name: {"mean", "n", "ci95", "kind"}}}`` for ``rows``."""
    metrics: dict[str, Any] = {}
    for name in names:
        values = [row.get(name) for row in rows]
        present = [v for v in values if v is not None and not _is_nan(v)]
        if not present:
            metrics[name] = {"mean": None, "n": 0, "ci95": None, "kind": "none"}
            continue
        if all(isinstance(v, bool) for v in present):
            hits = sum(1 for v in present if v)
            lo, hi = wilson_interval(hits, len(present))
            entry = {
                "mean": hits / len(present),
                "n": len(present),
                "ci95": [lo, hi],
                "kind": "rate",
            }
        else:
            floats = [float(v) for v in present]
            lo, hi = mean_interval(floats)
            entry = {
                "mean": math.fsum(floats) / len(floats),
                "n": len(floats),
                "ci95": [lo, hi],
                "kind": "mean",
            }
        metrics[name] = entry
    return {"episodes": len(rows), "metrics": metrics}


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def summarize(
    rows: Iterable[Mapping[str, Any]], by: Sequence[str] = ("category", "city")
) -> dict[str, Any]:
    """Overall and per-group summaries of result rows.

    Parameters
    ----------
    rows
        Result rows (for example from :func:`flaneur.metrics.batch_metrics`); every numeric
        or boolean field other than the identifying ones is summarised.
    by
        Row fields to group by; each gives a separate breakdown.

    Returns
    -------
    dict
        ``{"overall": {"episodes", "metrics"}, "by": {field: {value: {"episodes",
        "metrics"}}}}`` where each metric is ``{"mean", "n", "ci95": [lo, hi], "kind"}``
        (``kind`` is ``"rate"`` for booleans, ``"mean"`` for numbers). Groups are sorted by
        value; rows missing a grouping field fall in the group ``""``.
    """
    rows = list(rows)
    names = _metric_names(rows)
    result: dict[str, Any] = {"overall": aggregate(rows, names), "by": {}}
    for field in by:
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for row in rows:
            groups.setdefault(str(row.get(field, "") or ""), []).append(row)
        result["by"][field] = {key: aggregate(groups[key], names) for key in sorted(groups)}
    return result

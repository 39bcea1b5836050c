"""Every metric field of a result row, defined once: :data:`METRICS`.

Each :class:`Metric` names the row field, its label in reports, the system it comes from,
whether higher is better and whether result tables show it. The row fields
(:data:`METRIC_FIELDS`) and the report labels (:data:`METRIC_LABELS`) are derived from
this table; the formulas live in :mod:`~flaneur.metrics.velma`, :mod:`~flaneur.metrics.r2r`,
:mod:`~flaneur.metrics.cityseeker` and :mod:`~flaneur.metrics.virl`, and ``docs/metrics.md``
gives each definition (a test checks that it lists every field).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flaneur.errors import FlaneurError
from flaneur.registry import Registry


@dataclass(frozen=True)
class Metric:
    """One metric field of a result row.

    Attributes
    ----------
    key
        Row field (``"tc"``).
    label
        Column label in reports (``"TC"``).
    system
        Benchmark or paper the metric comes from.
    higher_is_better
        Direction of improvement (``None`` for descriptive fields).
    column
        Position in result tables (1 = first), ``None`` when tables leave it out.
    compute
        For metrics added with :func:`register_metric`: ``compute(city, episode, path)``
        (``path`` = node indices, start first) returning the value (``None`` where it does
        not apply). The built-in metrics are computed together by
        :func:`~flaneur.metrics.batch_metrics` and leave it ``None``.
    """

    key: str
    label: str
    system: str
    higher_is_better: bool | None = True
    column: int | None = None
    compute: Callable[[Any, Any, Any], Any] | None = None


ROW_FIELDS = ("episode_id", "city", "category", "stop_node")
"""Identifying fields of a result row (not metrics)."""

METRICS: tuple[Metric, ...] = (
    Metric("steps", "steps", "CitySeeker (AS)", None),
    Metric("path_length_m", "length m", "-", None),
    Metric("tc", "TC", "VELMA / Touchdown", column=1),
    Metric("spd_hops", "SPD", "VELMA", False, column=2),
    Metric("kpa", "KPA", "VELMA", column=3),
    Metric("kpa_prefix", "KPA prefix", "flaneur (stricter KPA, not published)"),
    Metric("ne_m", "NE m", "R2R / MapGPT", False),
    Metric("sr", "SR", "R2R / MapGPT", column=7),
    Metric("osr", "OSR", "R2R / MapGPT"),
    Metric("spl", "SPL", "R2R / MapGPT, CitySeeker", column=8),
    Metric("dtw_m", "DTW m", "CitySeeker (raw nDTW)", False),
    Metric("ndtw", "nDTW", "R2R / CitySeeker", column=9),
    Metric("sdtw", "SDTW", "R2R"),
    Metric("tce", "TCE", "CitySeeker", column=5),
    Metric("tcp", "TCP", "CitySeeker", column=4),
    Metric("tcc", "TCC", "CitySeeker", column=6),
    Metric("spd_m", "SPD m", "CitySeeker", False),
    Metric("virl_success", "V-IRL success", "V-IRL"),
    Metric("arrival_ratio", "arrival", "V-IRL"),
    Metric("reaction_accuracy", "reaction acc.", "V-IRL"),
)
"""Every metric field, in row order."""

METRIC_FIELDS: tuple[str, ...] = tuple(m.key for m in METRICS)
"""Metric fields of a result row, in a stable order."""

METRIC_LABELS: dict[str, str] = {
    m.key: m.label for m in sorted(METRICS, key=lambda m: m.column or 0) if m.column
}
"""Report labels of the metrics that result tables show, in table order."""

BY_KEY: dict[str, Metric] = {m.key: m for m in METRICS}
"""The metric of each field (built-in and registered)."""


def _check_added(name: str, entry: Any) -> None:
    if not isinstance(entry, Metric) or entry.compute is None:
        raise FlaneurError(
            f"metric {name!r} is {entry!r}, not a Metric with a compute(city, episode, path)"
        )
    if entry.key != name:
        raise FlaneurError(f"metric {name!r} is registered under another key ({entry.key!r})")
    known = BY_KEY.get(name)
    if known is not None and known.compute is None:
        raise FlaneurError(f"metric {name!r} is already defined (a built-in)")


ADDED: Registry[Metric] = Registry("metric", group="flaneur.metrics", check=_check_added)
"""Metrics added with :func:`register_metric` or by outside packages (entry-point group
``flaneur.metrics``: a :class:`Metric` object), computed after the built-in ones."""


def _adopt(metric: Metric) -> None:
    """Make a loaded added metric known to row fields and report labels."""
    BY_KEY[metric.key] = metric
    METRIC_LABELS.pop(metric.key, None)
    if metric.column is not None:
        METRIC_LABELS[metric.key] = metric.label


def added_metrics() -> list[Metric]:
    """The added metrics (entry points loaded), in registration order."""
    out = []
    for _, metric in ADDED.items():
        if BY_KEY.get(metric.key) is not metric:
            _adopt(metric)
        out.append(metric)
    return out


def register_metric(metric: Metric, *, replace: bool = False) -> Metric:
    """Add a metric computed per run by ``metric.compute`` (see ``docs/extending.md``).

    Its field joins every result row of :func:`~flaneur.metrics.batch_metrics`, run
    summaries aggregate it like the others, and with a ``column`` result tables show it
    under ``metric.label``.

    Raises
    ------
    FlaneurError
        When the field exists already (a built-in, or registered before without
        ``replace``) or ``compute`` is missing.
    """
    if metric.compute is None:
        raise FlaneurError(f"metric {metric.key!r} needs a compute(city, episode, path) function")
    known = BY_KEY.get(metric.key)
    if known is not None and (known.compute is None or not replace):
        raise FlaneurError(f"metric {metric.key!r} is already defined")
    ADDED.register(metric.key, metric, replace=True)
    _adopt(metric)
    return metric


__all__ = [
    "ADDED",
    "BY_KEY",
    "METRICS",
    "METRIC_FIELDS",
    "METRIC_LABELS",
    "ROW_FIELDS",
    "Metric",
    "added_metrics",
    "register_metric",
]

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
    definition
        What the value is, in one line (the definition column of ``docs/metrics.md`` and the
        web app's glossary).
    source
        The paper (or code) that defines it.
    """

    key: str
    label: str
    system: str
    higher_is_better: bool | None = True
    column: int | None = None
    compute: Callable[[Any, Any, Any], Any] | None = None
    definition: str = ""
    source: str = ""


ROW_FIELDS = ("episode_id", "city", "category", "stop_node")
"""Identifying fields of a result row (not metrics)."""

METRICS: tuple[Metric, ...] = (
    Metric(
        "steps",
        "steps",
        "CitySeeker (AS)",
        None,
        definition="number of moves, `len(path) - 1`; AS is its mean",
        source="CitySeeker",
    ),
    Metric(
        "path_length_m",
        "length m",
        "-",
        None,
        definition="metres walked (edge lengths along the path)",
        source="flaneur",
    ),
    Metric(
        "tc",
        "TC",
        "VELMA / Touchdown",
        column=1,
        definition=(
            "stop ∈ {goal} ∪ N(goal), N = neighbours of the goal panorama in either direction "
            "(VELMA's `get_target_neighbors`, `networkx.all_neighbors`)"
        ),
        source="Chen et al. 2019 (Touchdown); Schumann et al. 2024 (VELMA)",
    ),
    Metric(
        "spd_hops",
        "SPD",
        "VELMA",
        False,
        column=2,
        definition="shortest-path hops from the stop to the goal",
        source="Schumann et al. 2024 (VELMA)",
    ),
    Metric(
        "kpa",
        "KPA",
        "VELMA",
        column=3,
        definition="key-point accuracy exactly as VELMA's released `vln/evaluate.py`",
        source="Schumann et al. 2024 (VELMA)",
    ),
    Metric(
        "kpa_prefix",
        "KPA prefix",
        "flaneur (stricter KPA, not published)",
        definition=(
            "flaneur's stricter key-point accuracy on action sequences; not a published number"
        ),
        source="flaneur",
    ),
    Metric(
        "ne_m",
        "NE m",
        "R2R / MapGPT",
        False,
        definition="shortest-path metres from the stop to the goal",
        source="Anderson et al. 2018 (R2R)",
    ),
    Metric(
        "sr",
        "SR",
        "R2R / MapGPT",
        column=7,
        definition="`ne_m <= success_radius_m`",
        source="Anderson et al. 2018 (R2R)",
    ),
    Metric(
        "osr",
        "OSR",
        "R2R / MapGPT",
        definition="some node of the path within `success_radius_m` (graph metres) of the goal",
        source="Anderson et al. 2018 (R2R)",
    ),
    Metric(
        "spl",
        "SPL",
        "R2R / MapGPT, CitySeeker",
        column=8,
        definition=(
            "`sr · l / max(p, l)`; `l` shortest-path metres start → goal, `p = path_length_m`"
        ),
        source='Anderson et al. 2018, "On Evaluation of Embodied Navigation Agents"',
    ),
    Metric(
        "dtw_m",
        "DTW m",
        "CitySeeker (raw nDTW)",
        False,
        definition="DTW cost in metres between reference path and agent path",
        source="Ilharco et al. 2019",
    ),
    Metric(
        "ndtw",
        "nDTW",
        "R2R / CitySeeker",
        column=9,
        definition=(
            "exp(−DTW / (n_R · d_th)), n_R = number of reference nodes, `d_th = success_radius_m`"
        ),
        source="Ilharco et al. 2019",
    ),
    Metric(
        "sdtw",
        "SDTW",
        "R2R",
        definition="`sr · ndtw`",
        source="Ilharco et al. 2019",
    ),
    Metric(
        "tce",
        "TCE",
        "CitySeeker",
        column=5,
        definition="stop on the goal node exactly",
        source="CitySeeker",
    ),
    Metric(
        "tcp",
        "TCP",
        "CitySeeker",
        column=4,
        definition="stop within 50 m (straight line) of the goal node",
        source="CitySeeker",
    ),
    Metric(
        "tcp40",
        "TCP-40",
        "CitySeeker",
        definition="stop within 40 m (straight line) of the goal node (TCP-40)",
        source="CitySeeker",
    ),
    Metric(
        "tcp60",
        "TCP-60",
        "CitySeeker",
        definition="stop within 60 m (straight line) of the goal node (TCP-60)",
        source="CitySeeker",
    ),
    Metric(
        "tcc",
        "TCC",
        "CitySeeker",
        column=6,
        definition=(
            "stop at a node linked to a place of the goal category (places link to nodes within "
            "50 m)"
        ),
        source="CitySeeker",
    ),
    Metric(
        "spd_m",
        "SPD m",
        "CitySeeker",
        False,
        definition="shortest-path metres from the stop to the goal (equals `ne_m`)",
        source="CitySeeker",
    ),
    Metric(
        "spd_mercator_m",
        "SPD Mercator m",
        "CitySeeker",
        False,
        definition=(
            "shortest-path Web-Mercator metres from the stop to the goal: edges weighted by "
            "the planar EPSG:3857 distance between their ends (CitySeeker's `edge_distance`, "
            "≈ `spd_m` / cos(latitude))"
        ),
        source="CitySeeker (its data's unit)",
    ),
    Metric(
        "virl_success",
        "V-IRL success",
        "V-IRL",
        definition="stop within 25 m (straight line) of the destination",
        source="Yang et al. 2024 (V-IRL)",
    ),
    Metric(
        "arrival_ratio",
        "arrival",
        "V-IRL",
        definition="share of key positions the path visits",
        source="Yang et al. 2024 (V-IRL)",
    ),
    Metric(
        "reaction_accuracy",
        "reaction acc.",
        "V-IRL",
        definition="share of key positions where the agent's first action equals the gold action",
        source="Yang et al. 2024 (V-IRL)",
    ),
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

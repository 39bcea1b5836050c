"""Navigation metrics of VELMA, MapGPT/R2R, CitySeeker and V-IRL, and their summaries.

Use :func:`batch_metrics` (many runs) or :func:`episode_metrics` (one run) to get a flat row
per run, and :func:`summarize` to aggregate rows overall and per category / city. The
individual formulas live in :mod:`~flaneur.metrics.velma`, :mod:`~flaneur.metrics.r2r`,
:mod:`~flaneur.metrics.cityseeker` and :mod:`~flaneur.metrics.virl`; every field is defined
once in the table :data:`METRICS` (:mod:`~flaneur.metrics.table`), from which the row fields
and report labels derive; ``docs/metrics.md`` lists every field.
"""

from flaneur.metrics.distances import MetricCache, cache_for
from flaneur.metrics.episode import DEFAULT_SUCCESS_RADIUS_M, batch_metrics, episode_metrics
from flaneur.metrics.paired import compare_agents, mcnemar_exact, paired_difference
from flaneur.metrics.summary import summarize, wilson_interval
from flaneur.metrics.table import (
    METRIC_FIELDS,
    METRIC_LABELS,
    METRICS,
    ROW_FIELDS,
    Metric,
    register_metric,
)

__all__ = [
    "DEFAULT_SUCCESS_RADIUS_M",
    "METRICS",
    "METRIC_FIELDS",
    "METRIC_LABELS",
    "ROW_FIELDS",
    "Metric",
    "MetricCache",
    "batch_metrics",
    "cache_for",
    "compare_agents",
    "episode_metrics",
    "mcnemar_exact",
    "paired_difference",
    "register_metric",
    "summarize",
    "wilson_interval",
]

"""What the figures of the run view mean: each metric's definition and paper, and what the
rows of each task kind hold.

Navigation metrics come from the metric table (:data:`flaneur.metrics.table.METRICS`, the
same text as ``docs/metrics.md``), task kinds describe their own rows
(:meth:`flaneur.evaluate.kinds.TaskKind.about`; read in a child process, as importing every
kind loads libraries the server need not hold), and the run view adds the interval and
comparison columns it shows.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from flaneur.errors import FlaneurError
from flaneur.evaluate.kinds import KINDS
from flaneur.metrics.table import BY_KEY, added_metrics
from flaneur.report.tables import PAIRED_NOTE

COLUMNS = {
    "n": "rows that have the figure (scored episodes or items)",
    "95% interval": (
        "Wilson score interval for rates, mean ± 1.96 standard errors for other "
        "figures, seeded bootstrap for task-set figures such as mAcc"
    ),
    "paired comparison": PAIRED_NOTE,
    "errors": "rows that ended task_error, agent_error or model_error (counted as failures)",
    "tokens, cost": "model tokens and dollars of the rows' calls (cache hits cost nothing)",
}
"""The run view's other columns."""


def metric_glossary() -> dict[str, Any]:
    """``{"metrics": [...], "columns": {...}}``: every metric with its key, label,
    definition, source, system and direction, and the run view's other columns."""
    added_metrics()  # plug-in metrics join BY_KEY
    metrics = [
        {
            "key": metric.key,
            "label": metric.label,
            "definition": metric.definition,
            "source": metric.source,
            "system": metric.system,
            "higher_is_better": metric.higher_is_better,
        }
        for metric in BY_KEY.values()
    ]
    return {"metrics": metrics, "columns": COLUMNS}


def kind_glossary() -> list[dict[str, str]]:
    """Every task kind with its description (:meth:`TaskKind.about`).

    This imports every kind, and with them the perception stack (ONNX Runtime, OpenCV:
    about 70 MiB): :func:`kind_glossary_apart` runs it in a child process."""
    kinds = []
    for name in KINDS.names():
        try:
            about = KINDS.get(name).about()
        except FlaneurError as err:  # a plug-in kind that does not load
            about = f"(not loaded: {err})"
        kinds.append({"name": name, "about": about})
    return kinds


def kind_glossary_apart() -> list[dict[str, str]]:
    """:func:`kind_glossary` computed in a short-lived child process, so that a server
    showing it does not hold every kind's libraries."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(kind_glossary).result(timeout=120)

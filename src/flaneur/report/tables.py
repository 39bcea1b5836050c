"""Terminal tables of run results (Rich)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from flaneur.metrics.table import METRIC_LABELS


def format_value(value: object, digits: int = 2) -> str:
    """A table cell: ``-`` for missing values, floats with ``digits`` decimals."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def format_p(p: float | None) -> str:
    """A p-value cell: three decimals, or one significant digit below 0.001 (``8e-06``)."""
    if p is None:
        return "-"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.0e}"


PAIRED_COLUMNS = (
    "A",
    "B",
    "paired",
    "A success",
    "B success",
    "A wins",
    "B wins",
    "A − B",
    "95% CI",
    "McNemar p",
)
"""Column heads of a paired comparison table (terminal and HTML)."""

PAIRED_NOTE = (
    "paired (n): episodes both agents ran; A wins: A succeeds where B fails; A − B: "
    "difference of success rates with Newcombe's hybrid score 95% interval; "
    "exact McNemar p, not corrected for multiple comparisons"
)
"""What the columns of a paired comparison table mean (table caption)."""


_TERMINAL_CELLS = (0, 1, 2, 5, 6, 7, 8, 9)
_TERMINAL_HEADS = ("A", "B", "n", "A wins", "B wins", "A − B", "95% CI", "p")
"""The terminal table leaves out the success rates (the metric table shows them) to fit
80 columns."""


def paired_cells(comparison: dict) -> list[str]:
    """The cells of one comparison of :func:`flaneur.metrics.compare_agents`, in
    :data:`PAIRED_COLUMNS` order."""
    c = comparison
    if c["diff"] is None:
        diff = interval = "-"
    else:
        diff = f"{c['diff']:+.2f}"
        interval = f"[{c['diff_low']:+.2f}, {c['diff_high']:+.2f}]"
    return [
        str(c["a"]),
        str(c["b"]),
        str(c["paired"]),
        format_value(c["a_success"]),
        format_value(c["b_success"]),
        str(c["wins"]),
        str(c["losses"]),
        diff,
        interval,
        format_p(c["p_value"]),
    ]


def agent_label(run: dict) -> str:
    """The agent's name in result tables, ``"oracle (privileged)"`` when its rows used
    privileged access (the environment, oracle distances; see :class:`flaneur.agents.EnvInfo`)."""
    name = str(run.get("agent", ""))
    return f"{name} (privileged)" if run.get("privileged") is True else name


def metrics_of(run: dict) -> dict:
    """Overall metric summaries of one (task, agent) entry of a run summary."""
    return (run.get("summary") or {}).get("overall", {}).get("metrics", {})


def _figure(value: object) -> dict[str, Any]:
    """``{"mean", "ci95", "n"}`` of a metric summary (``{"mean", "n", "ci95", ...}``) or of a
    task-set figure (``{"value", "n", "ci95"}``, or a bare number)."""
    if not isinstance(value, dict):
        return {"mean": value, "ci95": None, "n": None}
    mean = value.get("mean", value.get("value"))
    return {"mean": mean, "ci95": value.get("ci95"), "n": value.get("n")}


def metric_figures(
    metrics: dict, *, navigation: bool = True, task_metrics: dict | None = None
) -> dict[str, dict[str, Any]]:
    """Each figure a table shows of one group of rows, by metric key, as ``{"mean", "ci95",
    "n"}``: for navigation the table metrics (:data:`~flaneur.metrics.table.METRIC_LABELS`),
    for other kinds every row metric, then the task-set figures (``task_metrics``, e.g. mAcc).

    Parameters
    ----------
    metrics
        The ``metrics`` of a summary group (``summary.overall`` or one category).
    navigation
        Whether the rows are of the navigation kind.
    task_metrics
        Figures of a whole task set that are not means of rows.
    """
    if navigation:
        return {key: _figure(metrics.get(key) or {}) for key in METRIC_LABELS}
    figures = {key: _figure(value or {}) for key, value in metrics.items()}
    figures.update({key: _figure(value) for key, value in (task_metrics or {}).items()})
    return figures


def run_figures(run: dict) -> dict[str, float | None]:
    """The means of :func:`metric_figures` of one (task, agent) entry of a run summary, by
    column label."""
    navigation = run.get("kind", "navigation") == "navigation"
    figures = metric_figures(
        metrics_of(run), navigation=navigation, task_metrics=run.get("task_metrics")
    )
    return {METRIC_LABELS.get(key, key): cell["mean"] for key, cell in figures.items()}


def results_tables(summary: dict) -> list[Table]:
    """One Rich table per task set: agents side by side, the metrics that apply."""
    tables = []
    for task in dict.fromkeys(run["task"] for run in summary["runs"]):
        runs = [r for r in summary["runs"] if r["task"] == task]
        figures = [run_figures(r) for r in runs]
        shown = [
            k
            for k in dict.fromkeys(k for f in figures for k in f)
            if any(f.get(k) is not None for f in figures)
        ]
        kind = runs[0].get("kind", "navigation")
        facts = f"{runs[0]['scheme']} scheme" if kind == "navigation" else kind
        table = Table(title=f"{task} ({facts})")
        for col in ("agent", "n", *shown):
            table.add_column(col, no_wrap=True, justify="left" if col == "agent" else "right")
        for run, values in zip(runs, figures, strict=True):
            cells = [format_value(values.get(k), 2) for k in shown]
            table.add_row(agent_label(run), str(run["rows"]), *cells)
        ended = {r["agent"]: r["by_termination"] for r in runs}
        table.caption = "; ".join(
            f"{agent}: " + ", ".join(f"{k} {v}" for k, v in sorted(terms.items()))
            for agent, terms in ended.items()
        )
        tables.append(table)
    return tables


def paired_tables(comparisons: list[dict]) -> list[Table]:
    """One Rich table per task: the paired comparisons of its agents (see
    :func:`flaneur.report.run_report.paired_comparisons`)."""
    tables = []
    for task in dict.fromkeys(c["task"] for c in comparisons):
        table = Table(title=f"{task}: paired comparison", caption=PAIRED_NOTE)
        for i, col in enumerate(_TERMINAL_HEADS):
            table.add_column(col, no_wrap=True, justify="left" if i < 2 else "right")
        for c in comparisons:
            if c["task"] == task:
                cells = paired_cells(c)
                table.add_row(*(cells[i] for i in _TERMINAL_CELLS))
        tables.append(table)
    return tables

"""Terminal tables of run results (Rich)."""

from __future__ import annotations

from rich.table import Table

METRIC_LABELS = {"tc": "TC", "spd_hops": "SPD", "kpa": "KPA", "tcp": "TCP", "tce": "TCE",
                 "tcc": "TCC", "sr": "SR", "spl": "SPL", "ndtw": "nDTW"}  # fmt: skip


def format_value(value: object, digits: int = 2) -> str:
    """A table cell: ``-`` for missing values, floats with ``digits`` decimals."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def metrics_of(run: dict) -> dict:
    """Overall metric summaries of one (task, agent) entry of a run summary."""
    return (run.get("summary") or {}).get("overall", {}).get("metrics", {})


def results_tables(summary: dict) -> list[Table]:
    """One Rich table per task set: agents side by side, the metrics that apply."""
    labels = METRIC_LABELS
    tables = []
    for task in dict.fromkeys(run["task"] for run in summary["runs"]):
        runs = [r for r in summary["runs"] if r["task"] == task]
        means = [{k: (metrics_of(r).get(k) or {}).get("mean") for k in labels} for r in runs]
        shown = [k for k in labels if any(m[k] is not None for m in means)]
        table = Table(title=f"{task} ({runs[0]['scheme']} scheme)")
        for col in ("agent", "n", *(labels[k] for k in shown)):
            table.add_column(col, no_wrap=True, justify="left" if col == "agent" else "right")
        for run in runs:
            metrics = metrics_of(run)
            values = [format_value((metrics.get(k) or {}).get("mean"), 2) for k in shown]
            table.add_row(run["agent"], str(run["rows"]), *values)
        ended = {r["agent"]: r["by_termination"] for r in runs}
        table.caption = "; ".join(
            f"{agent}: " + ", ".join(f"{k} {v}" for k, v in sorted(terms.items()))
            for agent, terms in ended.items()
        )
        tables.append(table)
    return tables

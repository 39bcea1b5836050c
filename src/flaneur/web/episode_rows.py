"""A run's episode rows as the run view lists, filters and exports them.

One filter (:class:`EpisodeFilter`, read from a query string) selects rows for the episodes
table, the error panel and the CSV and JSONL downloads, so what is downloaded is what the
table shows. Totals (:func:`usage_totals`) add up tokens, cost and errors of any selection.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import row_success

ERROR_TERMINATIONS = frozenset({"task_error", "agent_error", "model_error"})
"""How a row ends when its episode could not be run or scored."""

CHOICES = ("", "yes", "no")
"""Values of the yes/no filters (``""``: either)."""

MAX_QUERY_CHARS = 200
"""Longest value of any filter parameter."""

CSV_FIELDS = (
    "task",
    "agent",
    "episode_id",
    "category",
    "termination",
    "steps",
    "success",
    "error",
    "total_tokens",
    "cost_usd",
)
"""Leading CSV columns; each metric of the selected rows follows as ``metric.<name>``."""


BRIEF_FIELDS = (
    "task",
    "agent",
    "episode_id",
    "category",
    "city",
    "kind",
    "scheme",
    "termination",
    "steps",
    "success",
    "success_metric",
    "metrics",
    "error",
    "usage",
    "player",
)
"""The fields of a row the run view filters, lists, totals and exports as CSV (not the
prompts, step records or trajectories)."""


def brief_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with only :data:`BRIEF_FIELDS`."""
    return {key: row[key] for key in BRIEF_FIELDS if key in row}


def row_error(row: Mapping[str, Any]) -> str | None:
    """The row's error message, or its termination when it ended in an error without one."""
    error = row.get("error")
    if error:
        return str(error)
    termination = row.get("termination")
    return str(termination) if termination in ERROR_TERMINATIONS else None


def _choice(query: Mapping[str, str], name: str) -> str:
    value = query.get(name, "")
    if value not in CHOICES:
        raise FlaneurError(f"query parameter {name!r} must be yes, no or empty, not {value[:40]!r}")
    return value


@dataclass(frozen=True)
class EpisodeFilter:
    """Which rows of a run to show: each field empty means any.

    Attributes
    ----------
    agent, task, category
        Exact values of those row fields.
    success, error
        ``"yes"`` or ``"no"``: rows that succeeded (failed), that hold an error (none).
    search
        Text the episode id contains (case-insensitive).
    """

    agent: str = ""
    task: str = ""
    category: str = ""
    success: str = ""
    error: str = ""
    search: str = ""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> EpisodeFilter:
        """The filter a query string asks for (``agent``, ``task``, ``category``,
        ``success``, ``error``, ``q``).

        Raises
        ------
        FlaneurError
            A yes/no parameter with another value, or a value longer than
            :data:`MAX_QUERY_CHARS`.
        """
        for name in ("agent", "task", "category", "success", "error", "q"):
            if len(query.get(name, "")) > MAX_QUERY_CHARS:
                raise FlaneurError(
                    f"query parameter {name!r} is longer than {MAX_QUERY_CHARS} characters"
                )
        return cls(
            agent=query.get("agent", ""),
            task=query.get("task", ""),
            category=query.get("category", ""),
            success=_choice(query, "success"),
            error=_choice(query, "error"),
            search=query.get("q", "").strip().lower(),
        )

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether ``row`` passes every set field."""
        exact = (("agent", self.agent), ("task", self.task), ("category", self.category))
        if any(wanted and str(row.get(name)) != wanted for name, wanted in exact):
            return False
        if self.success and row_success(row) != (self.success == "yes"):
            return False
        if self.error and (row_error(row) is not None) != (self.error == "yes"):
            return False
        return not self.search or self.search in str(row.get("episode_id", "")).lower()

    def select(self, rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The rows that match, in log order."""
        return [row for row in rows if self.matches(row)]


def episode_entry(row: Mapping[str, Any]) -> dict[str, Any]:
    """What the episodes table shows of one row (never the prompts or trajectories)."""
    usage = row.get("usage") or {}
    return {
        "task": row.get("task"),
        "agent": row.get("agent"),
        "episode_id": row.get("episode_id"),
        "category": row.get("category"),
        "termination": row.get("termination"),
        "steps": row.get("steps"),
        "success": row_success(row),
        "error": row_error(row),
        "tokens": usage.get("total_tokens"),
        "player": row.get("player"),
    }


def facets(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The values each exact filter can take in ``rows`` (sorted), for the filter menus."""
    seen: dict[str, set[str]] = {"agent": set(), "task": set(), "category": set()}
    for row in rows:
        for name, values in seen.items():
            if row.get(name) is not None:
                values.add(str(row.get(name)))
    return {name: sorted(values) for name, values in seen.items()}


def usage_totals(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Rows, successes, errors (by termination), model calls, tokens and cost of ``rows``."""
    totals: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    cost_usd = 0.0
    count = successes = 0
    for row in rows:
        count += 1
        successes += row_success(row)
        if row_error(row) is not None:
            errors[str(row.get("termination"))] += 1
        usage = row.get("usage") or {}
        for key in ("calls", "prompt_tokens", "completion_tokens", "total_tokens"):
            value = usage.get(key)
            totals[key] += int(value) if isinstance(value, int | float) else 0
        cost = usage.get("cost_usd")
        cost_usd += float(cost) if isinstance(cost, int | float) else 0.0
    return {
        "rows": count,
        "successes": successes,
        "errors": sum(errors.values()),
        "errors_by_termination": dict(errors),
        **{key: totals[key] for key in ("calls", "prompt_tokens", "completion_tokens")},
        "total_tokens": totals["total_tokens"],
        "cost_usd": round(cost_usd, 6),
    }


def rows_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """``rows`` as CSV: :data:`CSV_FIELDS`, then one ``metric.<name>`` column per metric
    any row has (empty where a row has none)."""
    rows = list(rows)
    metric_names = list(dict.fromkeys(k for r in rows for k in (r.get("metrics") or {})))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*CSV_FIELDS, *(f"metric.{name}" for name in metric_names)])
    for row in rows:
        entry = episode_entry(row)
        usage = row.get("usage") or {}
        cells = [entry.get(name) for name in CSV_FIELDS[:8]]
        cells += [usage.get("total_tokens"), usage.get("cost_usd")]
        metrics = row.get("metrics") or {}
        cells += [metrics.get(name) for name in metric_names]
        writer.writerow(["" if cell is None else _csv_cell(cell) for cell in cells])
    return out.getvalue()


def _csv_cell(value: Any) -> Any:
    """A cell as text a spreadsheet will not run: a leading ``= + - @`` is quoted with ``'``
    unless the value is a number."""
    if isinstance(value, bool | int | float):
        return value
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def rows_jsonl(rows: Iterable[Mapping[str, Any]]) -> str:
    """``rows`` as JSON lines, each exactly as the run wrote it."""
    return "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows)

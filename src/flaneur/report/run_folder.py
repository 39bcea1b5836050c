"""Reading a run folder for a report: ``summary.json`` and every row of ``episodes.jsonl``.

A report must not quietly show something else than the run: its metric tables come from
``summary.json`` and its paired comparisons, charts and episode sections from the rows of
``episodes.jsonl``, so the two are read strictly and checked against each other:

- no ``episodes.jsonl``, a line that is not an episode row (junk appended, a corrupt line) or
  bytes that are not UTF-8: an error naming the file and line;
- a last line cut short (a run killed while writing it; ``flaneur run --resume`` repairs
  it): the row is left out, with a warning naming the line;
- fewer or more rows per task and agent than the summary counts (lines lost, or rows
  appended after the summary was written): a warning per task and agent.

Warnings are kept in :attr:`RunData.warnings`; the report shows them at the top of the run's
section and the ``report`` command prints them.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flaneur.errors import DataError

ROW_FIELDS = ("task", "agent", "episode_id")
"""Fields every episode row has (its key)."""


@dataclass
class RunData:
    """A run folder: its summary, its episode rows and what is wrong with them."""

    folder: Path
    summary: dict[str, Any]
    rows: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The folder name."""
        return self.folder.name


LIST_FIELDS = ("path", "trajectory", "actions", "records")


def _row_problem(row: object) -> str:
    """What makes ``row`` not an episode row, or ``""``."""
    if not isinstance(row, dict):
        return f"a JSON {type(row).__name__}, not an object"
    missing = [k for k in ROW_FIELDS if k not in row]
    if missing:
        return f"no {', '.join(missing)}"
    wrong = [k for k in ROW_FIELDS if not isinstance(row[k], str | int)]
    wrong += [k for k in LIST_FIELDS if row.get(k) is not None and not isinstance(row[k], list)]
    if row.get("metrics") is not None and not isinstance(row["metrics"], dict):
        wrong.append("metrics")
    return f"field {', '.join(wrong)} has the wrong type" if wrong else ""


def read_log(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every row of a run log, and warnings (a last line cut short is left out).

    Raises
    ------
    DataError
        The file is missing, or a complete line is not an episode row.
    """
    if not path.is_file():
        raise DataError(
            "missing: the run's episode rows are needed for the report (summary.json alone "
            "cannot be checked); restore it or run again with `flaneur run --resume`",
            path=path,
        )
    data = path.read_bytes()
    lines = data.split(b"\n")
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    for number, raw in enumerate(lines, start=1):
        last = number == len(lines)
        if last and not raw:
            break  # the file ends with a newline
        if not raw.strip():
            continue  # a blank line holds no row
        if last:  # no newline after it: cut short by a kill during the write
            warnings.append(
                f"{path}, line {number}: the last row is cut short (no newline; the run was "
                "stopped while writing it) and is left out; `flaneur run --resume` runs it again"
            )
            break
        try:
            row = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            what = "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else "not JSON"
            raise DataError(
                f"{what}: expected one JSON episode row per line, as `flaneur "
                "run` writes (junk appended or a corrupt file?)",
                path=path,
                line=number,
            ) from None
        problem = _row_problem(row)
        if problem:
            raise DataError(
                f"not an episode row ({problem}); expected one JSON object per "
                "line, as `flaneur run` writes",
                path=path,
                line=number,
            )
        rows.append(row)
    return rows, warnings


def count_mismatches(summary: dict[str, Any], rows: list[dict[str, Any]], log: Path) -> list[str]:
    """Warnings for each task and agent whose row count differs from ``summary.json``."""
    counted = {
        (str(e.get("task")), str(e.get("agent"))): e.get("rows")
        for e in summary.get("runs") or []
        if isinstance(e, dict)
    }
    found = Counter((str(r["task"]), str(r["agent"])) for r in rows)
    warnings = []
    for key in sorted(counted.keys() | found.keys()):
        expected, have = counted.get(key), found.get(key, 0)
        if key in counted and (not isinstance(expected, int) or expected == have):
            continue
        task, agent = key
        if key not in counted:
            warnings.append(
                f"{log}: {have} row(s) of task {task!r} / agent {agent!r}, which "
                "summary.json does not list (rows added after the summary?)"
            )
        else:
            warnings.append(
                f"{log}: {have} row(s) of task {task!r} / agent {agent!r} where "
                f"summary.json counts {expected} (the log was truncated or changed "
                "after the summary); metric tables are from the summary, episode "
                "sections and paired comparisons from the log"
            )
    return warnings


def load_run(folder: str | Path) -> RunData:
    """Read ``summary.json`` and ``episodes.jsonl`` of a run folder, strictly.

    Raises
    ------
    DataError
        No summary, a summary that is not a JSON object, a missing log or a line of it that
        is not an episode row (the error names the file and line).
    """
    folder = Path(folder)
    summary_path = folder / "summary.json"
    if not summary_path.is_file():
        raise DataError("not a run folder (no summary.json; made by `flaneur run`)", path=folder)
    try:
        summary = json.loads(summary_path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise DataError(
            "not UTF-8 text (expected the JSON summary `flaneur run` writes)", path=summary_path
        ) from None
    except json.JSONDecodeError as err:
        raise DataError(f"invalid JSON ({err.msg})", path=summary_path, line=err.lineno) from None
    runs = summary.get("runs") if isinstance(summary, dict) else None
    if not isinstance(runs, list) or not all(isinstance(e, dict) for e in runs):
        raise DataError(
            "not a run summary (expected a JSON object with a `runs` list)", path=summary_path
        )
    log = folder / "episodes.jsonl"
    rows, warnings = read_log(log)
    warnings += count_mismatches(summary, rows, log)
    repeated = [
        k
        for k, n in Counter(
            tuple(map(str, (r["task"], r["agent"], r["episode_id"]))) for r in rows
        ).items()
        if n > 1
    ]
    if repeated:
        task, agent, episode = repeated[0]
        warnings.append(
            f"{log}: {len(repeated)} episode(s) have more than one row (first: "
            f"{task!r} / {agent!r} / {episode!r}); the report uses every row"
        )
    return RunData(folder, summary, rows, warnings)

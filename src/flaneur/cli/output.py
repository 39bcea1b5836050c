"""Shared output helpers: one JSON object on stdout with ``--json``, Rich text otherwise.

Output to a terminal fits the terminal; output through a pipe or into a file is not squeezed
to 80 columns (Rich's default for a stream that is not a terminal) but keeps its natural
width, so no number is cut. Tables wider than a terminal are split into several tables that
repeat the key columns (:func:`print_tables`) instead of cutting cells to ``1.0…``.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table as RichTable

if TYPE_CHECKING:
    from rich.table import Table

UNLIMITED_WIDTH = 1000
"""Width of output that does not go to a terminal (a pipe or a file): wide enough for every
table flaneur prints, so that nothing wraps or is cut."""


def _width_for(stream: Any) -> int | None:
    """``None`` (Rich measures the terminal) for a terminal or when ``COLUMNS`` is set, else
    :data:`UNLIMITED_WIDTH`."""
    if os.environ.get("COLUMNS"):
        return None
    try:
        return None if stream.isatty() else UNLIMITED_WIDTH
    except (AttributeError, ValueError):  # a closed or unusual stream
        return UNLIMITED_WIDTH


console = Console(stderr=False, highlight=False, width=_width_for(sys.stdout))
err_console = Console(stderr=True, highlight=False, width=_width_for(sys.stderr))


def _default(obj: Any) -> Any:
    numpy = sys.modules.get("numpy")  # numpy values exist only once numpy is imported
    if numpy is not None:
        if isinstance(obj, numpy.integer):
            return int(obj)
        if isinstance(obj, numpy.floating):
            value = float(obj)
            return None if math.isnan(value) else value
        if isinstance(obj, numpy.ndarray):
            return obj.tolist()
    if hasattr(obj, "__fspath__"):
        return str(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


def dumps(obj: Any) -> str:
    """Serialise ``obj`` (with numpy scalars and paths) to compact, sorted-key-free JSON."""
    return json.dumps(obj, default=_default, ensure_ascii=False)


def print_json(obj: Any) -> None:
    """Print exactly one JSON object on stdout."""
    print(dumps(obj), flush=True)


def _table_width(table: Table, target: Console) -> int:
    return target.measure(table, options=target.options.update_width(UNLIMITED_WIDTH)).maximum


def _key_columns(table: Table) -> int:
    """How many leading columns name a row (left-justified text such as the agent): they
    are repeated in every part of a split table."""
    keys = 0
    for column in table.columns:
        if column.justify != "left":
            break
        keys += 1
    return keys if 0 < keys < len(table.columns) - 1 else 1


def _part(table: Table, indices: list[int], title: str | None, caption: Any) -> Table:

    part = RichTable(
        title=title,
        caption=caption,
        box=table.box,
        show_header=table.show_header,
        show_lines=table.show_lines,
        padding=table.padding,
    )
    for i in indices:
        column = table.columns[i]
        part.add_column(
            column.header,
            justify=column.justify,
            no_wrap=column.no_wrap,
            style=column.style,
            header_style=column.header_style,
        )
    cells = [list(table.columns[i].cells) for i in indices]
    for row in zip(*cells, strict=True):
        part.add_row(*row)
    return part


def fit_table(table: Table, width: int, target: Console | None = None) -> list[Table]:
    """``table`` as one or more tables no wider than ``width``, without cutting any cell.

    A table that fits is returned as it is. A wider one first loses its edge padding; if it
    still does not fit, its value columns are spread over several tables, each repeating
    the key columns (see :func:`_key_columns`), with the caption under the last one. A
    single column wider than ``width`` stays whole (the terminal wraps it).
    """
    target = target or console
    if _table_width(table, target) <= width:
        return [table]
    table.pad_edge = False
    if _table_width(table, target) <= width:
        return [table]
    keys = list(range(_key_columns(table)))
    rest = list(range(len(keys), len(table.columns)))
    groups: list[list[int]] = []
    for i in rest:
        if (
            groups
            and _table_width(_part(table, keys + groups[-1] + [i], None, None), target) <= width
        ):
            groups[-1].append(i)
        else:
            groups.append([i])
    if len(groups) <= 1:
        return [table]
    parts = []
    for k, group in enumerate(groups, 1):
        title = f"{table.title} ({k}/{len(groups)})" if table.title else None
        caption = table.caption if k == len(groups) else None
        part = _part(table, keys + group, title, caption)
        part.pad_edge = False
        parts.append(part)
    return parts


def print_tables(tables: Iterable[Table], target: Console | None = None) -> None:
    """Print tables on ``target`` (stdout by default), each split to fit its width."""
    target = target or console
    for table in tables:
        for part in fit_table(table, target.width, target):
            target.print(part)

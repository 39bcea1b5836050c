"""``flaneur virl``: V-IRL's services and exemplar agents on a city, offline by default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from flaneur.cli import run_options as ro
from flaneur.cli.failures import check_output_path
from flaneur.cli.output import console, print_json
from flaneur.cli.run import check_views
from flaneur.errors import ArgumentError, FlaneurError, check_finite
from flaneur.evaluate.protocol import check_protocol

virl_app = typer.Typer(
    rich_markup_mode=None,
    help=(
        "V-IRL's platform services (geocode, nearby, directions, optimize, region) and its "
        "language agents (local, ling, peng, aria, vivek, diego). Agents read a persona file "
        "(TOML or YAML; KEY=VALUE overrides after it), run offline unless --llm is given, and "
        "write result.json and map.html into --out."
    ),
    no_args_is_help=True,
)

CITY_HELP = "A built-in city name (helsinki) or a city pack folder."
LLM_HELP = "Model for the agent's language steps (e.g. openai/gpt-4o-mini); offline if unset."
CITY = typer.Option("helsinki", "--city", help=CITY_HELP)
JSON = typer.Option(False, "--json", help="Print one JSON object.")
SNAP = typer.Option(
    500.0,  # flaneur.services.geocode.OFF_STREET_M (not imported: CLI start-up; a test pins it)
    "--snap-radius",
    min=0.0,
    help=(
        "Metres: a lat,lng point farther than this from every street viewpoint is an error "
        "(outside the city) instead of being snapped to the nearest one. nan, inf and "
        "out-of-range latitudes or longitudes are always errors."
    ),
)


def _agent_command(name: str, summary: str):
    def command(
        config: Path = typer.Argument(..., help="Persona/scenario file (.toml, .yaml or .yml)."),
        overrides: list[str] = typer.Argument(None, help="KEY=VALUE overrides, e.g. budget=60."),
        out: Path = typer.Option(
            Path(f"virl-{name}"),
            "-o",
            "--out",
            help="Run folder: scenario.jsonl, episodes.jsonl, summary.json, result.json, map.html.",
        ),
        city: str | None = typer.Option(
            None, "--city", help=CITY_HELP + " Default: the persona's."
        ),
        llm: str | None = typer.Option(None, "--llm", help=LLM_HELP),
        llm_base_url: str | None = typer.Option(
            None, "--llm-base-url", help="OpenAI-compatible server URL."
        ),
        views: str | None = ro.VIEWS,
        json_out: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
        protocol: str = ro.PROTOCOL,
        feedback: str | None = typer.Option(
            None,
            "--feedback",
            hidden=name != "diego",
            help=(
                "Diego's user feedback: a text file (one remark a line, one used per round) "
                "or - to be asked between rounds on stdin (the default when stdin is a "
                "terminal)."
            ),
        ),
    ) -> None:
        # lazy: CLI start-up (docs/DESIGN.md, Imports)
        from flaneur.report.virl_run import run_scenario

        if feedback is not None and name != "diego":
            raise ArgumentError(f"--feedback is an option of diego, not of {name}")
        check_output_path(out, "--out", folder=True)
        check_views(views)
        extra = [f"feedback={json.dumps(feedback)}"] if feedback is not None else []
        result = run_scenario(
            name,
            config,
            [*(overrides or []), *extra],
            out,
            city=city,
            llm=llm,
            llm_base_url=llm_base_url,
            views=views,
            protocol=check_protocol(protocol),
        )
        if json_out:
            print_json(result)
        else:
            console.print(
                f"{name}: wrote {out / 'result.json'} and {out / 'map.html'} "
                f"({result['seconds']} s, {result['llm_calls']} model calls)"
            )

    command.__doc__ = summary
    return command


PERSONA_FIELDS = (
    "The file holds the scenario (name, city, start: a place, address or lat,lng; "
    "background, intention; optional status values 0-100 and budget; and what this agent's "
    "scenario asks for) and the agent's options; `flaneur agents NAME` lists the options and "
    "`flaneur tasks kinds` the scenario fields. The scenario runs through the one runner "
    "(flaneur run --tasks OUT/scenario.jsonl --agent NAME runs it again)."
)
AGENT_HELP = {
    "local": "Local, the direction giver: a question -> route -> milestones -> instruction.",
    "ling": "Ling, the tourist: follows Local's instruction with compass actions; re-asks.",
    "peng": "Peng, the route optimizer: places of a sentence in the best order, walked.",
    "aria": "Aria, the place recommender: places for an intention, rated, best first.",
    "vivek": "Vivek, the estate recommender: listings ranked by nearby amenities.",
    "diego": "Diego, the concierge: a day plan, grounded vs ungrounded travel times.",
    "rx399": "RX-399, the urban assistance robot: walks start -> end, counts objects, crops.",
    "imani": "Imani, the urban planner: counts in a polygon vs OpenStreetMap, heat map.",
    "robot": "RX-399 (the same as rx399).",
    "planner": "Imani (the same as imani).",
}

for _name, _summary in AGENT_HELP.items():
    virl_app.command(_name)(_agent_command(_name, f"{_summary}\n\n{PERSONA_FIELDS}"))


@virl_app.command("geocode")
def geocode_command(
    query: str = typer.Argument(
        ..., help="A place name in any of its languages, an address, a street or lat,lng."
    ),
    city: str = CITY,
    limit: int = typer.Option(5, "--limit", min=1, help="Number of matches."),
    snap_radius: float = SNAP,
    json_out: bool = JSON,
) -> None:
    """Find places, addresses and streets by name, ranked: exact names (any language or
    alias, case and accents ignored) first, then names holding every word, then typos."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.services.geocode import geocode, geocode_one
    from flaneur.world.builtin import load_city

    snap_radius = _snap(snap_radius)
    town = load_city(city)
    # one-line error with the closest names when nothing matches, or for a bad point
    geocode_one(town, query, max_off_m=snap_radius)
    found = [r.to_dict() for r in geocode(town, query, limit=limit, max_off_m=snap_radius)]
    lines = [
        f"{r['score']:5.1f}  {r['kind']:7s}  {r['name']}"
        + (f" [{r['matched']}]" if r["matched"] != r["name"] else "")
        + f"  ({r['lat']:.5f}, {r['lng']:.5f})"
        for r in found
    ]
    _show(json_out, {"query": query, "results": found}, lines)


@virl_app.command("nearby")
def nearby_command(
    place: str = typer.Argument(..., help="Where to search around (name, address or lat,lng)."),
    place_type: str | None = typer.Option(None, "--type", help="Place type (e.g. cafe)."),
    keyword: str | None = typer.Option(None, "--keyword", help="Words in name or tags."),
    radius: float = typer.Option(200.0, "--radius", min=0, help="Radius in metres."),
    rank_by: str = typer.Option("distance", "--rank-by", help="distance or prominence."),
    city: str = CITY,
    snap_radius: float = SNAP,
    json_out: bool = JSON,
) -> None:
    """Places of a type or keyword around a place, with distance and heading."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.services.geocode import resolve_point
    from flaneur.services.nearby import nearby_search
    from flaneur.world.builtin import load_city

    snap_radius = _snap(snap_radius)
    town = load_city(city)
    node, _ = resolve_point(town, place, max_off_m=snap_radius)
    kinds = {"place_type": place_type, "keyword": keyword, "rank_by": rank_by}
    found = _checked(nearby_search, town, town.graph.xy[node], radius_m=radius, **kinds)
    rows = [r.to_dict() for r in found]
    lines = [f"{r['distance_m']:6.0f} m  {r['heading']:5.0f}°  {r['name']}" for r in rows]
    _show(json_out, {"around": place, "results": rows}, lines)


@virl_app.command("directions")
def directions_command(
    origin: str = typer.Argument(..., help="From (name, address or lat,lng)."),
    destination: str = typer.Argument(..., help="To (name, address or lat,lng)."),
    mode: str = typer.Option("walking", "--mode", help="walking, bicycling or driving."),
    city: str = CITY,
    snap_radius: float = SNAP,
    json_out: bool = JSON,
) -> None:
    """The shortest route in steps with key positions, distances and durations."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.services.directions import directions
    from flaneur.services.geocode import resolve_point
    from flaneur.world.builtin import load_city

    snap_radius = _snap(snap_radius)
    town = load_city(city)
    a, _ = resolve_point(town, origin, max_off_m=snap_radius)
    b, _ = resolve_point(town, destination, max_off_m=snap_radius)
    route = _checked(directions, town, a, b, mode=mode)
    lines = [step.instruction for step in route.steps]
    lines.append(f"{route.distance_m:.0f} m, {route.duration_s / 60:.1f} min {mode}")
    _show(json_out, route.to_dict(town), lines)


@virl_app.command("optimize")
def optimize_command(
    places: list[str] = typer.Argument(..., help="Start first, then the places to visit."),
    fixed_end: bool = typer.Option(False, "--fixed-end", help="Keep the last place last."),
    city: str = CITY,
    snap_radius: float = SNAP,
    json_out: bool = JSON,
) -> None:
    """The shortest visiting order of places (OR-Tools), start fixed."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.services.geocode import resolve_point
    from flaneur.services.optimize import optimize_order
    from flaneur.world.builtin import load_city

    snap_radius = _snap(snap_radius)
    town = load_city(city)
    resolved = [resolve_point(town, p, max_off_m=snap_radius) for p in places]
    labels = [label for _, label in resolved]
    _, result = optimize_order(
        town.graph, [n for n, _ in resolved], fixed_end=fixed_end, labels=labels
    )
    order = [labels[i] for i in result.order]
    info = {
        "order": order,
        "length_m": round(result.length_m, 1),
        "given_length_m": round(result.given_length_m, 1),
        "saving_pct": round(result.saving_pct, 1),
    }
    lines = [
        " -> ".join(order),
        f"{info['length_m']} m instead of {info['given_length_m']} m",
    ]
    _show(json_out, info, lines)


@virl_app.command("region")
def region_command(
    polygon: Path = typer.Argument(..., help="GeoJSON polygon or a JSON list of [lat, lng]."),
    spacing: float = typer.Option(50.0, "--spacing", help="Grid spacing in metres."),
    city: str = CITY,
    json_out: bool = JSON,
) -> None:
    """Sample viewpoints in a polygon on a grid and order them for one walk."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.services.region import load_polygon, sample_region
    from flaneur.world.builtin import load_city

    town = load_city(city)
    info = sample_region(town, load_polygon(polygon), spacing_m=spacing).to_dict(town)
    line = (
        f"{len(info['viewpoints'])} viewpoints from {info['grid_points']} grid "
        f"points; walk {info['walk_m']} m ({info['walk_min']} min)"
    )
    _show(json_out, info, [line])


def _snap(value: float) -> float:
    """``--snap-radius`` as finite metres (click's range check lets nan and inf through)."""
    return check_finite(value, "--snap-radius", where="virl", what="metres", low=0.0)


def _checked(service: Any, *args: Any, **kwargs: Any) -> Any:
    """``service(*args, **kwargs)``; its ``ValueError`` (a bad mode, type, ...) one line."""

    try:
        return service(*args, **kwargs)
    except ValueError as err:
        raise FlaneurError(str(err)) from None


def _show(json_out: bool, data: Any, lines: list[str]) -> None:
    """``data`` as one JSON object, or ``lines`` as plain text."""
    if json_out:
        print_json(data)
        return
    for line in lines:
        console.print(line, markup=False, highlight=False)

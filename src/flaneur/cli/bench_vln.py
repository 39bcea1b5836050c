"""``flaneur bench vln``: V-IRL's vision-language navigation benchmark on a city."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer

from flaneur.cli.output import console, err_console, print_json

bench_vln_app = typer.Typer(
    rich_markup_mode=None,
    help="V-IRL's benchmarks on flaneur's cities (vln: vision-language navigation).",
    no_args_is_help=True,
)

PAPER_ROWS = {
    "oracle (V-IRL full, Table 8)": (0.88, 1.0, 0.95, 0.99, 0.96, 0.88),
    "PP-OCR + GPT-3.5 (V-IRL mini, Table 5)": (0.28, 0.89, 0.73, 0.94, 0.72, 0.28),
}
"""The paper's rows (Success, Start reaction, Int. arrival, Int. reaction, Stop arrival,
Stop reaction)."""


def _progress(label: str, quiet: bool):
    """A Rich progress callback ``(done, total)`` on stderr (nothing when ``quiet``)."""
    if quiet:
        return None, None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )
    task = bar.add_task(label, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return bar, update


def run_vln(
    *,
    city: str = "helsinki",
    regions: Path | None = None,
    seed: int = 0,
    per_region: int = 10,
    recognisers: tuple[str, ...] = ("oracle",),
    limit: int | None = None,
    thinker: Any = None,
    quiet: bool = True,
    recogniser_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Collect (or read) the route set and run the tourist with each recogniser.

    ``recogniser_options`` go to :func:`flaneur.bench.vln_recognisers.make_vln_recogniser`
    (``clip_model``, ``clip_weights``, ``clip_backend``, ``model``).
    """
    from flaneur.bench.vln_eval import evaluate
    from flaneur.bench.vln_recognisers import RECOGNISERS, make_vln_recogniser
    from flaneur.bench.vln_routes import (
        check_set,
        collect_routes,
        route_episodes,
    )
    from flaneur.bench.vln_set import SET_ID, helsinki_virl_vln_v1
    from flaneur.errors import FlaneurError

    unknown = sorted(set(recognisers) - set(RECOGNISERS))
    if unknown:
        raise FlaneurError(
            f"--recogniser: unknown {', '.join(unknown)} (expected {', '.join(RECOGNISERS)})"
        )
    options = dict(recogniser_options or {})
    if "clip" in recognisers and not (options.get("clip_weights") or options.get("clip_backend")):
        raise FlaneurError("--recogniser clip needs --clip-weights (a file or open_clip tag)")
    if "vlm" in recognisers and options.get("model") is None:
        raise FlaneurError("--recogniser vlm needs --vlm (a model, e.g. openai/gpt-4o-mini)")
    online = thinker is not None and thinker.online
    bar, update = _progress("collecting routes", quiet)
    with bar or _Null():
        if city == "helsinki" and regions is None and seed == 0 and per_region == 10 and not online:
            city_obj, episodes = helsinki_virl_vln_v1(None, update)
            set_name = SET_ID
        else:
            from flaneur.agents.virl.local import Local
            from flaneur.services.region import Region, load_polygon
            from flaneur.world.builtin import load_city

            city_obj = load_city(city)
            found = None
            if regions is not None:
                found = [Region(regions.stem, load_polygon(regions))]
            local = Local(city_obj, thinker) if thinker is not None else None
            routes = collect_routes(
                city_obj, found, seed=seed, per_region=per_region, local=local, progress=update
            )
            episodes = route_episodes(city_obj, routes)
            set_name = f"{city_obj.name}-virl-vln-s{seed}"
    check_set(episodes)
    if limit is not None:
        episodes = episodes[:limit]
    out: dict[str, Any] = {
        "set": set_name,
        "city": city_obj.name,
        "routes": len(episodes),
        "regions": sorted({e.metadata["region"] for e in episodes}),
        "results": {},
    }
    for name in recognisers:
        rec = make_vln_recogniser(name, city_obj, seed=seed, **options)
        bar, update = _progress(f"tourist with {name} recogniser", quiet)
        with bar or _Null():
            out["results"][name] = evaluate(
                city_obj, episodes, rec, thinker=thinker, progress=update
            )
    return out


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _table(result: dict[str, Any]) -> None:
    from rich.table import Table

    from flaneur.bench.vln_metrics import METRICS

    table = Table(
        title=f"V-IRL VLN on {result['city']} ({result['routes']} routes; "
        "the paper's rows: other cities, Google Street View)"
    )
    table.add_column("recogniser")
    for label in ("Success", "Start reac", "Int arr", "Int reac", "Stop arr", "Stop reac"):
        table.add_column(label, justify="right")
    for name, res in result["results"].items():
        table.add_row(
            f"{name} (flaneur)",
            *("-" if res["metrics"][m] is None else f"{res['metrics'][m]:.2f}" for m in METRICS),
        )
    for name, row in PAPER_ROWS.items():
        table.add_row(name, *(f"{v:.2f}" for v in row))
    console.print(table)


@bench_vln_app.command("vln")
def vln_command(
    city: str = typer.Option("helsinki", "--city", help="Built-in city name or city pack folder."),
    regions: Path | None = typer.Option(
        None,
        "--region",
        help="GeoJSON polygon to draw routes in (default: 500 m grid cells over the city).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the destination order."),
    per_region: int = typer.Option(10, "--per-region", min=1, help="Routes per region."),
    recogniser: list[str] = typer.Option(
        ["oracle"],
        "--recogniser",
        "-r",
        help="Landmark recogniser(s): oracle (map, 20 m), ocr (PP-OCR on synthetic views;"
        " slow the first time, cached after), clip (open_clip, --clip-weights) and/or vlm"
        " (a vision-language model, --vlm).",
    ),
    clip_model: str = typer.Option("ViT-B-32", "--clip-model", help="open_clip architecture."),
    clip_weights: str | None = typer.Option(
        None, "--clip-weights", help="open_clip weights for -r clip: a file or pretrained tag."
    ),
    vlm: str | None = typer.Option(
        None, "--vlm", help="Model string of the vlm recogniser (e.g. openai/gpt-4o-mini)."
    ),
    vlm_base_url: str | None = typer.Option(
        None, "--vlm-base-url", help="OpenAI-compatible server URL for --vlm."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Evaluate the first N routes."),
    llm: str | None = typer.Option(
        None,
        "--llm",
        help="Model writing instructions and choosing"
        " the tourist's actions (offline template and rule if unset).",
    ),
    llm_base_url: str | None = typer.Option(
        None, "--llm-base-url", help="OpenAI-compatible server URL."
    ),
    out: Path | None = typer.Option(None, "-o", "--out", help="Write the full result JSON here."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object (metrics only)."),
) -> None:
    """Collect V-IRL's VLN routes on a city and score the tourist with V-IRL's six metrics."""
    from flaneur.agents.virl.common import make_thinker

    thinker = make_thinker(llm, llm_base_url) if llm else None
    options: dict[str, Any] = {"clip_model": clip_model, "clip_weights": clip_weights}
    if vlm:
        from flaneur.models import make_model

        options["model"] = make_model(vlm, base_url=vlm_base_url)
    try:
        result = run_vln(
            city=city,
            regions=regions,
            seed=seed,
            per_region=per_region,
            recognisers=tuple(recogniser),
            limit=limit,
            thinker=thinker,
            quiet=json_out or not os.isatty(2),
            recogniser_options=options,
        )
    finally:
        if thinker is not None:
            thinker.close()
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(out)
    summary = {k: v for k, v in result.items() if k != "results"}
    summary["metrics"] = {k: v["metrics"] for k, v in result["results"].items()}
    if json_out:
        print_json(summary)
    else:
        _table(result)

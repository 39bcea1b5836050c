"""``flaneur perception``: what agents' perception needs from a city's own imagery.

``clip-reference`` builds VELMA's CLIP threshold set for a city and a view provider and
stores it in the city pack (:mod:`flaneur.perception.landmarks.reference`).
"""

from __future__ import annotations

import shlex
import time
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from flaneur.cli.output import console, err_console, print_json
from flaneur.cli.run import check_views

perception_app = typer.Typer(
    rich_markup_mode=None,
    help="Build what agents' perception needs from a city's own imagery.",
    no_args_is_help=True,
)

CITY_HELP = (
    "The city: a built-in city (helsinki), a city pack folder, or a source as --city takes "
    "it (touchdown:DIR, cityseeker:DIR, an .osm.pbf file; built once and cached as a pack)."
)
VIEWS_HELP = (
    "The imagery: synthetic, panorama:DIR, google, mapillary, a plug-in (entry point "
    "flaneur.views) or package.module:Class, as flaneur run takes it."
)
WEIGHTS_HELP = (
    "open_clip weights: a weights file of --clip-model, a folder in open_clip's format, or a "
    "pretrained tag (downloads only with FLANEUR_DOWNLOAD_WEIGHTS=1)."
)


@perception_app.command("clip-reference")
def clip_reference_command(
    city: str = typer.Argument(..., help=CITY_HELP),
    views: str = typer.Option(..., "--views", help=VIEWS_HELP),
    clip_weights: str = typer.Option(..., "--clip-weights", help=WEIGHTS_HELP),
    # the defaults of flaneur.perception.landmarks.reference (not imported: CLI start-up)
    clip_model: str = typer.Option("ViT-B-32", "--clip-model", help="open_clip architecture."),
    size: int = typer.Option(256, "--size", min=2, max=100_000, help="Views in the set."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the viewpoints and headings."),
    fov: float = typer.Option(
        60.0, "--fov", min=10.0, max=170.0, help="Field of view of each view (VELMA's: 60)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build VELMA's CLIP threshold set for CITY and its imagery, and store it in the pack.

    VELMA sees a landmark in a view when the CLIP similarity of the view and "picture of
    <landmark>", standardised over reference views of the city, reaches 3.5. This draws
    --size views of seeded random viewpoints (outside the city's unseen area where it has
    one) and headings through --views, embeds them with the open_clip model and stores the
    embeddings and their provenance in the pack's clip_reference folder (in the cache when
    the pack is not writable), one set per views, model, weights, size, seed and field of
    view. Runs with --landmarks clip standardise on it: VELMA (--option
    velma.clip_weights=W) needs one, Ling uses it when there is one.
    """
    check_views(views)
    if not clip_weights.strip():
        raise typer.BadParameter("--clip-weights must name weights (a random CLIP sees nothing)")
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.perception.landmarks.reference import clip_backend, writable_folder
    from flaneur.tasks.cities import load_city_spec
    from flaneur.views.registry import views_from_spec

    start = time.perf_counter()
    with err_console.status(f"loading {city} and the model ...", spinner="dots"):
        loaded = load_city_spec(city)
        provider = views_from_spec(views, loaded)
        backend = clip_backend(clip_model, clip_weights)
    refset = _build(loaded, provider, backend, clip_model, clip_weights, size, seed, fov, json_out)
    folder, where = writable_folder(loaded, refset.meta["city"]["fingerprint"])
    path = refset.save(folder)
    _report(refset, path, where, time.perf_counter() - start, json_out)


def _build(
    city: Any,
    provider: Any,
    backend: Any,
    model: str,
    weights: str,
    size: int,
    seed: int,
    fov: float,
    quiet: bool,
) -> Any:
    """Draw and embed the views under a progress bar on stderr (none with ``quiet``)."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.perception.landmarks.reference import build_reference

    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=quiet,
    )
    with bar:
        task = bar.add_task("embedding views", total=size)
        return build_reference(
            city,
            provider,
            backend,
            model=model,
            weights=weights,
            size=size,
            seed=seed,
            fov=fov,
            progress=lambda n: bar.advance(task, n),
        )


def _report(refset: Any, path: Any, where: str, seconds: float, json_out: bool) -> None:
    """Print what was stored: one JSON object, or a sentence and how to use it."""
    meta = refset.meta
    embed = meta["seconds"]["embed"]
    info = {
        "name": refset.name,
        "path": str(path),
        "stored_in": where,
        "city": meta["city"]["name"],
        "views": meta["views"]["spec"],
        "model": meta["clip"]["model"],
        "weights": meta["clip"]["weights"],
        "backend": meta["clip"]["backend"],
        "dim": meta["clip"]["dim"],
        "size": meta["size"],
        "seed": meta["seed"],
        "fov": meta["fov"],
        "drawn_from": meta["drawn_from"],
        "skipped": meta["skipped"],
        "seconds": round(seconds, 3),
        "render_seconds": meta["seconds"]["render"],
        "embed_seconds": embed,
        "views_per_second": round(meta["size"] / embed, 1) if embed > 0 else None,
    }
    if json_out:
        print_json(info)
        return
    console.print(
        f"stored {info['size']} views of {info['city']} ({info['views']}, {info['dim']}-d "
        f"{info['backend']}) in the {where}: {path}"
    )
    console.print(
        f"{info['seconds']} s: render {info['render_seconds']} s, embed {embed} s "
        f"({info['views_per_second']} views/s); {info['skipped']} viewpoints without imagery"
    )
    words = ["--views", str(info["views"]), "--landmarks", "clip"]
    if info["model"] != "ViT-B-32":
        words += ["--option", f"velma.clip_model={info['model']}"]
    words += ["--option", f"velma.clip_weights={info['weights']}"]
    console.print(f"use it: flaneur run ... {shlex.join(words)}", markup=False)


__all__ = ["clip_reference_command", "perception_app"]

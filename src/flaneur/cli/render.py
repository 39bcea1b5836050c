"""``flaneur render``: street views of a city pack (or a contact sheet): rendered offline by
default, or from the provider of ``--views`` as ``flaneur run`` takes it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from flaneur.cli import run_options as ro
from flaneur.cli.failures import check_output_path
from flaneur.cli.output import console, print_json
from flaneur.cli.run import check_views
from flaneur.errors import FlaneurError

if TYPE_CHECKING:
    from PIL import Image


def contact_sheet(images: list[Image.Image], labels: list[str], columns: int = 4) -> Image.Image:
    """Tile images (all the same size) in rows of ``columns``, each with a caption."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from PIL import Image, ImageDraw

    w, h = images[0].size
    rows = (len(images) + columns - 1) // columns
    cols = min(columns, len(images))
    sheet = Image.new("RGB", (cols * w, rows * h), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    for k, (img, label) in enumerate(zip(images, labels, strict=True)):
        x, y = (k % columns) * w, (k // columns) * h
        sheet.paste(img, (x, y))
        draw.rectangle([x, y, x + 8 * len(label) + 12, y + 20], fill=(0, 0, 0))
        draw.text((x + 6, y + 4), label, fill=(255, 255, 255))
    return sheet


def render_command(
    pack: str = typer.Argument(..., help="City pack folder, or a built-in city (helsinki)."),
    node: str = typer.Option(..., "--node", help="Viewpoint node id."),
    heading: float = typer.Option(0.0, "--heading", help="Compass heading in degrees."),
    around: int | None = typer.Option(
        None, "--around", min=1, max=36, help="A contact sheet of N headings instead."
    ),
    fov: float = typer.Option(60.0, "--fov", help="Horizontal field of view, in (0, 180)."),
    pitch: float = typer.Option(0.0, "--pitch", help="Pitch in degrees (up positive)."),
    size: str = typer.Option("800x460", "--size", help="Image size WIDTHxHEIGHT."),
    out: Path = typer.Option(..., "-o", "--out", help="Output image (.png or .jpg)."),
    views: str | None = ro.VIEWS,
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Render the street view of NODE (or a contact sheet of N headings): synthetic, or from
    the provider of --views."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.views.base import parse_size
    from flaneur.views.registry import views_from_spec
    from flaneur.world.builtin import load_city

    check_output_path(out, "--out", folder=False)
    check_views(views)
    wh = parse_size(size)
    if not 0.0 < fov < 180.0:
        raise FlaneurError(f"--fov must be in (0, 180) degrees, not {fov:g}")
    if out.suffix.lower() not in (".png", ".jpg", ".jpeg"):
        raise FlaneurError(f"output must end in .png or .jpg, not {out.name!r}")
    city = load_city(pack)
    provider = views_from_spec(views or "synthetic", city)
    node_index = city.graph.index(node)
    t0 = time.perf_counter()
    if around:
        headings = [(heading + k * 360.0 / around) % 360.0 for k in range(around)]
        shown = [provider.view(node_index, h, pitch=pitch, fov=fov, size=wh) for h in headings]
        image = contact_sheet([v.image for v in shown], [f"{h:.0f} deg" for h in headings])
        signs = sorted({s["name"] for v in shown for s in v.metadata.get("signs", [])})
    else:
        view = provider.view(node_index, heading, pitch=pitch, fov=fov, size=wh)
        image, headings = view.image, [view.heading]
        signs = sorted({s["name"] for s in view.metadata.get("signs", [])})
    elapsed = time.perf_counter() - t0
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out)
    result = {
        "city": city.name,
        "views": views or "synthetic",
        "node": node,
        "headings": headings,
        "fov": fov,
        "pitch": pitch,
        "size": list(image.size),
        "out": str(out),
        "signs": signs,
        "seconds": round(elapsed, 3),
    }
    if json_out:
        print_json(result)
    else:
        console.print(f"wrote {out} ({image.size[0]}x{image.size[1]}, {len(headings)} view(s))")

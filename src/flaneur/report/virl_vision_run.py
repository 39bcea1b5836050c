"""V-IRL's vision agents: RX-399, the urban assistance robot, and Imani, the urban planner.

``robot``
    Walks the route from ``start`` to ``end`` (places, addresses or ``lat,lng``; the
    services' geocoder and directions), looks around at every viewpoint (``views_per_point``
    views of fov 60, default 3 as in V-IRL), detects the cared ``labels``, confirms each box by
    active detection (``looks`` zoomed views at most per box, default 1: V-IRL's single check), de-duplicates in a visual memory and reports the count table with one
    PNG crop per counted object (``crops/``).
``planner``
    Samples viewpoints inside ``polygon`` (a GeoJSON file relative to the config, or a list of
    ``[lat, lng]`` pairs) with the region service, runs the robot's perception at every sampled
    point (default ``views_per_point`` 6: a full turn, since a planner counts all around),
    and puts the counts per category beside the OpenStreetMap street furniture in the polygon
    (over/under-count; with the scene simulator also the de-duplication errors: one object
    counted twice, two objects merged). The heat map of counted objects per grid cell is drawn
    as an offline SVG (``heatmap.svg``, also in ``map.html``) and as a map layer of coloured
    cells (plain Leaflet vectors: no plug-in script, so the page stays offline).

Detection uses the scene detector simulator on synthetic views (offline, seeded by
``seed``) unless ``detector`` names a real one (``yolo-world``, ``yolo``, ``owlvit``) with its
``weights`` file. Both agents save their visual memory as ``memory.json``; ``memory`` names
such a file to continue from (its objects are matched and counted again).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import shapely

from flaneur.agents.virl.common import esc, resolve_point
from flaneur.errors import DataError
from flaneur.perception.detection.base import DetectionError, check_labels, taxonomy_labels
from flaneur.perception.memory import VisualMemory
from flaneur.perception.survey import SurveyResult, SurveySettings, survey_route
from flaneur.report.virl_maps import add_marker, add_path, base_map
from flaneur.services.persona import Persona
from flaneur.world.city import City

PALETTE = ("#fff5eb", "#fdd0a2", "#fd8d3c", "#d94801", "#7f2704")


def _labels(persona: Persona, default: list[str]) -> tuple[str, ...]:
    raw = persona.options.get("labels", default)
    if isinstance(raw, str):
        raw = [x for x in raw.split(",") if x.strip()]
    try:
        labels = check_labels(raw)
        taxonomy_labels(labels)
    except DetectionError as err:
        raise DataError(f"field 'labels': {err}", path=persona.source) from None
    return labels


def _looks(persona: Persona) -> int:
    """The ``looks`` option: zoomed looks at most per box (multi-scale confirmation)."""
    raw = persona.options.get("looks", SurveySettings.looks)
    text = str(raw).strip()
    if (
        isinstance(raw, bool)
        or not isinstance(raw, int | str)
        or not text.isdecimal()
        or int(text) < 1
    ):
        raise DataError(
            f"field 'looks' must be a positive integer, not {raw!r}", path=persona.source
        )
    return int(text)


def _settings(persona: Persona, views: int) -> SurveySettings:
    n = int(persona.options.get("views_per_point", views))
    if not 1 <= n <= 12:
        raise DataError("field 'views_per_point' must be 1..12", path=persona.source)
    size = int(persona.options.get("view_size", 640))
    return SurveySettings(
        views_per_point=n,
        fov=360.0 / n if n > 3 else 60.0,
        size=(size, size),
        active=bool(persona.options.get("active", True)),
        threshold=0.45 if persona.options.get("active", True) else 0.55,
        looks=_looks(persona),
    )


def _option_path(persona: Persona, key: str) -> Path | None:
    raw = persona.options.get(key)
    if raw is None or str(raw).strip() == "":
        return None
    path = Path(str(raw)).expanduser()
    if not path.is_absolute() and persona.source is not None:
        path = persona.source.parent / path
    return path


def _detector(persona: Persona) -> Any:
    """The persona's detector: the scene simulator (default) or a real model from weights."""
    from flaneur.perception.detection import DETECTORS, SceneDetector, SceneNoise, make_detector

    name = str(persona.options.get("detector", "scene"))
    if name not in DETECTORS or name == "ocr":
        choices = ", ".join(d for d in DETECTORS if d != "ocr")
        raise DataError(f"field 'detector': {name!r} is not one of {choices}", path=persona.source)
    if name == "scene":
        profiles = {"default": SceneNoise, "virl": SceneNoise.virl}
        profile = str(persona.options.get("noise", "default"))
        if profile not in profiles:
            raise DataError(
                f"field 'noise': {profile!r} is not one of {', '.join(profiles)}",
                path=persona.source,
            )
        return SceneDetector(profiles[profile](), seed=int(persona.options.get("seed", 0)))
    weights = _option_path(persona, "weights")
    if weights is None:
        raise DataError(
            f"field 'weights' is required with detector {name!r}: the model file's path",
            path=persona.source,
        )
    if not weights.exists():
        raise DataError(f"field 'weights': {weights} not found", path=persona.source)
    return make_detector(name, weights=str(weights))


def _memory(city: City, persona: Persona) -> VisualMemory:
    """A fresh visual memory, or the one in the persona's ``memory`` file (to continue)."""
    path = _option_path(persona, "memory")
    if path is None:
        return VisualMemory()
    memory = VisualMemory.load(path)
    known = set(city.graph.ids.tolist())
    for obj in memory.objects:
        for s in obj.sightings:
            if s.node not in known:
                raise DataError(
                    f"visual memory was made in another city (viewpoint {s.node!r} is not in "
                    f"{city.name})",
                    path=path,
                )
    return memory


def _perceive(city: City, persona: Persona, route: list[int], views: int):
    from flaneur.views.synthetic import SyntheticViews

    labels = _labels(persona, ["trash bin"])
    settings = _settings(persona, views)
    detector = _detector(persona)
    memory = _memory(city, persona)
    provider = SyntheticViews(city, scene_cache=True).prepare()
    walked = survey_route(provider, city, route, detector, labels, settings, memory=memory)
    return provider, labels, walked


def object_rows(city: City, walked: SurveyResult) -> list[dict[str, Any]]:
    """One row per counted object: category, estimated position, sightings, best score."""
    rows = []
    for obj in walked.memory.objects:
        x, y = obj.position
        lat, lng = city.graph.projection.inverse(np.asarray([x]), np.asarray([y]))
        rows.append(
            {
                "id": obj.id,
                "category": obj.category,
                "lat": float(lat[0]),
                "lng": float(lng[0]),
                "sightings": len(obj.sightings),
                "score": round(max(s.score for s in obj.sightings), 3),
            }
        )
    return rows


def write_crops(provider: Any, city: City, walked: SurveyResult, folder: Path) -> list[str]:
    """Crop every counted object from its best view into ``folder/crops/<id>.png``."""
    out = folder / "crops"
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for obj in walked.memory.objects:
        s = max(obj.sightings, key=lambda t: t.score)
        view = provider.view(
            city.graph.index(s.node),
            s.view_heading,
            pitch=s.view_pitch,
            fov=s.view_fov,
            size=walked.settings.size,
        )
        w, h = view.image.size
        x0, y0, x1, y1 = s.box
        box = (max(0, int(x0)), max(0, int(y0)), min(w, int(np.ceil(x1))), min(h, int(np.ceil(y1))))
        name = f"crops/{obj.id:04d}-{obj.category}.png"
        view.image.crop(box).save(folder / name)
        names.append(name)
    return names


def run_robot(city: City, persona: Persona, thinker: Any, out: Path):
    """RX-399: walk start -> end, count the labelled objects, crop each one."""
    from flaneur.services.directions import directions

    start, start_label = resolve_point(city, persona.start)
    end_text = persona.options.get("end")
    if not end_text:
        raise DataError("field 'end' is required for the robot", path=persona.source)
    end, end_label = resolve_point(city, str(end_text))
    route = directions(city, start, end)
    nodes = list(route.nodes)
    provider, labels, walked = _perceive(city, persona, nodes, 3)
    walked.memory.save(Path(out) / "memory.json")
    crops = write_crops(provider, city, walked, Path(out))
    objects = object_rows(city, walked)
    for row, crop in zip(objects, crops, strict=True):
        row["crop"] = crop
    fmap = base_map(city, nodes)
    add_path(fmap, city, nodes, "#2b6cb0", f"route {start_label} -> {end_label}")
    for row in objects:
        add_marker(
            fmap,
            row["lat"],
            row["lng"],
            f"{row['category']} #{row['id']}",
            "red",
            popup=f"score {row['score']}, seen {row['sightings']}x",
        )
    result = {
        "start": start_label,
        "end": end_label,
        "labels": list(labels),
        "route_m": round(route.distance_m, 1),
        "viewpoints": len(nodes),
        "views": walked.views,
        "counts": walked.counts(),
        "objects": objects,
        "settings": {
            "views_per_point": walked.settings.views_per_point,
            "fov": walked.settings.fov,
            "active": walked.settings.active,
            "looks": walked.settings.looks,
        },
    }
    return result, fmap


def _polygon(persona: Persona) -> shapely.Polygon:
    from flaneur.services.region import load_polygon, polygon_from_latlng

    raw = persona.options.get("polygon")
    if raw is None or raw == "" or raw == []:
        raise DataError(
            "field 'polygon' is required: a GeoJSON file or [[lat, lng], ...]", path=persona.source
        )
    if isinstance(raw, str):
        file = Path(raw)
        if not file.is_absolute() and persona.source is not None:
            file = persona.source.parent / file
        return load_polygon(file)
    return polygon_from_latlng(raw)


def dedup_errors(walked: SurveyResult) -> dict[str, int]:
    """With simulator object ids: ``duplicates`` (extra objects for one real object) and
    ``merged`` (objects whose sightings are of more than one real object)."""
    owners: dict[str, int] = {}
    merged = 0
    for obj in walked.memory.objects:
        ids = {s.object_id for s in obj.sightings if s.object_id}
        merged += len(ids) > 1
        for i in ids:
            owners[i] = owners.get(i, 0) + 1
    return {"duplicates": sum(n - 1 for n in owners.values()), "merged": int(merged)}


def heat_cells(
    city: City, polygon: shapely.Polygon, points: list[tuple[float, float]], cell_m: float
) -> list[dict[str, Any]]:
    """Counts of ``(lat, lng)`` points per square cell of ``cell_m`` over the polygon."""
    proj = city.graph.projection
    ring = np.asarray(polygon.exterior.coords)
    x, y = proj.forward(ring[:, 1], ring[:, 0])
    x0, y0 = float(np.min(x)), float(np.min(y))
    counts: dict[tuple[int, int], int] = {}
    if points:
        lat = np.asarray([p[0] for p in points])
        lng = np.asarray([p[1] for p in points])
        px, py = proj.forward(lat, lng)
        for cx, cy in zip(
            ((px - x0) // cell_m).astype(int), ((py - y0) // cell_m).astype(int), strict=True
        ):
            counts[(int(cx), int(cy))] = counts.get((int(cx), int(cy)), 0) + 1
    cells = []
    for (cx, cy), n in sorted(counts.items()):
        lats, lngs = proj.inverse(
            np.asarray([x0 + cx * cell_m, x0 + (cx + 1) * cell_m]),
            np.asarray([y0 + cy * cell_m, y0 + (cy + 1) * cell_m]),
        )
        cells.append(
            {
                "south": float(lats[0]),
                "north": float(lats[1]),
                "west": float(lngs[0]),
                "east": float(lngs[1]),
                "count": n,
            }
        )
    return cells


def _colour(n: int, top: int) -> str:
    return PALETTE[min(len(PALETTE) - 1, round((len(PALETTE) - 1) * n / max(top, 1)))]


def heat_svg(
    polygon: shapely.Polygon,
    cells: list[dict[str, Any]],
    truth: list[tuple[float, float]],
    title: str,
    width: int = 600,
) -> str:
    """An offline SVG heat map: cells coloured by count, the polygon, ground truth as dots."""
    west, south, east, north = polygon.bounds
    aspect = (north - south) / max((east - west) * np.cos(np.radians((north + south) / 2)), 1e-9)
    height = int(width * aspect)

    def px(lat: float, lng: float) -> tuple[float, float]:
        return ((lng - west) / (east - west) * width, (north - lat) / (north - south) * height)

    top = max((c["count"] for c in cells), default=0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 40}" '
        f'font-family="sans-serif" font-size="12"><rect width="100%" height="100%" '
        f'fill="white"/><text x="4" y="{height + 16}">{esc(title)}</text>'
        f'<text x="4" y="{height + 32}">cells: counted (max {top}); '
        f"dots: OSM ground truth</text>"
    ]
    for c in cells:
        ax, ay = px(c["north"], c["west"])
        bx, by = px(c["south"], c["east"])
        parts.append(
            f'<rect x="{ax:.1f}" y="{ay:.1f}" width="{bx - ax:.1f}" '
            f'height="{by - ay:.1f}" fill="{_colour(c["count"], top)}" '
            f'fill-opacity="0.85"><title>{c["count"]}</title></rect>'
        )
    ring = " ".join("{:.1f},{:.1f}".format(*px(lat, lng)) for lng, lat in polygon.exterior.coords)
    parts.append(f'<polygon points="{ring}" fill="none" stroke="#2b6cb0" stroke-width="2"/>')
    for lat, lng in truth:
        x, y = px(lat, lng)
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="black"/>')
    parts.append("</svg>")
    return "".join(parts)


def run_planner(city: City, persona: Persona, thinker: Any, out: Path):
    """Imani: counts in a polygon against OpenStreetMap, with a heat map."""
    import folium

    from flaneur.perception.detection.base import taxonomy_labels as categories_of
    from flaneur.report.leaflet_map import TextTooltip
    from flaneur.services.region import sample_region
    from flaneur.world.furniture import FURNITURE_KINDS

    polygon = _polygon(persona)
    spacing = float(persona.options.get("spacing", 50.0))
    sample = sample_region(city, polygon, spacing_m=spacing)
    labels = _labels(persona, ["trash bin", "bench"])
    categories = sorted(set(categories_of(labels).values()))
    unknown = [c for c in categories if c not in FURNITURE_KINDS]
    if unknown:
        raise DataError(
            f"field 'labels': {unknown[0]!r} is not street furniture (choose from "
            f"{', '.join(FURNITURE_KINDS)})",
            path=persona.source,
        )
    _, labels, walked = _perceive(city, persona, list(sample.nodes), 6)
    walked.memory.save(Path(out) / "memory.json")
    objects = object_rows(city, walked)
    inside = [o for o in objects if shapely.contains_xy(polygon, o["lng"], o["lat"])]
    furn = city.furniture
    truth_rows = {
        c: [
            int(r)
            for r in furn.of_kind(c)
            if shapely.contains_xy(polygon, float(furn.lng[r]), float(furn.lat[r]))
        ]
        for c in categories
    }
    table = {}
    for c in categories:
        counted = sum(1 for o in inside if o["category"] == c)
        truth = len(truth_rows[c])
        table[c] = {"counted": counted, "ground_truth": truth, "difference": counted - truth}
    cells = heat_cells(city, polygon, [(o["lat"], o["lng"]) for o in inside], spacing)
    truth_points = [
        (float(furn.lat[r]), float(furn.lng[r])) for rs in truth_rows.values() for r in rs
    ]
    svg = heat_svg(
        polygon, cells, truth_points, f"{persona.name}: {', '.join(labels)} in the region"
    )
    fmap = base_map(city, list(sample.nodes))
    ring = [[lat, lng] for lng, lat in polygon.exterior.coords]
    folium.PolyLine(ring, color="#2b6cb0", weight=3).add_to(fmap)
    top = max((c["count"] for c in cells), default=0)
    heat = folium.FeatureGroup(name="heat map (counted objects per cell)")
    for c in cells:
        folium.Rectangle(
            [[c["south"], c["west"]], [c["north"], c["east"]]],
            weight=0,
            fill=True,
            fill_color=_colour(c["count"], top),
            fill_opacity=0.7,
        ).add_to(heat)
    heat.add_to(fmap)
    add_path(fmap, city, list(sample.route.nodes), "#2f855a", "sampling walk", dash="4,4")
    for lat, lng in truth_points:
        dot = folium.CircleMarker(
            [lat, lng], radius=3, color="black", fill=True, weight=1, fill_opacity=0.9
        )
        dot.add_child(TextTooltip("OpenStreetMap ground truth")).add_to(fmap)
    small = heat_svg(polygon, cells, truth_points, f"{persona.name}: counted per cell", width=320)
    fmap.get_root().html.add_child(
        folium.Element(
            f'<div style="position:absolute;right:8px;bottom:24px;z-index:1000">{small}</div>'
        )
    )
    result = {
        "labels": list(labels),
        "region": sample.to_dict(city),
        "viewpoints": len(sample.nodes),
        "views": walked.views,
        "counts": table,
        "counted_outside_polygon": len(objects) - len(inside),
        "dedup_errors": dedup_errors(walked),
        "heat_cells": cells,
        "objects": inside,
        "settings": {
            "views_per_point": walked.settings.views_per_point,
            "fov": walked.settings.fov,
            "looks": walked.settings.looks,
            "spacing_m": spacing,
        },
    }
    return result, fmap, {"heatmap.svg": svg}

"""Small inline SVG maps of episodes (offline: no tiles, no scripts).

An episode map shows the streets around the episode, the reference path, the agent's path,
the start, the goals, the target places and the named places near where the agent stopped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from flaneur.report.escaping import html_text as escape
from flaneur.world.city import City

COLOURS = {
    "street": "#c8c8c8",
    "reference": "#2b6cb0",
    "agent": "#dd6b20",
    "start": "#2f855a",
    "goal": "#c53030",
    "place": "#6b46c1",
    "near": "#718096",
}


def _polyline(points: np.ndarray, colour: str, width: float, dash: str = "") -> str:
    coords = " ".join(f"{x:.0f},{y:.0f}" for x, y in points)
    extra = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="{width}" '
        f'stroke-linejoin="round" stroke-linecap="round"{extra}/>'
    )


def episode_svg(
    city: City,
    reference: Sequence[int],
    path: Sequence[int],
    *,
    goals: Sequence[int] = (),
    goal_places: Sequence[int] = (),
    size: int = 360,
    margin_m: float = 60.0,
    near_radius_m: float = 50.0,
) -> str:
    """An SVG map of one episode.

    Parameters
    ----------
    city
        The city of the episode.
    reference, path
        Node indices of the reference path and of the agent's path.
    goals
        Goal node indices.
    goal_places
        Place rows of the targets.
    size
        Width and height in pixels.
    margin_m
        Metres shown around the paths.
    near_radius_m
        Named places within this radius of the agent's last node are drawn and labelled.
    """
    graph = city.graph
    nodes = [n for n in (*reference, *path, *goals) if graph.located[n]]
    if not nodes:
        return "<p>(no located nodes to draw)</p>"
    xy = graph.xy
    pts = xy[np.asarray(nodes)]
    if goal_places:
        pts = np.vstack([pts, city.places.xy[np.asarray(goal_places)]])
    frame = _Frame.around(pts, margin_m, size)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
        f'viewBox="0 0 {size} {size}" style="background:#fafafa;border:1px solid #ddd">'
    ]
    parts += _streets(city, frame)
    if len(reference) > 1:
        parts.append(_polyline(frame.px(xy[np.asarray(reference)]), COLOURS["reference"], 4))
    if len(path) > 1:
        parts.append(_polyline(frame.px(xy[np.asarray(path)]), COLOURS["agent"], 2.5, "6,4"))
    if path:
        parts += _near_places(city, path[-1], near_radius_m, frame)
    parts += _markers(city, reference, path, goals, goal_places, frame)
    bar_m = 50 if frame.span < 600 else 200
    parts.append(
        f'<line x1="10" y1="{size - 10}" x2="{10 + bar_m * frame.scale:.1f}" y2="{size - 10}" '
        f'stroke="#333" stroke-width="2"/><text x="12" y="{size - 14}" font-size="10">{bar_m} m</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


class _Frame:
    """The square of the city a map shows: its lower-left corner ``lo``, side ``span`` (metres)
    and ``scale`` (pixels per metre) in a ``size``-pixel square."""

    def __init__(self, lo: np.ndarray, span: float, size: int) -> None:
        self.lo, self.span, self.size = lo, span, size
        self.scale = size / span

    @classmethod
    def around(cls, pts: np.ndarray, margin_m: float, size: int) -> _Frame:
        """The square centred on the bounding box of ``pts`` with ``margin_m`` around it."""
        lo, hi = pts.min(axis=0) - margin_m, pts.max(axis=0) + margin_m
        span = float(max(hi - lo))
        return cls((lo + hi) / 2 - span / 2, span, size)

    def px(self, p: np.ndarray) -> np.ndarray:
        """Pixel coordinates ``(n, 2)`` of points in metres (y down)."""
        p = np.atleast_2d(p)
        lo, scale = self.lo, self.scale
        return np.column_stack([(p[:, 0] - lo[0]) * scale, self.size - (p[:, 1] - lo[1]) * scale])


def _streets(city: City, frame: _Frame) -> list[str]:
    """One SVG path of the street edges wholly inside the frame (none when there are none)."""
    graph, xy = city.graph, city.graph.xy
    src, dst = graph.edge_sources, graph.targets.astype(np.int64)
    inside = np.all((xy >= frame.lo) & (xy <= frame.lo + frame.span), axis=1) & graph.located
    keep = (src < dst) & inside[src] & inside[dst]
    if not keep.any():
        return []
    to_px = frame.px
    a, b = to_px(xy[src[keep]]).round().astype(int), to_px(xy[dst[keep]]).round().astype(int)
    segments = "".join(
        f"M{x0} {y0}L{x1} {y1}" for (x0, y0), (x1, y1) in zip(a.tolist(), b.tolist(), strict=True)
    )
    return [
        f'<path d="{segments}" stroke="{COLOURS["street"]}" stroke-width="3" fill="none" stroke-linecap="round"/>'
    ]


def _near_places(city: City, node: int, radius_m: float, frame: _Frame) -> list[str]:
    """Dots and names of (at most 12 of) the named places within ``radius_m`` of ``node``."""
    parts = []
    rows, _ = city.places.within(city.graph.xy[node], radius_m)
    for r in rows[:12].tolist():
        if city.places.names[r]:
            ((x, y),) = frame.px(city.places.xy[r])
            label = escape(city.places.names[r], 28)
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{COLOURS["near"]}"/>'
                f'<text x="{x + 4:.1f}" y="{y - 3:.1f}" font-size="9" fill="#4a5568">{label}</text>'
            )
    return parts


def _markers(
    city: City,
    reference: Sequence[int],
    path: Sequence[int],
    goals: Sequence[int],
    goal_places: Sequence[int],
    frame: _Frame,
) -> list[str]:
    """The target places (squares), the goals (rings), the start and where the agent stopped."""
    xy, to_px = city.graph.xy, frame.px
    parts = []
    for r in goal_places:
        ((x, y),) = to_px(city.places.xy[r])
        parts.append(
            f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" fill="{COLOURS["place"]}">'
            f"<title>{escape(city.places.names[r] or 'target')}</title></rect>"
        )
    for n in goals:
        ((x, y),) = to_px(xy[n])
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="none" stroke="{COLOURS["goal"]}" stroke-width="3"/>'
        )
    start = reference[0] if reference else (path[0] if path else None)
    if start is not None:
        ((x, y),) = to_px(xy[start])
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{COLOURS["start"]}"/>')
    if path:
        ((x, y),) = to_px(xy[path[-1]])
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{COLOURS["agent"]}"/>')
    return parts


def bar_chart_svg(
    groups: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    title: str,
    width: int = 720,
    bar_h: int = 9,
    intervals: Mapping[str, Sequence[Sequence[float] | None]] | None = None,
) -> str:
    """Horizontal grouped bar chart as SVG: one group per category, one bar per series.

    Bars run from 0 to the largest value or interval end (at least 1, so rates in [0, 1]
    keep one scale); ``intervals[name][g]`` (``(low, high)``), where given, is drawn as a
    whisker over bar ``g`` of series ``name``. The chart is an image with ``title`` as its
    accessible name.
    """
    palette = ["#2b6cb0", "#dd6b20", "#2f855a", "#c53030", "#6b46c1", "#b7791f", "#319795"]
    names = list(series)
    whiskers = intervals or {}
    ends = [float(v) for name in names for v in series[name] if v is not None]
    ends += [float(i[1]) for name in names for i in whiskers.get(name, ()) if i]
    top_value = max([1.0, *(e for e in ends if math.isfinite(e))])
    label_w, top = 190, 28
    group_h = bar_h * len(names) + 8
    height = top + group_h * len(groups) + 20 + 14 * len(names)
    scale = (width - label_w - 60) / top_value
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
        f'<text x="4" y="16" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    for g, group in enumerate(groups):
        y0 = top + g * group_h
        parts.append(
            f'<text x="4" y="{y0 + group_h / 2 + 3:.0f}" font-size="11">{escape(group)}</text>'
        )
        for s, name in enumerate(names):
            value = series[name][g]
            y = y0 + s * bar_h
            if value is None or not math.isfinite(float(value)):
                continue
            w = max(0.0, float(value)) * scale
            parts.append(
                f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 1}" '
                f'fill="{palette[s % len(palette)]}"/>'
            )
            band = list(whiskers.get(name, ()))
            ci = band[g] if g < len(band) else None
            text_x = label_w + w + 3
            if ci and all(math.isfinite(float(v)) for v in ci):
                lo, hi = (label_w + max(0.0, float(v)) * scale for v in ci)
                mid = y + (bar_h - 1) / 2
                parts.append(
                    f'<path d="M{lo:.1f} {mid:.1f}H{hi:.1f}M{lo:.1f} {y}V{y + bar_h - 1}'
                    f'M{hi:.1f} {y}V{y + bar_h - 1}" stroke="#1a202c" stroke-width="1"/>'
                )
                text_x = max(text_x, hi + 3)
            parts.append(
                f'<text x="{text_x:.1f}" y="{y + bar_h - 1}" font-size="8">{value:.2f}</text>'
            )
    y = top + group_h * len(groups) + 10
    for s, name in enumerate(names):
        parts.append(
            f'<rect x="{label_w}" y="{y + 14 * s}" width="10" height="10" fill="{palette[s % len(palette)]}"/>'
            f'<text x="{label_w + 14}" y="{y + 14 * s + 9}" font-size="11">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)

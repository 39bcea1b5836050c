"""Where each named place hangs its sign.

From the nearest point of the nearest street, a ray towards the place meets walls; the
first wall met whose outside faces the street is the shop front of the place, and its
fascia sign goes there.  A place that lies on the street side of every facade (a stop, a
kiosk, an artwork, a place in a square) gets a column sign where it stands instead.  A
place near other streets (a corner shop, a shop through a block) also gets a fascia on
the facade facing each of them, up to ``max_fronts``.
Boards on one facade are laid out side by side, then on higher rows, never overlapping.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flaneur.views.synthetic.lettering import board_size, wrap
from flaneur.views.synthetic.scene import Scene, stable_hash
from flaneur.views.synthetic.signs import (
    BLADE,
    COLUMN,
    FASCIA,
    FONT_PX,
    SIGN_COLOURS,
    SignParams,
    Signs,
)
from flaneur.world.city import City


def _segment_hits(origin, direction, length, a, b):
    """Ray ``origin + t direction`` (0 <= t <= length) against segments ``a -> b``:
    ``(t, s)`` arrays, NaN where there is no hit; ``s`` in [0, 1] along the segment."""
    e = b - a
    denom = direction[0] * e[:, 1] - direction[1] * e[:, 0]
    w = a - origin
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / denom
        s = (w[:, 0] * direction[1] - w[:, 1] * direction[0]) / denom
    ok = (np.abs(denom) > 1e-9) & (t >= 0) & (t <= length) & (s >= 0) & (s <= 1)
    return np.where(ok, t, np.nan), np.where(ok, s, np.nan)


def _street_points(scene: Scene, p: NDArray[np.float64], radius: float):
    """Nearest points of the street segments near ``p``: ``(points, distances)`` sorted."""
    rows = scene.streets_near(p, radius)
    if rows.size == 0:
        _, nearest = scene.street_tree.query(p, k=min(8, len(scene.street_a)))
        rows = np.atleast_1d(nearest)
    a, b = scene.street_a[rows], scene.street_b[rows]
    e = b - a
    t = np.clip(np.einsum("ij,ij->i", p - a, e) / np.maximum((e * e).sum(1), 1e-12), 0, 1)
    q = a + t[:, None] * e
    d = np.hypot(*(q - p).T)
    order = np.argsort(d, kind="stable")
    return q[order], d[order]


def _shop_front(scene: Scene, p, street_pt) -> tuple[int, float, float] | None:
    """First wall facing ``street_pt`` on the ray from it through ``p``.

    Returns ``(piece, position along it in [0, 1], distance along the ray)`` or None.
    """
    walls = scene.walls
    d = p - street_pt
    dist = float(np.hypot(*d))
    if dist < 0.5:
        return None
    rows = scene.walls_near((p + street_pt) / 2, dist / 2 + 25.0)
    rows = rows[walls.kind[rows] != 2]
    if rows.size == 0:
        return None
    direction = d / dist
    a, b = walls.a[rows], walls.b[rows]
    t, s = _segment_hits(street_pt, direction, dist + 25.0, a, b)
    hit = street_pt + np.nan_to_num(t)[:, None] * direction
    facing = np.einsum("ij,ij->i", walls.normal[rows], street_pt - hit) > 0
    t = np.where(facing, t, np.nan)
    if not np.isfinite(t).any():
        return None
    k = int(np.nanargmin(t))
    return int(rows[k]), float(s[k]), float(t[k])


class _Facade:
    """Free space on the rows of one straight facade (a run of wall pieces)."""

    def __init__(self, scene: Scene, first: int, count: int, params: SignParams):
        w = scene.walls
        self.first, self.count, self.params = first, count, params
        self.start = w.a[first]
        end = w.b[first + count - 1]
        self.length = float(np.hypot(*(end - self.start)))
        self.direction = (end - self.start) / max(self.length, 1e-9)
        self.top = float(w.top[first])
        self.taken: list[list[tuple[float, float]]] = [[] for _ in params.rows]

    def place(self, centre: float, width: float, height: float) -> tuple[float, float] | None:
        """``(bottom, centre)`` of a free spot for a board, or None."""
        half, gap = width / 2.0, self.params.gap
        lo, hi = half + 0.2, self.length - half - 0.2
        if hi < lo:
            lo = hi = self.length / 2.0
        for bottom, taken in zip(self.params.rows, self.taken, strict=True):
            if bottom + height + 0.3 > self.top:
                break
            options = [min(max(centre, lo), hi)]
            for s0, s1 in taken:
                options += [s0 - gap - half, s1 + gap + half]
            for c in sorted(options, key=lambda c: abs(c - centre)):
                if c < lo - 1e-6 or c > hi + 1e-6 or abs(c - centre) > self.params.max_shift:
                    continue
                if all(c + half + gap <= s0 or c - half - gap >= s1 for s0, s1 in taken):
                    taken.append((c - half, c + half))
                    return bottom, c
        return None


def _anchors(scene: Scene, p, params: SignParams, inside) -> list[tuple]:
    """Candidate sign spots of a place: ``("fascia", piece, s)`` or ``("column", xy)``."""
    pts, dists = _street_points(scene, p, 60.0)
    first = _shop_front(scene, p, pts[0])
    if first is None and inside:
        # the nearest street runs through the building (a passage): try the next ones
        for k in range(1, min(len(pts), 6)):
            first = _shop_front(scene, p, pts[k])
            if first is not None:
                pts, dists = pts[k:], dists[k:]
                break
    if first is None or (first[2] > dists[0] + 0.5 and not inside):
        # nothing between the street and the place: it stands outdoors
        d = p - pts[0]
        n = float(np.hypot(*d))
        kerb = scene.params.road_width / 2.0 + 1.0
        spot = p if n >= kerb else pts[0] + (d / n if n > 1e-6 else np.array([1.0, 0.0])) * kerb
        return [("column", spot)]
    out = [("fascia", first[0], first[1])]
    lines = {int(scene.walls.line[first[0]])}
    seen = [(p - pts[0]) / max(dists[0], 1e-9)]
    for q, dq in zip(pts[1:], dists[1:], strict=True):
        if dq > params.second_street or len(out) >= params.max_fronts:
            break
        way = (p - q) / max(dq, 1e-9)
        if max(float(np.dot(way, w)) for w in seen) > 0.7:
            continue  # the same side of the block as a front already found
        seen.append(way)
        other = _shop_front(scene, p, q)
        if other is not None and int(scene.walls.line[other[0]]) not in lines:
            lines.add(int(scene.walls.line[other[0]]))
            out.append(("fascia", other[0], other[1]))
    return out


def layout_signs(city: City, scene: Scene, params: SignParams | None = None) -> Signs:
    """Lay out the signs of every named place of ``city`` (see the module docstring)."""
    params = params or SignParams()
    walls, places = scene.walls, city.places
    named = np.flatnonzero(places.names != "") if len(places) else np.zeros(0, np.int64)
    inside = scene.inside_buildings(places.xy[named]) if named.size else np.zeros(0, bool)
    wanted = _wanted_anchors(scene, places, named, inside, params)
    line_ids, first_of, count_of = np.unique(walls.line, return_index=True, return_counts=True)
    line_pos = {int(v): k for k, v in enumerate(line_ids)}
    facades: dict[int, _Facade] = {}
    records = _SignRecords(places)
    for _, row, anchor in wanted:
        name = str(places.names[row]).strip()
        if anchor[0] == "column":
            _add_column(records, row, name, anchor[1], params)
            continue
        piece, s = anchor[1], anchor[2]
        line = int(walls.line[piece])
        if line not in facades:
            k = line_pos[line]
            facades[line] = _Facade(scene, int(first_of[k]), int(count_of[k]), params)
        _add_fascia(records, facades[line], walls, row, name, piece, s, params)
    return records.signs(named, params)


def _wanted_anchors(scene: Scene, places, named, inside, params: SignParams) -> list[tuple]:
    """``(distance from the place to its sign spot, place row, anchor)`` of every named place,
    nearest first (places nearest their shop front choose their spot first)."""
    walls = scene.walls
    wanted = []
    for k, row in enumerate(named.tolist()):
        if not str(places.names[row]).strip() or len(scene.street_a) == 0:
            continue
        for anchor in _anchors(scene, places.xy[row], params, bool(inside[k])):
            if anchor[0] == "column":
                wanted.append((0.0, row, anchor))
                continue
            piece, s = anchor[1], anchor[2]
            hit = walls.a[piece] + s * (walls.b[piece] - walls.a[piece])
            wanted.append((float(np.hypot(*(hit - places.xy[row]))), row, anchor))
    wanted.sort(key=lambda w: (w[0], w[1]))  # places nearest their shop front choose first
    return wanted


def _add_column(records: _SignRecords, row: int, name: str, spot, params: SignParams) -> None:
    """Add the column sign of a place that stands outdoors, at ``spot``."""
    bw, bh = board_size(name, FONT_PX)
    height = min(params.column_height, params.column_max_width * bh / bw)
    height = max(height, 0.6 * params.column_height)
    width = height * bw / bh
    records.add(row, name, spot, np.zeros(2), width, params.column_bottom, height, [], COLUMN)


def _add_fascia(
    records: _SignRecords,
    fac: _Facade,
    walls,
    row: int,
    name: str,
    piece: int,
    s: float,
    params: SignParams,
) -> None:
    """Add the fascia board of a place on ``fac`` (at position ``s`` of wall ``piece``) and
    the blade above its end; nothing when the facade has no room left near that spot."""
    bw, bh = board_size(name, FONT_PX)
    hit = walls.a[piece] + s * (walls.b[piece] - walls.a[piece])
    along = float(np.dot(hit - fac.start, fac.direction))
    height = params.board_height
    if height * bw / bh > fac.length - 0.4:
        height = max(params.min_board_height, (fac.length - 0.4) * bh / bw)
    width = height * bw / bh
    spot = fac.place(along, width, height)
    if spot is None:
        return
    bottom, c = spot
    piece_len = fac.length / fac.count
    i0 = int(np.clip((c - width / 2) // piece_len, 0, fac.count - 1))
    i1 = int(np.clip((c + width / 2) // piece_len, 0, fac.count - 1))
    normal = walls.normal[piece]
    pieces = list(range(fac.first + i0, fac.first + i1 + 1))
    centre = fac.start + fac.direction * c + normal * 0.12
    records.add(row, name, centre, fac.direction, width, bottom, height, pieces, FASCIA)
    # a blade above the end of the fascia, sticking out over the sidewalk
    label = wrap(name)
    lw, lh = board_size(label, FONT_PX)
    scale = min(params.blade_width / lw, params.blade_height / lh)
    foot = fac.start + fac.direction * min(c + width / 2 + params.gap / 2, fac.length)
    blade_centre = foot + normal * (params.blade_offset + lw * scale / 2)
    piece_end = int(np.clip((c + width / 2) // piece_len, 0, fac.count - 1))
    blade_pieces = [fac.first + piece_end]
    blade_bottom = bottom + height + 0.25
    records.add(
        row,
        label,
        blade_centre,
        fac.direction,
        lw * scale,
        blade_bottom,
        lh * scale,
        blade_pieces,
        BLADE,
    )


class _SignRecords:
    """The signs laid out so far, one list per field of :class:`Signs`."""

    def __init__(self, places) -> None:
        self.places = places
        self.rec: dict[str, list] = {k: [] for k in ("place", "text", "label", "colours")}
        self.rec.update(centre=[], direction=[], width=[], bottom=[], top=[], pieces=[], kind=[])

    def add(self, row, label, centre, direction, width, bottom, height, pieces, kind) -> None:
        """Add one board of the place in ``row`` (``bottom`` and ``height`` in metres)."""
        seed = stable_hash(str(self.places.ids[row]))
        rec = self.rec
        rec["place"].append(row)
        rec["text"].append(str(self.places.names[row]).strip())
        rec["label"].append(label)
        rec["colours"].append(SIGN_COLOURS[seed % len(SIGN_COLOURS)])
        rec["centre"].append(centre)
        rec["direction"].append(direction)
        rec["width"].append(width)
        rec["bottom"].append(bottom)
        rec["top"].append(bottom + height)
        rec["pieces"].append(np.asarray(pieces, dtype=np.int64))
        rec["kind"].append(kind)

    def signs(self, named, params: SignParams) -> Signs:
        """The :class:`Signs` of the boards added (``named``: the rows of the named places)."""
        rec, places = self.rec, self.places
        n = len(rec["place"])
        placed = set(rec["place"])
        return Signs(
            place=np.asarray(rec["place"], dtype=np.int64),
            text=rec["text"],
            label=rec["label"],
            colours=rec["colours"],
            centre=np.asarray(rec["centre"], dtype=float).reshape(n, 2),
            direction=np.asarray(rec["direction"], dtype=float).reshape(n, 2),
            width=np.asarray(rec["width"], dtype=float),
            bottom=np.asarray(rec["bottom"], dtype=float),
            top=np.asarray(rec["top"], dtype=float),
            pieces=rec["pieces"],
            kind=np.asarray(rec["kind"], dtype=np.int8),
            unplaced=[int(r) for r in named if int(r) not in placed],
            radius=params.radius,
            named_rows=named.astype(np.int64),
            named_xy=places.xy[named] if named.size else np.zeros((0, 2)),
            named_text=[str(places.names[r]).strip() for r in named],
        )

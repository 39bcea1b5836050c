"""Street furniture: waste baskets, fire hydrants, benches, post boxes, bicycle parking, street
lamps and bus-stop shelters, as points with a kind and a real-world size.

These are the objects V-IRL's vision agents count (RX-399's trash bins, Imani's hydrants and
benches). They are kept apart from :class:`~flaneur.world.places.Places`: they are not
destinations, and the renderer draws them as free-standing objects on the pavement rather
than as signs on walls. Kinds are taxonomy category names, so a label such as "trash can"
normalises to ``waste_basket`` through :func:`flaneur.world.taxonomy.normalize_category`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import cKDTree

from flaneur.geo import LocalProjection


@dataclass(frozen=True)
class FurnitureKind:
    """What a kind of street furniture is and how big it stands.

    Attributes
    ----------
    name
        Taxonomy category name (``"waste_basket"``).
    width, height
        Typical size in metres (as seen from the street: width across, height above ground).
    osm
        The OSM tags that make an element this kind: ``((key, value), ...)``, all required.
    """

    name: str
    width: float
    height: float
    osm: tuple[tuple[str, str], ...]


FURNITURE_KINDS: dict[str, FurnitureKind] = {
    k.name: k
    for k in (
        FurnitureKind("waste_basket", 0.5, 0.9, (("amenity", "waste_basket"),)),
        FurnitureKind("fire_hydrant", 0.4, 0.8, (("emergency", "fire_hydrant"),)),
        FurnitureKind("bench", 1.8, 0.9, (("amenity", "bench"),)),
        FurnitureKind("mailbox", 0.5, 1.3, (("amenity", "post_box"),)),
        FurnitureKind("bicycle_parking", 2.4, 0.8, (("amenity", "bicycle_parking"),)),
        FurnitureKind("street_lamp", 0.35, 6.0, (("highway", "street_lamp"),)),
        FurnitureKind("bus_shelter", 3.5, 2.6, (("highway", "bus_stop"), ("shelter", "yes"))),
    )
}
"""The furniture kinds, by taxonomy category name."""

OSM_FURNITURE_FILTER: dict[str, list[str]] = {}
for _kind in FURNITURE_KINDS.values():
    _key, _value = _kind.osm[0]
    OSM_FURNITURE_FILTER.setdefault(_key, []).append(_value)


def furniture_kind(tags: Mapping[str, Any]) -> str | None:
    """The furniture kind of an OSM element's tags, or None if it is not furniture."""
    for kind in FURNITURE_KINDS.values():
        if all(str(tags.get(k, "")).strip().lower() == v for k, v in kind.osm):
            return kind.name
    return None


@dataclass(eq=False)
class Furniture:
    """A table of street furniture, stored column-wise.

    Parameters
    ----------
    ids
        Source ids (``"node/123"``).
    kinds
        Kind names, keys of :data:`FURNITURE_KINDS`.
    lat, lng
        Positions in degrees.
    projection
        Metric projection shared with the street graph (set by :class:`~flaneur.world.City`).
    """

    ids: NDArray[np.str_]
    kinds: NDArray[np.str_]
    lat: NDArray[np.float64]
    lng: NDArray[np.float64]
    projection: LocalProjection | None = None

    def __post_init__(self) -> None:
        self.ids = np.asarray(self.ids, dtype=str)
        self.kinds = np.asarray(self.kinds, dtype=str)
        self.lat = np.asarray(self.lat, dtype=np.float64)
        self.lng = np.asarray(self.lng, dtype=np.float64)
        n = len(self.ids)
        if not len(self.kinds) == len(self.lat) == len(self.lng) == n:
            raise ValueError("Furniture columns must all have one row per id")
        unknown = sorted(set(self.kinds.tolist()) - set(FURNITURE_KINDS))
        if unknown:
            raise ValueError(
                f"unknown furniture kind {unknown[0]!r}; expected one of {sorted(FURNITURE_KINDS)}"
            )

    @classmethod
    def empty(cls) -> Furniture:
        """A table with no furniture."""
        return cls(np.zeros(0, str), np.zeros(0, str), np.zeros(0), np.zeros(0))

    @classmethod
    def from_records(cls, records: Sequence[Mapping[str, Any]]) -> Furniture:
        """From dicts with keys ``id, kind, lat, lng``."""
        return cls(
            ids=np.asarray([str(r["id"]) for r in records], dtype=str),
            kinds=np.asarray([str(r["kind"]) for r in records], dtype=str),
            lat=np.asarray([float(r["lat"]) for r in records], dtype=np.float64),
            lng=np.asarray([float(r["lng"]) for r in records], dtype=np.float64),
        )

    def to_records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per object (inverse of :meth:`from_records`)."""
        return [
            {"id": str(i), "kind": str(k), "lat": float(a), "lng": float(b)}
            for i, k, a, b in zip(self.ids, self.kinds, self.lat, self.lng, strict=True)
        ]

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"Furniture(n={len(self)})"

    def counts(self) -> dict[str, int]:
        """``{kind: number of objects}`` for every kind (zero included), in kind order."""
        return {k: int(np.count_nonzero(self.kinds == k)) for k in FURNITURE_KINDS}

    def of_kind(self, kind: str) -> NDArray[np.int64]:
        """Rows of one kind."""
        return np.flatnonzero(self.kinds == kind)

    @cached_property
    def xy(self) -> NDArray[np.float64]:
        """Positions in metres in :attr:`projection`, shape ``(n, 2)``."""
        if self.projection is None:
            self.projection = (
                LocalProjection.around(self.lat, self.lng)
                if len(self)
                else LocalProjection(0.0, 0.0)
            )
        x, y = self.projection.forward(self.lat, self.lng)
        return np.column_stack([np.atleast_1d(x), np.atleast_1d(y)]).reshape(len(self), 2)

    @cached_property
    def size(self) -> NDArray[np.float64]:
        """``(width, height)`` in metres per object, shape ``(n, 2)``."""
        table = {k: (v.width, v.height) for k, v in FURNITURE_KINDS.items()}
        return np.asarray([table[k] for k in self.kinds.tolist()], dtype=np.float64).reshape(-1, 2)

    @cached_property
    def _kdtree(self) -> cKDTree:
        return cKDTree(self.xy if len(self) else np.zeros((0, 2)))

    def within(self, xy: ArrayLike, radius_m: float) -> tuple[NDArray[np.int64], NDArray]:
        """Rows within ``radius_m`` of a metric point, nearest first: ``(rows, distances)``."""
        if len(self) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        point = np.asarray(xy, dtype=np.float64)
        rows = np.asarray(self._kdtree.query_ball_point(point, radius_m), dtype=np.int64)
        if rows.size == 0:
            return rows, np.zeros(0)
        dist = np.hypot(*(self.xy[rows] - point).T)
        order = np.argsort(dist, kind="stable")
        return rows[order], dist[order]

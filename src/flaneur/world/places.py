"""Points of interest: names, normalized categories, raw tags, attributes, spatial queries.

A place's main name is its ``name`` column; its other names (other languages, aliases, old
and local names, its brand) are read from its raw tags by :func:`name_tags`, so they cost no
extra memory or pack field: the tags are kept whole (``places.json``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import cKDTree

from flaneur.errors import ArgumentError, check_finite
from flaneur.geo import LocalProjection, angle_diff

NAME_TAG = re.compile(
    r"^(?P<base>name|int_name|official_name|short_name|alt_name|reg_name|nat_name|loc_name"
    r"|old_name|brand)(?::(?P<lang>[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*))?$"
)
"""OpenStreetMap tags that hold a name of a place: ``name``, ``name:<language>`` (``name:en``,
``name:zh-Hant``) and the alias keys with or without a language suffix. Keys such as
``name:etymology:wikidata`` or ``addr:housename`` do not match."""
_TAG_RANK = {"loc_name": 2, "old_name": 2, "brand": 3}


def name_tag_rank(tag: str) -> int:
    """How much a name from ``tag`` counts: 0 the main name (``name``), 1 another current name
    (``name:en``, ``int_name``, ``official_name``, ``short_name``, ``alt_name``, ...), 2 a local
    or old name (``loc_name``, ``old_name``), 3 a brand. Unknown tags rank 3."""
    if tag == "name":
        return 0
    match = NAME_TAG.match(tag)
    return _TAG_RANK.get(match["base"], 1) if match else 3


def name_tags(tags: Mapping[str, str], name: str = "") -> list[tuple[str, str]]:
    """Every name of a place as ``(tag, name)`` pairs: the main name first, then the other
    name tags by :func:`name_tag_rank` and key; values listed with ``;`` are split, and a
    name repeated (ignoring case) is kept once, under its first tag.

    Parameters
    ----------
    tags
        Raw tags of the place (see :data:`NAME_TAG` for the keys read).
    name
        The main name (default: ``tags["name"]``).

    Examples
    --------
    >>> name_tags({"name": "Oodi", "name:fi": "oodi", "short_name": "Oodi;Ode"})
    [('name', 'Oodi'), ('short_name', 'Ode')]
    """
    keys = sorted(
        (k for k in tags if k != "name" and NAME_TAG.match(k)),
        key=lambda k: (name_tag_rank(k), k),
    )
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for key, value in [("name", name or tags.get("name", ""))] + [(k, tags[k]) for k in keys]:
        for part in str(value).split(";"):
            text = part.strip()
            if text and text.casefold() not in seen:
                seen.add(text.casefold())
                out.append((key, text))
    return out


@dataclass(frozen=True)
class Place:
    """One point of interest (a row of :class:`Places`, for reading and printing)."""

    id: str
    name: str
    lat: float
    lng: float
    categories: tuple[str, ...]
    tags: Mapping[str, str]
    attributes: Mapping[str, Any]
    rating: float | None = None
    reviews: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The name, or the first category when the place has no name."""
        if self.name:
            return self.name
        return self.categories[0].replace("_", " ") if self.categories else "place"

    @property
    def all_names(self) -> tuple[str, ...]:
        """The main name, then every other name in the tags (see :func:`name_tags`)."""
        return tuple(text for _, text in name_tags(self.tags, self.name))


@dataclass(eq=False)
class Places:
    """A table of points of interest, stored column-wise.

    Parameters
    ----------
    ids, names
        Place ids and names (empty string for unnamed places).
    lat, lng
        Coordinates in degrees.
    categories
        Normalized categories of each place (see :mod:`flaneur.world.taxonomy`).
    tags
        Raw source tags of each place (OpenStreetMap ``key -> value``).
    attributes
        Normalized attributes of each place (brand, cuisine, wheelchair, ...).
    rating
        Optional rating per place (NaN where unknown).
    reviews
        Optional review texts per place.
    projection
        Metric projection used for spatial queries; set by :class:`~flaneur.world.city.City`
        so that places and viewpoints share one frame.
    """

    ids: NDArray[np.str_]
    names: NDArray[np.str_]
    lat: NDArray[np.float64]
    lng: NDArray[np.float64]
    categories: list[tuple[str, ...]]
    tags: list[dict[str, str]]
    attributes: list[dict[str, Any]]
    rating: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    reviews: list[tuple[str, ...]] = field(default_factory=list)
    projection: LocalProjection | None = None

    def __post_init__(self) -> None:
        self.ids = np.asarray(self.ids, dtype=str)
        self.names = np.asarray(self.names, dtype=str)
        self.lat = np.asarray(self.lat, dtype=np.float64)
        self.lng = np.asarray(self.lng, dtype=np.float64)
        n = len(self.ids)
        if len(self.rating) == 0:
            self.rating = np.full(n, np.nan)
        if not self.reviews:
            self.reviews = [() for _ in range(n)]
        self.categories = [tuple(c) for c in self.categories]
        lengths = {
            "names": len(self.names),
            "lat": len(self.lat),
            "lng": len(self.lng),
            "categories": len(self.categories),
            "tags": len(self.tags),
            "attributes": len(self.attributes),
            "rating": len(self.rating),
            "reviews": len(self.reviews),
        }
        wrong = {k: v for k, v in lengths.items() if v != n}
        if wrong:
            raise ValueError(f"Places columns must all have {n} rows (as ids); got {wrong}")

    @classmethod
    def empty(cls) -> Places:
        """A table with no places."""
        return cls(np.zeros(0, str), np.zeros(0, str), np.zeros(0), np.zeros(0), [], [], [])

    @classmethod
    def from_records(cls, records: Sequence[Mapping[str, Any]]) -> Places:
        """Build from dicts with keys ``id, name, lat, lng, categories`` (+ optional
        ``tags, attributes, rating, reviews``)."""
        return cls(
            ids=np.asarray([str(r["id"]) for r in records], dtype=str),
            names=np.asarray([r.get("name") or "" for r in records], dtype=str),
            lat=np.asarray([r["lat"] for r in records], dtype=np.float64),
            lng=np.asarray([r["lng"] for r in records], dtype=np.float64),
            categories=[tuple(r.get("categories", ())) for r in records],
            tags=[dict(r.get("tags") or {}) for r in records],
            attributes=[dict(r.get("attributes") or {}) for r in records],
            rating=np.asarray(
                [np.nan if r.get("rating") is None else r["rating"] for r in records],
                dtype=np.float64,
            ),
            reviews=[tuple(r.get("reviews") or ()) for r in records],
        )

    def to_records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per place (inverse of :meth:`from_records`)."""
        out = []
        for i in range(len(self)):
            record: dict[str, Any] = {
                "id": str(self.ids[i]),
                "name": str(self.names[i]),
                "lat": float(self.lat[i]),
                "lng": float(self.lng[i]),
                "categories": list(self.categories[i]),
                "tags": self.tags[i],
                "attributes": self.attributes[i],
            }
            if not np.isnan(self.rating[i]):
                record["rating"] = float(self.rating[i])
            if self.reviews[i]:
                record["reviews"] = list(self.reviews[i])
            out.append(record)
        return out

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"Places(n={len(self)}, named={self.n_named})"

    def __getitem__(self, i: int) -> Place:
        rating = None if np.isnan(self.rating[i]) else float(self.rating[i])
        return Place(
            id=str(self.ids[i]),
            name=str(self.names[i]),
            lat=float(self.lat[i]),
            lng=float(self.lng[i]),
            categories=self.categories[i],
            tags=self.tags[i],
            attributes=self.attributes[i],
            rating=rating,
            reviews=self.reviews[i],
        )

    @property
    def n_named(self) -> int:
        """Number of places with a non-empty name."""
        return int(np.count_nonzero(self.names != ""))

    def name_tags(self, row: int) -> list[tuple[str, str]]:
        """``(tag, name)`` pairs of every name of place ``row`` (see :func:`name_tags`)."""
        return name_tags(self.tags[row], str(self.names[row]))

    @cached_property
    def _id_to_index(self) -> dict[str, int]:
        return {pid: i for i, pid in enumerate(self.ids.tolist())}

    def __contains__(self, place_id: object) -> bool:
        return place_id in self._id_to_index

    def index(self, place_id: str) -> int:
        """Row of the place with id ``place_id`` (KeyError naming it if absent)."""
        try:
            return self._id_to_index[place_id]
        except KeyError:
            raise KeyError(f"unknown place id {place_id!r}") from None

    # ------------------------------------------------------------------ categories
    @cached_property
    def category_index(self) -> dict[str, NDArray[np.int64]]:
        """``{category: rows of the places that have it}``."""
        rows: dict[str, list[int]] = {}
        for i, cats in enumerate(self.categories):
            for cat in cats:
                rows.setdefault(cat, []).append(i)
        return {cat: np.asarray(r, dtype=np.int64) for cat, r in sorted(rows.items())}

    def with_category(self, category: str) -> NDArray[np.int64]:
        """Rows of the places of one category (empty if none)."""
        return self.category_index.get(category, np.zeros(0, dtype=np.int64))

    def category_counts(self) -> dict[str, int]:
        """``{category: number of places}``, most common first."""
        counts = {cat: len(rows) for cat, rows in self.category_index.items()}
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    # ------------------------------------------------------------------ spatial queries
    def _require_projection(self) -> LocalProjection:
        if self.projection is None:
            if len(self) == 0:
                self.projection = LocalProjection(0.0, 0.0)
            else:
                self.projection = LocalProjection.around(self.lat, self.lng)
        return self.projection

    @cached_property
    def xy(self) -> NDArray[np.float64]:
        """Place positions in metres in :attr:`projection`, shape ``(n, 2)``."""
        x, y = self._require_projection().forward(self.lat, self.lng)
        return np.column_stack([np.atleast_1d(x), np.atleast_1d(y)]).reshape(len(self), 2)

    @cached_property
    def _kdtree(self) -> cKDTree:
        return cKDTree(self.xy if len(self) else np.zeros((0, 2)))

    def within(self, xy: ArrayLike, radius_m: float) -> tuple[NDArray[np.int64], NDArray]:
        """Places within ``radius_m`` of a metric point, nearest first.

        Parameters
        ----------
        xy
            Point ``(x, y)`` in metres in :attr:`projection` (e.g. ``city.graph.xy[node]``).
        radius_m
            Search radius in metres.

        Returns
        -------
        tuple
            ``(rows, distances_m)`` sorted by distance.
        """
        if len(self) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        point = np.asarray(xy, dtype=np.float64)
        rows = np.asarray(self._kdtree.query_ball_point(point, radius_m), dtype=np.int64)
        if rows.size == 0:
            return rows, np.zeros(0)
        dist = np.hypot(*(self.xy[rows] - point).T)
        order = np.argsort(dist, kind="stable")
        return rows[order], dist[order]

    def in_view(
        self,
        xy: ArrayLike,
        heading: float,
        *,
        fov: float = 60.0,
        radius_m: float = 50.0,
        named_only: bool = False,
    ) -> tuple[NDArray[np.int64], NDArray, NDArray]:
        """Places inside the view sector ``heading ± fov/2`` within ``radius_m``, nearest first.

        Returns
        -------
        tuple
            ``(rows, distances_m, relative_bearings)``; a relative bearing is the signed
            angle from ``heading`` to the place in (-180, 180] (negative = left).

        Raises
        ------
        ArgumentError
            If ``xy`` is not two finite metres, ``heading`` not finite, ``fov`` outside
            (0, 360] or ``radius_m`` negative or not finite.
        """
        where = "in_view"
        try:
            point = np.asarray(xy, dtype=np.float64)
        except (TypeError, ValueError):
            point = np.full(1, np.nan)
        if point.shape != (2,) or not np.all(np.isfinite(point)):
            raise ArgumentError(f"{where}: xy must be two finite metres (x, y), got {xy!r}")
        heading = check_finite(heading, "heading", where=where, what="degrees")
        fov = check_finite(fov, "fov", where=where, what="degrees", low=0.0, high=360.0)
        if fov == 0.0:
            raise ArgumentError(f"{where}: fov must be above 0 degrees, got {fov!r}")
        radius_m = check_finite(radius_m, "radius_m", where=where, what="metres", low=0.0)
        rows, dist = self.within(point, radius_m)
        if named_only and rows.size:
            keep = self.names[rows] != ""
            rows, dist = rows[keep], dist[keep]
        if rows.size == 0:
            return rows, dist, np.zeros(0)
        delta = self.xy[rows] - np.asarray(xy, dtype=np.float64)
        absolute = np.degrees(np.arctan2(delta[:, 0], delta[:, 1])) % 360.0
        relative = angle_diff(absolute, heading)
        keep = (np.abs(relative) <= fov / 2.0) | (dist < 1e-6)
        return rows[keep], dist[keep], relative[keep]

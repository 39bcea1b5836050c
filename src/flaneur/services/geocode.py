"""Geocoding: a place name, an address or a street name → a position, fuzzy and ranked.

The offline form of V-IRL's *Find Place* / geocode service. A :class:`Gazetteer` indexes
three kinds of entries of a :class:`~flaneur.world.city.City`:

``place``
    every named place (its ``name`` tag);
``address``
    every place with ``addr:street`` and ``addr:housenumber`` tags (``"Aleksanterinkatu 52"``);
``street``
    every street name of the city pack (one entry per name, at the viewpoint of that street
    nearest to the middle of its viewpoints).

Matching is case-, diacritic- and punctuation-blind (``"Töölö"`` = ``"toolo"``), tolerant of
typos (rapidfuzz's weighted ratio, then plain edit ratio and prominence to break ties), and
reads a word ending in a dot as an abbreviation (``"Aleksanterink. 52"`` → the street words
starting with ``aleksanterink``).
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from rapidfuzz import fuzz, process

from flaneur.errors import DataError
from flaneur.services.errors import UnknownPlaceError
from flaneur.services.names import normalize
from flaneur.services.nearby import prominence
from flaneur.world.city import City

KINDS = ("place", "address", "street")
MIN_SCORE = 70.0
"""Weighted-ratio score (0-100) below which a query is reported as unknown."""
_KIND_ORDER = {kind: i for i, kind in enumerate(KINDS)}
_MAX_EXPANSIONS = 4
_LATLNG = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")
OFF_STREET_M = 500.0
"""A ``"lat,lng"`` point farther than this from every viewpoint lies outside the city."""


@dataclass(frozen=True)
class GeocodeResult:
    """One geocoding answer.

    Attributes
    ----------
    name
        The matched name, address or street as written in the data.
    kind
        ``"place"``, ``"address"`` or ``"street"``.
    lat, lng
        Position in degrees.
    node
        Nearest viewpoint (graph node index).
    place_row
        Row in ``city.places`` for places and addresses, else -1.
    score
        Match score 0-100 (100 = same normalized text).
    """

    name: str
    kind: str
    lat: float
    lng: float
    node: int
    place_row: int
    score: float

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "name": self.name,
            "kind": self.kind,
            "lat": round(self.lat, 7),
            "lng": round(self.lng, 7),
            "node": self.node,
            "place_row": self.place_row,
            "score": round(self.score, 1),
        }


class Gazetteer:
    """The searchable names of one city (build once per city with :func:`gazetteer`)."""

    def __init__(self, city: City) -> None:
        self.city = city
        names: list[str] = []
        kinds: list[str] = []
        lat: list[float] = []
        lng: list[float] = []
        rows: list[int] = []
        weight: list[float] = []
        places = city.places
        for row in range(len(places)):
            tags = places.tags[row]
            score = prominence(tags)
            if places.names[row]:
                names.append(str(places.names[row]))
                kinds.append("place")
                lat.append(float(places.lat[row]))
                lng.append(float(places.lng[row]))
                rows.append(row)
                weight.append(score)
            street, number = tags.get("addr:street", ""), tags.get("addr:housenumber", "")
            if street and number:
                names.append(f"{street} {number}")
                kinds.append("address")
                lat.append(float(places.lat[row]))
                lng.append(float(places.lng[row]))
                rows.append(row)
                weight.append(score)
        for street, node in _street_positions(city).items():
            names.append(street)
            kinds.append("street")
            lat.append(float(city.graph.lat[node]))
            lng.append(float(city.graph.lng[node]))
            rows.append(-1)
            weight.append(0.0)
        self.names = names
        self.kinds = kinds
        self.keys = [normalize(n) for n in names]
        self.lat = np.asarray(lat, dtype=np.float64)
        self.lng = np.asarray(lng, dtype=np.float64)
        self.place_rows = np.asarray(rows, dtype=np.int64)
        self.prominence = np.asarray(weight, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.names)

    @cached_property
    def nodes(self) -> np.ndarray:
        """Nearest viewpoint of every entry."""
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        return np.atleast_1d(self.city.graph.nearest_node(self.lat, self.lng))

    @cached_property
    def _words(self) -> list[str]:
        return sorted({w for key in self.keys for w in key.split()})

    def _expansions(self, query: str) -> list[str]:
        """The query with each abbreviated word (``"aleksanterink."``) spelt out."""
        variants = [""]
        for raw in query.split():
            word = normalize(raw)
            if not word:
                continue
            options = [word]
            if raw.endswith(".") and " " not in word:
                longer = [w for w in self._words if w.startswith(word) and w != word]
                options = longer[:_MAX_EXPANSIONS] or [word]
            variants = [f"{v} {o}".strip() for v in variants for o in options][:16]
        return variants

    def search(self, query: str, *, limit: int = 5, kinds: tuple[str, ...] = KINDS):
        """Entries matching ``query``, best first.

        Parameters
        ----------
        query
            A name, address or street, in any case, with or without diacritics or typos.
        limit
            Number of results.
        kinds
            Which entry kinds to search.

        Returns
        -------
        list of GeocodeResult
            Possibly empty; every result has a score of at least :data:`MIN_SCORE`.
        """
        best: dict[int, tuple[float, float]] = {}
        for variant in self._expansions(query):
            if not variant:
                continue
            for _, score, index in process.extract(
                variant, self.keys, scorer=fuzz.WRatio, limit=max(limit * 8, 40)
            ):
                if self.kinds[index] not in kinds or score < MIN_SCORE:
                    continue
                exact = fuzz.ratio(variant, self.keys[index])
                if (score, exact) > best.get(index, (-1.0, -1.0)):
                    best[index] = (score, exact)
        ranked = sorted(
            best,
            key=lambda i: (
                -round(best[i][0]),
                -best[i][1],
                -self.prominence[i],
                _KIND_ORDER[self.kinds[i]],
                i,
            ),
        )
        return [self._result(i, best[i][0]) for i in ranked[:limit]]

    def closest_names(self, query: str, n: int = 3) -> list[str]:
        """The ``n`` distinct names closest to ``query`` by edit ratio (for error messages)."""
        out: list[str] = []
        key = normalize(query)
        for _, _, index in process.extract(key, self.keys, scorer=fuzz.ratio, limit=n * 10):
            if self.names[index] not in out:
                out.append(self.names[index])
            if len(out) == n:
                break
        return out

    def _result(self, index: int, score: float) -> GeocodeResult:
        return GeocodeResult(
            name=self.names[index],
            kind=self.kinds[index],
            lat=float(self.lat[index]),
            lng=float(self.lng[index]),
            node=int(self.nodes[index]),
            place_row=int(self.place_rows[index]),
            score=float(score),
        )


def _street_positions(city: City) -> dict[str, int]:
    """For each street name, the viewpoint on it nearest to the middle of its viewpoints."""
    if len(city.edge_streets) == 0:
        return {}
    graph = city.graph
    sources = graph.edge_sources
    named = city.edge_streets != ""
    out: dict[str, int] = {}
    names, inverse = np.unique(city.edge_streets[named], return_inverse=True)
    nodes = sources[named]
    for k, name in enumerate(names.tolist()):
        members = np.unique(nodes[inverse == k])
        xy = graph.xy[members]
        middle = xy.mean(axis=0)
        out[name] = int(members[np.argmin(np.hypot(*(xy - middle).T))])
    return out


_CACHE: weakref.WeakKeyDictionary[City, Gazetteer] = weakref.WeakKeyDictionary()


def gazetteer(city: City) -> Gazetteer:
    """The :class:`Gazetteer` of ``city`` (built on first use, then cached)."""
    found = _CACHE.get(city)
    if found is None:
        found = _CACHE[city] = Gazetteer(city)
    return found


def geocode(city: City, query: str, *, limit: int = 5) -> list[GeocodeResult]:
    """Ranked matches for a place name, address or street name (empty list if none)."""
    return gazetteer(city).search(query, limit=limit)


def geocode_one(city: City, query: str) -> GeocodeResult:
    """The best match for ``query``.

    Raises
    ------
    UnknownPlaceError
        Nothing scores at least :data:`MIN_SCORE`; the message names the three closest names.
    """
    if not query.strip():
        raise UnknownPlaceError(query)
    found = gazetteer(city).search(query, limit=1)
    if not found:
        raise UnknownPlaceError(query, gazetteer(city).closest_names(query))
    return found[0]


def resolve_point(city: City, text: str) -> tuple[int, str]:
    """A viewpoint from ``"lat,lng"`` or a place name / address / street (fuzzy).

    Returns
    -------
    tuple
        ``(node index, label)``.

    Raises
    ------
    UnknownPlaceError
        No name matches; the message names the three closest names.
    DataError
        A ``"lat,lng"`` point more than :data:`OFF_STREET_M` from every viewpoint (outside
        the city).
    """
    match = _LATLNG.match(text)
    if not match:
        found = geocode_one(city, text)
        return found.node, found.name
    lat, lng = float(match.group(1)), float(match.group(2))
    graph = city.graph
    if not (-90.0 <= lat <= 90.0 and -180.0 <= lng <= 180.0):
        raise DataError(f"{text.strip()!r} is not a latitude,longitude pair")
    node = int(graph.nearest_node(lat, lng))
    x, y = graph.projection.forward(lat, lng)
    off = float(np.hypot(float(x) - graph.xy[node][0], float(y) - graph.xy[node][1]))
    if off > OFF_STREET_M:
        raise DataError(
            f"{lat:.5f},{lng:.5f} lies {off:,.0f} m from the nearest street of {city.name} "
            "(outside the city)"
        )
    return node, f"{lat:.5f},{lng:.5f}"

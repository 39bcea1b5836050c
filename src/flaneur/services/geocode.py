"""Geocoding: a place name, an address, a street name or a point → a position, ranked.

The offline form of V-IRL's *Find Place* / geocode service. A :class:`Gazetteer` indexes
three kinds of entries of a :class:`~flaneur.world.city.City`:

``place``
    every name of every place: its ``name`` and the names in its tags (``name:<language>``,
    ``int_name``, ``official_name``, ``short_name``, ``alt_name``, ``loc_name``,
    ``old_name``, ``brand``; see :func:`flaneur.world.places.name_tags`), so that
    ``"Helsinki Cathedral"`` (``name:en``) finds *Helsingin tuomiokirkko*;
``address``
    every place with ``addr:street`` and ``addr:housenumber`` tags (``"Aleksanterinkatu 52"``);
``street``
    every street name of the city pack (one entry per name, at the viewpoint of that street
    nearest to the middle of its viewpoints).

Names are compared in one normal form (:func:`~flaneur.services.names.normalize`: case-,
diacritic- and punctuation-blind, ``"Töölö"`` = ``"toolo"``); a word ending in a dot is an
abbreviation (``"Aleksanterink. 52"`` → the words starting with ``aleksanterink``). Matches
rank in three tiers, each tier entirely before the next:

1. ``exact``: the query is one of the entry's names;
2. ``words``: every word of the query is a word of the name (fewer other words first);
3. ``fuzzy``: rapidfuzz's weighted ratio of at least :data:`MIN_SCORE` (higher first, then
   the plain edit ratio; a name shorter than :data:`SHORT_KEY` letters needs an edit ratio
   of :data:`MIN_SCORE` too).

Ties break by the tag the name came from (the main ``name``, then other current names, then
local and old names, then brands; so a query that is a place's main name finds that place),
prominence (:func:`~flaneur.services.nearby.prominence`), kind (place, address,
street), distance to the middle of the city, and index, so every ranking is deterministic.
A place matched by several of its names appears once, with its main name.

A query made of numbers is a point, ``"lat,lng"`` (:func:`parse_point`): ``nan``, ``inf``,
a latitude beyond ±90 or a longitude beyond ±180 are a :class:`CoordinateError`, and a point
farther than ``max_off_m`` (default :data:`OFF_STREET_M`) from every viewpoint is an
:class:`OffStreetError`; it is never looked up as a name.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from rapidfuzz import fuzz, process

from flaneur.errors import check_finite
from flaneur.services.errors import CoordinateError, OffStreetError, UnknownPlaceError
from flaneur.services.names import normalize
from flaneur.services.nearby import prominence
from flaneur.world.city import City
from flaneur.world.places import name_tag_rank

KINDS = ("place", "address", "street")
"""Kinds of searchable entries; a ``"lat,lng"`` query gives a result of kind ``"point"``."""
MATCHES = ("exact", "words", "fuzzy", "point")
"""How a result matched its query: its tier, or ``"point"`` for a ``"lat,lng"`` query."""
MIN_SCORE = 70.0
"""Weighted-ratio score (0-100) below which a fuzzy match is not reported."""
OFF_STREET_M = 500.0
"""Default largest distance from a ``"lat,lng"`` point to the nearest viewpoint (metres)."""
SHORT_KEY = 4
"""A name of fewer letters than this is a fuzzy match only by its edit ratio (not by being a
part of a longer query: ``"BR"`` is not ``"Library"``)."""
_KIND_ORDER = {kind: i for i, kind in enumerate(KINDS)}
_MAX_EXPANSIONS = 4
_NUMBER = r"[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?|nan|inf(?:inity)?)"
_SEPARATOR = r"\s*,\s*|\s+"
_NUMBERS = re.compile(rf"^\s*{_NUMBER}(?:(?:{_SEPARATOR}){_NUMBER})*\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class GeocodeResult:
    """One geocoding answer.

    Attributes
    ----------
    name
        The place's main name (or the address, street or ``"lat,lng"``) as in the data.
    kind
        ``"place"``, ``"address"``, ``"street"`` or ``"point"``.
    lat, lng
        Position in degrees.
    node
        Nearest viewpoint (graph node index).
    place_row
        Row in ``city.places`` for places and addresses, else -1.
    score
        Match score 0-100 (100 = same normalized text).
    matched
        The name that matched, when it is another name of the place (``"Helsinki
        Cathedral"`` for *Helsingin tuomiokirkko*); empty when it is :attr:`name`.
    match
        The tier of the match, one of :data:`MATCHES`.
    """

    name: str
    kind: str
    lat: float
    lng: float
    node: int
    place_row: int
    score: float
    matched: str = ""
    match: str = "exact"

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "name": self.name,
            "matched": self.matched or self.name,
            "match": self.match,
            "kind": self.kind,
            "lat": round(self.lat, 7),
            "lng": round(self.lng, 7),
            "node": self.node,
            "place_row": self.place_row,
            "score": round(self.score, 1),
        }


class _Columns:
    """The entries of a gazetteer while it is built, column by column."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.texts: list[str] = []
        self.keys: list[str] = []
        self.kinds: list[str] = []
        self.lat: list[float] = []
        self.lng: list[float] = []
        self.rows: list[int] = []
        self.weight: list[float] = []
        self.rank: list[int] = []

    def add(
        self,
        name: str,
        text: str,
        kind: str,
        lat: float,
        lng: float,
        row: int,
        weight: float,
        rank: int,
    ) -> None:
        """One entry: shown ``name``, matched ``text``, kind, position, place row (-1 for a
        street), prominence and tag rank."""
        self.names.append(name)
        self.texts.append(text)
        self.keys.append(normalize(text))
        self.kinds.append(kind)
        self.lat.append(lat)
        self.lng.append(lng)
        self.rows.append(int(row))
        self.weight.append(float(weight))
        self.rank.append(int(rank))


def _columns(city: City) -> _Columns:
    """Every name, address and street of ``city`` as gazetteer entries."""
    out = _Columns()
    places = city.places
    for row in range(len(places)):
        tags = places.tags[row]
        weight = prominence(tags)
        lat, lng = float(places.lat[row]), float(places.lng[row])
        names = places.name_tags(row)
        keys: set[str] = set()
        for tag, text in names:
            key = normalize(text)
            if key and key not in keys:
                keys.add(key)
                out.add(names[0][1], text, "place", lat, lng, row, weight, name_tag_rank(tag))
        street, number = tags.get("addr:street", ""), tags.get("addr:housenumber", "")
        if street and number:
            address = f"{street} {number}"
            out.add(address, address, "address", lat, lng, row, weight, 0)
    for street, node in _street_positions(city).items():
        lat, lng = float(city.graph.lat[node]), float(city.graph.lng[node])
        out.add(street, street, "street", lat, lng, -1, 0.0, 0)
    return out


class Gazetteer:
    """The searchable names of one city (build once per city with :func:`gazetteer`).

    Attributes
    ----------
    names
        Per entry, the name shown: the place's main name, the address or the street.
    texts
        Per entry, the name it is found by (one of the place's names).
    keys
        Per entry, ``normalize(texts[i])``.
    kinds
        Per entry, one of :data:`KINDS`.
    """

    def __init__(self, city: City) -> None:
        self.city = city
        columns = _columns(city)
        self.names = columns.names
        self.texts = columns.texts
        self.keys = columns.keys
        self.kinds = columns.kinds
        self.lat = np.asarray(columns.lat, dtype=np.float64)
        self.lng = np.asarray(columns.lng, dtype=np.float64)
        self.place_rows = np.asarray(columns.rows, dtype=np.int64)
        self.prominence = np.asarray(columns.weight, dtype=np.float64)
        self.tag_rank = np.asarray(columns.rank, dtype=np.int64)
        self._exact: dict[str, list[int]] = {}
        self._with_word: dict[str, set[int]] = {}
        for index, key in enumerate(self.keys):
            self._exact.setdefault(key, []).append(index)
            for word in key.split():
                self._with_word.setdefault(word, set()).add(index)

    def __len__(self) -> int:
        return len(self.names)

    @cached_property
    def nodes(self) -> np.ndarray:
        """Nearest viewpoint of every entry."""
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        return np.atleast_1d(self.city.graph.nearest_node(self.lat, self.lng))

    @cached_property
    def centre_m(self) -> np.ndarray:
        """Distance of every entry to the middle of the city's viewpoints, metres."""
        if not len(self):
            return np.zeros(0)
        x, y = self.city.graph.projection.forward(self.lat, self.lng)
        return np.atleast_1d(np.hypot(x, y))

    @cached_property
    def _words(self) -> list[str]:
        return sorted(self._with_word)

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
        return [v for v in variants if v]

    def _ties(self, index: int) -> tuple[float, ...]:
        """The tie-breakers of an entry: tag rank, prominence, kind, centre distance, index."""
        return (
            float(self.tag_rank[index]),
            -float(self.prominence[index]),
            float(_KIND_ORDER[self.kinds[index]]),
            round(float(self.centre_m[index]), 1),
            float(index),
        )

    def _candidates(self, variant: str, limit: int) -> Iterable[tuple[tuple[float, ...], float]]:
        """``(sort key, score)`` of the entries matching one spelt-out query, any tier."""
        for index in self._exact.get(variant, ()):
            yield (0.0, 0.0, 0.0, index), 100.0
        words = variant.split()
        common = set.intersection(*(self._with_word.get(w, set()) for w in words))
        for index in common:
            extra = len(self.keys[index].split()) - len(set(words))
            yield (1.0, float(extra), 0.0, index), fuzz.WRatio(variant, self.keys[index])
        for _, score, index in process.extract(
            variant, self.keys, scorer=fuzz.WRatio, limit=max(limit * 8, 40)
        ):
            exact = fuzz.ratio(variant, self.keys[index])
            short = len(self.keys[index].replace(" ", "")) < SHORT_KEY
            if score >= MIN_SCORE and (exact >= MIN_SCORE or not short):
                yield (2.0, -float(round(score)), -exact, index), score

    def search(
        self, query: str, *, limit: int = 5, kinds: tuple[str, ...] = KINDS
    ) -> list[GeocodeResult]:
        """Entries matching ``query`` by name, best first (see the module docstring).

        Parameters
        ----------
        query
            A name (in any of the place's languages), address or street, in any case, with or
            without diacritics or typos.
        limit
            Number of results.
        kinds
            Which entry kinds to search.

        Returns
        -------
        list of GeocodeResult
            Possibly empty; one result per place and kind.
        """
        best: dict[tuple[str, int], tuple[tuple[float, ...], float, int]] = {}
        for variant in self._expansions(query):
            for (*tier, index), score in self._candidates(variant, limit):
                index = int(index)
                if self.kinds[index] not in kinds:
                    continue
                key = (*tier, *self._ties(index))
                row = int(self.place_rows[index])
                same = (self.kinds[index], row if row >= 0 else -1 - index)
                if same not in best or key < best[same][0]:
                    best[same] = (key, score, index)
        ranked = sorted(best.values())[:limit]
        return [self._result(index, score, key[0]) for key, score, index in ranked]

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

    def _result(self, index: int, score: float, tier: float) -> GeocodeResult:
        text = self.texts[index]
        return GeocodeResult(
            name=self.names[index],
            kind=self.kinds[index],
            lat=float(self.lat[index]),
            lng=float(self.lng[index]),
            node=int(self.nodes[index]),
            place_row=int(self.place_rows[index]),
            score=float(score),
            matched="" if text == self.names[index] else text,
            match=MATCHES[int(tier)],
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


def parse_point(text: str) -> tuple[float, float] | None:
    """``(lat, lng)`` of a ``"lat,lng"`` text, or ``None`` when the text is not made of numbers
    (it is a name then).

    Two numbers separated by a comma or spaces make a point. ``nan``, ``inf`` and
    ``infinity`` count as numbers, so that they are refused here rather than looked up.

    Raises
    ------
    CoordinateError
        The text is made of numbers but is not a point: not exactly two, not finite, or out of
        range.
    """
    if not _NUMBERS.match(text):
        return None
    parts = re.split(_SEPARATOR, text.strip())
    if len(parts) != 2:
        raise CoordinateError(text, f"expected latitude,longitude, got {len(parts)} number(s)")
    lat, lng = float(parts[0]), float(parts[1])
    if not (math.isfinite(lat) and math.isfinite(lng)):
        raise CoordinateError(text, "latitude and longitude must be finite numbers")
    if not -90.0 <= lat <= 90.0:
        raise CoordinateError(text, f"latitude must be in [-90, 90], got {parts[0]}")
    if not -180.0 <= lng <= 180.0:
        raise CoordinateError(text, f"longitude must be in [-180, 180], got {parts[1]}")
    return lat, lng


def locate_point(
    city: City, lat: float, lng: float, *, max_off_m: float = OFF_STREET_M
) -> GeocodeResult:
    """The viewpoint nearest to a point, as a result of kind ``"point"``.

    Parameters
    ----------
    city
        The city.
    lat, lng
        The point in degrees (finite and in range, see :func:`parse_point`).
    max_off_m
        Largest distance in metres from the point to its viewpoint.

    Raises
    ------
    OffStreetError
        The nearest viewpoint is farther than ``max_off_m`` (the point is outside the city);
        the message names the point and the distance.
    ArgumentError
        ``max_off_m`` is negative or not finite.
    """
    limit = check_finite(max_off_m, "max_off_m", where="locate_point", what="metres", low=0.0)
    graph = city.graph
    node = int(graph.nearest_node(lat, lng))
    x, y = graph.projection.forward(lat, lng)
    off = float(np.hypot(float(x) - graph.xy[node][0], float(y) - graph.xy[node][1]))
    if off > limit:
        raise OffStreetError(lat, lng, off, limit, city.name)
    label = f"{lat:.5f},{lng:.5f}"
    return GeocodeResult(label, "point", lat, lng, node, -1, 100.0, match="point")


def geocode(
    city: City, query: str, *, limit: int = 5, max_off_m: float = OFF_STREET_M
) -> list[GeocodeResult]:
    """Ranked matches for a place name, address or street name (empty list if none).

    A ``"lat,lng"`` query gives its nearest viewpoint instead (see :func:`locate_point`).

    Raises
    ------
    CoordinateError
        A query of numbers that is not a point inside the city (see :func:`parse_point`;
        :class:`OffStreetError` beyond ``max_off_m``).
    """
    point = parse_point(query)
    if point is not None:
        return [locate_point(city, *point, max_off_m=max_off_m)]
    return gazetteer(city).search(query, limit=limit)


def geocode_one(city: City, query: str, *, max_off_m: float = OFF_STREET_M) -> GeocodeResult:
    """The best match for ``query`` (a name, address, street or ``"lat,lng"``).

    Raises
    ------
    UnknownPlaceError
        No name matches; the message names the three closest names.
    CoordinateError
        A query of numbers that is not a point inside the city (see :func:`geocode`).
    """
    if not query.strip():
        raise UnknownPlaceError(query)
    found = geocode(city, query, limit=1, max_off_m=max_off_m)
    if not found:
        raise UnknownPlaceError(query, gazetteer(city).closest_names(query))
    return found[0]


def resolve_point(city: City, text: str, *, max_off_m: float = OFF_STREET_M) -> tuple[int, str]:
    """A viewpoint from ``"lat,lng"`` or a place name / address / street (ranked as
    :meth:`Gazetteer.search`).

    Parameters
    ----------
    city
        The city.
    text
        ``"lat,lng"`` or a name.
    max_off_m
        Largest distance in metres from a ``"lat,lng"`` point to its viewpoint (default
        :data:`OFF_STREET_M`).

    Returns
    -------
    tuple
        ``(node index, label)``: the place's main name, or ``"lat,lng"`` to 5 decimals.

    Raises
    ------
    UnknownPlaceError
        No name matches; the message names the three closest names.
    CoordinateError
        ``nan``, ``inf`` or an out-of-range latitude or longitude.
    OffStreetError
        A point more than ``max_off_m`` from every viewpoint (outside the city).
    """
    found = geocode_one(city, text, max_off_m=max_off_m)
    return found.node, found.name

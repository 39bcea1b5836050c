"""Rental listings for the estate recommender: a user's file in RentCast's schema, or
synthetic listings made from OpenStreetMap building footprints (labelled synthetic).

RentCast fields read: ``formattedAddress``, ``price``, ``latitude``, ``longitude``
(required) and ``propertyType``, ``bedrooms``, ``bathrooms``, ``squareFootage``,
``yearBuilt`` (optional). A file is a JSON array, a JSON object with a ``listings`` array,
or a CSV with those column names. V-IRL ships its New York listings
(``data/estate/ny_peng_rent.json``); flaneur does not copy them.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import shapely

from flaneur.errors import DataError
from flaneur.world.city import City

REQUIRED = ("formattedAddress", "price", "latitude", "longitude")
OPTIONAL = ("propertyType", "bedrooms", "bathrooms", "squareFootage", "yearBuilt")
NUMERIC = ("price", "latitude", "longitude", "bedrooms", "bathrooms", "squareFootage", "yearBuilt")
SYNTHETIC_DEFAULT = 30
"""Synthetic listings made when a scenario names no listings."""
SYNTHETIC_MAX = 500
"""Most synthetic listings a scenario may ask for."""
SYNTHETIC_SOURCE = "synthetic (made from OpenStreetMap building footprints; not real listings)"


def _rows(path: Path) -> list[tuple[int | None, dict[str, Any]]]:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(
            "not a UTF-8 text file (expected RentCast JSON or CSV)", path=path
        ) from None
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        return [(i + 2, dict(row)) for i, row in enumerate(reader)]
    try:
        data = json.loads(text) if text.strip() else []
    except json.JSONDecodeError as err:
        raise DataError(f"invalid JSON ({err.msg})", path=path, line=err.lineno) from None
    if isinstance(data, dict):
        data = data.get("listings", data.get("data"))
    if not isinstance(data, list):
        raise DataError('expected a JSON array of listings (or {"listings": [...]})', path=path)
    return [(None, row) for row in data]


def load_listings(path: str | Path, city: City | None = None) -> list[dict[str, Any]]:
    """Read and check listings; every problem names the file, row and field.

    Raises
    ------
    DataError
        A missing file, no listings, a listing without a required field, a value that is
        not a number, or (with ``city``) a listing outside the city.
    """
    file = Path(path)
    if not file.is_file():
        raise DataError("listings file not found (expected RentCast JSON or CSV)", path=file)
    return check_listings(_rows(file), city, path=file)


def check_listings(
    rows: list[tuple[int | None, Any]], city: City | None = None, *, path: Path | None = None
) -> list[dict[str, Any]]:
    """Listings of ``(line, row)`` pairs checked as :func:`load_listings` checks a file's
    (``path`` only names where they come from in messages)."""
    if not rows:
        raise DataError("the listings file has no listings", path=path)
    out = []
    for k, (line, row) in enumerate(rows):
        where = f"listing {k + 1}"
        if not isinstance(row, dict):
            raise DataError(f"{where} is not an object", path=path, line=line)
        listing: dict[str, Any] = {"synthetic": bool(row.get("synthetic", False))}
        for key in (*REQUIRED, *OPTIONAL):
            value = row.get(key)
            if value in (None, ""):
                if key in REQUIRED:
                    raise DataError(f"{where}: field {key!r} is missing", path=path, line=line)
                continue
            listing[key] = _number(value, key, where, path, line) if key in NUMERIC else value
        if city is not None:
            west, south, east, north = city.bbox
            if not (west <= listing["longitude"] <= east and south <= listing["latitude"] <= north):
                raise DataError(
                    f"{where} ({listing['formattedAddress']}) lies outside {city.name}",
                    path=path,
                    line=line,
                )
        out.append(listing)
    return out


def _number(value: Any, key: str, where: str, path: Path | None, line: int | None) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number):
        raise DataError(
            f"{where}: field {key!r} must be a number (got {value!r})", path=path, line=line
        )
    return number


def scenario_listings(
    city: City, data: dict[str, Any], *, seed: Any = 0
) -> tuple[list[dict[str, Any]], str]:
    """The listings of a Vivek scenario and where they come from: ``listings`` given inline
    (a list) or as a RentCast file (a path), else ``synthetic_listings`` made-up ones
    (default :data:`SYNTHETIC_DEFAULT`; ``seed`` draws them).

    Raises
    ------
    DataError
        Malformed listings, a missing file, or a count outside 1-:data:`SYNTHETIC_MAX`.
    """
    given = data.get("listings")
    if isinstance(given, list):
        source = str(data.get("listings_source") or "listings given with the scenario")
        return check_listings([(None, row) for row in given], city), source
    if isinstance(given, str) and given:
        return load_listings(given, city), given
    if given not in (None, ""):
        raise DataError(f"field 'listings' must be a file path or a list, not {given!r}")
    count = data.get("synthetic_listings", SYNTHETIC_DEFAULT)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= SYNTHETIC_MAX:
        raise DataError(
            f"field 'synthetic_listings' must be an integer from 1 to {SYNTHETIC_MAX}, "
            f"not {count!r}"
        )
    return synthetic_listings(city, count, seed=seed), SYNTHETIC_SOURCE


def synthetic_listings(city: City, n: int = 30, *, seed: Any = 0) -> list[dict[str, Any]]:
    """``n`` made-up listings at OSM building footprints (of 150 m² or more), each marked
    ``synthetic`` (fewer where the city has fewer such buildings).

    Bedrooms are drawn 1-3; floor area ~ 35 + 25 per bedroom m² (as square feet, the
    RentCast unit); the rent is 14-22 per m² a month. Nothing here is a real offer.

    Raises
    ------
    DataError
        ``n`` below 1, or a city without building footprints.
    """
    if n < 1:
        raise DataError(f"synthetic listings: the count must be at least 1, not {n}")
    if len(city.buildings) == 0:
        raise DataError(f"{city.name} has no building footprints to make synthetic listings")
    rng = np.random.default_rng(seed)
    areas = shapely.area(city.buildings_xy)
    big = np.flatnonzero(areas >= 150.0)
    if not big.size:
        raise DataError(f"{city.name} has no building of 150 m² or more for synthetic listings")
    picks = rng.choice(big, size=min(n, big.size), replace=False)
    out = []
    for k, b in enumerate(sorted(int(i) for i in picks)):
        point = city.buildings[b].representative_point()
        bedrooms = int(rng.integers(1, 4))
        metres = 35.0 + 25.0 * bedrooms + float(rng.normal(0, 6))
        node = int(city.graph.nearest_node(point.y, point.x))
        street = _street_at(city, node)
        out.append(
            {
                "synthetic": True,
                "formattedAddress": f"Synthetic listing {k + 1}"
                + (f", near {street}" if street else ""),
                "price": float(round(metres * rng.uniform(14, 22))),
                "latitude": float(point.y),
                "longitude": float(point.x),
                "propertyType": "Apartment",
                "bedrooms": float(bedrooms),
                "bathrooms": 1.0,
                "squareFootage": float(round(metres * 10.764)),
            }
        )
    return out


def _street_at(city: City, node: int) -> str:
    if len(city.edge_streets) == 0:
        return ""
    names = city.edge_streets[city.graph.out_slice(node)]
    named = [str(x) for x in names if x]
    return named[0] if named else ""

"""Rental listings for the estate recommender: a user's file in RentCast's schema, or
synthetic listings made from OpenStreetMap building footprints (labelled synthetic).

RentCast fields read: ``formattedAddress``, ``price``, ``latitude``, ``longitude``
(required) and ``propertyType``, ``bedrooms``, ``bathrooms``, ``squareFootage``,
``yearBuilt`` (optional). A file is a JSON array, a JSON object with a ``listings`` array,
or a CSV with those column names. V-IRL's own listing data is not shipped.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import shapely

from flaneur.errors import DataError
from flaneur.world.city import City

REQUIRED = ("formattedAddress", "price", "latitude", "longitude")
OPTIONAL = ("propertyType", "bedrooms", "bathrooms", "squareFootage", "yearBuilt")
NUMERIC = ("price", "latitude", "longitude", "bedrooms", "bathrooms", "squareFootage", "yearBuilt")


def _rows(path: Path) -> list[tuple[int | None, dict[str, Any]]]:
    text = path.read_text(encoding="utf-8")
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
    rows = _rows(file)
    if not rows:
        raise DataError("the listings file has no listings", path=file)
    out = []
    for k, (line, row) in enumerate(rows):
        where = f"listing {k + 1}"
        if not isinstance(row, dict):
            raise DataError(f"{where} is not an object", path=file, line=line)
        listing: dict[str, Any] = {"synthetic": False}
        for key in (*REQUIRED, *OPTIONAL):
            value = row.get(key)
            if value in (None, ""):
                if key in REQUIRED:
                    raise DataError(f"{where}: field {key!r} is missing", path=file, line=line)
                continue
            if key in NUMERIC:
                try:
                    value = float(value)
                except (TypeError, ValueError):
                    raise DataError(
                        f"{where}: field {key!r} must be a number (got {value!r})",
                        path=file,
                        line=line,
                    ) from None
            listing[key] = value
        if city is not None:
            west, south, east, north = city.bbox
            if not (west <= listing["longitude"] <= east and south <= listing["latitude"] <= north):
                raise DataError(
                    f"{where} ({listing['formattedAddress']}) lies outside {city.name}",
                    path=file,
                    line=line,
                )
        out.append(listing)
    return out


def synthetic_listings(city: City, n: int = 30, *, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` made-up listings at OSM building footprints, each marked ``synthetic``.

    Bedrooms are drawn 1-3; floor area ~ 35 + 25 per bedroom m² (as square feet, the
    RentCast unit); the rent is 14-22 per m² a month. Nothing here is a real offer.
    """
    if len(city.buildings) == 0:
        raise DataError(f"{city.name} has no building footprints to make synthetic listings")
    rng = np.random.default_rng(seed)
    areas = shapely.area(city.buildings_xy)
    big = np.flatnonzero(areas >= 150.0)
    picks = rng.choice(big, size=min(n, big.size), replace=False) if big.size else []
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

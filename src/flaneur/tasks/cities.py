"""The cities of task sets: data-directory city sources, ``--city`` specs, and the pack cache.

A task set's city is either a *data-directory city source* (``touchdown-manhattan``,
``cityseeker-shanghai2``: built from ``--data-dir``) or a *city spec* as ``--city`` takes it:
a city pack folder, a built-in city (``helsinki``), ``touchdown:DIR``, ``cityseeker:DIR`` or
an ``.osm.pbf`` file. Cities built from sources are cached as packs under
``$FLANEUR_CACHE_DIR/cities/<key>-<hash>``, the hash covering the source files' paths, sizes
and modification times, and memoised in-process.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flaneur.errors import DataError
from flaneur.world.builtin import BUILTIN_CITIES, build_city, load_city
from flaneur.world.city import PACK_VERSION, City
from flaneur.world.packs import cached_city
from flaneur.world.sources.cityseeker import city_from_cityseeker, cityseeker_questions_path
from flaneur.world.sources.touchdown import city_from_touchdown, find_touchdown_graph

CITY_CACHE_VERSION = 1
"""Bumped when the way task cities are built changes, so cached packs are rebuilt."""


@dataclass(frozen=True)
class CitySource:
    """How to build a task city from a data directory.

    Attributes
    ----------
    key
        Short name used for the cache folder (``touchdown-manhattan``).
    files
        Source files relative to the data directory, or absolute (their size and mtime key
        the cache).
    build
        ``build(data_dir) -> City``.
    """

    key: str
    files: tuple[str, ...]
    build: Callable[[Path], City]


def _touchdown_city(data_dir: Path) -> City:

    return city_from_touchdown(
        data_dir / "touchdown/graph", unseen_polygon=data_dir / "map2seq/unseen/bbox.txt"
    )


def _cityseeker_city(data_dir: Path) -> City:

    return city_from_cityseeker(data_dir / "cityseeker/shanghai2")


TOUCHDOWN_FILES = ("touchdown/graph/nodes.txt", "touchdown/graph/links.txt")

CITY_SOURCES: dict[str, CitySource] = {
    "touchdown-manhattan": CitySource(
        "touchdown-manhattan", (*TOUCHDOWN_FILES, "map2seq/unseen/bbox.txt"), _touchdown_city
    ),
    "cityseeker-shanghai2": CitySource(
        "cityseeker-shanghai2",
        ("cityseeker/shanghai2/connections.json", "cityseeker/shanghai2/questions.json"),
        _cityseeker_city,
    ),
}
"""Cities built from the data directory, by key."""


def city_cache_key(source: CitySource, data_dir: Path) -> str:
    """``<key>-<hash>``; the hash covers the data folder and the files' size and mtime."""
    parts = [source.key, str(CITY_CACHE_VERSION), str(PACK_VERSION), str(data_dir.resolve())]
    for rel in source.files:
        stat = cityseeker_questions_path(data_dir / rel).stat()  # question.json is accepted
        parts.append(f"{rel}:{stat.st_size}:{int(stat.st_mtime)}")
    return f"{source.key}-{hashlib.sha1('|'.join(parts).encode()).hexdigest()[:12]}"


def load_source_city(source: CitySource, data_dir: Path, *, rebuild: bool = False) -> City:
    """The city of ``source`` built from ``data_dir``, via the one city-pack cache
    (:func:`flaneur.world.packs.cached_city`: concurrency-safe, memoised in-process)."""
    key = city_cache_key(source, data_dir)
    return cached_city(key, lambda: source.build(data_dir), rebuild=rebuild)


def load_task_city(key: str, data_dir: Path, *, rebuild: bool = False) -> City:
    """The data-directory city ``key`` (see :data:`CITY_SOURCES`) built from ``data_dir``."""
    return load_source_city(CITY_SOURCES[key], data_dir, rebuild=rebuild)


def _spec_source(spec: str) -> tuple[CitySource, Path] | None:
    """A cacheable source for ``touchdown:DIR``, ``cityseeker:DIR`` or an ``.osm.pbf``."""

    kind, _, rest = spec.partition(":")
    if kind == "touchdown" and rest:
        root = Path(rest).expanduser().resolve()
        if all((root / f).is_file() for f in TOUCHDOWN_FILES):  # a data directory: shared pack
            return CITY_SOURCES["touchdown-manhattan"], root

        folder = find_touchdown_graph(root)
        files: tuple[str, ...] = (str(folder / "nodes.txt"), str(folder / "links.txt"))
        return CitySource("touchdown", files, lambda _: build_city(f"touchdown:{root}")), Path("/")
    if kind == "cityseeker" and rest:
        folder = Path(rest).expanduser().resolve()
        names = ("connections.json", "questions.json", "question.json")
        files = tuple(str(folder / n) for n in names if (folder / n).is_file())
        if not (folder / "connections.json").is_file():
            raise DataError("no CitySeeker city here (expected connections.json)", path=folder)
        build = lambda _: build_city(f"cityseeker:{folder}")  # noqa: E731
        return CitySource(f"cityseeker-{folder.name}", files, build), Path("/")
    path = Path(spec).expanduser()
    if path.name.endswith(".pbf") and path.is_file():
        pbf = path.resolve()
        source = CitySource(pbf.name.split(".")[0], (str(pbf),), lambda _: build_city(str(pbf)))
        return source, Path("/")
    return None


def load_city_spec(spec: str, *, rebuild: bool = False) -> City:
    """The city named by a ``--city`` spec: a pack folder, a built-in city, or a source.

    Sources (``touchdown:DIR``, ``cityseeker:DIR``, ``.osm.pbf``) are built once and cached
    as packs; ``touchdown:DIR`` on a data directory shares the pack of the built-in
    Touchdown/map2seq task sets.

    Raises
    ------
    DataError
        A folder that is not a pack, an unknown source, or missing source files.
    """

    found = _spec_source(str(spec))
    if found is None:
        return load_city(spec)
    source, root = found
    return load_source_city(source, root, rebuild=rebuild)


def absolute_city_spec(value: str, base: Path) -> str:
    """A city spec with its path made absolute against ``base`` (built-in names as they are)."""

    if not value or value in BUILTIN_CITIES:
        return value
    kind, sep, rest = value.partition(":")
    if sep and kind in ("touchdown", "cityseeker"):
        return f"{kind}:{(base / Path(rest).expanduser()).resolve()}"
    return str((base / Path(value).expanduser()).resolve())


def infer_city(path: Path, fmt: str, episodes_city: str | None = None) -> str | None:
    """The city spec a task file implies by where it lies, or ``None``.

    - map2seq / Touchdown: the nearest ancestor folder holding ``touchdown/graph``
      (the data directory layout), as ``touchdown:DIR``;
    - CitySeeker: the file's folder when it holds ``connections.json``, as ``cityseeker:DIR``;
    - flaneur episodes: the episodes' city when it is a built-in city;
    - item files: the city their header names, a built-in city or a city pack folder
      (relative to the file's folder when not absolute).
    """

    path = path.resolve()
    if fmt in ("map2seq", "touchdown"):
        for folder in list(path.parents)[:4]:
            if all((folder / f).is_file() for f in TOUCHDOWN_FILES):
                return f"touchdown:{folder}"
    elif fmt == "cityseeker":
        if (path.parent / "connections.json").is_file():
            return f"cityseeker:{path.parent}"
    elif fmt == "items" and episodes_city and episodes_city not in BUILTIN_CITIES:
        pack = Path(episodes_city).expanduser()
        pack = pack if pack.is_absolute() else path.parent / pack
        return str(pack.resolve()) if pack.is_dir() else None
    elif episodes_city in BUILTIN_CITIES:
        return episodes_city
    return None

"""A city: street graph + places + metadata, and its on-disk *city pack*.

A city pack is a directory::

    city.json       format name and version, name, source, licence, bbox, counts, node sets
    graph.npz       StreetGraph arrays (uncompressed, no pickles)
    nodesets.npz    boolean node masks such as ``seen`` / ``unseen`` (optional)
    places.json     one record per place
    buildings.npz   building footprints as shapely ragged arrays (optional)
    streets.npz     the street name of every directed edge, in graph edge order (optional;
                    format version 2, OpenStreetMap sources)
    furniture.json  street furniture records (optional; format version 3)
    walkable.npz    every node's walkable headings in CSR form (optional; format version 4,
                    CitySeeker sources)
    car.npz         whether a car may drive every directed edge, in graph edge order
                    (optional; format version 5, OpenStreetMap sources)
    clip_reference/ stored CLIP reference sets of the city's imagery (optional; written by
                    ``flaneur perception clip-reference``, see
                    :mod:`flaneur.perception.landmarks.reference`; not part of the format)

Loading a pack reads these files only; it never re-parses the source data. A loaded city
remembers its pack folder (:attr:`City.pack`), where per-city data such as the CLIP
reference sets is kept.
"""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import shapely
from numpy.typing import NDArray

from flaneur.errors import DataError
from flaneur.world.furniture import Furniture
from flaneur.world.graph import StreetGraph
from flaneur.world.places import Places
from flaneur.world.walkable import WalkableHeadings

PACK_FORMAT = "flaneur-city-pack"
PACK_VERSION = 5
"""2: street names (``streets.npz``); 3: street furniture (``furniture.json``); 4: walkable
headings (``walkable.npz``); 5: car access (``car.npz``)."""

READABLE_PACK_VERSIONS = (3, 4, PACK_VERSION)
"""Versions :meth:`City.load` reads: a version-3 or -4 pack differs only by lacking optional
files (walkable headings since 4, car access since 5: its city has none; rebuild the pack to
have them)."""


@dataclass(eq=False)
class City:
    """A city model: viewpoint graph, places and metadata.

    Parameters
    ----------
    name
        Short name (``"helsinki"``, ``"touchdown-manhattan"``, ...).
    graph
        The street graph of viewpoints.
    places
        Points of interest (may be empty: Touchdown and CitySeeker ship none).
    source
        Where the data came from (file or dataset name).
    licence
        Licence of the source data (e.g. ``"ODbL-1.0"``).
    buildings
        Building footprints as shapely polygons in ``(lng, lat)``, where the source has them.
    building_heights
        Height in metres per building (NaN where unknown).
    node_sets
        Named boolean masks over nodes (e.g. ``{"unseen": mask}``).
    edge_streets
        Street name of every directed edge of ``graph`` in its edge order (``""`` where
        unknown); empty when the source has no street names.
    edge_car
        Whether a car may drive every directed edge of ``graph`` in its direction, in its
        edge order (OpenStreetMap sources: :func:`flaneur.world.sources.osm.car_directions`);
        empty when the source does not say (car access unknown).
    metadata
        Free metadata (build parameters, counts, source details).
    furniture
        Street furniture (:mod:`flaneur.world.furniture`), where the source has it.
    walkable
        The walkable headings of every node (:mod:`flaneur.world.walkable`), where the source
        has them (CitySeeker); ``None`` otherwise.
    pack
        The pack folder the city was loaded from (set by :meth:`load` and the pack cache,
        :func:`flaneur.world.packs.cached_city`); ``None`` for a city made in memory. Not
        saved: it says where per-city data beside the pack lives.
    """

    name: str
    graph: StreetGraph
    places: Places = field(default_factory=Places.empty)
    source: str = ""
    licence: str = ""
    buildings: NDArray[np.object_] = field(default_factory=lambda: np.zeros(0, dtype=object))
    building_heights: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    node_sets: dict[str, NDArray[np.bool_]] = field(default_factory=dict)
    edge_streets: NDArray[np.str_] = field(default_factory=lambda: np.zeros(0, dtype=str))
    edge_car: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    metadata: dict[str, Any] = field(default_factory=dict)
    furniture: Furniture = field(default_factory=Furniture.empty)
    walkable: WalkableHeadings | None = None
    pack: Path | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.buildings = np.asarray(self.buildings, dtype=object)
        if len(self.building_heights) != len(self.buildings):
            self.building_heights = np.full(len(self.buildings), np.nan)
        self.places.projection = self.graph.projection
        self.edge_streets = np.asarray(self.edge_streets, dtype=str)
        if len(self.edge_streets) not in (0, self.graph.n_edges):
            raise ValueError("edge_streets must have one name per edge of the graph")
        self.edge_car = np.asarray(self.edge_car, dtype=bool)
        if len(self.edge_car) not in (0, self.graph.n_edges):
            raise ValueError("edge_car must have one flag per edge of the graph")
        self.furniture.projection = self.graph.projection
        for key, mask in self.node_sets.items():
            if len(mask) != self.graph.n_nodes:
                raise ValueError(f"node set {key!r} must have one flag per node")
        if self.walkable is not None and self.walkable.n_nodes != self.graph.n_nodes:
            raise ValueError("walkable headings must cover every node of the graph")

    def __repr__(self) -> str:
        return (
            f"City({self.name!r}, nodes={self.graph.n_nodes}, edges={self.graph.n_edges}, "
            f"places={len(self.places)})"
        )

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """``(west, south, east, north)`` of the street graph in degrees."""
        return self.graph.bbox

    @cached_property
    def buildings_xy(self) -> NDArray[np.object_]:
        """Building footprints in the graph's metric projection (shapely polygons)."""
        if len(self.buildings) == 0:
            return np.zeros(0, dtype=object)
        proj = self.graph.projection
        return shapely.transform(
            self.buildings, lambda c: np.column_stack(proj.forward(c[:, 1], c[:, 0]))
        )

    def places_near_node(self, node: int, radius_m: float = 50.0):
        """Places within ``radius_m`` of viewpoint ``node``: ``(rows, distances_m)``."""
        return self.places.within(self.graph.xy[node], radius_m)

    def summary(self) -> dict[str, Any]:
        """Counts and metadata for ``flaneur city info``."""
        categorized = sum(1 for cats in self.places.categories if cats)
        named_categorized = sum(
            1
            for name, cats in zip(self.places.names, self.places.categories, strict=True)
            if name and cats
        )
        return {
            "name": self.name,
            "source": self.source,
            "licence": self.licence,
            "nodes": self.graph.n_nodes,
            "edges": self.graph.n_edges,
            "places": len(self.places),
            "named_places": self.places.n_named,
            "categorized_places": categorized,
            "named_categorized_places": named_categorized,
            "buildings": len(self.buildings),
            "degree_histogram": self.graph.degree_histogram(),
            "largest_component_fraction": round(self.graph.largest_component_fraction(), 6),
            "bbox": list(self.bbox),
            "node_sets": {k: int(v.sum()) for k, v in self.node_sets.items()},
            "categories": self.places.category_counts(),
            "furniture": self.furniture.counts(),
            "metadata": self.metadata,
        }

    # ------------------------------------------------------------------ packs
    def save(self, path: str | Path) -> Path:
        """Write this city as a pack directory (created or overwritten file by file)."""
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        np.savez(out / "graph.npz", allow_pickle=True, **self.graph.to_arrays())
        if self.node_sets:
            np.savez(out / "nodesets.npz", allow_pickle=True, **self.node_sets)
        elif (out / "nodesets.npz").exists():
            (out / "nodesets.npz").unlink()
        if len(self.edge_streets):
            np.savez(out / "streets.npz", names=self.edge_streets)
        elif (out / "streets.npz").exists():
            (out / "streets.npz").unlink()
        if len(self.edge_car):
            np.savez(out / "car.npz", car=self.edge_car)
        elif (out / "car.npz").exists():
            (out / "car.npz").unlink()
        (out / "places.json").write_text(
            json.dumps(self.places.to_records(), ensure_ascii=False), encoding="utf-8"
        )
        if len(self.furniture):
            (out / "furniture.json").write_text(
                json.dumps(self.furniture.to_records()), encoding="utf-8"
            )
        elif (out / "furniture.json").exists():
            (out / "furniture.json").unlink()
        if self.walkable is not None:
            w = self.walkable
            np.savez(out / "walkable.npz", indptr=w.indptr, headings=w.headings)
        elif (out / "walkable.npz").exists():
            (out / "walkable.npz").unlink()
        if len(self.buildings):
            kind, coords, offsets = shapely.to_ragged_array(self.buildings)
            np.savez(
                out / "buildings.npz",
                kind=np.asarray(int(kind)),
                coords=coords,
                heights=self.building_heights,
                allow_pickle=True,
                **{f"offsets{i}": o for i, o in enumerate(offsets)},
            )
        meta = {
            "format": PACK_FORMAT,
            "format_version": PACK_VERSION,
            "name": self.name,
            "source": self.source,
            "licence": self.licence,
            "bbox": list(self.bbox),
            "nodes": self.graph.n_nodes,
            "edges": self.graph.n_edges,
            "places": len(self.places),
            "buildings": len(self.buildings),
            "furniture": len(self.furniture),
            "node_sets": sorted(self.node_sets),
            "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "metadata": self.metadata,
        }
        (out / "city.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
        return out

    @classmethod
    def load(cls, path: str | Path) -> City:
        """Load a city pack written by :meth:`save`.

        Raises
        ------
        DataError
            If the folder is not a city pack, or its format version is unknown.
        """
        folder = Path(path)
        meta_path = folder / "city.json"
        if not meta_path.is_file():
            raise DataError(
                "not a city pack (expected a folder with city.json, made by `flaneur city build`)",
                path=folder,
            )
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise DataError(f"invalid JSON ({err.msg})", path=meta_path, line=err.lineno) from None
        except UnicodeDecodeError:
            raise DataError("not UTF-8 text (a binary file?)", path=meta_path) from None
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            raise DataError("expected a JSON object with a 'name' field", path=meta_path)
        if meta.get("format") != PACK_FORMAT:
            raise DataError(f"field 'format' must be {PACK_FORMAT!r}", path=meta_path)
        if meta.get("format_version") not in READABLE_PACK_VERSIONS:
            raise DataError(
                f"pack format version {meta.get('format_version')!r} is not supported "
                f"(this flaneur reads versions {', '.join(map(str, READABLE_PACK_VERSIONS))})"
                "; rebuild the pack",
                path=meta_path,
            )
        for name in ("graph.npz", "places.json"):
            if not (folder / name).is_file():
                raise DataError(f"city pack is missing {name}", path=folder)
        graph_file = folder / "graph.npz"
        with _pack_file(graph_file), np.load(graph_file, allow_pickle=False) as npz:
            graph = StreetGraph.from_arrays({k: npz[k] for k in npz.files})
        node_sets: dict[str, NDArray[np.bool_]] = _load_arrays(folder / "nodesets.npz")
        edge_streets = _load_arrays(folder / "streets.npz").get("names", np.zeros(0, dtype=str))
        edge_car = _load_arrays(folder / "car.npz").get("car", np.zeros(0, dtype=bool))
        with _pack_file(folder / "places.json"):
            places = Places.from_records(
                json.loads((folder / "places.json").read_text(encoding="utf-8"))
            )
        furniture = _load_furniture(folder / "furniture.json")
        walkable = _load_walkable(folder / "walkable.npz")
        buildings, heights = np.zeros(0, dtype=object), np.zeros(0)
        if (folder / "buildings.npz").is_file():
            shapes_file = folder / "buildings.npz"
            with _pack_file(shapes_file), np.load(shapes_file, allow_pickle=False) as npz:
                offsets = tuple(
                    npz[k] for k in sorted(f for f in npz.files if f.startswith("offsets"))
                )
                buildings = shapely.from_ragged_array(
                    shapely.GeometryType(int(npz["kind"])), npz["coords"], offsets
                )
                heights = npz["heights"]
        return cls(
            name=meta["name"],
            graph=graph,
            places=places,
            source=meta.get("source", ""),
            licence=meta.get("licence", ""),
            buildings=buildings,
            building_heights=heights,
            node_sets=node_sets,
            edge_streets=edge_streets,
            edge_car=edge_car,
            metadata=meta.get("metadata", {}),
            furniture=furniture,
            walkable=walkable,
            pack=folder.resolve(),
        )


def _load_arrays(path: Path) -> dict[str, NDArray[Any]]:
    """The arrays of an optional ``.npz`` file of a pack (none when it is absent)."""
    if not path.is_file():
        return {}
    with _pack_file(path), np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _load_walkable(path: Path) -> WalkableHeadings | None:
    """The walkable headings of a pack (``None`` when absent); a bad file is a one-line
    error."""
    if not path.is_file():
        return None
    with _pack_file(path), np.load(path, allow_pickle=False) as npz:
        return WalkableHeadings.from_arrays({k: npz[k] for k in npz.files})


def _load_furniture(path: Path) -> Furniture:
    """The furniture file of a pack (empty when absent); a bad file is a one-line error."""
    if not path.is_file():
        return Furniture.empty()
    try:
        return Furniture.from_records(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as err:
        raise DataError(f"invalid JSON ({err.msg})", path=path, line=err.lineno) from None
    except (KeyError, TypeError, ValueError) as err:
        raise DataError(f"bad furniture record ({err})", path=path) from None


@contextmanager
def _pack_file(path: Path) -> Iterator[None]:
    """Turn a corrupt or truncated file of a city pack into a :class:`DataError` naming it."""
    try:
        yield
    except DataError:
        raise
    except (
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        EOFError,
        OSError,
        zipfile.BadZipFile,
    ) as err:
        if isinstance(err, OSError) and not isinstance(err, zipfile.BadZipFile) and err.filename:
            raise
        detail = " ".join(str(err).split()) or type(err).__name__
        if isinstance(err, EOFError) or "empty" in detail.lower():
            detail = "the file is empty or truncated"
        raise DataError(
            f"corrupt city pack file ({detail[:160]}); rebuild the pack with `flaneur city build`",
            path=path,
        ) from None

"""Loaders that turn source data into :class:`~flaneur.world.city.City` objects, and the
registry of city sources (``flaneur city build KIND:ARG``, ``--city KIND:ARG``).

:data:`SOURCES` maps a source kind to a function ``(arg: str) -> City``: the built-in
``touchdown``, ``cityseeker`` and ``osm`` loaders, sources registered in code with
:func:`register_source` and those outside packages declare under the entry-point
group ``flaneur.cities`` (see ``docs/extending.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from flaneur.registry import Registry

if TYPE_CHECKING:
    from flaneur.world.city import City


def _touchdown(arg: str) -> City:
    # a source's readers load only when that source is read
    from flaneur.world.sources.touchdown import city_from_touchdown, find_touchdown_graph

    folder = find_touchdown_graph(arg)
    polygon = None
    for candidate in (
        Path(arg) / "map2seq/unseen/bbox.txt",
        folder.parent.parent / "map2seq/unseen/bbox.txt",
    ):
        if candidate.is_file():
            polygon = candidate
            break
    return city_from_touchdown(folder, unseen_polygon=polygon)


def _cityseeker(arg: str) -> City:
    # a source's readers load only when that source is read
    from flaneur.world.sources.cityseeker import city_from_cityseeker

    return city_from_cityseeker(arg)


def _osm(arg: str) -> City:
    # a source's readers load only when that source is read
    from flaneur.world.sources.osm import city_from_osm

    return city_from_osm(Path(arg))


SOURCES: Registry[Any] = Registry("city source", group="flaneur.cities")
"""City builders by source kind: ``touchdown:DIR``, ``cityseeker:DIR``, ``osm:FILE``."""
for _name, _build in (("touchdown", _touchdown), ("cityseeker", _cityseeker), ("osm", _osm)):
    SOURCES.register(_name, _build)


def register_source(name: str, build: Any, *, replace: bool = False) -> None:
    """Add a city builder ``(arg: str) -> City`` (or ``"module:function"``) as ``name:ARG``."""
    SOURCES.register(name, build, replace=replace)


__all__ = ["SOURCES", "register_source"]

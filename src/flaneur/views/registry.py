"""View providers by name: ``--views NAME[:ARG]`` (built-ins, entry points, ``module:Class``).

A registry entry is a *factory* ``(city, arg) -> provider``: a function, or a class with a
``from_spec(city, arg)`` class method, or a class built as ``cls(city)`` when it takes no
argument. Outside packages add providers under the entry-point group ``flaneur.views``
(see ``docs/extending.md``); a ``--views package.module:Class`` names one directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from flaneur.errors import FlaneurError
from flaneur.registry import Registry
from flaneur.views.google import GoogleStreetView
from flaneur.views.mapillary import Mapillary
from flaneur.views.panorama import PanoramaFolder
from flaneur.views.synthetic import SyntheticViews

if TYPE_CHECKING:
    from flaneur.world.city import City


def _synthetic(city: City, arg: str) -> Any:

    return SyntheticViews(city, scene_cache=True)


def _panorama(city: City, arg: str) -> Any:
    if not arg:
        raise FlaneurError("--views panorama needs a folder: panorama:DIR")

    return PanoramaFolder(Path(arg), city.graph)


def _google(city: City, arg: str) -> Any:

    return GoogleStreetView(city.graph)


def _mapillary(city: City, arg: str) -> Any:

    return Mapillary(city.graph)


VIEWS: Registry[Any] = Registry("view provider", group="flaneur.views")
"""View-provider factories by name (``synthetic``, ``panorama``, ``google``, ``mapillary``)."""
for _name, _factory in (
    ("synthetic", _synthetic),
    ("panorama", _panorama),
    ("google", _google),
    ("mapillary", _mapillary),
):
    VIEWS.register(_name, _factory)


def register_views(name: str, factory: Any, *, replace: bool = False) -> None:
    """Add a view-provider factory (or class, or ``"module:Name"``) as ``--views name``."""
    VIEWS.register(name, factory, replace=replace)


def views_from_spec(spec: str, city: City) -> Any:
    """A view provider for ``city`` from a ``--views`` value.

    ``synthetic`` (offline renderer), ``panorama:DIR`` (local equirectangular panoramas named
    by node id), ``google`` (Street View Static API, key ``GOOGLE_MAPS_API_KEY``),
    ``mapillary`` (API v4, token ``MAPILLARY_ACCESS_TOKEN``), a provider of an installed
    plug-in (``NAME`` or ``NAME:ARG``), or ``package.module:Class``.

    Raises
    ------
    FlaneurError
        One line for an unknown name (listing the known ones) or a provider that fails to
        start.
    """
    kind, _, arg = spec.partition(":")
    if kind in VIEWS.names():
        factory = VIEWS.get(kind)
    elif "." in kind and arg:  # package.module:Class
        factory, arg = VIEWS.get(spec), ""
    else:
        known = ", ".join(VIEWS.names())
        raise FlaneurError(
            f"--views must be one of {known} (panorama:DIR) or package.module:Class, not {spec!r}"
        )
    if isinstance(factory, type):
        if hasattr(factory, "from_spec"):
            return factory.from_spec(city, arg)
        return factory(city)
    return factory(city, arg)


__all__ = ["VIEWS", "register_views", "views_from_spec"]

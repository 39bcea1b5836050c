"""The one cached base of view providers: validate → cache key → fetch → store.

A provider subclasses :class:`CachedViewProvider` and writes only what is its own:

* :meth:`~CachedViewProvider.plan` - what identifies the image it would fetch (the cache-key
  dict, e.g. the panorama id a request relocates to) and the view's metadata;
* :meth:`~CachedViewProvider.fetch` - get the image (render, download, project);
* optionally :meth:`~CachedViewProvider.validate` (extra request checks) and
  :meth:`~CachedViewProvider.finish` (turn the stored image into the view, e.g. a crop).

The base validates the request (:func:`~flaneur.views.base.check_request`), looks the key
up in the provider's :class:`~flaneur.views.cache.ViewCache`, fetches and stores on a miss,
and returns a :class:`~flaneur.views.base.View` marked ``cached`` on a hit.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from PIL import Image

from flaneur.views.base import DEFAULT_SIZE, View, check_request
from flaneur.views.cache import ViewCache, request_key

if TYPE_CHECKING:
    from flaneur.world.graph import StreetGraph


@dataclass(frozen=True)
class ViewRequest:
    """A validated view request (heading in [0, 360), node as index and id)."""

    index: int
    node_id: str
    heading: float
    pitch: float
    fov: float
    size: tuple[int, int]


@dataclass
class Plan:
    """What a provider would fetch for a request.

    Attributes
    ----------
    key
        The cache-key dict (hashed with :func:`~flaneur.views.cache.request_key`).
    metadata
        The view's metadata.
    capture_date
        When the imagery was captured, if known.
    extra
        Anything :meth:`CachedViewProvider.fetch` or ``finish`` needs (a URL, a yaw).
    """

    key: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    capture_date: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Fetched:
    """A fetched image, what to store with it and its encoded bytes (kept as fetched)."""

    image: Image.Image
    metadata: dict[str, Any]
    encoded: bytes | None = None
    suffix: str = ".png"


class CachedViewProvider(abc.ABC):
    """Base of view providers with a cache (see the module docstring)."""

    name: ClassVar[str] = ""
    cache: ViewCache
    graph: StreetGraph

    def view(
        self,
        node: str | int,
        heading: float,
        *,
        pitch: float = 0.0,
        fov: float = 60.0,
        size: tuple[int, int] = DEFAULT_SIZE,
    ) -> View:
        """The view from ``node`` (id or index) towards ``heading``, from the cache if stored.

        Raises
        ------
        UnknownNodeError, ViewError
            On an unknown node or out-of-range angles or size (and the provider's own
            errors: no imagery, quota, missing key).
        """
        index, heading, pitch, fov, size = check_request(
            self.graph, node, heading, pitch, fov, size
        )
        request = ViewRequest(index, str(self.graph.ids[index]), heading, pitch, fov, size)
        self.validate(request)
        plan = self.plan(request)
        key = request_key(plan.key)
        hit = self.cache.get(key)
        if hit is not None:
            return self.finish(request, plan, hit[0], hit[1], cached=True)
        fetched = self.fetch(request, plan)
        self.cache.put(
            key, fetched.image, fetched.metadata, encoded=fetched.encoded, suffix=fetched.suffix
        )
        return self.finish(request, plan, fetched.image, fetched.metadata, cached=False)

    def validate(self, request: ViewRequest) -> None:  # noqa: B027 - optional hook
        """Extra checks of a request (raise :class:`~flaneur.views.base.ViewError`)."""

    @abc.abstractmethod
    def plan(self, request: ViewRequest) -> Plan:
        """The cache key and metadata of ``request`` (may look up, never fetches images)."""

    @abc.abstractmethod
    def fetch(self, request: ViewRequest, plan: Plan) -> Fetched:
        """Get the image of ``plan`` (called on a cache miss only)."""

    def finish(
        self,
        request: ViewRequest,
        plan: Plan,
        image: Image.Image,
        stored: dict[str, Any],
        *,
        cached: bool,
    ) -> View:
        """The view from the stored image (default: resized to the requested size)."""
        if image.size != request.size:
            image = image.resize(request.size)
        return View(
            image,
            request.node_id,
            request.heading,
            request.pitch,
            request.fov,
            self.name,
            plan.capture_date,
            stored,
            cached=cached,
        )


__all__ = ["CachedViewProvider", "Fetched", "Plan", "ViewRequest"]

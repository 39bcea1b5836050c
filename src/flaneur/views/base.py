"""What every view provider shares: the :class:`View` record, the protocol and the errors.

A *view* is a perspective image seen from a viewpoint node of the street graph, looking in
a compass ``heading`` (degrees, 0 = north, clockwise) with a ``pitch`` (degrees, positive =
up) and a horizontal field of view ``fov`` (degrees).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from PIL import Image

from flaneur.errors import FlaneurError, UnknownNodeError

if TYPE_CHECKING:
    from flaneur.world.graph import StreetGraph

DEFAULT_SIZE = (800, 460)
"""Default view size ``(width, height)`` in pixels."""


class ViewError(FlaneurError):
    """A view cannot be made (bad request, unreadable imagery)."""


class ProviderError(ViewError):
    """An imagery service failed or refused a request.

    Parameters
    ----------
    message
        What went wrong and what to do (never contains an API key).
    provider
        Provider name (``"google"``, ``"mapillary"``, ...).
    status
        HTTP status or service status string, if any.
    """

    def __init__(self, message: str, *, provider: str = "", status: int | str | None = None):
        self.provider = provider
        self.status = status
        super().__init__(message)


class MissingKeyError(ProviderError):
    """The API key or access token of a provider is not set."""


class QuotaError(ProviderError):
    """The provider's quota or rate limit is exhausted (HTTP 429, ``OVER_QUERY_LIMIT``)."""


class NoImageryError(ProviderError):
    """The provider has no imagery near the requested place (HTTP 404, ``ZERO_RESULTS``)."""


@dataclass(eq=False)
class View:
    """A perspective image and where it was taken.

    Attributes
    ----------
    image
        The RGB image.
    node
        Node id of the viewpoint.
    heading, pitch, fov
        Camera direction and horizontal field of view in degrees.
    source
        Provider name (``"synthetic"``, ``"panorama"``, ``"google"``, ``"mapillary"``).
    capture_date
        When the imagery was captured (``"YYYY-MM"`` or ISO date), if known.
    metadata
        Provider details (panorama id, image id, distance to the node, ...).
    cached
        Whether the view came from the cache.
    """

    image: Image.Image
    node: str
    heading: float
    pitch: float = 0.0
    fov: float = 60.0
    source: str = ""
    capture_date: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    cached: bool = False
    _digest: str | None = field(default=None, repr=False)

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` in pixels."""
        return self.image.size

    @property
    def focal_px(self) -> float:
        """Focal length in pixels of the pinhole camera that made the view."""
        return focal_length_px(self.image.size[0], self.fov)

    def digest(self) -> str:
        """SHA-1 of the image pixels (used to cache perception results)."""
        if self._digest is None:
            self._digest = pixel_digest(self.image)
        return self._digest

    def array(self) -> np.ndarray:
        """The image as a ``uint8`` array of shape ``(height, width, 3)``."""
        return np.asarray(self.image.convert("RGB"))

    def bearing_of_x(self, x: float) -> float:
        """Compass heading of the image column ``x`` (pixels from the left edge)."""
        rel = math.degrees(math.atan2(x - self.image.size[0] / 2.0, self.focal_px))
        return (self.heading + rel) % 360.0

    def to_dict(self) -> dict[str, Any]:
        """The metadata as a JSON-ready dict (without the image)."""
        return {
            "node": self.node,
            "heading": self.heading,
            "pitch": self.pitch,
            "fov": self.fov,
            "size": list(self.image.size),
            "source": self.source,
            "capture_date": self.capture_date,
            "metadata": self.metadata,
        }


@runtime_checkable
class ViewProvider(Protocol):
    """Anything that makes views of a city's viewpoints."""

    name: str

    def view(
        self,
        node: str | int,
        heading: float,
        *,
        pitch: float = 0.0,
        fov: float = 60.0,
        size: tuple[int, int] = DEFAULT_SIZE,
    ) -> View:
        """The view from ``node`` (id or index) towards ``heading``."""
        ...


def pixel_digest(image: Image.Image | np.ndarray) -> str:
    """SHA-1 of an image's pixels; a PIL image and its ``numpy.asarray`` agree."""
    if isinstance(image, np.ndarray):
        arr = np.ascontiguousarray(image)
        if arr.dtype != np.uint8:
            arr = arr.astype(np.uint8)
        height, width = arr.shape[:2]
        channels = 1 if arr.ndim == 2 else arr.shape[2]
        data = arr.tobytes()
    else:
        width, height = image.size
        channels = len(image.getbands())
        data = image.tobytes()
    h = hashlib.sha1(f"{width}x{height}x{channels}:".encode())
    h.update(data)
    return h.hexdigest()


def focal_length_px(width: int, fov: float) -> float:
    """Focal length in pixels of a pinhole camera ``width`` pixels wide with ``fov`` degrees."""
    return (width / 2.0) / math.tan(math.radians(fov) / 2.0)


def check_request(
    graph: StreetGraph, node: str | int, heading: float, pitch: float, fov: float, size: Any
) -> tuple[int, float, float, float, tuple[int, int]]:
    """Validate a view request and return it in normal form.

    Returns
    -------
    tuple
        ``(node_index, heading in [0, 360), pitch, fov, (width, height))``.

    Raises
    ------
    UnknownNodeError
        If the node is not in the graph.
    ViewError
        If heading, pitch, fov or size are out of range.
    """
    if isinstance(node, int | np.integer) and not isinstance(node, bool):
        index = int(node)
        if not 0 <= index < graph.n_nodes:
            raise UnknownNodeError(node, context=f"node index out of range 0..{graph.n_nodes - 1}")
    else:
        index = graph.index(str(node))
    try:
        heading, pitch, fov = float(heading), float(pitch), float(fov)
    except (TypeError, ValueError):
        raise ViewError("heading, pitch and fov must be numbers (degrees)") from None
    if not math.isfinite(heading):
        raise ViewError(f"heading must be a finite number of degrees, not {heading}")
    if not 0.0 < fov < 180.0:
        raise ViewError(f"fov must be in (0, 180) degrees, not {fov:g}")
    if not -90.0 < pitch < 90.0:
        raise ViewError(f"pitch must be in (-90, 90) degrees, not {pitch:g}")
    try:
        width, height = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ViewError(f"size must be (width, height) in pixels, not {size!r}") from None
    if not (8 <= width <= 8192 and 8 <= height <= 8192):
        raise ViewError(f"size must be between 8 and 8192 pixels per side, not {width}x{height}")
    return index, heading % 360.0, pitch, fov, (width, height)


def parse_size(text: str) -> tuple[int, int]:
    """Parse ``"800x460"`` into ``(800, 460)``; raises :class:`ViewError`."""
    try:
        w, h = text.lower().split("x")
        return int(w), int(h)
    except ValueError:
        raise ViewError(f"size must look like 800x460, not {text!r}") from None

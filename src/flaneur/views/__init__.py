"""Street-level views: providers (offline synthetic renderer, panoramas, Google, Mapillary),
the shared view cache, and image sensors for agents.

>>> from flaneur.views import SyntheticViews                        # doctest: +SKIP
>>> view = SyntheticViews(city).view(node_id, heading=90.0)         # doctest: +SKIP
"""

from flaneur.views.base import (
    DEFAULT_SIZE,
    MissingKeyError,
    NoImageryError,
    ProviderError,
    QuotaError,
    View,
    ViewError,
    ViewProvider,
)
from flaneur.views.cache import ViewCache, request_key
from flaneur.views.google import GoogleStreetView, PanoramaInfo
from flaneur.views.mapillary import Mapillary
from flaneur.views.panorama import PanoramaFolder, equirect_to_perspective
from flaneur.views.sensors import ImageSensor, Observation
from flaneur.views.synthetic import SyntheticViews

__all__ = [
    "DEFAULT_SIZE",
    "GoogleStreetView",
    "ImageSensor",
    "Mapillary",
    "MissingKeyError",
    "NoImageryError",
    "Observation",
    "PanoramaFolder",
    "PanoramaInfo",
    "ProviderError",
    "QuotaError",
    "SyntheticViews",
    "View",
    "ViewCache",
    "ViewError",
    "ViewProvider",
    "equirect_to_perspective",
    "request_key",
]

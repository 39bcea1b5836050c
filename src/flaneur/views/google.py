"""Google Street View Static API: perspective views of the panorama nearest to each node.

Two endpoints: ``{base}/metadata`` finds the panorama nearest to a point (V-IRL's
"relocate"; free of charge) and ``{base}`` returns a perspective image of it. The key comes
from ``GOOGLE_MAPS_API_KEY`` unless given.  Views and panorama lookups are cached on disk;
a failed request is never cached.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import httpx

from flaneur.geo import haversine
from flaneur.views.base import (
    DEFAULT_SIZE,
    NoImageryError,
    ProviderError,
    QuotaError,
    ViewError,
    check_request,
)
from flaneur.views.cache import ViewCache, request_key
from flaneur.views.cached import CachedViewProvider, Fetched, Plan, ViewRequest
from flaneur.views.http import decode_image, get, image_suffix, read_key, scrub
from flaneur.world.graph import StreetGraph

GOOGLE_BASE_URL = "https://maps.googleapis.com/maps/api/streetview"
KEY_ENV = "GOOGLE_MAPS_API_KEY"
MAX_SIDE = 640
MAX_FOV = 120.0


@dataclass(frozen=True)
class PanoramaInfo:
    """A panorama found near a point.

    Attributes
    ----------
    pano_id
        Google's panorama id.
    lat, lng
        Where the panorama was taken.
    date
        Capture month (``"YYYY-MM"``) if known.
    distance_m
        Distance from the queried point.
    copyright
        The imagery's copyright line.
    """

    pano_id: str
    lat: float
    lng: float
    date: str | None
    distance_m: float
    copyright: str = ""


def _status_error(status: str, message: str) -> ProviderError:
    text = f"google: panorama lookup returned {status}" + (f": {message}" if message else "")
    if status in ("ZERO_RESULTS", "NOT_FOUND"):
        return NoImageryError(
            text + " (no Street View imagery near this place)", provider="google", status=status
        )
    if status == "OVER_QUERY_LIMIT":
        return QuotaError(text + " (quota exceeded)", provider="google", status=status)
    if status == "REQUEST_DENIED":
        return ProviderError(
            text + f" (check {KEY_ENV} and that the Street View Static API is enabled)",
            provider="google",
            status=status,
        )
    return ProviderError(text, provider="google", status=status)


class GoogleStreetView(CachedViewProvider):
    """Views from the Google Street View Static API.

    Parameters
    ----------
    graph
        The street graph whose nodes are looked up.
    key
        API key; default ``$GOOGLE_MAPS_API_KEY`` (read when first needed, so cached views
        work without one).
    base_url
        Endpoint base (tests point it at a local fake server).
    cache
        :class:`ViewCache` (default: the shared disk cache).
    radius
        Search radius in metres for the nearest panorama.
    source
        ``"outdoor"`` (default) or ``"default"`` (also indoor panoramas).
    timeout
        HTTP timeout in seconds.
    client
        An ``httpx.Client`` to use (one is made otherwise).
    """

    name: ClassVar[str] = "google"

    def __init__(
        self,
        graph: StreetGraph,
        *,
        key: str | None = None,
        base_url: str = GOOGLE_BASE_URL,
        cache: ViewCache | None = None,
        radius: float = 50.0,
        source: str = "outdoor",
        timeout: float = 20.0,
        client: httpx.Client | None = None,
    ) -> None:
        self.graph = graph
        self._key = key
        self.base_url = base_url.rstrip("/")
        self.cache = cache if cache is not None else ViewCache()
        self.radius = radius
        self.source = source
        self.client = client or httpx.Client(timeout=timeout, follow_redirects=True)

    def __repr__(self) -> str:  # never shows the key
        return f"GoogleStreetView(base_url={self.base_url!r}, cache={self.cache!r})"

    @property
    def key(self) -> str:
        """The API key (raises :class:`MissingKeyError` when unset)."""
        return read_key(self._key, KEY_ENV, "google")

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()

    # ------------------------------------------------------------------ relocate
    def nearest_panorama(
        self, lat: float, lng: float, *, radius: float | None = None
    ) -> PanoramaInfo:
        """The panorama nearest to ``(lat, lng)`` within ``radius`` metres (metadata call).

        Raises
        ------
        NoImageryError
            ``ZERO_RESULTS`` / ``NOT_FOUND``.
        QuotaError, ProviderError, MissingKeyError
            On quota, key and other failures.
        """
        radius = self.radius if radius is None else radius
        request = {
            "provider": "google-metadata",
            "lat": lat,
            "lng": lng,
            "radius": radius,
            "source": self.source,
        }
        ck = request_key(request)
        hit = self.cache.get_json(ck)
        if hit is not None:
            return PanoramaInfo(**hit)
        key = self.key
        params = {
            "location": f"{lat:.7f},{lng:.7f}",
            "radius": math.ceil(radius),
            "source": self.source,
            "key": key,
        }
        response = get(
            self.client,
            f"{self.base_url}/metadata",
            params=params,
            provider="google",
            secret=key,
            what="panorama lookup",
        )
        try:
            data = response.json()
        except ValueError:
            raise ProviderError(
                "google: the panorama lookup did not return JSON", provider="google"
            ) from None
        status = str(data.get("status", "UNKNOWN_ERROR"))
        if status != "OK":
            raise _status_error(status, scrub(str(data.get("error_message", "")), key)[:200])
        loc = data.get("location") or {}
        plat, plng = float(loc.get("lat", lat)), float(loc.get("lng", lng))
        info = PanoramaInfo(
            pano_id=str(data["pano_id"]),
            lat=plat,
            lng=plng,
            date=data.get("date"),
            distance_m=float(haversine(lat, lng, plat, plng)),
            copyright=str(data.get("copyright", "")),
        )
        self.cache.put_json(ck, asdict(info))
        return info

    def relocate(self, node: str | int) -> PanoramaInfo:
        """The panorama nearest to a node (V-IRL's relocation of a point to street view)."""
        index, *_ = check_request(self.graph, node, 0.0, 0.0, 60.0, DEFAULT_SIZE)
        return self.nearest_panorama(float(self.graph.lat[index]), float(self.graph.lng[index]))

    # ------------------------------------------------------------------ views
    def validate(self, request: ViewRequest) -> None:
        """The Static API serves at most 120 degrees of fov."""
        if request.fov > MAX_FOV:
            raise ViewError(
                f"Google Street View serves fov up to {MAX_FOV:g} degrees, not {request.fov:g}"
            )

    def plan(self, request: ViewRequest) -> Plan:
        """Relocate the node to its nearest panorama (a cached metadata call); the key is the
        panorama and the camera. The API serves at most 640 x 640 pixels: larger sizes are
        fetched at the largest size of the same shape and scaled up (in ``finish``)."""
        pano = self.relocate(request.index)
        size = request.size
        scale = min(1.0, MAX_SIDE / max(size))
        fetch = (max(1, round(size[0] * scale)), max(1, round(size[1] * scale)))
        key = {
            "provider": self.name,
            "pano": pano.pano_id,
            "heading": request.heading,
            "pitch": request.pitch,
            "fov": request.fov,
            "size": list(fetch),
        }
        meta: dict[str, Any] = {
            "pano_id": pano.pano_id,
            "pano_lat": pano.lat,
            "pano_lng": pano.lng,
            "distance_m": pano.distance_m,
            "copyright": pano.copyright,
            "fetched_size": list(fetch),
        }
        return Plan(key, meta, pano.date, extra={"fetch": fetch})

    def fetch(self, request: ViewRequest, plan: Plan) -> Fetched:
        """Download the image (Street View Static API)."""
        fetch = plan.extra["fetch"]
        key = self.key
        params = {
            "size": f"{fetch[0]}x{fetch[1]}",
            "pano": plan.key["pano"],
            "heading": f"{request.heading:.2f}",
            "pitch": f"{request.pitch:.2f}",
            "fov": f"{request.fov:.2f}",
            "key": key,
        }
        response = get(
            self.client,
            self.base_url,
            params=params,
            provider="google",
            secret=key,
            what="image request",
        )
        data = response.content
        image = decode_image(data, provider="google")
        return Fetched(image, plan.metadata, encoded=data, suffix=image_suffix(data))

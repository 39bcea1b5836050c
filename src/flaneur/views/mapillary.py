"""Mapillary API v4: the crowd-sourced image nearest to a node, chosen by compass angle.

``GET {base}/images?bbox=...&fields=...`` lists images near the node; the one whose compass
angle is closest to the requested heading (panoramas match any heading) and that is
near the node wins.  A panorama is cut to the requested view; a flat image is
centre-cropped to the requested shape (its own heading is kept in the metadata).  The
token comes from ``MAPILLARY_ACCESS_TOKEN`` and is sent in the ``Authorization`` header.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any, ClassVar

import httpx
from PIL import Image

from flaneur.geo import angle_diff, bearing, haversine
from flaneur.views.base import NoImageryError, ProviderError, View
from flaneur.views.cache import ViewCache, request_key
from flaneur.views.cached import CachedViewProvider, Fetched, Plan, ViewRequest
from flaneur.views.http import decode_image, get, image_suffix, read_key
from flaneur.views.panorama import equirect_to_perspective
from flaneur.world.graph import StreetGraph

MAPILLARY_BASE_URL = "https://graph.mapillary.com"
TOKEN_ENV = "MAPILLARY_ACCESS_TOKEN"
FIELDS = "id,computed_compass_angle,compass_angle,captured_at,computed_geometry,geometry,is_pano"


def _compass(image: dict[str, Any]) -> float | None:
    for key in ("computed_compass_angle", "compass_angle"):
        value = image.get(key)
        if isinstance(value, int | float) and math.isfinite(value):
            return float(value) % 360.0
    return None


def _position(image: dict[str, Any]) -> tuple[float, float] | None:
    for key in ("computed_geometry", "geometry"):
        geom = image.get(key) or {}
        coords = geom.get("coordinates") if isinstance(geom, dict) else None
        if coords and len(coords) >= 2:
            return float(coords[1]), float(coords[0])
    return None


def choose_image(
    images: list[dict[str, Any]],
    lat: float,
    lng: float,
    heading: float,
    *,
    metres_per_degree: float = 0.5,
) -> tuple[dict[str, Any], float, float] | None:
    """Best image for looking along ``heading`` from ``(lat, lng)``.

    Cost = angular error (0 for panoramas) + ``metres_per_degree``^-1 x distance, i.e. one
    metre of distance weighs as much as two degrees of heading by default.

    Returns
    -------
    tuple or None
        ``(image record, distance_m, angular error)``.
    """
    best = None
    for img in images:
        pos = _position(img)
        if pos is None:
            continue
        dist = float(haversine(lat, lng, pos[0], pos[1]))
        compass = _compass(img)
        if img.get("is_pano"):
            err = 0.0
        elif compass is None:
            continue
        else:
            err = abs(float(angle_diff(heading, compass)))
        cost = err + dist / metres_per_degree
        if best is None or cost < best[0]:
            best = (cost, img, dist, err)
    return None if best is None else (best[1], best[2], best[3])


def _crop_to(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    w, h = image.size
    target = size[0] / size[1]
    if w / h > target:
        cw = round(h * target)
        box = ((w - cw) // 2, 0, (w - cw) // 2 + cw, h)
    else:
        ch = round(w / target)
        box = (0, (h - ch) // 2, w, (h - ch) // 2 + ch)
    return image.crop(box).resize(size)


class Mapillary(CachedViewProvider):
    """Views from Mapillary (API v4).

    Parameters
    ----------
    graph
        The street graph.
    token
        Access token; default ``$MAPILLARY_ACCESS_TOKEN``.
    base_url
        API base (tests point it at a local fake server).
    radius
        Images within this many metres of the node are considered.
    image_field
        Which thumbnail to fetch (``thumb_1024_url``, ``thumb_2048_url``, ...).
    cache, timeout, client
        As for :class:`~flaneur.views.google.GoogleStreetView`.
    """

    name: ClassVar[str] = "mapillary"

    def __init__(
        self,
        graph: StreetGraph,
        *,
        token: str | None = None,
        base_url: str = MAPILLARY_BASE_URL,
        radius: float = 30.0,
        image_field: str = "thumb_1024_url",
        cache: ViewCache | None = None,
        timeout: float = 20.0,
        client: httpx.Client | None = None,
    ) -> None:
        self.graph = graph
        self._token = token
        self.base_url = base_url.rstrip("/")
        self.radius = radius
        self.image_field = image_field
        self.cache = cache if cache is not None else ViewCache()
        self.client = client or httpx.Client(timeout=timeout, follow_redirects=True)

    def __repr__(self) -> str:  # never shows the token
        return f"Mapillary(base_url={self.base_url!r}, cache={self.cache!r})"

    @property
    def token(self) -> str:
        """The access token (raises :class:`MissingKeyError` when unset)."""
        return read_key(self._token, TOKEN_ENV, "mapillary")

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()

    def images_near(self, lat: float, lng: float, radius: float | None = None) -> list[dict]:
        """Image records within a box of ``radius`` metres around ``(lat, lng)``."""
        radius = self.radius if radius is None else radius
        request = {
            "provider": "mapillary-images",
            "lat": lat,
            "lng": lng,
            "radius": radius,
            "field": self.image_field,
        }
        ck = request_key(request)
        hit = self.cache.get_json(ck)
        if hit is not None:
            return hit
        token = self.token
        dlat = radius / 111_320.0
        dlng = radius / (111_320.0 * max(math.cos(math.radians(lat)), 1e-6))
        params = {
            "fields": f"{FIELDS},{self.image_field}",
            "limit": 100,
            "bbox": f"{lng - dlng:.7f},{lat - dlat:.7f},{lng + dlng:.7f},{lat + dlat:.7f}",
        }
        response = get(
            self.client,
            f"{self.base_url}/images",
            params=params,
            headers={"Authorization": f"OAuth {token}"},
            provider="mapillary",
            secret=token,
            what="image search",
        )
        try:
            data = response.json().get("data", [])
        except (ValueError, AttributeError):
            raise ProviderError(
                "mapillary: the image search did not return JSON data", provider="mapillary"
            ) from None
        images = [d for d in data if isinstance(d, dict)]
        self.cache.put_json(ck, images)
        return images

    def plan(self, request: ViewRequest) -> Plan:
        """Choose the image near the node that best faces the heading (a cached metadata
        call); the key is the image id and thumbnail field."""
        lat, lng = float(self.graph.lat[request.index]), float(self.graph.lng[request.index])
        found = choose_image(self.images_near(lat, lng), lat, lng, request.heading)
        if found is None:
            raise NoImageryError(
                f"mapillary: no image within {self.radius:g} m of node {request.node_id!r}",
                provider="mapillary",
            )
        img, dist, err = found
        url = img.get(self.image_field)
        if not url:
            raise ProviderError(
                f"mapillary: image {img.get('id')} has no {self.image_field}", provider="mapillary"
            )
        compass = _compass(img)
        pos = _position(img)
        meta: dict[str, Any] = {
            "image_id": str(img.get("id")),
            "compass_angle": compass,
            "distance_m": dist,
            "heading_error": err,
            "is_pano": bool(img.get("is_pano")),
            "direction_from_node": float(bearing(lat, lng, *pos)) if pos and dist > 0.5 else None,
        }
        captured = img.get("captured_at")
        date = None
        if isinstance(captured, int | float):
            date = datetime.fromtimestamp(captured / 1000.0, tz=UTC).strftime("%Y-%m-%d")
        key = {"provider": self.name, "image": meta["image_id"], "field": self.image_field}
        return Plan(key, meta, date, extra={"url": str(url), "compass": compass})

    def fetch(self, request: ViewRequest, plan: Plan) -> Fetched:
        """Download the image as published (cut or cropped in ``finish``)."""
        token = self.token
        response = get(
            self.client,
            plan.extra["url"],
            provider="mapillary",
            secret=token,
            what="image download",
        )
        data = response.content
        raw = decode_image(data, provider="mapillary")
        stored = {"image_id": plan.metadata["image_id"]}
        return Fetched(raw, stored, encoded=data, suffix=image_suffix(data))

    def finish(
        self,
        request: ViewRequest,
        plan: Plan,
        image: Image.Image,
        stored: dict[str, Any],
        *,
        cached: bool,
    ) -> View:
        """A panorama is cut towards the heading; a flat image is cropped to the size and
        shows its own compass angle."""
        compass = plan.extra["compass"]
        meta = plan.metadata
        if meta["is_pano"]:
            image = equirect_to_perspective(
                image,
                request.heading,
                pitch=request.pitch,
                fov=request.fov,
                size=request.size,
                pano_yaw=compass or 0.0,
            )
            shown = request.heading
        else:
            image = _crop_to(image, request.size)
            shown = compass if compass is not None else request.heading
        meta["requested_heading"] = request.heading
        return View(
            image,
            request.node_id,
            shown,
            request.pitch,
            request.fov,
            self.name,
            plan.capture_date,
            meta,
            cached=cached,
        )

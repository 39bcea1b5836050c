"""Google Places details of a city's places: rating, rating count, reviews and photos.

V-IRL's Aria keeps the nearby places Google ranks by rating, summarises up to five Google
reviews of each (each with its star rating) and rates the places from that; OpenStreetMap
has none of it. :class:`GooglePlaces` is flaneur's one client of Google's Places API (New)
for users with a key:

* ``POST {base}/places:searchText`` with the place's name, a small location bias around its
  point (:data:`BIAS_RADIUS_M`) and the field mask :data:`FIELD_MASK` (``id``,
  ``displayName``, ``location``, ``rating``, ``userRatingCount``, ``reviews``, ``photos``);
* a result is the place only when it lies within :data:`MATCH_RADIUS_M` of the place's point
  and its name matches one of the place's names (:func:`names_match`, in the geocoder's
  normal form :func:`~flaneur.services.names.normalize`); else the place has no details;
* ``GET {base}/{photo name}/media?maxWidthPx=N&skipHttpRedirect=true`` gives a photo's URI,
  fetched without the key (:meth:`GooglePlaces.photo`).

The key is read from ``GOOGLE_MAPS_API_KEY`` only, sent in the ``X-Goog-Api-Key`` header
(never in a URL), and never printed, logged, cached or written into results: every error
message is scrubbed of it. Answers are cached on disk with the views' cache class
(:class:`~flaneur.views.cache.ViewCache`, folder ``$FLANEUR_CACHE_DIR/places``), keyed by the
request without the key; a failed request is never cached, so a second run of the same
places sends no request. Network failures and HTTP 5xx are retried (``retries``, doubling
back-off); HTTP 401/403 and 429 end at once with one line (key or API not enabled; quota).
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import asdict, dataclass
from typing import Any

import httpx
from PIL import Image
from rapidfuzz import fuzz

from flaneur.errors import FlaneurError
from flaneur.geo import haversine
from flaneur.paths import cache_dir
from flaneur.services.names import normalize
from flaneur.views.base import ProviderError, QuotaError
from flaneur.views.cache import ViewCache, request_key
from flaneur.views.http import decode_image, image_suffix, read_key, send
from flaneur.world.city import City

PLACES_BASE_URL = "https://places.googleapis.com/v1"
KEY_ENV = "GOOGLE_MAPS_API_KEY"
PROVIDER = "Google Places"
FIELDS = ("id", "displayName", "location", "rating", "userRatingCount", "reviews", "photos")
FIELD_MASK = ",".join(f"places.{name}" for name in FIELDS)
"""The fields asked of a text search (``reviews`` makes it Google's costliest Text Search
SKU)."""
MATCH_RADIUS_M = 100.0
"""A result farther than this from the place's point is another place."""
BIAS_RADIUS_M = 100.0
"""Radius of the search's location bias around the place's point."""
RESULTS = 5
"""Results asked per search (the nearest of those named alike is taken)."""
NAME_SCORE = 85.0
"""rapidfuzz token-sort ratio (0-100) from which two names that differ still match."""
OFFLINE = "absent (offline: no Google Places key)"
"""What rows say of ratings, reviews and photos when a run does not ask Google."""
FOUND = "google"
"""What rows say when the details came from Google Places."""
_PHOTO_NAME = re.compile(r"^places/[^/?#]+/photos/[^/?#]+$")


def not_found(radius_m: float = MATCH_RADIUS_M) -> str:
    """What a row says of a place Google Places did not give back."""
    return f"absent (no Google Places result within {radius_m:g} m named alike)"


def has_key() -> bool:
    """Whether ``GOOGLE_MAPS_API_KEY`` is set (its value is never read out)."""
    return bool(os.environ.get(KEY_ENV, "").strip())


def require_key(what: str) -> None:
    """Raise one line naming ``GOOGLE_MAPS_API_KEY`` when it is not set (``what`` needs it)."""
    if not has_key():
        raise FlaneurError(f"{what} needs a Google Places key: set {KEY_ENV}")


@dataclass(frozen=True)
class PlaceReview:
    """One Google review: its ``text`` (in the search's language), star ``rating`` (1-5, if
    given), ``author`` (the attribution Google asks to show) and ``when`` (Google's relative
    time, e.g. ``"a month ago"``)."""

    text: str
    rating: float | None = None
    author: str = ""
    when: str = ""


@dataclass(frozen=True)
class PlacePhoto:
    """A photo of a place: its resource ``name`` (for :meth:`GooglePlaces.photo`), size and
    the ``authors`` Google asks to credit."""

    name: str
    width_px: int = 0
    height_px: int = 0
    authors: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlaceDetails:
    """What Google Places says of one place of a city.

    Attributes
    ----------
    google_id
        Google's place id.
    name
        Google's display name.
    lat, lng
        Google's position of the place.
    distance_m
        From the city place's point to Google's.
    rating
        Mean star rating (1-5), ``None`` when it has none.
    user_rating_count
        How many ratings the mean is of.
    reviews
        Up to five reviews, as Google orders them.
    photos
        The photos' names (up to ten), not their bytes.
    """

    google_id: str
    name: str
    lat: float
    lng: float
    distance_m: float
    rating: float | None = None
    user_rating_count: int = 0
    reviews: tuple[PlaceReview, ...] = ()
    photos: tuple[PlacePhoto, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (for rows and ``result.json``)."""
        data = asdict(self)
        data["distance_m"] = round(self.distance_m, 1)
        return data

    @classmethod
    def from_result(cls, raw: dict[str, Any], distance_m: float) -> PlaceDetails:
        """From one ``places[]`` entry of a text search."""
        where = raw.get("location") or {}
        reviews = tuple(
            PlaceReview(
                text=str((r.get("text") or r.get("originalText") or {}).get("text", "")).strip(),
                rating=_number(r.get("rating")),
                author=str((r.get("authorAttribution") or {}).get("displayName", "")),
                when=str(r.get("relativePublishTimeDescription", "")),
            )
            for r in raw.get("reviews") or []
            if isinstance(r, dict)
        )
        photos = tuple(
            PlacePhoto(
                name=str(p.get("name", "")),
                width_px=int(p.get("widthPx") or 0),
                height_px=int(p.get("heightPx") or 0),
                authors=tuple(
                    str(a.get("displayName", ""))
                    for a in p.get("authorAttributions") or []
                    if isinstance(a, dict)
                ),
            )
            for p in raw.get("photos") or []
            if isinstance(p, dict) and p.get("name")
        )
        count = _number(raw.get("userRatingCount"))
        return cls(
            google_id=str(raw.get("id", "")),
            name=_display_name(raw),
            lat=float(where.get("latitude", math.nan)),
            lng=float(where.get("longitude", math.nan)),
            distance_m=float(distance_m),
            rating=_number(raw.get("rating")),
            user_rating_count=int(count) if count is not None else 0,
            reviews=tuple(r for r in reviews if r.text),
            photos=photos,
        )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _display_name(raw: dict[str, Any]) -> str:
    name = raw.get("displayName")
    return str(name.get("text", "")) if isinstance(name, dict) else str(name or "")


def name_tier(ours: str, theirs: str) -> int | None:
    """How two names match in the geocoder's normal form: 0 equal, 1 one is the other's
    first words (``"Hesburger"``, ``"Hesburger Kamppi"``; the shorter of 4 letters or more),
    2 a rapidfuzz token-sort ratio of :data:`NAME_SCORE` or more; ``None`` otherwise."""
    a, b = normalize(ours), normalize(theirs)
    if not a or not b:
        return None
    if a == b:
        return 0
    short, long = sorted((a, b), key=len)
    if len(short) >= 4 and long.startswith(short + " "):
        return 1
    return 2 if fuzz.token_sort_ratio(a, b) >= NAME_SCORE else None


def names_match(ours: str, theirs: str) -> bool:
    """Whether a place named ``ours`` may be the Google result named ``theirs``
    (:func:`name_tier`)."""
    return name_tier(ours, theirs) is not None


def match_result(
    results: list[dict[str, Any]],
    names: list[str],
    lat: float,
    lng: float,
    *,
    radius_m: float = MATCH_RADIUS_M,
) -> PlaceDetails | None:
    """The result that is the place named ``names`` at ``(lat, lng)``: within ``radius_m``
    and named alike (best :func:`name_tier` over the names, then the nearest); ``None``
    when none is."""
    best: tuple[int, float, dict[str, Any]] | None = None
    for raw in results:
        where = raw.get("location") or {}
        plat, plng = _number(where.get("latitude")), _number(where.get("longitude"))
        if plat is None or plng is None:
            continue
        distance = float(haversine(lat, lng, plat, plng))
        tiers = [t for n in names if (t := name_tier(n, _display_name(raw))) is not None]
        if distance > radius_m or not tiers:
            continue
        key = (min(tiers), distance, raw)
        if best is None or key[:2] < best[:2]:
            best = key
    return None if best is None else PlaceDetails.from_result(best[2], best[1])


class GooglePlaces:
    """Google Places API (New): place details by text search, and photos (module docstring).

    Parameters
    ----------
    base_url
        Endpoint base (tests point it at a local server).
    cache
        A :class:`~flaneur.views.cache.ViewCache` (default: ``$FLANEUR_CACHE_DIR/places``).
    timeout
        HTTP timeout in seconds.
    retries, backoff_s
        Retries of a network failure or HTTP 5xx, after ``backoff_s``, doubling.
    match_radius_m, bias_radius_m
        See :data:`MATCH_RADIUS_M` and :data:`BIAS_RADIUS_M`.
    language
        ``languageCode`` of the search (review texts are translated to it).
    client
        An ``httpx.Client`` to use (one is made otherwise).
    """

    def __init__(
        self,
        *,
        base_url: str = PLACES_BASE_URL,
        cache: ViewCache | None = None,
        timeout: float = 20.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        match_radius_m: float = MATCH_RADIUS_M,
        bias_radius_m: float = BIAS_RADIUS_M,
        language: str = "en",
        client: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.cache = cache if cache is not None else ViewCache(cache_dir("places"))
        self.retries = max(0, int(retries))
        self.backoff_s = float(backoff_s)
        self.match_radius_m = float(match_radius_m)
        self.bias_radius_m = float(bias_radius_m)
        self.language = language
        self.client = client or httpx.Client(timeout=timeout)

    def __repr__(self) -> str:  # never shows the key
        return f"GooglePlaces(base_url={self.base_url!r}, cache={self.cache!r})"

    @property
    def key(self) -> str:
        """The key from ``GOOGLE_MAPS_API_KEY`` (:class:`MissingKeyError` when unset)."""
        return read_key(None, KEY_ENV, PROVIDER)

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()

    def _send(
        self,
        method: str,
        url: str,
        *,
        what: str,
        keyed: bool = True,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        json: Any = None,
    ) -> httpx.Response:
        """One request (with the key in its header if ``keyed``), retried on network
        failures and HTTP 5xx; the key is scrubbed from every error message."""
        key = self.key
        sent = {**(headers or {}), **({"X-Goog-Api-Key": key} if keyed else {})}
        for attempt in range(self.retries + 1):
            try:
                return send(
                    self.client,
                    method,
                    url,
                    provider=PROVIDER,
                    secret=key,
                    headers=sent,
                    params=params,
                    json=json,
                    what=what,
                )
            except QuotaError:
                raise
            except ProviderError as err:
                if err.status in (401, 403):
                    raise ProviderError(
                        f"{PROVIDER} refused the {what} (HTTP {err.status}): check {KEY_ENV} "
                        "and that Places API (New) is enabled for the key",
                        provider=PROVIDER,
                        status=err.status,
                    ) from None
                status = err.status
                transient = status is None or (isinstance(status, int) and status >= 500)
                if not transient or attempt == self.retries:
                    raise
            time.sleep(self.backoff_s * 2**attempt)
        raise AssertionError("unreachable")  # the loop returns or raises

    def search_text(self, query: str, lat: float, lng: float) -> list[dict[str, Any]]:
        """The ``places`` of a text search for ``query`` biased to ``(lat, lng)`` (cached)."""
        body: dict[str, Any] = {
            "textQuery": query,
            "pageSize": RESULTS,
            "languageCode": self.language,
            "locationBias": {
                "circle": {
                    "center": {"latitude": lat, "longitude": lng},
                    "radius": self.bias_radius_m,
                }
            },
        }
        ck = request_key({"provider": "google-places-search", "fields": FIELD_MASK, **body})
        hit = self.cache.get_json(ck)
        if isinstance(hit, list):
            return hit
        response = self._send(
            "POST",
            f"{self.base_url}/places:searchText",
            what="place search",
            json=body,
            headers={"X-Goog-FieldMask": FIELD_MASK},
        )
        places = _json(response, "place search").get("places") or []
        found = [p for p in places if isinstance(p, dict)]
        self.cache.put_json(ck, found)
        return found

    def find(self, names: list[str], lat: float, lng: float) -> PlaceDetails | None:
        """The details of the place named ``names`` (the first is searched) at a point."""
        names = [n for n in names if n.strip()]
        if not names:
            return None
        results = self.search_text(names[0], lat, lng)
        return match_result(results, names, lat, lng, radius_m=self.match_radius_m)

    def details_of(self, city: City, row: int) -> PlaceDetails | None:
        """The details of place ``row`` of ``city`` (``None``: unnamed, or not found)."""
        places = city.places
        names = [name for _, name in places.name_tags(row)]
        return self.find(names, float(places.lat[row]), float(places.lng[row]))

    def photo(self, name: str, *, max_width_px: int = 400) -> Image.Image:
        """One photo of a place by its resource name (``places/.../photos/...``), cached.

        The media request returns the photo's URI (``skipHttpRedirect``), which is fetched
        without the key.
        """
        if not _PHOTO_NAME.match(name):
            raise FlaneurError(f"not a Google Places photo name: {name[:80]!r}")
        width = max(1, min(4800, int(max_width_px)))
        ck = request_key({"provider": "google-places-photo", "name": name, "width": width})
        hit = self.cache.get(ck)
        if hit is not None:
            return hit[0]
        params = {"maxWidthPx": width, "skipHttpRedirect": "true"}
        found = _json(
            self._send("GET", f"{self.base_url}/{name}/media", what="photo request", params=params),
            "photo request",
        )
        uri = str(found.get("photoUri") or "")
        if not uri.startswith(("https://", "http://")):
            raise ProviderError(
                f"{PROVIDER}: the photo request gave no photo URI", provider=PROVIDER
            )
        data = self._send("GET", uri, what="photo download", keyed=False).content
        image = decode_image(data, provider=PROVIDER)
        self.cache.put(
            ck, image, {"name": name, "width": width}, encoded=data, suffix=image_suffix(data)
        )
        return image


def _json(response: httpx.Response, what: str) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        raise ProviderError(
            f"{PROVIDER}: the {what} did not return JSON", provider=PROVIDER
        ) from None
    if not isinstance(data, dict):
        raise ProviderError(
            f"{PROVIDER}: the {what} did not return a JSON object", provider=PROVIDER
        )
    return data


__all__ = [
    "FIELD_MASK",
    "FOUND",
    "KEY_ENV",
    "OFFLINE",
    "PLACES_BASE_URL",
    "GooglePlaces",
    "PlaceDetails",
    "PlacePhoto",
    "PlaceReview",
    "has_key",
    "match_result",
    "name_tier",
    "names_match",
    "not_found",
    "require_key",
]

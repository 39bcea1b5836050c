"""V-IRL's place-type lists (20 and 96 Google place types) mapped onto flaneur's taxonomy.

V-IRL's benchmarks name places by Google Places types (``data/benchmark/place_types.txt``,
96 types; ``place_types_20.txt``, 20 types). flaneur's places carry categories of
:mod:`flaneur.world.taxonomy`. :data:`VIRL_TO_FLANEUR` maps each V-IRL type to the flaneur
categories that mean the same thing; a place *has* a V-IRL type when its categories meet that
type's categories. Types with no counterpart in OpenStreetMap's tagging map to ``()`` and no
place ever has them (documented in ``docs/bench.md``):

* trades without a storefront in OSM (``electrician``, ``locksmith``, ``painter``,
  ``plumber``, ``roofing_contractor``, ``moving_company``, ``storage``), and
  ``cemetery``, ``funeral_home``, ``meal_delivery``, ``movie_rental``, ``rv_park``;
* ``store`` (Google's catch-all; the taxonomy has no catch-all by design);
* ``primary_school`` and ``secondary_school`` (the taxonomy has one ``school``; mapping all
  three would count every school three times).

Choices worth knowing: ``drugstore`` is the ``personal_care_store`` (OSM ``shop=chemist``);
``spa`` is ``massage``, ``sauna`` or ``public_bath``; ``laundry`` includes dry cleaners;
``meal_takeaway`` is ``fast_food``; ``hair_care`` is ``hair_salon``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from types import MappingProxyType

from flaneur.errors import FlaneurError
from flaneur.world.taxonomy import CATEGORIES


class TypeListError(FlaneurError):
    """A type list names types that are not V-IRL types (or cannot be read)."""


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_SAME = _words(
    """
    accounting airport amusement_park aquarium art_gallery atm bakery bank bar beauty_salon
    bicycle_store book_store bowling_alley bus_station cafe campground car_dealer car_rental
    car_repair car_wash casino church city_hall clothing_store convenience_store courthouse
    dentist department_store doctor electronics_store embassy fire_station florist
    furniture_store gas_station gym hardware_store home_goods_store hospital
    insurance_agency jewelry_store lawyer library light_rail_station liquor_store lodging
    mosque museum park parking pet_store pharmacy physiotherapist police post_office
    real_estate_agency restaurant school shoe_store shopping_mall stadium subway_station
    supermarket synagogue taxi_stand tourist_attraction train_station transit_station
    travel_agency university zoo
    """
)
_RENAMED: dict[str, tuple[str, ...]] = {
    "drugstore": ("personal_care_store",),
    "hair_care": ("hair_salon",),
    "hindu_temple": ("temple",),
    "laundry": ("laundry", "dry_cleaner"),
    "local_government_office": ("government_office",),
    "meal_takeaway": ("fast_food",),
    "movie_theater": ("cinema",),
    "night_club": ("nightclub",),
    "spa": ("massage", "sauna", "public_bath"),
    "veterinary_care": ("veterinary",),
}
_NONE = _words(
    """
    cemetery electrician funeral_home locksmith meal_delivery movie_rental moving_company
    painter plumber primary_school roofing_contractor rv_park secondary_school storage store
    """
)

TYPES_96: tuple[str, ...] = tuple(sorted([*_SAME, *_RENAMED, *_NONE]))
"""V-IRL's 96 place types (``place_types.txt``), alphabetical as in the file."""

TYPES_20: tuple[str, ...] = _words(
    """
    bank restaurant supermarket bakery cafe pharmacy hospital spa convenience_store school
    library park lodging laundry movie_theater book_store clothing_store jewelry_store gym bar
    """
)
"""V-IRL's 20 place types (``place_types_20.txt``), in the file's order."""

VIRL_TO_FLANEUR = MappingProxyType({t: (t,) for t in _SAME} | _RENAMED | {t: () for t in _NONE})
"""V-IRL type -> flaneur categories (``()``: no counterpart; see the module docstring)."""

assert len(TYPES_96) == 96 and set(TYPES_20) <= set(TYPES_96)
assert all(c in CATEGORIES for cats in VIRL_TO_FLANEUR.values() for c in cats)


def type_label(virl_type: str) -> str:
    """A type in words, as V-IRL prompts it (``"convenience_store"``: ``"convenience store"``)."""
    return virl_type.replace("_", " ")


def load_type_list(spec: str | Sequence[str]) -> tuple[str, ...]:
    """A type list: ``"20"``, ``"96"``, a text file with one type a line, or a sequence.

    Parameters
    ----------
    spec
        ``"20"`` / ``"96"`` for V-IRL's lists, a path to a file (one type per line, blank
        lines and ``#`` comments skipped; spaces may stand for underscores), comma-separated
        types (``"bank,cafe"``), or a sequence of types.

    Returns
    -------
    tuple of str
        The types in the given order, without duplicates.

    Raises
    ------
    TypeListError
        One line naming the unknown types (and the file), or an unreadable file.
    """
    where = "type list"
    if isinstance(spec, str):
        if spec in ("20", "96"):
            return TYPES_20 if spec == "20" else TYPES_96
        if not os.path.exists(spec) and not spec.endswith(".txt"):
            return load_type_list(spec.split(","))
        where = spec
        try:
            with open(spec, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except OSError as err:
            raise TypeListError(f"{spec}: cannot read type list ({err.strerror})") from None
        names: Iterable[str] = (ln.split("#", 1)[0].strip() for ln in lines)
    else:
        names = (str(n).strip() for n in spec)
    types = [n.replace(" ", "_").lower() for n in names if n]
    unknown = [t for t in types if t not in VIRL_TO_FLANEUR]
    if unknown:
        raise TypeListError(
            f"{where}: unknown place type(s) {', '.join(map(repr, unknown))}; expected V-IRL's "
            "Google place types (see `flaneur bench types`)"
        )
    if not types:
        raise TypeListError(f"{where}: no place types given")
    return tuple(dict.fromkeys(types))


def place_virl_types(categories: Iterable[str], types: Sequence[str]) -> tuple[str, ...]:
    """The V-IRL types of ``types`` that a place with flaneur ``categories`` has, in list order."""
    cats = set(categories)
    return tuple(t for t in types if cats.intersection(VIRL_TO_FLANEUR[t]))

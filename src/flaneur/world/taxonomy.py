"""Place taxonomy: OpenStreetMap tags to normalized place categories, plus attributes.

Categories are close to the map providers' place types (Google Places style):
``restaurant``, ``cafe``, ``convenience_store``, ``shopping_mall``, ``atm``,
``subway_station``, ``restroom`` ... The table lives in ``taxonomy.json`` next to
this module (package data): category names with their label, group, synonyms and
parents; OSM ``key -> value -> categories``; refinements that look at a second tag
(``railway=station`` + ``station=subway``); and features that add a category to
any element (``atm=yes``).

Policy of :func:`categorize`
----------------------------
* Specific categories come first, in the order of the keys ``amenity``, ``shop``,
  ``healthcare``, ``tourism``, ``leisure``, ``railway``, ``public_transport``,
  ``highway``, ``aeroway``, ``office``, ``historic``, then feature categories
  (``atm=yes`` adds ``atm``). Multi-values (``cafe;bar``) count as several values.
* A refinement rule replaces the base entry of its ``key=value`` when its condition
  holds; the categories of all matching rules are kept (a station that has both
  ``subway=yes`` and ``train=yes`` is both). A rule may yield nothing, to drop
  e.g. parking-ticket vending machines or information boards.
* Then come the parents, transitively: a category gets the broader category that
  providers also file it under, and only those: ``fast_food`` and ``food_court``
  are also ``restaurant``; ``pub`` and ``biergarten`` are also ``bar``; hospitals,
  clinics, doctors, dentists and pharmacies are also ``healthcare`` ("healthcare
  facility"); hotels, hostels, motels and guest houses are also ``lodging``;
  stations (bus, subway, train, light rail, ferry) are also ``transit_station``;
  a subway entrance is also a ``subway_station``; churches, mosques, synagogues and
  temples are also ``place_of_worship``. Stops (``bus_stop``, ``tram_stop``) have
  no parent, and there is no catch-all ``store`` or ``point_of_interest``.
* Brands never make a category; they are attributes (:func:`attributes_from_tags`).
  Unknown keys or values, ``yes``, ``None`` or numbers yield ``()``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

__all__ = [
    "CATEGORIES",
    "GROUPS",
    "CategoryInfo",
    "attributes_from_tags",
    "categorize",
    "category_label",
    "normalize_category",
    "split_targets",
]

GROUPS: tuple[str, ...] = (
    "food",
    "shopping",
    "finance",
    "health",
    "lodging",
    "transit",
    "automotive",
    "leisure",
    "culture",
    "worship",
    "education",
    "services",
    "government",
    "business",
    "amenity",
)


@dataclass(frozen=True, slots=True)
class CategoryInfo:
    """A normalized place category.

    Attributes
    ----------
    label : str
        Human text, e.g. ``"convenience store"``.
    group : str
        Coarse group, one of :data:`GROUPS`.
    synonyms : tuple of str
        Other free-text names understood by :func:`normalize_category`.
    parents : tuple of str
        Broader categories that :func:`categorize` adds after this one.
    """

    label: str
    group: str
    synonyms: tuple[str, ...] = ()
    parents: tuple[str, ...] = ()


_Rule = tuple[dict[str, frozenset[str]], tuple[str, ...]]
_DATA: dict[str, Any] = json.loads(
    resources.files(__package__).joinpath("taxonomy.json").read_text(encoding="utf-8")
)
CATEGORIES: Mapping[str, CategoryInfo] = MappingProxyType(
    {
        name: CategoryInfo(
            label=entry["label"],
            group=entry["group"],
            synonyms=tuple(entry.get("synonyms", ())),
            parents=tuple(entry.get("parents", ())),
        )
        for name, entry in _DATA["categories"].items()
    }
)
_KEY_ORDER: tuple[str, ...] = tuple(_DATA["key_order"])
_TAGS: dict[str, dict[str, tuple[str, ...]]] = {
    key: {value: tuple(cats) for value, cats in table.items()}
    for key, table in _DATA["tags"].items()
}
_FEATURES: dict[str, dict[str, tuple[str, ...]]] = {
    key: {value: tuple(cats) for value, cats in table.items()}
    for key, table in _DATA["features"].items()
}


def _as_set(value: str | list[str]) -> frozenset[str]:
    return frozenset([value] if isinstance(value, str) else value)


_REFINEMENTS: dict[tuple[str, str], tuple[_Rule, ...]] = {
    tuple(tag.split("=", 1)): tuple(
        ({k: _as_set(v) for k, v in rule["if"].items()}, tuple(rule["then"])) for rule in rules
    )
    for tag, rules in _DATA["refinements"].items()
}


def _ancestors(name: str) -> tuple[str, ...]:
    out: list[str] = []
    todo = list(CATEGORIES[name].parents)
    while todo:
        parent = todo.pop(0)
        if parent not in out and parent != name:
            out.append(parent)
            todo.extend(CATEGORIES[parent].parents)
    return tuple(out)


_ANCESTORS: dict[str, tuple[str, ...]] = {name: _ancestors(name) for name in CATEGORIES}


def _values(raw: object) -> list[str]:
    """Split an OSM tag value into normalized single values (never raises)."""
    if raw is None or isinstance(raw, Mapping | list | tuple | set):
        return []
    parts = (part.strip().lower().replace(" ", "_") for part in str(raw).split(";"))
    return [part for part in parts if part]


def _matches(condition: dict[str, frozenset[str]], tags: Mapping[str, Any]) -> bool:
    return all(not allowed.isdisjoint(_values(tags.get(k))) for k, allowed in condition.items())


def _lookup(key: str, value: str, tags: Mapping[str, Any]) -> tuple[str, ...]:
    base = _TAGS.get(key, {}).get(value)
    if base is None:
        return ()
    matched = [cats for cond, cats in _REFINEMENTS.get((key, value), ()) if _matches(cond, tags)]
    return tuple(cat for cats in matched for cat in cats) if matched else base


def categorize(tags: Mapping[str, str]) -> tuple[str, ...]:
    """Normalized categories of one OSM element.

    Parameters
    ----------
    tags : Mapping[str, str]
        The element's OSM tags; odd values (``None``, numbers) are tolerated.

    Returns
    -------
    tuple of str
        Category names, most specific first, then their parents, without duplicates;
        ``()`` if no tag is known. See the module docstring for the policy.

    Examples
    --------
    >>> categorize({"amenity": "bank", "atm": "yes"})
    ('bank', 'atm')
    >>> categorize({"amenity": "fast_food"})
    ('fast_food', 'restaurant')
    """
    if not isinstance(tags, Mapping):
        return ()
    found: list[str] = []
    for key in _KEY_ORDER:
        for value in _values(tags.get(key)):
            found.extend(_lookup(key, value, tags))
    for key, table in _FEATURES.items():
        for value in _values(tags.get(key)):
            found.extend(table.get(value, ()))
    specific = list(dict.fromkeys(found))
    parents = [parent for cat in specific for parent in _ANCESTORS[cat]]
    return tuple(dict.fromkeys(specific + parents))


_ARTICLES = frozenset({"a", "an", "the"})
_SPELLING = {"centre": "center", "theatre": "theater", "jewellery": "jewelry", "parlour": "parlor"}


def _norm_text(text: str) -> str:
    """Lower-case, accent-free, punctuation-free, American-spelled words."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = re.sub(r"['’`]", "", text.replace("&", " and "))
    words = [_SPELLING.get(word, word) for word in re.split(r"[^0-9a-z]+", text) if word]
    while words and words[0] in _ARTICLES:
        words.pop(0)
    return " ".join(words)


def _build_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for name, info in CATEGORIES.items():
        for text in (name, info.label, *info.synonyms):
            key = _norm_text(text)
            if index.setdefault(key, name) != name:
                raise ValueError(f"taxonomy: {text!r} names both {index[key]!r} and {name!r}")
    return index


_INDEX: dict[str, str] = _build_index()


def _singular_forms(key: str) -> Iterable[str]:
    head, _, last = key.rpartition(" ")
    prefix = f"{head} " if head else ""
    if len(last) > 4 and last.endswith("ies"):
        yield prefix + last[:-3] + "y"
    if len(last) > 2 and last.endswith("s") and not last.endswith("ss"):
        yield prefix + last[:-1]
    if len(last) > 3 and last.endswith("es"):
        yield prefix + last[:-2]


def normalize_category(text: str) -> str | None:
    """Map free text to a category name.

    Parameters
    ----------
    text : str
        A category in words: ``"coffee shop"``, ``"Convenience Store"``, ``"ATMs"``,
        ``"metro station"``, ``"WC"``. Case, accents, punctuation, leading articles,
        British spellings and a plural last word are tolerated.

    Returns
    -------
    str or None
        The category name (``"cafe"``, ``"convenience_store"``, ...), or ``None`` if
        the text is no known category: brand names (``"Starbucks"``), lists
        (``"bank and clinic"``, see :func:`split_targets`) and needs
        (``"I am thirsty"``) give ``None``.
    """
    if not isinstance(text, str):
        return None
    key = _norm_text(text)
    if not key:
        return None
    if key in _INDEX:
        return _INDEX[key]
    return next((_INDEX[form] for form in _singular_forms(key) if form in _INDEX), None)


_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:or|and)\s+|\s*,\s*|\s+(?:or|and)\s+", re.IGNORECASE)


def split_targets(text: str) -> tuple[str, ...]:
    """Split a target list such as ``"KFC or McDonald's"`` into its items.

    Parameters
    ----------
    text : str
        One target or a list joined by commas, ``and`` or ``or``, as in CitySeeker's
        ``folder`` field (``"bank and clinic"``, ``"FamilyMart, Lawson, or 7-Eleven"``).

    Returns
    -------
    tuple of str
        The stripped items in order; the whole text if it is itself a category
        (``"bed and breakfast"``); ``()`` for empty or non-string input. Items are
        not normalized: pass each to :func:`normalize_category` (``None`` means brand).
    """
    if not isinstance(text, str) or not text.strip():
        return ()
    if normalize_category(text) is not None:
        return (text.strip(),)
    return tuple(item for item in (p.strip() for p in _LIST_SEPARATOR.split(text)) if item)


def category_label(name: str) -> str:
    """Human label of a category.

    Parameters
    ----------
    name : str
        Category name, e.g. ``"convenience_store"``.

    Returns
    -------
    str
        Its label (``"convenience store"``); for an unknown name, the name with
        underscores replaced by spaces.
    """
    info = CATEGORIES.get(name)
    return info.label if info is not None else str(name).replace("_", " ")


_NEGATIVE = frozenset({"no", "false", "0", "none"})
_POSITIVE = frozenset({"yes", "true", "1", "only", "designated", "limited"})
_UNKNOWN = frozenset({"unknown", "?", "fixme"})
_LEVELS = {"yes": "yes", "designated": "yes", "no": "no", "limited": "limited", "only": "only"}
_WIFI = {"wifi": "wlan", "wi-fi": "wlan", "wireless": "wlan", "wlan": "wlan"}
_TEXT_KEYS = {  # attribute -> OSM keys, first present wins
    "brand": ("brand", "brand:en"),
    "brand:en": ("brand:en",),
    "brand:wikidata": ("brand:wikidata",),
    "operator": ("operator",),
    "opening_hours": ("opening_hours",),
    "level": ("level",),
    "website": ("website", "contact:website", "url"),
    "phone": ("phone", "contact:phone"),
    "access": ("access",),
    "stars": ("stars",),
}
_BOOL_KEYS = (
    "outdoor_seating",
    "takeaway",
    "delivery",
    "drive_through",
    "changing_table",
    "toilets",
    "fee",
    "internet_access:fee",
)
_DESCRIPTIVE = frozenset({"outdoor_seating", "toilets", "fee"})  # any kind given means yes


def _text(raw: object) -> str | None:
    if raw is None or isinstance(raw, Mapping | list | tuple | set):
        return None
    text = str(raw).strip()
    return text or None


def _bool(raw: object, *, descriptive: bool) -> bool | None:
    values = _values(raw)
    if not values or values[0] in _UNKNOWN:
        return None
    if values[0] in _NEGATIVE:
        return False
    return True if descriptive or values[0] in _POSITIVE else None


def attributes_from_tags(tags: Mapping[str, str]) -> dict[str, str | bool | list[str]]:
    """Place attributes found in OSM tags; only the keys that are present.

    Parameters
    ----------
    tags : Mapping[str, str]
        The element's OSM tags; odd values are skipped, never raised on.

    Returns
    -------
    dict
        Text as given: ``brand`` (``brand``, else ``brand:en``), ``brand:en``,
        ``brand:wikidata``, ``operator``, ``opening_hours``, ``level``, ``website``,
        ``phone``, ``access``, ``stars`` and ``address`` (``addr:street`` +
        ``addr:housenumber``, else ``addr:full``). ``cuisine``: list of values.
        Levels ``"yes"``/``"no"``/``"limited"`` (diets also ``"only"``):
        ``wheelchair``, ``toilets:wheelchair``, ``diet:*``. Booleans:
        ``outdoor_seating``, ``toilets``, ``fee`` (a kind or an amount, such as
        ``terrace``, is ``True``),
        ``takeaway``, ``delivery`` (``only`` is ``True``), ``drive_through``,
        ``changing_table``, ``toilets``, ``fee``, ``internet_access:fee``.
        ``internet_access``: lower-case value, Wi-Fi spelled ``"wlan"``.
    """
    if not isinstance(tags, Mapping):
        return {}
    out: dict[str, str | bool | list[str]] = {}
    for attr, keys in _TEXT_KEYS.items():
        text = next((t for t in map(_text, map(tags.get, keys)) if t), None)
        if text:
            out[attr] = text
    cuisine = list(dict.fromkeys(_values(tags.get("cuisine"))))
    if cuisine:
        out["cuisine"] = cuisine
    levels = {key: tags[key] for key in ("wheelchair", "toilets:wheelchair") if key in tags}
    levels |= {k: v for k, v in tags.items() if isinstance(k, str) and k.startswith("diet:")}
    for key, raw in levels.items():
        value = next(iter(_values(raw)), "")
        if value in _LEVELS and (value != "only" or key.startswith("diet:")):
            out[key] = _LEVELS[value]
    for key in _BOOL_KEYS:
        flag = _bool(tags.get(key), descriptive=key in _DESCRIPTIVE)
        if flag is not None:
            out[key] = flag
    access = [_WIFI.get(v, v) for v in _values(tags.get("internet_access"))]
    if access:
        out["internet_access"] = ";".join(dict.fromkeys(access))
    street, number = _text(tags.get("addr:street")), _text(tags.get("addr:housenumber"))
    address = " ".join(p for p in (street, number) if p) or _text(tags.get("addr:full"))
    if address:
        out["address"] = address
    return out

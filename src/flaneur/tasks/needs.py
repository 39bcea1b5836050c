"""Need templates and place matching for implicit-need tasks (CitySeeker style).

A :class:`PlaceMatcher` says which places satisfy a need: any of some categories, optionally
restricted to a brand (brand attribute or place name) and to attribute values (wheelchair,
outdoor seating, cuisine, diet, ...). :func:`load_templates` expands the table in
``needs.json`` (package data) into one :class:`NeedTemplate` per concrete task kind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
from numpy.typing import NDArray

from flaneur.errors import DataError
from flaneur.world.places import Places
from flaneur.world.taxonomy import CATEGORIES, category_label

TASK_CATEGORIES = (
    "basic_poi",
    "brand",
    "transit_hub",
    "latent_poi",
    "abstract_need",
    "inclusive_infrastructure",
    "semantic_preference",
    "multi_goal",
)


def _fold(text: str) -> str:
    return " ".join(text.casefold().replace("-", " ").split())


@dataclass(frozen=True)
class PlaceMatcher:
    """Which places satisfy a need.

    Parameters
    ----------
    categories
        A place matches when it has any of these categories (empty: any category).
    brand
        Optional chain name; matches the ``brand`` attribute or the place name
        (case-insensitive, hyphens as spaces, the name may continue: "R-kioski Kamppi").
    attributes
        ``{attribute: accepted values}``; every listed attribute must have one of its values
        (for list attributes such as ``cuisine``, any element).
    """

    categories: tuple[str, ...] = ()
    brand: str | None = None
    attributes: tuple[tuple[str, tuple[Any, ...]], ...] = field(default_factory=tuple)

    def matches(self, places: Places) -> NDArray[np.int64]:
        """Rows of the places that satisfy this matcher."""
        if self.categories:
            rows = sorted({int(r) for cat in self.categories for r in places.with_category(cat)})
        else:
            rows = list(range(len(places)))
        return np.asarray([r for r in rows if self._accepts(places, r)], dtype=np.int64)

    def _accepts(self, places: Places, row: int) -> bool:
        attrs = places.attributes[row]
        if self.brand is not None:
            wanted = _fold(self.brand)
            brand = _fold(str(attrs.get("brand", "")))
            name = _fold(str(places.names[row]))
            if brand != wanted and not (name == wanted or name.startswith(wanted + " ")):
                return False
        for key, accepted in self.attributes:
            value = attrs.get(key)
            values = value if isinstance(value, list) else [value]
            if not any(v in accepted for v in values):
                return False
        return True

    def to_json(self) -> dict[str, Any]:
        """JSON form, stored in episode metadata so that tasks can be re-checked."""
        out: dict[str, Any] = {"categories": list(self.categories)}
        if self.brand:
            out["brand"] = self.brand
        if self.attributes:
            out["attributes"] = {k: list(v) for k, v in self.attributes}
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlaceMatcher:
        """Inverse of :meth:`to_json`."""
        attrs = data.get("attributes") or {}
        return cls(
            categories=tuple(data.get("categories", ())),
            brand=data.get("brand"),
            attributes=tuple((k, tuple(v)) for k, v in sorted(attrs.items())),
        )

    def describe(self) -> str:
        """Short human description, e.g. ``"cafe|restaurant with wheelchair=yes"``."""
        text = self.brand or "|".join(self.categories) or "any place"
        if self.attributes:
            text += " with " + ", ".join(f"{k}={'/'.join(map(str, v))}" for k, v in self.attributes)
        return text


@dataclass(frozen=True)
class NeedTemplate:
    """One kind of task: a category, the instruction, and one matcher per goal (in order)."""

    key: str
    category: str
    text: str
    goals: tuple[PlaceMatcher, ...]


def _matcher(entry: dict[str, Any], categories: Iterable[str] | None = None) -> PlaceMatcher:
    cats = tuple(categories if categories is not None else entry.get("categories", ()))
    unknown = [c for c in cats if c not in CATEGORIES]
    if unknown:
        raise DataError(f"needs table: unknown categor(y/ies) {unknown} in {entry.get('text')!r}")
    attrs = entry.get("attributes") or {}
    return PlaceMatcher(cats, attributes=tuple((k, tuple(v)) for k, v in sorted(attrs.items())))


def load_templates(table: dict[str, Any] | None = None) -> list[NeedTemplate]:
    """Expand the need table (default: the packaged ``needs.json``) into templates."""
    if table is None:
        table = json.loads(
            resources.files("flaneur.tasks").joinpath("needs.json").read_text(encoding="utf-8")
        )
    out: list[NeedTemplate] = []
    for entry in table["templates"]:
        category = entry["category"]
        if category not in TASK_CATEGORIES:
            raise DataError(f"needs table: unknown task category {category!r}")
        text = entry["text"]
        if "each_of" in entry:
            for cat in entry["each_of"]:
                instruction = text.format(label=category_label(cat))
                goal = (_matcher(entry, [cat]),)
                out.append(NeedTemplate(f"{category}:{cat}", category, instruction, goal))
        elif "brands" in entry:
            for brand in entry["brands"]:
                matcher = PlaceMatcher(brand=brand)
                out.append(
                    NeedTemplate(f"brand:{brand}", category, text.format(brand=brand), (matcher,))
                )
        elif "pairs" in entry:
            for first, second in entry["pairs"]:
                out.append(
                    NeedTemplate(
                        f"multi_goal:{first}+{second}",
                        category,
                        text.format(label=category_label(first), label2=category_label(second)),
                        (_matcher(entry, [first]), _matcher(entry, [second])),
                    )
                )
        else:
            out.append(NeedTemplate(f"{category}:{text}", category, text, (_matcher(entry),)))
    return out

"""De-duplication of sightings and a persistent visual memory (V-IRL's ``memory.py``).

A sighting (:class:`~flaneur.perception.detection.active.Sighting`) is a box seen from a
viewpoint in a compass direction. Two sightings of one category are the same object when
their position estimates lie within ``radius_m`` (V-IRL: 30 m) and either

* they were seen from the same viewpoint with headings within ``same_view_deg`` (10°), or
* their bearing rays from two viewpoints cross within ``radius_m`` of both, at a point
  within ``ray_tolerance_m`` (a few metres) of both range estimates — or, for nearly
  parallel rays, when the two range estimates themselves lie that close.

On real imagery a sighting carries the crop of its box, and two sightings whose crops share
enough geometrically consistent ORB feature matches (:mod:`flaneur.perception.features`;
V-IRL: LightGlue, more than 100 matches) are the same object as well, within ``radius_m``.

The range of a sighting is estimated from its box height when the label is street furniture
of known height (``distance = focal × height / pixels``), else ``default_range_m``.
The memory keeps, per object, its category, every sighting and a position estimate (the
mean of the sightings' range points); it is retrieved by position and category and saved
as JSON. A damaged memory file is a one-line :class:`~flaneur.errors.DataError`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, cast

import numpy as np

from flaneur.errors import DataError
from flaneur.geo import angle_diff
from flaneur.perception.detection.active import Sighting
from flaneur.perception.features import FeatureMatcher
from flaneur.world.furniture import FURNITURE_KINDS
from flaneur.world.taxonomy import normalize_category

MEMORY_FORMAT = "flaneur-visual-memory"
MEMORY_VERSION = 1


def _unit(heading: float) -> np.ndarray:
    h = math.radians(heading)
    return np.array([math.sin(h), math.cos(h)])


def _record(s: Sighting) -> dict[str, Any]:
    """A sighting as JSON-ready fields (the crop, pixels of real imagery, stays out)."""
    return {f.name: getattr(s, f.name) for f in fields(s) if f.name != "crop"}


@dataclass
class Remembered:
    """One object in memory: category, sightings (with viewpoint positions), position."""

    id: int
    category: str
    sightings: list[Sighting] = field(default_factory=list)
    origins: list[tuple[float, float]] = field(default_factory=list)
    points: list[tuple[float, float]] = field(default_factory=list)

    @property
    def position(self) -> tuple[float, float]:
        """Position estimate ``(x, y)`` in metres: the mean of the sightings' range points."""
        arr = np.asarray(self.points, dtype=float)
        return float(arr[:, 0].mean()), float(arr[:, 1].mean())

    @property
    def nodes(self) -> list[str]:
        """Viewpoints it was seen from, in order."""
        return list(dict.fromkeys(s.node for s in self.sightings))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "position": list(self.position),
            "sightings": [
                {**_record(s), "origin": list(o), "point": list(p)}
                for s, o, p in zip(self.sightings, self.origins, self.points, strict=True)
            ],
        }


class VisualMemory:
    """Objects seen so far, de-duplicated (see the module docstring).

    Parameters
    ----------
    radius_m
        Same-category objects farther apart than this are never merged (30 m).
    same_view_deg
        Same viewpoint, headings within this many degrees: the same object (10°).
    ray_tolerance_m
        How close a ray crossing must be to both range estimates (4 m).
    default_range_m
        Range of a sighting whose label has no known size.
    feature_matching
        Compare the crops of sightings on real imagery with ``matcher`` (default ORB,
        :class:`~flaneur.perception.features.FeatureMatcher`).
    """

    def __init__(
        self,
        *,
        radius_m: float = 30.0,
        same_view_deg: float = 10.0,
        ray_tolerance_m: float = 4.0,
        default_range_m: float = 10.0,
        feature_matching: bool = True,
        matcher: FeatureMatcher | None = None,
    ) -> None:
        self.radius_m = radius_m
        self.same_view_deg = same_view_deg
        self.ray_tolerance_m = ray_tolerance_m
        self.default_range_m = default_range_m
        self.matcher = (matcher or FeatureMatcher()) if feature_matching else None
        self.objects: list[Remembered] = []

    def __len__(self) -> int:
        return len(self.objects)

    def category_of(self, label: str) -> str:
        """The taxonomy category of a label (the label itself if it has none)."""
        return normalize_category(label) or label

    def range_m(self, s: Sighting) -> float:
        """Distance estimate of a sighting from its box height and the object's height."""
        kind = FURNITURE_KINDS.get(self.category_of(s.label))
        if kind is None or s.size_px <= 1:
            return self.default_range_m
        # the box spans the object's height; near the image centre (zoomed views) the
        # pinhole relation holds well enough
        return min(kind.height * s.focal_px / s.size_px, 3 * self.radius_m)

    # -------------------------------------------------------------- matching
    def same(self, obj: Remembered, s: Sighting, origin: np.ndarray, point: np.ndarray) -> bool:
        """Whether sighting ``s`` (from ``origin``, range point ``point``) is object ``obj``."""
        if np.hypot(*(np.asarray(obj.position) - point)) > self.radius_m:
            return False
        for old, old_origin, old_point in zip(obj.sightings, obj.origins, obj.points, strict=True):
            o, p = np.asarray(old_origin), np.asarray(old_point)
            if old.node == s.node:
                if abs(float(angle_diff(old.heading, s.heading))) <= self.same_view_deg:
                    return True
                continue
            if self._rays_agree(o, old.heading, p, origin, s.heading, point):
                return True
        if self.matcher is not None and s.crop is not None:
            return any(
                old.crop is not None and self.matcher.same(old.crop, s.crop)
                for old in obj.sightings
            )
        return False

    def _rays_agree(self, o1, h1, p1, o2, h2, p2) -> bool:
        d1, d2 = _unit(h1), _unit(h2)
        cross = d1[0] * d2[1] - d1[1] * d2[0]
        tol = self.ray_tolerance_m
        if abs(cross) < math.sin(math.radians(5.0)):
            return bool(np.hypot(*(p1 - p2)) <= 2 * tol)
        w = o2 - o1
        t1 = (w[0] * d2[1] - w[1] * d2[0]) / cross
        t2 = (w[0] * d1[1] - w[1] * d1[0]) / cross
        if not (0 < t1 <= self.radius_m and 0 < t2 <= self.radius_m):
            return False
        x = o1 + t1 * d1
        return bool(np.hypot(*(x - p1)) <= tol and np.hypot(*(x - p2)) <= tol)

    def add(self, s: Sighting, origin: tuple[float, float] | np.ndarray) -> Remembered:
        """Add a sighting seen from metric position ``origin``; returns its object."""
        origin = np.asarray(origin, dtype=float)
        point = origin + self.range_m(s) * _unit(s.heading)
        category = self.category_of(s.label)
        for obj in self.objects:
            if obj.category == category and self.same(obj, s, origin, point):
                break
        else:
            obj = Remembered(len(self.objects), category)
            self.objects.append(obj)
        obj.sightings.append(s)
        obj.origins.append((float(origin[0]), float(origin[1])))
        obj.points.append((float(point[0]), float(point[1])))
        return obj

    # -------------------------------------------------------------- retrieval
    def near(
        self, xy: tuple[float, float], radius_m: float, category: str | None = None
    ) -> list[Remembered]:
        """Objects within ``radius_m`` of ``xy`` (of one category if given), nearest first."""
        want = self.category_of(category) if category else None
        found = []
        for obj in self.objects:
            if want is not None and obj.category != want:
                continue
            d = math.dist(obj.position, xy)
            if d <= radius_m:
                found.append((d, obj.id, obj))
        return [obj for _, _, obj in sorted(found, key=lambda t: (t[0], t[1]))]

    def counts(self) -> dict[str, int]:
        """``{category: number of objects}``."""
        out: dict[str, int] = {}
        for obj in self.objects:
            out[obj.category] = out.get(obj.category, 0) + 1
        return dict(sorted(out.items()))

    # -------------------------------------------------------------- persistence
    def to_dict(self) -> dict[str, Any]:
        """The memory as JSON-ready data (what :meth:`save` writes)."""
        return {
            "format": MEMORY_FORMAT,
            "version": MEMORY_VERSION,
            "settings": {
                "radius_m": self.radius_m,
                "same_view_deg": self.same_view_deg,
                "ray_tolerance_m": self.ray_tolerance_m,
                "default_range_m": self.default_range_m,
                "feature_matching": self.matcher is not None,
            },
            "objects": [obj.to_dict() for obj in self.objects],
        }

    @classmethod
    def from_dict(cls, data: Any, *, where: str | Path | None = None) -> VisualMemory:
        """The memory of :meth:`to_dict`'s data (one-line DataError, naming ``where``, if it
        is not one)."""
        if not isinstance(data, dict) or data.get("format") != MEMORY_FORMAT:
            raise DataError(
                f"not a visual memory (field 'format' must be {MEMORY_FORMAT!r})", path=where
            )
        if data.get("version") != MEMORY_VERSION:
            raise DataError(
                f"visual memory version {data.get('version')!r} is not supported "
                f"(expected {MEMORY_VERSION})",
                path=where,
            )
        try:
            memory = cls(**data.get("settings", {}))
            for k, rec in enumerate(data["objects"]):
                obj = Remembered(int(rec["id"]), str(rec["category"]))
                for srec in rec["sightings"]:
                    srec = dict(srec)
                    origin, point = srec.pop("origin"), srec.pop("point")  # (x, y), as saved
                    obj.origins.append(cast(tuple[float, float], tuple(float(v) for v in origin)))
                    obj.points.append(cast(tuple[float, float], tuple(float(v) for v in point)))
                    srec["span"] = tuple(srec["span"])
                    srec["box"] = tuple(srec["box"])
                    obj.sightings.append(Sighting(**srec))
                if not obj.sightings:
                    raise ValueError(f"object {k} has no sightings")
                memory.objects.append(obj)
        except (KeyError, TypeError, ValueError) as err:
            raise DataError(
                f"damaged visual memory ({type(err).__name__}: {err})", path=where
            ) from None
        return memory

    def save(self, path: str | Path) -> Path:
        """Write the memory as JSON (atomically)."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")
        tmp.replace(out)
        return out

    @classmethod
    def load(cls, path: str | Path) -> VisualMemory:
        """Read a memory written by :meth:`save` (one-line DataError if it is damaged)."""
        src = Path(path)
        try:
            data = json.loads(src.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError("visual memory file not found", path=src) from None
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            line = getattr(err, "lineno", None)
            raise DataError(
                "not a visual memory file (invalid JSON)", path=src, line=line
            ) from None
        return cls.from_dict(data, where=src)

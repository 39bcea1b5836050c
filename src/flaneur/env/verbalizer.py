"""Turn sensor readings and the available actions into text for language agents.

The phrasing follows the papers the schemes come from: VELMA for intersections and
landmarks (``"There is a 4-way intersection."``, ``"Starbucks on your left."``), MapGPT for
the online map (``"Place 3"``), CitySeeker / V-IRL for heading options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

_VIEW_PHRASES = ("on your left", "slightly left", "ahead", "slightly right", "on your right")


def verbalize_intersection(ways: int) -> str:
    """``"There is a 4-way intersection."`` (empty for 0)."""
    return f"There is a {ways}-way intersection." if ways else ""


def verbalize_landmarks(views: Sequence[Sequence[str]]) -> str:
    """VELMA's landmark lines: ``"Starbucks and Chase Bank on your left."`` per view."""
    parts = []
    for phrase, names in zip(_VIEW_PHRASES, views, strict=False):
        if names:
            text = " and ".join(names)
            parts.append(f"{text[0].upper()}{text[1:]} {phrase}.")
    return " ".join(parts)


def verbalize_nearby(items: Sequence[Sequence[Any]]) -> str:
    """``"Nearby: Cafe Aalto (cafe, 12 m, slightly left); ..."``."""
    if not items:
        return ""
    parts = []
    for label, category, dist, direction in items:
        same = category.replace("_", " ").lower() == str(label).lower()
        what = f"{category.replace('_', ' ')}, " if category and not same else ""
        parts.append(f"{label} ({what}{dist} m, {direction})")
    return "Nearby: " + "; ".join(parts) + "."


def verbalize_online_map(snapshot: Mapping[str, Any]) -> str:
    """MapGPT-style map text with episode-local place numbers."""
    numbers = snapshot.get("numbers", {})

    def place(node_id: str) -> str:
        return f"Place {numbers.get(node_id, '?')}"

    lines = []
    trail = snapshot.get("trail", [])
    if trail:
        lines.append("Trajectory: " + ", ".join(place(v) for v in trail) + ".")
    if snapshot.get("current") is not None:
        lines.append(f"You are at {place(snapshot['current'])}.")
    if snapshot.get("accessible"):
        lines.append("Accessible: " + ", ".join(place(v) for v in snapshot["accessible"]) + ".")
    if snapshot.get("unexplored"):
        lines.append("Unexplored: " + ", ".join(place(v) for v in snapshot["unexplored"]) + ".")
    return " ".join(lines)


def verbalize_actions(scheme: str, actions: Sequence[tuple[int, str]]) -> str:
    """The valid actions: names for ``turns``, numbered options for the other schemes."""
    if not actions:
        return ""
    if scheme == "turns":
        return "Actions: " + ", ".join(label for _, label in actions) + "."
    return "Options: " + "; ".join(f"{slot}: {label}" for slot, label in actions) + "."


_SENSOR_TEXT: dict[str, Callable[[Any], str]] = {
    "intersection": verbalize_intersection,
    "landmarks": verbalize_landmarks,
    "nearby": verbalize_nearby,
    "online_map": verbalize_online_map,
}


class Verbalizer:
    """Joins the text of every sensor reading (and optionally the action list).

    Parameters
    ----------
    include_actions
        Append the valid actions (``"Actions: forward, left, ..."``).
    cache_size
        Readings of hashable sensors (intersection, landmarks, nearby) are memoised up to
        this many entries.
    """

    def __init__(self, *, include_actions: bool = True, cache_size: int = 200_000) -> None:
        self.include_actions = include_actions
        self.cache_size = cache_size
        self._cache: dict[tuple[str, Any], str] = {}

    def sensor_text(self, name: str, reading: Any) -> str:
        """The text of one reading (unknown sensors: ``str(reading)``)."""
        func = _SENSOR_TEXT.get(name)
        if func is None:
            return "" if reading is None else str(reading)
        if name == "online_map":
            return func(reading)
        key = (name, reading)
        text = self._cache.get(key)
        if text is None:
            text = func(reading)
            if len(self._cache) < self.cache_size:
                self._cache[key] = text
        return text

    def __call__(
        self,
        readings: Mapping[str, Any],
        *,
        scheme: str = "",
        actions: Sequence[tuple[int, str]] = (),
    ) -> str:
        """All readings, then the actions, as one line of text."""
        parts = [self.sensor_text(name, value) for name, value in readings.items()]
        if self.include_actions:
            parts.append(verbalize_actions(scheme, actions))
        return " ".join(p for p in parts if p)


__all__ = [
    "Verbalizer",
    "verbalize_actions",
    "verbalize_intersection",
    "verbalize_landmarks",
    "verbalize_nearby",
    "verbalize_online_map",
]

"""VELMA's verbalization: observations and the numbered action sequence, in words.

The trajectory is a numbered list in which observations and actions alternate as they
happen (Schumann et al., AAAI 2024)::

    1. There is a 3-way intersection. There is a Starbucks on your right.
    2. FORWARD
    3. FORWARD
    4. There is a 4-way intersection.
    5. LEFT
    6.

The last line holds only the next number, so the model's next word is the action.
Observations are

* the intersection, on arrival at a node with more than two streets (and at the start),
  as the environment's intersection sensor reports it: ``"There is a 4-way intersection."``;
* landmarks of the instructions seen in one of five directions (left, slightly left, ahead,
  slightly right, right: -90, -45, 0, 45, 90 degrees from the heading):
  ``"There is a Starbucks on your left."``. They come from the map (places whose name or
  category matches the landmark, inside the direction's 45 degree sector and a radius) or
  from a perception scorer on the five views (OCR, CLIP, VLM).

Landmark sentences are repeated after a rotation in place only when they change.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from flaneur.env.schemes.turns import TURN_ACTIONS
from flaneur.env.state import relative_angle
from flaneur.env.verbalizer import verbalize_intersection
from flaneur.errors import FlaneurError
from flaneur.models.scoring import NAV_ACTIONS
from flaneur.perception.landmarks.base import unique_landmarks
from flaneur.perception.matching import fuzzy_ratio, normalize_name
from flaneur.views import ImageSensor
from flaneur.world.city import City

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

ACTION_WORDS: tuple[str, ...] = NAV_ACTIONS
"""The action words of the prompt: FORWARD, LEFT, RIGHT, TURN_AROUND, STOP."""

DIRECTIONS: tuple[tuple[str, float], ...] = (
    ("on your left", -90.0),
    ("slightly to your left", -45.0),
    ("ahead of you", 0.0),
    ("slightly to your right", 45.0),
    ("on your right", 90.0),
)
"""Phrase and offset from the heading of VELMA's five directions."""

VIEW_LABELS = ("left", "slightly left", "ahead", "slightly right", "right")
"""Labels of the five views in :class:`flaneur.views.ImageSensor`'s ``velma`` layout."""

Seen = list[tuple[str, int]]
"""Landmarks seen at one step: ``(landmark, direction index 0-4)``."""


def slot_of(word: str) -> int:
    """Turns-scheme slot of an action word (``"TURN_AROUND"`` -> 4)."""
    return TURN_ACTIONS.index(word.lower())


def word_of(slot: int) -> str:
    """Action word of a turns-scheme slot (4 -> ``"TURN_AROUND"``)."""
    return TURN_ACTIONS[slot].upper()


def _article(name: str) -> str:
    first = name.split()[0].lower() if name.split() else ""
    if first in ("a", "an", "the"):
        return ""
    return "an " if name[:1].lower() in "aeiou" else "a "


def landmark_sentence(landmark: str, direction: int) -> str:
    """``"There is a Starbucks on your left."``"""
    return f"There is {_article(landmark)}{landmark} {DIRECTIONS[direction][0]}."


def landmarks_text(seen: Seen) -> str:
    """The sentences of the landmarks seen at one step, left to right."""
    ordered = sorted(enumerate(seen), key=lambda item: (item[1][1], item[0]))
    return " ".join(landmark_sentence(name, d) for _, (name, d) in ordered)


def sector_of(relative: float) -> int | None:
    """Direction index (0-4) of a relative bearing (negative = left); ``None`` behind."""
    if abs(relative) > 112.5:
        return None
    return min(4, max(0, math.floor(relative / 45.0 + 0.5) + 2))


class Trajectory:
    """The numbered action sequence of one episode.

    Observation lines and action lines are numbered together; :meth:`render` ends with the
    next number when ``cue`` is true.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []

    def observe(self, text: str) -> None:
        """Add an observation line (nothing for empty text)."""
        if text:
            self.lines.append(text)

    def act(self, word: str) -> None:
        """Add the action taken."""
        self.lines.append(word)

    @property
    def actions(self) -> list[str]:
        """The action words so far."""
        return [line for line in self.lines if line in ACTION_WORDS]

    def render(self, *, cue: bool = True) -> str:
        """``"1. ...\\n2. FORWARD\\n3."`` (without the last number if ``cue`` is false)."""
        out = [f"{i}. {line}" for i, line in enumerate(self.lines, 1)]
        if cue:
            out.append(f"{len(self.lines) + 1}.")
        return "\n".join(out)


class ObservationTracker:
    """Decides what is observed at each step (intersection on arrival, changed landmarks).

    Parameters
    ----------
    degree
        Number of streets of every node (the graph's out-degree).
    """

    def __init__(self, degree: Sequence[int] | NDArray[np.int64]) -> None:
        self.degree = degree
        self._node: int | None = None
        self._landmarks = ""

    def text(self, node: int, landmark_text: str) -> str:
        """The observation line at ``node`` (``""`` if there is nothing new)."""
        arrived = node != self._node
        parts = []
        ways = int(self.degree[node])
        if arrived and ways > 2:
            parts.append(verbalize_intersection(ways))
        if landmark_text and (arrived or landmark_text != self._landmarks):
            parts.append(landmark_text)
        self._node, self._landmarks = node, landmark_text
        return " ".join(parts)


class LandmarkObserver(Protocol):
    """Finds the instruction's landmarks around the agent."""

    name: str

    async def aseen(self, node: int, heading: float, landmarks: Sequence[str]) -> Seen:
        """``(landmark, direction)`` pairs visible from ``node`` facing ``heading``."""
        ...


class MapLandmarkObserver:
    """Landmarks from the map: places inside each direction's sector and ``radius_m``.

    A place matches a landmark when their normalised names are equal, their fuzzy ratio
    reaches ``match``, or the landmark names one of the place's categories (``"cafe"``).
    With ``landmarks_from="all"`` every named place is reported under its own name instead
    (up to ``max_per_view`` per direction, as the environment's landmark sensor does).

    Parameters
    ----------
    city
        The city.
    radius_m
        How far the agent sees.
    match
        Fuzzy ratio for a name match.
    landmarks_from
        ``"instruction"`` (VELMA) or ``"all"``.
    max_per_view
        Names per direction for ``"all"``.
    """

    name = "map"

    def __init__(
        self,
        city: City,
        *,
        radius_m: float = 30.0,
        match: float = 0.85,
        landmarks_from: str = "instruction",
        max_per_view: int = 3,
    ) -> None:
        if landmarks_from not in ("instruction", "all"):
            raise FlaneurError(
                f"landmarks_from must be 'instruction' or 'all', not {landmarks_from!r}"
            )
        self.city = city
        self.radius_m = radius_m
        self.match = match
        self.landmarks_from = landmarks_from
        self.max_per_view = max_per_view
        self._around: dict[int, list[tuple[int, float]]] = {}
        self._matches: dict[tuple[int, str], bool] = {}

    def _places(self, node: int) -> list[tuple[int, float]]:
        """``(place row, absolute bearing)`` of the places within the radius, nearest first."""
        found = self._around.get(node)
        if found is None:
            found = []
            places = self.city.places
            if len(places):
                xy = self.city.graph.xy[node]
                rows, _ = places.within(xy, self.radius_m)
                for r in rows.tolist():
                    dx, dy = places.xy[r, 0] - xy[0], places.xy[r, 1] - xy[1]
                    found.append((r, math.degrees(math.atan2(dx, dy)) % 360.0))
            self._around[node] = found
        return found

    def _is(self, row: int, landmark: str) -> bool:
        key = (row, landmark)
        hit = self._matches.get(key)
        if hit is None:
            places = self.city.places
            name = str(places.names[row])
            target = normalize_name(landmark)
            hit = bool(name) and (
                normalize_name(name) == target or fuzzy_ratio(landmark, name) >= self.match
            )
            if not hit:
                hit = any(
                    normalize_name(c.replace("_", " ")) == target for c in places.categories[row]
                )
            self._matches[key] = hit
        return hit

    def seen(self, node: int, heading: float, landmarks: Sequence[str]) -> Seen:
        """Synchronous :meth:`aseen`."""
        out: Seen = []
        if self.landmarks_from == "all":
            counts = [0] * 5
            names = self.city.places.names
            for row, bearing in self._places(node):
                d = sector_of(relative_angle(bearing, heading))
                label = str(names[row])
                if d is None or not label or counts[d] >= self.max_per_view:
                    continue
                if (label, d) not in out:
                    out.append((label, d))
                    counts[d] += 1
            return out
        if not landmarks:
            return out
        for landmark in landmarks:
            for row, bearing in self._places(node):
                d = sector_of(relative_angle(bearing, heading))
                if d is not None and self._is(row, landmark):
                    out.append((landmark, d))
                    break
        return out

    async def aseen(self, node: int, heading: float, landmarks: Sequence[str]) -> Seen:
        """Landmarks of the map visible from ``node`` facing ``heading``."""
        return self.seen(node, heading, landmarks)


class ViewLandmarkObserver:
    """Landmarks found by a perception scorer in the five VELMA views.

    Parameters
    ----------
    provider
        A view provider (:class:`flaneur.views.SyntheticViews`, panoramas, ...).
    city
        The city (for node ids).
    scorer
        A :class:`flaneur.perception.LandmarkScorer` (OCR, CLIP, VLM).
    fov
        Horizontal field of view of each view.
    """

    def __init__(self, provider: Any, city: City, scorer: Any, *, fov: float = 60.0) -> None:

        self.sensor = ImageSensor(provider, city.graph, layout="velma", fov=fov)
        self.scorer = scorer
        self.name = str(getattr(scorer, "name", "views"))
        self.last_views: dict[str, Any] = {}

    def prompt_texts(self, landmarks: Sequence[str]) -> list[str]:
        """The text of the questions a model-based scorer (VLM) asks about each view of the
        last step (the images are the views), for the run log; ``[]`` for other scorers."""
        question = getattr(self.scorer, "question", None)
        if question is None or not self.last_views or not landmarks:
            return []

        view = next(iter(self.last_views.values()))
        names = unique_landmarks(landmarks)
        size = max(1, int(getattr(self.scorer, "max_options", len(names))))
        texts = []
        for i in range(0, len(names), size):
            for message in question(view, names[i : i + size]):
                content = message.get("content")
                parts = content if isinstance(content, list) else [{"text": content}]
                texts += [p["text"] for p in parts if isinstance(p.get("text"), str)]
        return texts

    async def aseen(self, node: int, heading: float, landmarks: Sequence[str]) -> Seen:
        """Score the landmarks in each view; each visible one once, where it scored best."""
        if not landmarks:
            return []
        views = await asyncio.to_thread(self.sensor.views, node, heading)
        self.last_views = views
        labels = list(views)
        results = await asyncio.gather(
            *(self.scorer.ascore(views[label], landmarks) for label in labels)
        )
        best: dict[str, tuple[float, int]] = {}
        for label, observations in zip(labels, results, strict=True):
            d = VIEW_LABELS.index(label) if label in VIEW_LABELS else 2
            for obs in observations:
                if obs.visible and (obs.landmark not in best or obs.score > best[obs.landmark][0]):
                    best[obs.landmark] = (obs.score, d)
        return [(name, best[name][1]) for name in landmarks if name in best]


__all__ = [
    "ACTION_WORDS",
    "DIRECTIONS",
    "LandmarkObserver",
    "MapLandmarkObserver",
    "ObservationTracker",
    "Seen",
    "Trajectory",
    "ViewLandmarkObserver",
    "landmark_sentence",
    "landmarks_text",
    "sector_of",
    "slot_of",
    "word_of",
]

"""Hiro's rules, as pure functions: where to look, which place a box is, which road to take,
whether to enter.

These follow V-IRL's intentional explorer (``tools/tasks/intentional_explorer.py`` and
``navigation/intention_navigator.py``; read for behaviour, written here):

* **views** — 3 views of 60 degrees at every step (``h - 60``, ``h``, ``h + 60``), 6 around
  the compass at the start (:func:`view_headings`);
* **box to place** — the nearest place of the sought type within :data:`MATCH_RADIUS_M`
  whose bearing lies inside the box's heading span widened by :data:`HEADING_MARGIN_DEG`
  on each side (:func:`heading_in_span`; the matching itself is
  :func:`flaneur.perception.matching.match_box` with ``margin_deg``);
* **roads** — at the start or at a junction with more than 2 roads he chooses among the
  roads other than the one he came by (:func:`road_choice_needed`, :func:`road_back`);
  elsewhere he keeps his heading (:func:`momentum_road`);
* **enter** — the offline stand-in for the LLM's yes/no: the place's rating (Aria's
  offline scorer, 0-10) reaches ``enter_min`` and, when the need names a brand or a place,
  the place's name or brand matches it (:func:`should_enter`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from flaneur.geo import angle_diff

MATCH_RADIUS_M = 20.0
"""A detected box is matched only to places this close to the viewpoint (V-IRL: 20 m)."""

HEADING_MARGIN_DEG = 5.0
"""A place may lie this far outside a box's heading span and still match (V-IRL: 5)."""

VIEW_FOV = 60.0
"""Horizontal field of view of each view, degrees."""

START_VIEWS = 6
"""Views at the start (all around: 360 / 60)."""

STEP_VIEWS = 3
"""Views at every later step (the 180 degrees ahead)."""

ENTER_MIN = 7.0
"""Default rating (0-10) from which the offline scorer enters a place.

Aria's offline rating gives ``10 x 0.55 = 5.5`` for the type alone when the place is of
the best type, up to 1.45 for being within 20 m, and the overview's fit and prominence
the rest: 7 asks for a place of the sought type whose description also fits the need.
"""

NAME_MATCH = 0.8
"""Fuzzy similarity from which a place's name or brand counts as the one the need names."""


def view_headings(heading: float, *, start: bool) -> list[float]:
    """Headings of the views taken at one step.

    Parameters
    ----------
    heading
        The way Hiro faces (degrees).
    start
        The first step: 6 views around the compass; otherwise 3 views ahead.

    Examples
    --------
    >>> view_headings(10.0, start=False)
    [310.0, 10.0, 70.0]
    >>> view_headings(0.0, start=True)
    [0.0, 60.0, 120.0, 180.0, 240.0, 300.0]
    """
    if start:
        return [(heading + VIEW_FOV * k) % 360.0 for k in range(START_VIEWS)]
    return [(heading + VIEW_FOV * k) % 360.0 for k in (-1, 0, 1)]


def heading_in_span(
    bearing: float, left: float, right: float, margin: float = HEADING_MARGIN_DEG
) -> bool:
    """Whether ``bearing`` lies in the clockwise span ``left -> right`` widened by ``margin``.

    Examples
    --------
    >>> heading_in_span(52.0, 10.0, 50.0)   # 2 degrees past the right edge
    True
    >>> heading_in_span(56.0, 10.0, 50.0)   # 6 degrees past it
    False
    >>> heading_in_span(2.0, 350.0, 20.0)   # a span across north
    True
    """
    width = float(angle_diff(right, left)) % 360.0 + 2.0 * margin
    offset = float(angle_diff(bearing, left - margin)) % 360.0
    return offset <= width


def road_back(headings: Sequence[float], arrival_heading: float | None) -> int | None:
    """Index of the road Hiro came by: the one closest to the reverse of his arrival heading.

    ``None`` at the start (no arrival) or without roads.

    Examples
    --------
    >>> road_back([0.0, 90.0, 185.0, 270.0], 0.0)   # arrived walking north
    2
    """
    if arrival_heading is None or not headings:
        return None
    back = (arrival_heading + 180.0) % 360.0
    off = np.abs(angle_diff(np.asarray(headings, dtype=float), back))
    return int(np.argmin(off))


def momentum_road(headings: Sequence[float], heading: float) -> int:
    """Index of the road closest to straight on (V-IRL's move with momentum).

    Examples
    --------
    >>> momentum_road([170.0, 20.0], 0.0)
    1
    """
    off = np.abs(angle_diff(np.asarray(headings, dtype=float), heading))
    return int(np.argmin(off))


def road_choice_needed(n_roads: int, *, start: bool) -> bool:
    """V-IRL's junction rule: choose a road at the start or where more than 2 roads meet.

    Examples
    --------
    >>> road_choice_needed(3, start=False), road_choice_needed(2, start=False)
    (True, False)
    >>> road_choice_needed(2, start=True)
    True
    """
    return start or n_roads > 2


def road_options(n_roads: int, back: int | None) -> list[int]:
    """The roads offered at a choice: every road but the one he came by (unless it is the
    only one).

    Examples
    --------
    >>> road_options(4, 2)
    [0, 1, 3]
    >>> road_options(1, 0)
    [0]
    """
    options = [k for k in range(n_roads) if k != back]
    return options or list(range(n_roads))


def road_values(
    text_scores: Sequence[float],
    visits: Sequence[int],
    *,
    new_bonus: float = 0.1,
    visit_penalty: float = 0.2,
) -> np.ndarray:
    """Value of each offered road for the offline choice: how well the text read along it
    fits the need, plus a bonus for a road to a node never stood on and a penalty per
    earlier visit of it (the explorer's navigation memory).

    Examples
    --------
    >>> road_values([0.5, 0.3], [2, 0]).round(2).tolist()
    [0.1, 0.4]
    """
    scores = np.asarray(text_scores, dtype=float)
    seen = np.asarray(visits, dtype=float)
    return scores + np.where(seen == 0, new_bonus, -visit_penalty * seen)


def should_enter(
    rating: float, *, enter_min: float = ENTER_MIN, name_similarity: float | None = None
) -> bool:
    """The offline enter decision.

    Parameters
    ----------
    rating
        The place's offline rating, 0-10.
    enter_min
        Rating from which he enters.
    name_similarity
        When the need names a brand or a place: the best fuzzy similarity of that name to
        the place's name or brand; below :data:`NAME_MATCH` he does not enter.

    Examples
    --------
    >>> should_enter(7.2), should_enter(6.9)
    (True, False)
    >>> should_enter(9.0, name_similarity=0.5)
    False
    """
    if name_similarity is not None and name_similarity < NAME_MATCH:
        return False
    return rating >= enter_min


__all__ = [
    "ENTER_MIN",
    "HEADING_MARGIN_DEG",
    "MATCH_RADIUS_M",
    "NAME_MATCH",
    "START_VIEWS",
    "STEP_VIEWS",
    "VIEW_FOV",
    "heading_in_span",
    "momentum_road",
    "road_back",
    "road_choice_needed",
    "road_options",
    "road_values",
    "should_enter",
    "view_headings",
]

"""The agent's state inside a navigation episode, and relative-direction helpers.

The state is a small immutable tuple so that schemes can create one per step cheaply:
``node`` (index), ``heading`` (degrees, 0 = north, clockwise), ``prev_node`` (the node of the
previous state: ``-1`` at the start, equal to ``node`` after a rotation in place), ``steps``
(actions taken so far) and ``code`` (a scheme-specific integer that identifies the state for
fast table-driven transitions; ``-1`` where unused).
"""

from __future__ import annotations

from typing import NamedTuple

from flaneur.geo import angle_diff, angular_distance

NO_NODE = -1
"""Value of :attr:`AgentState.prev_node` at the start of an episode."""


class AgentState(NamedTuple):
    """Where the agent is and which way it faces.

    Attributes
    ----------
    node
        Index of the current node.
    heading
        Heading in degrees (0 = north, clockwise), in ``[0, 360)``.
    prev_node
        Node of the previous state: :data:`NO_NODE` at the start, ``node`` itself after a
        rotation in place, otherwise the node the agent came from.
    steps
        Number of actions (steps) taken so far in the episode.
    code
        Scheme-specific state code (``-1`` if the scheme does not use one).
    """

    node: int
    heading: float
    prev_node: int = NO_NODE
    steps: int = 0
    code: int = -1

    @property
    def arrived(self) -> bool:
        """Whether the agent has just moved here (not at the start, not after a rotation)."""
        return self.prev_node != self.node and self.prev_node != NO_NODE


relative_angle = angle_diff
"""Signed angle from ``heading`` to ``target`` in (-180, 180]; negative = left
(:func:`flaneur.geo.angle_diff`, the one formula, under the name the agents use)."""


DIRECTION_LABELS = (
    "front",
    "slightly right",
    "right",
    "back right",
    "back",
    "back left",
    "left",
    "slightly left",
)
"""The eight labels :func:`direction_label` returns."""


def direction_label(relative: float) -> str:
    """The label of a relative direction (degrees, negative = left).

    ``front`` for ``|Δ| <= 22.5``, ``slightly left/right`` up to 67.5, ``left/right`` up to
    112.5, ``back left/right`` up to 157.5, ``back`` beyond. Bounds belong to the narrower
    (more frontal) label.
    """
    a = abs(relative)
    if a <= 22.5:
        return "front"
    side = "right" if relative > 0 else "left"
    if a <= 67.5:
        return "slightly " + side
    if a <= 112.5:
        return side
    if a <= 157.5:
        return "back " + side
    return "back"


__all__ = [
    "DIRECTION_LABELS",
    "NO_NODE",
    "AgentState",
    "angular_distance",
    "direction_label",
    "relative_angle",
]

"""Observation space of :class:`~flaneur.env.navigation_env.NavigationEnv`."""

from __future__ import annotations

import string
from collections.abc import Iterable

import numpy as np
from gymnasium import spaces

from flaneur.world.city import City

INSTRUCTION_MIN_LENGTH = 4096
"""The ``instruction`` space accepts at least this many characters."""
TEXT_MAX_LENGTH = 100_000
"""Maximum length of the verbalized ``text`` observation."""


def charset_of(texts: Iterable[str], extra: str = "") -> frozenset[str]:
    """All characters of ``texts`` plus printable ASCII (and ``extra``)."""
    chars: set[str] = set(string.printable) | set(extra)
    for text in texts:
        chars.update(text)
    return frozenset(chars)


def observation_space(
    city: City,
    instructions: Iterable[str],
    *,
    n_actions: int,
    max_steps: int,
    with_text: bool,
) -> spaces.Dict:
    """The ``Dict`` space of observations.

    Keys: ``instruction`` (Text), ``node`` (Discrete n_nodes), ``heading`` (Box [0, 360],
    shape (1,), float32), ``action_mask`` (MultiBinary n_actions), ``step`` (Discrete
    max_steps + 1) and, with ``with_text``, ``text`` (Text).
    """
    instructions = list(instructions)
    longest = max((len(t) for t in instructions), default=0)
    fields: dict[str, spaces.Space] = {
        "instruction": spaces.Text(
            max(INSTRUCTION_MIN_LENGTH, longest), min_length=0, charset=charset_of(instructions)
        ),
        "node": spaces.Discrete(max(1, city.graph.n_nodes)),
        "heading": spaces.Box(0.0, 360.0, shape=(1,), dtype=np.float32),
        "action_mask": spaces.MultiBinary(n_actions),
        "step": spaces.Discrete(max_steps + 1),
    }
    if with_text:
        names = city.places.names.tolist() if len(city.places) else []
        cats = [c for cs in city.places.categories for c in cs]
        ids = city.graph.ids.tolist() if city.graph.n_nodes < 200_000 else []
        fields["text"] = spaces.Text(
            TEXT_MAX_LENGTH, min_length=0, charset=charset_of([*names, *cats, *ids], "°")
        )
    return spaces.Dict(fields)


__all__ = ["INSTRUCTION_MIN_LENGTH", "TEXT_MAX_LENGTH", "charset_of", "observation_space"]

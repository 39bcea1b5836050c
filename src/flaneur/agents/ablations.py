"""Ablations: what an agent ran without, for want of something the run lacks, said once.

An agent names the ablations of its last episode in :meth:`~flaneur.agents.base.Agent.ablations`;
its row lists them (``"ablations"``) and the summary entry lists those of its rows. Some
leave the agent nothing to perceive (:data:`BLIND`): VELMA's ``"no image"`` (the map
observer in a city without places) and :data:`NOTHING_TO_SEE`, which any agent that
perceives only the city's named places (map landmarks, map descriptions, boxes matched to
places) reports in a city that has none. A summary entry whose every row ran under one of
them says ``"perception": "none"`` (:func:`perception_of`).

Each ablation is said once per agent and city in a process: one warning line on the
``flaneur.agents`` logger (:func:`say_once`), naming what to add to see something.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flaneur.world.city import City

NO_IMAGE = "no image"
"""VELMA's ablation without imagery (its paper's name)."""

NOTHING_TO_SEE = "nothing to see"
"""The ablation of an agent that perceives only named places, in a city without any."""

BLIND = frozenset({NO_IMAGE, NOTHING_TO_SEE})
"""Ablations under which an agent perceives nothing at all."""

log = logging.getLogger("flaneur.agents")
_SAID: set[tuple[str, ...]] = set()


def say_once(key: tuple[str, ...], text: str, logger: logging.Logger = log) -> None:
    """Log ``text`` (one line) as a warning the first time ``key`` is seen in this process."""
    if key not in _SAID:
        _SAID.add(key)
        logger.warning(text)


def has_named_places(city: City) -> bool:
    """Whether ``city`` has a place with a name (something a map shows)."""
    return city.places.n_named > 0


def nothing_to_see(agent: str, city: City, *, places_only: bool, hint: str) -> tuple[str, ...]:
    """``(NOTHING_TO_SEE,)`` when ``agent``'s perception ends in named places
    (``places_only``) and ``city`` has none, said once per agent and city; else ``()``.

    Parameters
    ----------
    agent
        The agent's name, as the warning shows it.
    city
        The episode's city.
    places_only
        Whether everything the agent perceives is a named place of the city (map landmarks,
        map descriptions, detections matched to places), as it is set up for this run.
    hint
        What to add to the run so that the agent sees something (e.g. ``"add --views
        synthetic --landmarks ocr"``).
    """
    if not places_only or has_named_places(city):
        return ()
    say_once(
        (agent, NOTHING_TO_SEE, city.name),
        f"{agent}: city {city.name!r} has no named places and the run gives it nothing else "
        f'to perceive: it runs blind (rows say "ablations": ["{NOTHING_TO_SEE}"], the summary '
        f'"perception": "none"); {hint}',
    )
    return (NOTHING_TO_SEE,)


def perception_of(rows: Iterable[Mapping[str, Any]]) -> str | None:
    """``"none"`` when there are rows and every one ran under a :data:`BLIND` ablation, else
    ``None`` (the agent perceived something, or the rows do not say)."""
    said = [BLIND & {str(a) for a in row.get("ablations") or ()} for row in rows]
    return "none" if said and all(said) else None


__all__ = [
    "BLIND",
    "NOTHING_TO_SEE",
    "NO_IMAGE",
    "has_named_places",
    "nothing_to_see",
    "perception_of",
    "say_once",
]

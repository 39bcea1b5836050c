"""In-context examples: gold-path verbalizations of other episodes of the same task set.

VELMA prompts the model with ``k`` complete action sequences (default 2) before the task.
An example is another episode of the task set walked by the ``turns`` teacher from start to
stop, verbalized like the agent's own trajectory (landmarks extracted from its instruction
by the rule-based extractor, observed on the map). The examples are the first ``k`` of the
task set's episodes shuffled with a fixed seed, skipping the episode itself (and any episode
with the same instruction), so every episode of a run sees the same examples unless it is
one of them.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Sequence

from flaneur.agents.prompts import load_prompt
from flaneur.agents.velma.verbalize import (
    MapLandmarkObserver,
    ObservationTracker,
    Seen,
    Trajectory,
    landmarks_text,
    word_of,
)
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.teacher import TeacherError, gold_rollout
from flaneur.errors import FlaneurError
from flaneur.perception.extraction import rule_based_landmarks
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

SeenFn = Callable[[int, float], Seen]

_CACHE: OrderedDict[tuple, str | None] = OrderedDict()
_CACHE_ITEMS = 512


def gold_trajectory(
    scheme: TurnsScheme, city: City, episode: Episode, seen: SeenFn, *, max_steps: int | None = None
) -> tuple[Trajectory, list[int]]:
    """The verbalized gold path of ``episode`` (ending with ``STOP``) and its action slots.

    Parameters
    ----------
    scheme
        A ``turns`` scheme on ``city.graph``.
    city
        The city.
    episode
        An episode with a reference path (or goals).
    seen
        ``seen(node, heading) -> [(landmark, direction), ...]`` at each state.
    max_steps
        Cut the rollout after this many actions.

    Raises
    ------
    TeacherError, UnknownNodeError
        If the teacher cannot walk the episode.
    """
    actions, states = gold_rollout(scheme, city.graph, episode, max_steps=max_steps)
    tracker = ObservationTracker(city.graph.degree)
    trajectory = Trajectory()
    for action, state in zip(actions, states, strict=False):
        trajectory.observe(
            tracker.text(state.node, landmarks_text(seen(state.node, state.heading)))
        )
        trajectory.act(word_of(action))
    return trajectory, actions


def select_examples(
    pool: Sequence[Episode], episode: Episode, k: int, *, seed: int = 0
) -> list[Episode]:
    """The candidates for ``episode``'s examples, in order (more than ``k`` when some
    could fail to verbalize): the pool shuffled with ``seed``, without ``episode``."""
    if k <= 0:
        return []
    ordered = sorted(pool, key=lambda e: e.id)
    random.Random(seed).shuffle(ordered)
    text = episode.instruction.strip()
    return [
        e
        for e in ordered
        if e.id != episode.id and e.instruction.strip() != text and len(e.reference_path) > 1
    ]


def example_block(
    scheme: TurnsScheme, city: City, example: Episode, number: int, observer: MapLandmarkObserver
) -> str | None:
    """The filled example prompt for ``example`` (``None`` if it cannot be walked)."""
    key = (
        id(city.graph),
        city.name,
        example.id,
        example.instruction,
        number,
        observer.landmarks_from,
        observer.radius_m,
    )
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]

    landmarks = rule_based_landmarks(example.instruction)
    try:
        trajectory, _ = gold_trajectory(
            scheme, city, example, lambda n, h: observer.seen(n, h, landmarks)
        )
        text, _ = load_prompt("velma", "example").fill(
            number=number, instructions=example.instruction, trajectory=trajectory.render(cue=False)
        )
    except (TeacherError, FlaneurError):
        text = None
    _CACHE[key] = text
    while len(_CACHE) > _CACHE_ITEMS:
        _CACHE.popitem(last=False)
    return text


def examples_text(
    scheme: TurnsScheme,
    city: City,
    pool: Sequence[Episode],
    episode: Episode,
    k: int,
    *,
    seed: int = 0,
    observer: MapLandmarkObserver | None = None,
) -> tuple[str, list[str]]:
    """The ``{examples}`` text of the prompt and the ids of the examples used.

    Fewer than ``k`` examples are returned when the pool has fewer usable episodes (the
    caller records how many it got).
    """
    if k <= 0:
        return "", []
    observer = observer or MapLandmarkObserver(city)
    blocks: list[str] = []
    ids: list[str] = []
    for candidate in select_examples(pool, episode, k, seed=seed):
        block = example_block(scheme, city, candidate, len(blocks) + 1, observer)
        if block is not None:
            blocks.append(block)
            ids.append(candidate.id)
        if len(blocks) == k:
            break
    return "".join("\n" + block for block in blocks), ids


__all__ = ["example_block", "examples_text", "gold_trajectory", "select_examples"]

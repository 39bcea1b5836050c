"""VELMA's released baselines (``run_baselines.py``), followed under ``--protocol paper``.

On VELMA's datasets (map2seq, Touchdown) the ``forward`` and ``random`` agents of
:mod:`flaneur.agents.baselines` hand every decision to a :class:`ReleasedBaseline` when the
run follows the paper protocol. Its rule, as VELMA's released code runs it:

* **first action**: map2seq episodes begin with ``forward`` whatever the start, even at a
  dead end (``vln/agent.py``, ``Agent.run``: ``actions = ['init', 'forward']`` on map2seq,
  stepped without ``validate_action``); Touchdown episodes begin with a decision;
* **each decision** (``run_baselines.py``, ``BaselineAgent.query_func``): ``stop`` once 40
  panoramas are reached, else ``forward``; the random baseline instead draws
  ``random.choice(['forward', 'left', 'right'])`` when the line before the prompt's cue is
  an intersection, i.e. on arriving at an intersection (or starting on one);
* ``validate_action`` (``vln/base_navigator.py``): at a node with at most one street
  anything but ``turn_around`` becomes ``stop``; the loop ends after 56 actions.

The random draws come from Python's ``random`` seeded once (``--seed 1``) and shared by
every episode in file order, so an episode's draws depend on those of all episodes before
it. :func:`released_stream` rebuilds the generator's state at the start of an episode by
walking the task set's earlier episodes with the same rule (once per task set, seed and
process; cached).

VELMA's Touchdown random baseline raises ``IndexError`` on its first episode whose start is
not an intersection: its prompt template is empty, so the first prompt has one line and the
rule reads the line before the last. Here such a start draws nothing (the only reading that
runs).
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from flaneur.env.schemes.base import STOP, InvalidActionError
from flaneur.env.schemes.turns import FORWARD, LEFT, RIGHT, TurnsScheme
from flaneur.tasks.episode import Episode

VELMA_SEED = 1
"""The seed of VELMA's runs (``--seed 1``; ``random.seed(opts.seed)`` once per run)."""

RELEASED_PANORAMAS = 40
"""``run_baselines.py`` answers ``stop`` once ``pano_length`` reaches 40."""

RELEASED_ACTIONS = 56
"""Actions of VELMA's loop (``while step_id <= 55`` with ``step_id`` the number of actions
before the step, ``init`` included): 56 after ``init``, map2seq's first ``forward`` included."""

_CHOICES = ("forward", "left", "right")
_SLOTS = {"forward": FORWARD, "left": LEFT, "right": RIGHT}
_STREAMS: OrderedDict[tuple[Any, ...], list[Any]] = OrderedDict()
_STREAMS_KEPT = 8


def forced_first_forward(dataset: str | None) -> bool:
    """Whether VELMA's agents begin an episode of ``dataset`` with ``forward`` (map2seq)."""
    return dataset == "map2seq"


@dataclass
class ReleasedBaseline:
    """VELMA's forward or random baseline on one episode.

    Parameters
    ----------
    strategy
        ``"forward"`` or ``"random"``.
    dataset
        ``"map2seq"`` or ``"touchdown"``.
    rng
        The shared generator, positioned at this episode (random only).
    """

    strategy: str
    dataset: str
    rng: random.Random | None = None
    panoramas: int = 0
    actions: int = 0
    node: int | None = field(default=None, repr=False)

    def next(self, node: int, degree: int) -> tuple[int, str]:
        """``(turns slot, why)`` of the next action at ``node`` (``degree`` streets)."""
        arrived = node != self.node
        if arrived:
            self.panoramas += 1
            self.node = node
        self.actions += 1
        if self.actions == 1 and forced_first_forward(self.dataset):
            return FORWARD, "VELMA's map2seq agents begin with forward (Agent.run)"
        if self.panoramas >= RELEASED_PANORAMAS:
            return STOP, f"{RELEASED_PANORAMAS} panoramas (run_baselines.py)"
        if self.actions > RELEASED_ACTIONS:
            return STOP, f"{RELEASED_ACTIONS} actions (VELMA's loop)"
        word = "forward"
        if self.strategy == "random" and arrived and degree > 2 and self.rng is not None:
            word = self.rng.choice(_CHOICES)
        if degree <= 1:
            return STOP, f"{word} at a dead end: stop (validate_action)"
        return _SLOTS[word], word if self.strategy == "random" else "forward"


def _walk(rule: ReleasedBaseline, scheme: TurnsScheme, episode: Episode) -> None:
    """Walk ``episode`` with ``rule`` (advancing its generator) until it stops."""
    graph = scheme.graph
    try:
        state = scheme.start(graph.index(episode.start_node), episode.start_heading)
    except (KeyError, ValueError):
        return
    degree = graph.degree
    while rule.actions < RELEASED_ACTIONS:
        slot, _ = rule.next(state.node, int(degree[state.node]))
        if slot == STOP:
            return
        try:
            state = scheme.step(state, slot)
        except InvalidActionError:
            return


def released_stream(
    scheme: TurnsScheme,
    episodes: Sequence[Episode],
    episode: Episode,
    dataset: str,
    seed: int = VELMA_SEED,
) -> random.Random:
    """VELMA's random generator as it stands at the start of ``episode``.

    Parameters
    ----------
    scheme
        The ``turns`` scheme of the run's city.
    episodes
        The task set in file order (``env_info.task_episodes``).
    episode
        The episode about to run; one outside ``episodes`` gets a fresh generator.
    dataset
        ``"map2seq"`` or ``"touchdown"``.
    seed
        The seed of the stream (VELMA's ``--seed``).
    """
    ids = tuple(e.id for e in episodes)
    try:
        index = ids.index(episode.id)
    except ValueError:
        return random.Random(seed)
    key = (id(scheme.graph), ids, dataset, seed)
    states = _STREAMS.get(key)
    if states is None:
        states = [random.Random(seed).getstate()]
        _STREAMS[key] = states
        while len(_STREAMS) > _STREAMS_KEPT:
            _STREAMS.popitem(last=False)
    rng = random.Random()
    rng.setstate(states[-1])
    while len(states) <= index:
        _walk(ReleasedBaseline("random", dataset, rng), scheme, episodes[len(states) - 1])
        states.append(rng.getstate())
    rng.setstate(states[index])
    return rng


def released_baseline(
    strategy: str, episode: Episode, env_info: Any, dataset: str, seed: int | None
) -> ReleasedBaseline:
    """The :class:`ReleasedBaseline` of ``strategy`` for ``episode`` (see the module
    docstring); ``seed`` ``None`` is VELMA's ``--seed 1``."""
    rng = None
    if strategy == "random":
        view = env_info.env
        scheme = getattr(view, "scheme", None)
        if not isinstance(scheme, TurnsScheme):
            scheme = TurnsScheme(env_info.city.graph)
        pool = env_info.task_episodes or (episode,)
        rng = released_stream(
            scheme, pool, episode, dataset, VELMA_SEED if seed is None else int(seed)
        )
    return ReleasedBaseline(strategy, dataset, rng)


__all__ = [
    "RELEASED_ACTIONS",
    "RELEASED_PANORAMAS",
    "VELMA_SEED",
    "ReleasedBaseline",
    "forced_first_forward",
    "released_baseline",
    "released_stream",
]

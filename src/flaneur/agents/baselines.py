"""Baseline agents: random, forward-only and the oracle (the teacher).

On VELMA's datasets (episodes whose ``metadata["dataset"]`` is ``"map2seq"`` or
``"touchdown"``) the forward and random baselines behave as VELMA's released
``run_baselines.py``: they stop once they have stood on 40 panoramas (:data:`VELMA_NODES`)
or taken 56 actions (:data:`VELMA_ACTIONS`, its ``--max_steps 55`` loop), and stop at a
dead end; under ``--protocol paper`` they hand every decision to VELMA's released rule
(:mod:`flaneur.agents.velma.baselines`: map2seq's first ``forward``, its random stream).
On other task sets they stop once they have stood on as many nodes as the task set's
average reference path (``env_info.avg_reference_length``), otherwise they run until the
step limit. Under ``--protocol paper`` on CitySeeker's question files
(:func:`cityseeker_episode`) they behave as CitySeeker's released ``straight`` and
``random`` models: they never stop by themselves and walk the whole step budget (35,
``main.py --step 35``), turning back at a dead end; on a city with walkable headings
(CitySeeker's data, :mod:`flaneur.world.walkable`) forward takes the node's first walkable
heading and random one drawn uniformly among them, each moving along the out-edge of closest
azimuth. The forward agent reads the map and its own state through ``env_info.env`` (no
goal); the oracle reads the environment's teacher through ``env_info.privileged`` (its rows
are marked privileged).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from flaneur.agents.base import Action, Agent, EnvInfo, step_record
from flaneur.env.schemes.base import STOP
from flaneur.env.schemes.turns import FORWARD, LEFT, RIGHT, TURN_ACTIONS, TURN_AROUND
from flaneur.env.state import angular_distance
from flaneur.errors import FlaneurError
from flaneur.tasks.episode import Episode
from flaneur.tasks.loaders import VELMA_LOOP_ACTIONS


def episode_seed(seed: int, episode_id: str) -> list[int]:
    """Seed material for one episode: ``[seed, crc32(episode id)]`` (stable across runs)."""
    return [int(seed) & 0xFFFFFFFF, zlib.crc32(episode_id.encode("utf-8"))]


VELMA_DATASETS = frozenset({"map2seq", "touchdown"})
"""``Episode.metadata["dataset"]`` values of VELMA's datasets (set by the VLN loader)."""

VELMA_NODES = 40
"""VELMA's baselines stop after 40 panoramas (``run_baselines.py``: ``pano_length == 40``)."""

VELMA_ACTIONS = VELMA_LOOP_ACTIONS
"""Most actions a VELMA agent takes: its loop runs while ``len(actions) <= 55`` (``--max_steps
55``, ``init`` included), so 56 actions after ``init`` (map2seq's first ``forward`` included)."""


def velma_dataset(episode: Episode) -> str | None:
    """``"map2seq"`` or ``"touchdown"`` for episodes of VELMA's datasets, else ``None``."""
    dataset = episode.metadata.get("dataset")
    return dataset if dataset in VELMA_DATASETS else None


def cityseeker_episode(episode: Episode) -> bool:
    """Whether ``episode`` was read from a CitySeeker question file (its loader records the
    question's ``question_idx`` and ``category_name`` in ``metadata``)."""
    return "question_idx" in episode.metadata and "category_name" in episode.metadata


def _released_rule(name: str, episode: Episode, env_info: EnvInfo, dataset: str, agent: Any) -> Any:
    """VELMA's released ``name`` baseline for a ``--protocol paper`` episode of its datasets."""
    # lazy: the VELMA package (0.24 s of imports) serves only paper runs on VELMA's datasets
    from flaneur.agents.velma.baselines import released_baseline

    return released_baseline(name, episode, env_info, dataset, getattr(agent, "seed", None))


class _CountingAgent(Agent):
    """Counts the nodes stood on and knows when to stop (VELMA's 40 panoramas on its
    datasets; under ``paper`` on CitySeeker's, never: the step budget ends the walk; else the
    average reference length)."""

    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        super().reset(episode, env_info)
        self.dataset = velma_dataset(episode)
        avg = env_info.avg_reference_length
        self.stop_after = round(float(avg)) if avg else None
        self.action_limit: int | None = None
        # CitySeeker's released baselines never answer "stop": the 35-step budget ends them
        self.walks_budget = env_info.protocol == "paper" and cityseeker_episode(episode)
        if self.walks_budget:
            self.stop_after = None
        # ... and move along the panorama's walkable headings where the city keeps them
        city = env_info.city
        self.walkable = city.walkable if self.walks_budget and city is not None else None
        if self.dataset is not None:
            self.stop_after, self.action_limit = VELMA_NODES, VELMA_ACTIONS
        self._last_node: int | None = None
        self.nodes_seen = 0
        self.actions_taken = 0
        self._last_slot = -1
        self.released: Any = None  # --protocol paper on VELMA's datasets: its released rule
        if self.dataset and env_info.protocol == "paper" and env_info.scheme == "turns":
            self.released = _released_rule(self.name, episode, env_info, self.dataset, self)

    def _released_action(self, observation: Mapping[str, Any]) -> Action:
        """The action of VELMA's released baseline (``flaneur.agents.velma.baselines``)."""
        node = int(observation["node"])
        degree = int(self.env_info.city.graph.degree[node]) if self.env_info.city else 2
        return self._answer(*self.released.next(node, degree))

    def _walkable_slot(self, mask: Any, choose: Callable[[int], int]) -> int:
        """The slot of the walkable heading ``choose(number of headings)`` picks at the
        current node, moving along the out-edge of closest azimuth as CitySeeker's released
        code (:mod:`flaneur.world.walkable`); -1 without walkable headings here."""
        env = self.env_info.env
        if self.walkable is None or env is None:
            return -1
        state = env.state
        edges = self.walkable.edges(env.city.graph, state.node)
        if not edges:
            return -1
        target = env.city.graph.adjacency[0][state.node][edges[choose(len(edges))]]
        for slot in range(1, len(mask)):
            if mask[slot] and _slot_target(env, state, slot) == target:
                return slot
        return -1

    def _see(self, observation: Mapping[str, Any]) -> None:
        node = int(observation["node"])
        if node != self._last_node:
            self.nodes_seen += 1
            self._last_node = node

    def _velma_dead_end(self, node: int) -> bool:
        """VELMA turns ``forward``/``left``/``right`` at a node with at most one link into
        ``stop`` (``validate_action``), even facing that link; other task sets move on."""
        env = self.env_info.env
        if self.dataset is None or env is None:
            return False
        return bool(env.city.graph.degree[node] <= 1)

    def _done(self) -> bool:
        if self.action_limit is not None and self.actions_taken >= self.action_limit:
            return True
        return self.stop_after is not None and self.nodes_seen >= self.stop_after

    def _answer(self, slot: int, why: str) -> Action:
        self._last_slot = slot
        self.actions_taken += 1
        name = TURN_ACTIONS[slot] if self.env_info.scheme == "turns" else str(slot)
        return Action(slot, name, step_record(parsed_action=name, thoughts=why))


class ForwardAgent(_CountingAgent):
    """Go forward until the average reference length (or the step limit).

    ``turns``: ``forward`` while it is possible, ``stop`` at a dead end (as VELMA). Other
    schemes: the street closest to the current heading unless it leads back (more than
    157.5 degrees off), else stop; the first move takes the street closest to the start
    heading whatever its angle (there is no "back" before the first move; CitySeeker's
    start heading is north, see ``docs/episodes.md``). Under ``--protocol paper`` on
    CitySeeker's questions it never stops: at a dead end it takes the street back (as
    CitySeeker's ``straight`` model, whose action 0 always moves), until the step budget; on
    a city with walkable headings it takes the node's first one at every step, as
    ``straight`` does (``walkable_headings[0]``), wherever it points.
    """

    name: ClassVar[str] = "forward"

    async def act(self, observation: Mapping[str, Any]) -> Action:
        if self.released is not None:
            return self._released_action(observation)
        self._see(observation)
        if self._done():
            return self._answer(STOP, "reached the average reference length")
        mask = observation["action_mask"]
        if self.env_info.scheme == "turns":
            if mask[FORWARD] and not self._velma_dead_end(int(observation["node"])):
                return self._answer(FORWARD, "forward")
            if self.walks_budget and mask[TURN_AROUND]:
                return self._answer(TURN_AROUND, "dead end: turning back")
            return self._answer(STOP, "dead end")
        slot = self._walkable_slot(mask, lambda n: 0)  # paper: the first walkable heading
        if slot > 0:
            return self._answer(slot, "first walkable heading")
        any_angle = self.actions_taken == 0 or self.walks_budget
        slot = self._straightest(mask, 180.0 if any_angle else 157.5)
        if slot < 0:
            return self._answer(STOP, "no street ahead")
        return self._answer(slot, "straightest street")

    def _straightest(self, mask: Any, limit: float) -> int:
        env = self.env_info.env
        if env is None:
            return -1
        state = env.state
        targets_of, headings_of = env.city.graph.adjacency
        best, best_off = -1, 180.0
        for slot in range(1, len(mask)):
            if not mask[slot]:
                continue
            target = _slot_target(env, state, slot)
            if target is None or target not in targets_of[state.node]:
                continue
            heading = headings_of[state.node][targets_of[state.node].index(target)]
            off = angular_distance(heading, state.heading)
            if off <= limit and (best < 0 or off < best_off):
                best, best_off = slot, off
        return best


def _slot_target(env: Any, state: Any, slot: int) -> int | None:
    scheme = env.scheme
    if scheme.name == "headings":
        targets = env.city.graph.adjacency[0][state.node]
        return targets[slot - 1] if slot - 1 < len(targets) else None
    cands = scheme.candidates(state)
    return cands[slot - 1] if slot - 1 < len(cands) else None


START_RULES = ("velma", "turn")
"""Values of the random agent's ``start`` option."""


class RandomAgent(_CountingAgent):
    """A seeded random walker (seeded per episode from ``(seed, episode id)``).

    ``turns`` (VELMA's random baseline, ``run_baselines.py``): at an intersection just
    reached (or the start, if it is one) ``forward``, ``left`` or ``right`` with equal
    chance, a rotation being followed by ``forward``; elsewhere ``forward``. At a dead end
    VELMA's datasets ``stop`` (its ``validate_action``); other task sets ``turn_around``.
    The first action depends on ``start``:

    - ``"velma"`` (default): as VELMA per dataset. map2seq: ``forward`` (VELMA's map2seq
      agents always begin with it). Touchdown: the rule above. VELMA's Touchdown baseline
      has a branch for a random ``turn_around`` at the start, but it tests
      ``pano_length == 0`` where ``pano_length`` starts at 1, so it never turns around.
      Other task sets: ``forward`` or ``turn_around`` with equal chance (flaneur's rule).
    - ``"turn"``: ``forward`` or ``turn_around`` with equal chance on every task set (what
      VELMA's unreachable branch describes).

    Other schemes: a uniformly random valid move. Stops as :class:`ForwardAgent` does
    (under ``--protocol paper`` on CitySeeker's questions: never, as CitySeeker's
    ``random`` model, which draws one of the walkable headings at every step; so does this
    agent on a city with walkable headings).

    Parameters
    ----------
    seed
        Base seed; the run seed from ``env_info.seed`` is used when this is ``None``.
    start
        ``"velma"`` or ``"turn"``, see above.
    """

    name: ClassVar[str] = "random"

    @dataclass(frozen=True)
    class Options:
        """Options of the random agent (see its parameters)."""

        seed: int | None = None
        start: Literal["velma", "turn"] = "velma"

    def __init__(self, seed: int | None = None, start: str = "velma") -> None:
        if start not in START_RULES:
            raise ValueError(
                f"random agent: start must be one of {', '.join(START_RULES)}, got {start!r}"
            )
        self.seed = seed
        self.start = start

    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        super().reset(episode, env_info)
        base = self.seed if self.seed is not None else int(env_info.seed)
        self.rng = np.random.default_rng(episode_seed(base, episode.id))

    def _pick(self, options: list[int]) -> int:
        return options[int(self.rng.integers(len(options)))]

    async def act(self, observation: Mapping[str, Any]) -> Action:
        if self.released is not None:
            return self._released_action(observation)
        node = int(observation["node"])
        arrived = node != self._last_node  # a new node (or the start): may decide here
        self._see(observation)
        if self._done():
            return self._answer(STOP, "reached the average reference length")
        mask = observation["action_mask"]
        first = self.actions_taken == 0
        if self.env_info.scheme != "turns":
            slot = self._walkable_slot(mask, lambda n: int(self.rng.integers(n)))
            if slot > 0:  # paper: one of the walkable headings, as CitySeeker's random
                return self._answer(slot, "random walkable heading")
            moves = [s for s in range(1, len(mask)) if mask[s]]
            if not moves:
                return self._answer(STOP, "nowhere to go")
            return self._answer(self._pick(moves), "random move")
        velma = self.dataset is not None
        if self._velma_dead_end(node):
            options = []
        elif first and (self.start == "turn" or (self.start == "velma" and not velma)):
            options = [a for a in (FORWARD, TURN_AROUND) if mask[a]]
        elif first and self.dataset == "map2seq":
            options = [FORWARD] if mask[FORWARD] else []
        elif mask[LEFT] and (arrived if velma else self._last_slot not in (LEFT, RIGHT)):
            options = [a for a in (FORWARD, LEFT, RIGHT) if mask[a]]
        else:
            options = [FORWARD] if mask[FORWARD] else []
            if not options and not velma:
                options = [TURN_AROUND] if mask[TURN_AROUND] else []  # leave a dead end
        if not options:
            return self._answer(STOP, "dead end")
        return self._answer(self._pick(options), "random")


class OracleAgent(Agent):
    """The teacher as an agent: the oracle action toward the goal in every scheme."""

    name: ClassVar[str] = "oracle"

    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        super().reset(episode, env_info)
        if env_info.privileged is None:
            raise FlaneurError("the oracle agent needs privileged access to the environment")
        self.env = env_info.privileged.env
        self.teacher = self.env.teacher()

    async def act(self, observation: Mapping[str, Any]) -> Action:
        slot = self.teacher.act(self.env.state)
        name = self.env.scheme.labels(self.env.state)[slot]
        return Action(slot, name, step_record(parsed_action=name, thoughts="teacher"))


__all__ = [
    "ForwardAgent",
    "OracleAgent",
    "RandomAgent",
    "cityseeker_episode",
    "episode_seed",
    "velma_dataset",
]

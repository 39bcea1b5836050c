"""Baseline agents: random, forward-only and the oracle (the teacher).

The forward and random baselines stop once they have stood on as many nodes as the task
set's average reference path (``env_info["avg_reference_length"]``, as VELMA's baselines
stop after 40 panoramas on map2seq), otherwise they run until the step limit. The forward
and oracle agents read the environment through ``env_info["env"]`` (privileged access to
the map, not to the goal for the forward agent).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from flaneur.agents.base import Action, Agent, step_record
from flaneur.env.schemes.base import STOP
from flaneur.env.schemes.turns import FORWARD, LEFT, RIGHT, TURN_ACTIONS, TURN_AROUND
from flaneur.env.state import angular_distance
from flaneur.tasks.episode import Episode


def episode_seed(seed: int, episode_id: str) -> list[int]:
    """Seed material for one episode: ``[seed, crc32(episode id)]`` (stable across runs)."""
    return [int(seed) & 0xFFFFFFFF, zlib.crc32(episode_id.encode("utf-8"))]


class _CountingAgent(Agent):
    """Counts the nodes stood on and knows when to stop (the average reference length)."""

    def reset(self, episode: Episode, env_info: Mapping[str, Any]) -> None:
        super().reset(episode, env_info)
        avg = env_info.get("avg_reference_length")
        self.stop_after = round(float(avg)) if avg else None
        self._last_node: int | None = None
        self.nodes_seen = 0
        self._last_slot = -1

    def _see(self, observation: Mapping[str, Any]) -> None:
        node = int(observation["node"])
        if node != self._last_node:
            self.nodes_seen += 1
            self._last_node = node

    def _done(self) -> bool:
        return self.stop_after is not None and self.nodes_seen >= self.stop_after

    def _answer(self, slot: int, why: str) -> Action:
        self._last_slot = slot
        scheme = self.env_info.get("scheme")
        name = TURN_ACTIONS[slot] if scheme == "turns" else str(slot)
        return Action(slot, name, step_record(parsed_action=name, thoughts=why))


class ForwardAgent(_CountingAgent):
    """Go forward until the average reference length (or the step limit).

    ``turns``: ``forward`` while it is possible, ``stop`` at a dead end (as VELMA). Other
    schemes: the street closest to the current heading unless it leads back (more than
    157.5 degrees off), else stop.
    """

    name: ClassVar[str] = "forward"

    async def act(self, observation: Mapping[str, Any]) -> Action:
        self._see(observation)
        if self._done():
            return self._answer(STOP, "reached the average reference length")
        mask = observation["action_mask"]
        if self.env_info["scheme"] == "turns":
            if mask[FORWARD]:
                return self._answer(FORWARD, "forward")
            return self._answer(STOP, "dead end")
        slot = self._straightest(mask)
        if slot < 0:
            return self._answer(STOP, "no street ahead")
        return self._answer(slot, "straightest street")

    def _straightest(self, mask: Any) -> int:
        env = self.env_info["env"]
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
            if off <= 157.5 and (best < 0 or off < best_off):
                best, best_off = slot, off
        return best


def _slot_target(env: Any, state: Any, slot: int) -> int | None:
    scheme = env.scheme
    if scheme.name == "headings":
        targets = env.city.graph.adjacency[0][state.node]
        return targets[slot - 1] if slot - 1 < len(targets) else None
    cands = scheme.candidates(state)
    return cands[slot - 1] if slot - 1 < len(cands) else None


class RandomAgent(_CountingAgent):
    """A seeded random walker (seeded per episode from ``(seed, episode id)``).

    ``turns`` (VELMA's random baseline): at the start ``forward`` or ``turn_around``; at an
    intersection ``forward``, ``left`` or ``right`` (a rotation is followed by ``forward``);
    elsewhere ``forward`` (``turn_around`` at a dead end). Other schemes: a uniformly random
    valid move. Stops at the average reference length.

    Parameters
    ----------
    seed
        Base seed; the run seed from ``env_info["seed"]`` is used when this is ``None``.
    """

    name: ClassVar[str] = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    def reset(self, episode: Episode, env_info: Mapping[str, Any]) -> None:
        super().reset(episode, env_info)
        base = self.seed if self.seed is not None else int(env_info.get("seed", 0))
        self.rng = np.random.default_rng(episode_seed(base, episode.id))
        self._started = False

    def _pick(self, options: list[int]) -> int:
        return options[int(self.rng.integers(len(options)))]

    async def act(self, observation: Mapping[str, Any]) -> Action:
        self._see(observation)
        if self._done():
            return self._answer(STOP, "reached the average reference length")
        mask = observation["action_mask"]
        first = not self._started
        self._started = True
        if self.env_info["scheme"] != "turns":
            moves = [s for s in range(1, len(mask)) if mask[s]]
            if not moves:
                return self._answer(STOP, "nowhere to go")
            return self._answer(self._pick(moves), "random move")
        if first:
            options = [a for a in (FORWARD, TURN_AROUND) if mask[a]]
        elif mask[LEFT] and self._last_slot not in (LEFT, RIGHT):
            options = [a for a in (FORWARD, LEFT, RIGHT) if mask[a]]
        else:
            options = [a for a in (FORWARD,) if mask[a]] or [a for a in (TURN_AROUND,) if mask[a]]
        if not options:
            return self._answer(STOP, "no move possible")
        return self._answer(self._pick(options), "random")


class OracleAgent(Agent):
    """The teacher as an agent: the oracle action toward the goal in every scheme."""

    name: ClassVar[str] = "oracle"

    def reset(self, episode: Episode, env_info: Mapping[str, Any]) -> None:
        super().reset(episode, env_info)
        self.env = env_info["env"]
        self.teacher = self.env.teacher()

    async def act(self, observation: Mapping[str, Any]) -> Action:
        slot = self.teacher.act(self.env.state)
        name = self.env.scheme.labels(self.env.state)[slot]
        return Action(slot, name, step_record(parsed_action=name, thoughts="teacher"))


__all__ = ["ForwardAgent", "OracleAgent", "RandomAgent", "episode_seed"]

"""``NavigationEnv``: a Gymnasium environment for navigating a city's street graph."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any, ClassVar, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from flaneur.env.episodes import EpisodeSet
from flaneur.env.online_map import OnlineMap
from flaneur.env.schemes import STOP, InvalidActionError, UnknownActionError, make_scheme
from flaneur.env.schemes.base import ActionScheme, MultiStepScheme
from flaneur.env.sensors import Sensor, make_sensors
from flaneur.env.spaces import observation_space
from flaneur.env.state import AgentState
from flaneur.env.teacher import Teacher
from flaneur.env.verbalizer import Verbalizer
from flaneur.errors import ArgumentError, DataError, FlaneurError
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

INVALID_ACTION_POLICIES = ("noop", "terminate", "remap")
TERMINATIONS = ("stopped", "step_limit", "invalid_action", "task_error")
"""Termination reasons recorded by the environment and the runners."""


class NavigationEnv(gym.Env):
    """Follow an instruction (or find a goal) on a city's street graph.

    Description
    -----------
    Each episode starts the agent on a node facing a heading, with an instruction. The agent
    acts in one of three action schemes (see ``docs/environment.md``): ``turns`` (VELMA's
    Touchdown rules), ``headings`` (CitySeeker / V-IRL) or ``nodes`` (MapGPT). Optional
    sensors that need no images (intersection, map landmarks, nearby places, online map)
    add readings to ``info["sensors"]`` and, with ``verbalize=True``, text to the
    observation.

    Action Space
    ------------
    ``Discrete(k)``: slot 0 is ``stop`` in every scheme; ``turns`` has forward, left, right,
    turn_around in slots 1-4; ``headings`` one slot per street of the node (ascending
    heading); ``nodes`` one slot per candidate node. ``observation["action_mask"]`` marks the
    valid slots; action names (``"forward"``, a node id, ...) are accepted too.

    Observation Space
    -----------------
    ``Dict`` with ``instruction`` (Text), ``node`` (Discrete, node index), ``heading`` (Box,
    degrees), ``action_mask`` (MultiBinary), ``step`` (Discrete) and, with ``verbalize``,
    ``text`` (Text: sensor readings and valid actions in words).

    Rewards
    -------
    1.0 when the agent stops on a goal node (for ordered goals: the last one, after the
    others in order), else 0.0.

    Episode End
    -----------
    Terminated on ``stop`` (reason ``stopped``) or, with ``invalid_action="terminate"``, on
    an invalid action (reason ``invalid_action``). Truncated when the number of steps
    reaches the step limit (reason ``step_limit``). Invalid actions under the default
    ``"noop"`` policy use a step and leave the state unchanged; ``"remap"`` applies VELMA's
    action remapping in the ``turns`` scheme (else it acts like ``"noop"``). Every invalid
    action is recorded in ``info["invalid_action"]`` and :attr:`invalid_actions`.

    Parameters
    ----------
    city
        The city.
    episodes
        Episodes to sample from (``reset(options={"episode": ...})`` picks one).
    scheme
        ``"turns"``, ``"headings"`` or ``"nodes"``.
    scheme_options
        Keyword options of the scheme (e.g. ``{"allow_jumps": True}`` for ``nodes``).
    sensors
        Sensor names or instances (``"intersection"``, ``"landmarks"``, ``"nearby"``,
        ``"online_map"``).
    verbalize
        Add the ``text`` observation.
    invalid_action
        ``"noop"``, ``"terminate"`` or ``"remap"``.
    max_steps
        Step limit for every episode (default: each episode's ``max_steps``).
    episode_order
        ``"random"`` (sampled with the env's seeded generator) or ``"sequential"``.
    render_mode
        ``None`` or ``"ansi"``.
    """

    # gymnasium types Env.metadata as an instance attribute; it is read from the class
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}  # type: ignore[misc]

    def __init__(
        self,
        city: City,
        episodes: Sequence[Episode] | Episode,
        *,
        scheme: str = "turns",
        scheme_options: dict[str, Any] | None = None,
        sensors: Sequence[str | Sensor] | str | None = None,
        verbalize: bool = False,
        invalid_action: str = "noop",
        max_steps: int | None = None,
        episode_order: str = "random",
        render_mode: str | None = None,
    ) -> None:
        if max_steps is not None and (
            isinstance(max_steps, bool) or not isinstance(max_steps, Integral) or max_steps < 1
        ):
            raise ArgumentError(f"max_steps must be None or a whole number >= 1, got {max_steps!r}")
        self.city = city
        self.episodes = [episodes] if isinstance(episodes, Episode) else list(episodes)
        self._episodes = EpisodeSet(self.episodes, city.graph, episode_order)
        if invalid_action not in INVALID_ACTION_POLICIES:
            raise FlaneurError(f"invalid_action must be one of {INVALID_ACTION_POLICIES}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise FlaneurError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        self.scheme: ActionScheme = make_scheme(scheme, city.graph, **(scheme_options or {}))
        self.invalid_action_policy = invalid_action
        self.max_steps = max_steps
        self.verbalize = verbalize
        self.online_map: OnlineMap = getattr(self.scheme, "map", None) or OnlineMap(city.graph)
        self._own_map = self.online_map is not getattr(self.scheme, "map", None)
        self.sensors = make_sensors(sensors)
        for sensor in self.sensors:
            sensor.bind(city, self.online_map)
        self.verbalizer = Verbalizer()
        step_cap = max_steps if max_steps is not None else max(e.max_steps for e in self.episodes)
        self.action_space = spaces.Discrete(self.scheme.n_actions)
        self.observation_space = observation_space(
            city,
            (e.instruction for e in self.episodes),
            n_actions=self.scheme.n_actions,
            max_steps=step_cap,
            with_text=verbalize,
        )
        self._step_cap = step_cap
        self._ids = city.graph.ids.tolist()
        self._heading_arrays: dict[float, np.ndarray] = {}
        self._mask_arrays: dict[tuple[bool, ...], np.ndarray] = {}
        self._done = True
        self._started = False
        self._mask_t: tuple[bool, ...] = ()
        self._fixed_labels: tuple[str, ...] = tuple(getattr(self.scheme, "labels_all", ()))
        self.episode: Episode | None = None

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode; ``options`` may name it (``episode``: Episode, id or index)."""
        self._done = True  # a reset that fails leaves no half-started episode to step in
        self._started = False
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0
        ):
            raise ArgumentError(f"reset: seed must be None or a whole number >= 0, got {seed!r}")
        super().reset(seed=seed)
        episode = self._episodes.pick(options, self.np_random)
        start, goals = self._episodes.resolve(episode)
        problem = episode.problem()  # a heading that is not finite, max_steps below 1
        if problem:
            raise DataError(f"episode {episode.id!r}: {problem}")
        self.episode = episode
        self._goals = goals
        self._goal_set = frozenset(goals)
        self._ordered = bool(episode.metadata.get("ordered", False)) and len(goals) > 1
        self._goal_progress = 0
        self._limit = self.max_steps if self.max_steps is not None else episode.max_steps
        if self._own_map:
            self.online_map.reset()
        self._state = state = self.scheme.start(start, episode.start_heading)
        self.online_map.visit(start)
        for sensor in self.sensors:
            sensor.reset()
        self._advance_goals(start)
        self.trajectory: list[tuple[int, float]] = [(state.node, state.heading)]
        self.action_log: list[str] = []
        self.invalid_actions: list[dict[str, Any]] = []
        self.termination: str | None = None
        self._done = False
        self._started = True
        info = {"episode_id": episode.id, "node_id": self._ids[start], "steps": 0}
        return self._observe(state, info), info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Take one action (a slot number or an action name)."""
        if self._done:
            if not self._started:
                raise FlaneurError(
                    "no episode is running (no reset() or the last one failed); "
                    "call reset() before step()"
                )
            raise FlaneurError("the episode is over; call reset() before step()")
        state = self._state
        scheme = self.scheme
        invalid = None
        slot = action if type(action) is int else self._coerce(action, state)
        mask = self._mask_t
        ok = 0 <= slot < len(mask) and mask[slot]
        if not ok and slot >= 0 and self.invalid_action_policy == "remap":
            remap = getattr(scheme, "remap", None)
            new_slot = remap(state, slot) if remap is not None and slot < len(mask) else slot
            if new_slot != slot and mask[new_slot]:
                invalid = self._record_invalid(action, state, "remapped", remapped_to=new_slot)
                slot, ok = new_slot, True
        terminated = False
        walked = False
        if ok:
            if slot == STOP:
                state = scheme.step(state, STOP)
                terminated = True
                self.termination = "stopped"
            elif scheme.multi_step:
                state = self._multi_step(state, slot)
                walked = True
            else:
                state = scheme.step(state, slot)
                if state.node != self.trajectory[-1][0]:
                    self._advance_goals(state.node)
            name = self._slot_name(slot, self._state)
        else:
            invalid = self._record_invalid(action, state, self._why(action, slot, state))
            name = "invalid"
            state = state._replace(steps=state.steps + 1)
            if self.invalid_action_policy == "terminate":
                terminated = True
                self.termination = "invalid_action"
        self._state = state
        if not walked:
            self.trajectory.append((state.node, state.heading))
        self.action_log.append(name)
        truncated = not terminated and state.steps >= self._limit
        if truncated:
            self.termination = "step_limit"
        self._done = terminated or truncated
        reward = 1.0 if terminated and self.termination == "stopped" and self.success else 0.0
        info: dict[str, Any] = {
            "episode_id": self._running.id,
            "node_id": self._ids[state.node],
            "steps": state.steps,
            "action": name,
        }
        if invalid is not None:
            info["invalid_action"] = invalid
        if self._done:
            info["termination"] = self.termination
        return self._observe(state, info), reward, terminated, truncated, info

    # ------------------------------------------------------------------ helpers
    def _coerce(self, action: Any, state: AgentState) -> int:
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            value = int(action)
            return value if 0 <= value < self.scheme.n_actions else -1
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            return self._coerce(action.reshape(()).item(), state)
        if isinstance(action, str):
            try:
                return self.scheme.parse(action, state)
            except (UnknownActionError, InvalidActionError):
                return -1
        return -1

    def _why(self, action: Any, slot: int, state: AgentState) -> str:
        if slot < 0:
            return f"unknown action {action!r} for the {self.scheme.name!r} scheme"
        scheme: Any = self.scheme
        try:
            if scheme.multi_step:
                scheme.plan(state, slot)
            else:
                scheme.step(state, slot)
        except (InvalidActionError, UnknownActionError) as err:
            return str(err)
        return "action not allowed here"

    def _record_invalid(
        self, action: Any, state: AgentState, reason: str, **extra: Any
    ) -> dict[str, Any]:
        record = {
            "step": state.steps,
            "action": action if isinstance(action, (int, str)) else repr(action),
            "node_id": self._ids[state.node],
            "reason": reason,
            "policy": self.invalid_action_policy,
            **extra,
        }
        self.invalid_actions.append(record)
        return record

    def _slot_name(self, slot: int, state: AgentState) -> str:
        if self._fixed_labels:
            return self._fixed_labels[slot]
        label = self.scheme.labels(state)[slot]
        if self.scheme.name == "headings" and slot != STOP:
            return f"{slot}:{label}"
        return label

    def _multi_step(self, state: AgentState, slot: int) -> AgentState:
        scheme = cast(MultiStepScheme, self.scheme)  # a scheme with multi_step plans routes
        route = scheme.plan(state, slot)
        route = route[: max(1, self._limit - state.steps)]
        targets_of, headings_of = self.city.graph.adjacency
        prev = state.node
        for node in route:
            heading = headings_of[prev][targets_of[prev].index(node)]
            self.trajectory.append((node, heading))
            self._advance_goals(node)
            prev = node
        return scheme.follow(state, route)

    def _advance_goals(self, node: int) -> None:
        if self._ordered:
            if self._goal_progress < len(self._goals) and node == self._goals[self._goal_progress]:
                self._goal_progress += 1
        elif node in self._goal_set:
            self._goal_progress = 1

    @property
    def success(self) -> bool:
        """Whether the agent is on a goal node (ordered goals: the last, all in order)."""
        node = self._state.node
        if self._ordered:
            return self._goal_progress == len(self._goals) and node == self._goals[-1]
        return node in self._goal_set

    def _observe(self, state: AgentState, info: dict[str, Any]) -> dict[str, Any]:
        # cached templates, copied so that no two observations share an array
        heading = self._heading_arrays.get(state.heading)
        if heading is None:
            heading = np.array([state.heading], dtype=np.float32)
            self._heading_arrays[state.heading] = heading
        self._mask_t = mask_t = self.scheme.valid(state)
        mask = self._mask_arrays.get(mask_t)
        if mask is None:
            mask = np.array(mask_t, dtype=np.int8)
            self._mask_arrays[mask_t] = mask
        obs = {
            "instruction": self._running.instruction,
            "node": state.node,
            "heading": heading.copy(),
            "action_mask": mask.copy(),
            "step": min(state.steps, self._step_cap),
        }
        if self.sensors:
            readings = {s.name: s.observe(state) for s in self.sensors}
            info["sensors"] = readings
        else:
            readings = {}
        if self.verbalize:
            actions = self.scheme.actions(state)
            info["actions"] = actions
            obs["text"] = self.verbalizer(readings, scheme=self.scheme.name, actions=actions)
        return obs

    # ------------------------------------------------------------------ extras
    @property
    def state(self) -> AgentState:
        """The agent's current state."""
        return self._state

    @property
    def _running(self) -> Episode:
        """The episode that a successful :meth:`reset` started."""
        assert self.episode is not None, "reset() sets it before any step or observation"
        return self.episode

    @property
    def step_limit(self) -> int:
        """Step limit of the current episode."""
        return self._limit

    def path_ids(self) -> list[str]:
        """Node ids visited so far, without repeats from rotations and stops."""
        path: list[str] = []
        for node, _ in self.trajectory:
            node_id = self._ids[node]
            if not path or path[-1] != node_id:
                path.append(node_id)
        return path

    def teacher(self) -> Teacher:
        """A fresh :class:`Teacher` for the current episode and scheme."""
        if self.episode is None:
            raise FlaneurError("call reset() before asking for a teacher")
        return Teacher.for_episode(self.scheme, self.city.graph, self.episode)

    def render(self) -> str | None:
        """``"ansi"``: one line with the episode, step, node, heading and valid actions."""
        if self.render_mode != "ansi" or self.episode is None:
            return None
        s = self._state
        acts = ", ".join(label for _, label in self.scheme.actions(s))
        return (
            f"[{self.episode.id}] step {s.steps}/{self._limit} node {self._ids[s.node]} "
            f"heading {s.heading:.0f} | actions: {acts}"
        )


__all__ = ["INVALID_ACTION_POLICIES", "TERMINATIONS", "NavigationEnv"]

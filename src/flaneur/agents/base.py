"""The agent interface: ``reset(episode, env_info)`` and ``async act(observation)``.

Every agent (baselines here, language-model agents later) receives, at the start of an
episode, the episode and an ``env_info`` mapping (see :func:`env_info_for`), then one
observation per step: the Gymnasium observation dict of
:class:`~flaneur.env.navigation_env.NavigationEnv` plus ``"info"`` (the step's info dict:
sensor readings, valid actions, ...). It answers with an :class:`Action`: the action slot
for the environment and a :data:`StepRecord` describing how it was chosen.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from flaneur.tasks.episode import Episode


class StepRecord(TypedDict, total=False):
    """What an agent reports about one decision (all fields optional).

    Attributes
    ----------
    prompt_id
        Id of the prompt (template + hash) sent to a model.
    raw_output
        The model's raw text.
    parsed_action
        The action as parsed from the output (name, slot or node id).
    thoughts
        Reasoning the agent gave.
    confidence
        Self-reported or computed confidence in [0, 1].
    parse_failures
        Number of outputs that could not be parsed before this action.
    """

    prompt_id: str | None
    raw_output: str | None
    parsed_action: str | int | None
    thoughts: str | None
    confidence: float | None
    parse_failures: int


def step_record(**fields: Any) -> StepRecord:
    """A :data:`StepRecord` with every field present (``None`` / 0 where not given)."""
    record: StepRecord = {
        "prompt_id": None,
        "raw_output": None,
        "parsed_action": None,
        "thoughts": None,
        "confidence": None,
        "parse_failures": 0,
    }
    record.update(fields)  # type: ignore[typeddict-item]
    return record


@dataclass(slots=True)
class Action:
    """An agent's decision.

    Attributes
    ----------
    slot
        Action slot for :meth:`NavigationEnv.step` (0 = stop); ``-1`` when the agent could not
        produce an action (the environment records it as invalid).
    name
        Human-readable action (``"forward"``, ``"2:left"``, a node id); optional.
    record
        The :data:`StepRecord` of the decision.
    """

    slot: int
    name: str = ""
    record: StepRecord = field(default_factory=step_record)


class Agent(abc.ABC):
    """Base class of navigation agents.

    Subclasses set :attr:`name` and implement :meth:`act`; :meth:`reset` stores the episode
    and ``env_info`` (override it to prepare per-episode state, calling ``super()``).
    """

    name: ClassVar[str] = "agent"

    def reset(self, episode: Episode, env_info: Mapping[str, Any]) -> None:
        """Prepare for ``episode``; ``env_info`` describes the environment (see
        :func:`env_info_for`)."""
        self.episode = episode
        self.env_info = env_info

    @abc.abstractmethod
    async def act(self, observation: Mapping[str, Any]) -> Action:
        """Choose the next action from the observation (Gymnasium dict plus ``"info"``)."""


def env_info_for(env: Any, *, seed: int = 0, task_id: str = "", **extra: Any) -> dict[str, Any]:
    """The ``env_info`` mapping given to :meth:`Agent.reset`.

    Keys: ``scheme`` (name), ``n_actions``, ``action_names`` (slot labels of the ``turns``
    scheme; empty for schemes whose labels depend on the state), ``max_steps`` (the episode's
    limit), ``seed``, ``task_id``, ``env`` (the environment itself, for privileged agents
    such as the oracle) and any ``extra`` keys (e.g. ``avg_reference_length``).
    """
    scheme = env.scheme
    names = tuple(getattr(scheme, "labels_all", ()))
    return {
        "scheme": scheme.name,
        "n_actions": scheme.n_actions,
        "action_names": names,
        "max_steps": env.step_limit,
        "seed": seed,
        "task_id": task_id,
        "env": env,
        **extra,
    }


__all__ = ["Action", "Agent", "StepRecord", "env_info_for", "step_record"]

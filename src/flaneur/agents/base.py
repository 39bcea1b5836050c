"""The agent interface: declarations, ``reset(episode, env_info)`` and ``async act(observation)``.

An agent class declares what it needs and accepts (class attributes, checked by the runner
before the first episode): the action ``schemes`` it acts in, whether it ``needs_model`` or
``needs_views``, and its ``Options``, a frozen dataclass whose typed fields are the options a
run may set (``-o random.seed=3``, see :mod:`flaneur.options`).

At the start of an episode an agent receives the episode and an :class:`EnvInfo` (typed,
frozen; see :mod:`flaneur.agents.envinfo`), then one observation per step: the Gymnasium
observation dict of :class:`~flaneur.env.navigation_env.NavigationEnv` plus ``"info"`` (the
step's info dict: sensor readings, valid actions, ...). It answers with an :class:`Action`:
the action slot for the environment and a :data:`StepRecord` describing how it was chosen.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from flaneur.agents.envinfo import EnvInfo, EnvView, Privileged, env_info_for
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


@dataclass(frozen=True)
class NoOptions:
    """The options of an agent that takes none."""


class Agent(abc.ABC):
    """Base class of navigation agents.

    Subclasses set :attr:`name`, declare what they need (:attr:`schemes`,
    :attr:`needs_model`, :attr:`needs_views`) and accept (:attr:`Options`), and implement
    :meth:`act`; :meth:`reset` stores the episode and ``env_info`` (override it to prepare
    per-episode state, calling ``super()``).
    """

    interface_base: ClassVar[bool] = True
    """Marks the interface class: option schemas look only at the classes below it."""
    name: ClassVar[str] = "agent"
    schemes: ClassVar[tuple[str, ...]] = ()
    """Action schemes the agent acts in; empty: every scheme."""
    needs_model: ClassVar[bool] = False
    """The agent asks a language model (``--llm``)."""
    needs_views: ClassVar[bool] = False
    """The agent cannot act without street-level views (``--views``)."""
    Options: ClassVar[type] = NoOptions
    """Frozen dataclass of the options a run may set; each field is a keyword parameter of
    the constructor with the same default (constructor-only parameters such as Python
    objects are not options)."""

    @classmethod
    def check_setup(cls, options: dict[str, Any], setup: Any) -> None:
        """Raise :class:`~flaneur.errors.FlaneurError` (one line) when the agent cannot run
        with ``options`` in ``setup`` (:class:`~flaneur.agents.options.RunSetup`: scheme,
        llm, views, landmarks) for a reason its declared needs do not cover, e.g. a mode
        that needs views. Runs before the first episode; by default nothing more."""
        return None

    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        """Prepare for ``episode``; ``env_info`` describes the environment (:class:`EnvInfo`)."""
        self.episode = episode
        self.env_info = env_info

    @abc.abstractmethod
    async def act(self, observation: Mapping[str, Any]) -> Action:
        """Choose the next action from the observation (Gymnasium dict plus ``"info"``)."""


__all__ = [
    "Action",
    "Agent",
    "EnvInfo",
    "EnvView",
    "NoOptions",
    "Privileged",
    "StepRecord",
    "env_info_for",
    "step_record",
]

"""The agent interface: declarations, ``reset(episode, env_info)`` and ``async act(observation)``.

An agent class declares what it needs and accepts (class attributes, checked by the runner
before the first episode): the action ``schemes`` it acts in, whether it ``needs_model`` or
``needs_views``, and its ``Options``, a frozen dataclass whose typed fields are the options a
run may set (``--option random.seed=3``, see :mod:`flaneur.options`).

At the start of an episode an agent receives the episode and an :class:`EnvInfo` (typed,
frozen; see :mod:`flaneur.agents.envinfo`), then one observation per step: the Gymnasium
observation dict of :class:`~flaneur.env.navigation_env.NavigationEnv` plus ``"info"`` (the
step's info dict: sensor readings, valid actions, ...). It answers with an :class:`Action`:
the action slot for the environment and a :data:`StepRecord` describing how it was chosen.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict, cast

from flaneur.agents.envinfo import EnvInfo, EnvView, Privileged, env_info_for
from flaneur.options import NoOptions
from flaneur.tasks.episode import Episode
from flaneur.tasks.items import TaskItem

if TYPE_CHECKING:
    from flaneur.world.city import City


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
    moves
        What the agent did before this action in its own action words, where those are
        finer than the scheme's (V-IRL's tourist turns in place with ``turn_direction``).
    """

    prompt_id: str | None
    raw_output: str | None
    parsed_action: str | int | None
    thoughts: str | None
    confidence: float | None
    parse_failures: int
    moves: list[str]


def step_record(**fields: Any) -> StepRecord:
    """A :data:`StepRecord` with every field present (``None`` / 0 where not given)."""
    record = {
        "prompt_id": None,
        "raw_output": None,
        "parsed_action": None,
        "thoughts": None,
        "confidence": None,
        "parse_failures": 0,
        **fields,
    }
    # agents add fields of their own: a TypedDict open to extra keys (PEP 728) is not
    # expressible in Python 3.11
    return cast(StepRecord, record)


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

    def ablations(self) -> tuple[str, ...]:
        """The ablations the last episode ran under for want of something the run lacks
        (VELMA without imagery: ``("no image",)``; an agent that perceives only named
        places, in a city without any: ``("nothing to see",)``); its row lists them
        (``ablations``), and the summary lists those of each agent and task set, with
        ``"perception": "none"`` when every row ran blind (:mod:`flaneur.agents.ablations`).
        Default: none."""
        return ()


@dataclass(frozen=True)
class SolveInfo:
    """What a planner (and any solver of a task kind other than navigation) gets besides
    the item: the city, the task set and the run's resources.

    Attributes
    ----------
    task_id
        The task set's id.
    city
        Its city.
    items
        The whole task set.
    seed
        The run's seed.
    model
        The run's :class:`~flaneur.models.ChatModel` (``--llm``; cached, usage counted), or
        ``None``.
    views
        The run's view provider for the city (``--views``), or ``None``.
    landmarks
        The run's ``--landmarks`` value, or ``None``.
    state
        The task kind's shared state of the task set (a view renderer, ...).
    protocol
        The run's protocol: ``flaneur``, or ``paper`` for the seed paper's own settings
        (:mod:`flaneur.evaluate.protocol`).
    """

    task_id: str
    city: City
    items: Sequence[TaskItem]
    seed: int
    model: Any = None
    views: Any = None
    landmarks: str | None = None
    state: Any = None
    protocol: str = "flaneur"


class Planner(abc.ABC):
    """Base class of V-IRL's planner agents (Aria, Vivek, Peng, Diego, Local, RX-399, Imani):
    given one scenario (a persona and what it asks for) they produce a plan, a
    recommendation, a count, in one go rather than step by step.

    Subclasses set :attr:`name`, the task kinds they :attr:`solves`, their declared needs and
    :attr:`Options` (as :class:`Agent` does), and implement :meth:`solve`. The result is a
    JSON-ready dict the task's scorer reads; model exchanges go under ``"records"`` (each
    with its ``prompt_id``) and are moved into the row.
    """

    interface_base: ClassVar[bool] = True
    """Marks the interface class: option schemas look only at the classes below it."""
    name: ClassVar[str] = "planner"
    solves: ClassVar[tuple[str, ...]] = ()
    """Task kinds whose scenarios it plans (``virl-aria``, ...)."""
    schemes: ClassVar[tuple[str, ...]] = ()
    needs_model: ClassVar[bool] = False
    needs_views: ClassVar[bool] = False
    Options: ClassVar[type] = NoOptions

    @classmethod
    def check_setup(cls, options: dict[str, Any], setup: Any) -> None:
        """As :meth:`Agent.check_setup`: needs that depend on the options."""
        return None

    @abc.abstractmethod
    async def solve(self, item: TaskItem, info: SolveInfo) -> dict[str, Any]:
        """The plan for one scenario (see the class docstring)."""


__all__ = [
    "Action",
    "Agent",
    "EnvInfo",
    "EnvView",
    "NoOptions",
    "Planner",
    "Privileged",
    "SolveInfo",
    "StepRecord",
    "env_info_for",
    "step_record",
]

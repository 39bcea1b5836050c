"""What every action scheme provides, and the errors for actions that cannot be taken.

An *action scheme* decides what an agent may do at a node and where each action leads. The
environment asks it for the initial state, the labels and validity of its action slots, and
the next state. Action slot 0 is always ``stop`` in every scheme.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from flaneur.env.state import AgentState
from flaneur.errors import FlaneurError

STOP = 0
"""Action slot of ``stop`` in every scheme."""


class InvalidActionError(FlaneurError):
    """An action the scheme knows but that cannot be taken in the current state.

    Parameters
    ----------
    action
        The action slot (or name) that was refused.
    reason
        Why it cannot be taken here (e.g. ``"left needs an intersection"``).
    """

    def __init__(self, action: Any, reason: str):
        self.action = action
        self.reason = reason
        super().__init__(f"action {action!r} is not possible here: {reason}")


class UnknownActionError(FlaneurError):
    """An action the scheme does not know (bad slot number or unparseable name)."""

    def __init__(self, action: Any, scheme: str, known: tuple[str, ...] = ()):
        self.action = action
        self.scheme = scheme
        hint = f"; expected one of {', '.join(known)}" if known else ""
        super().__init__(f"unknown action {action!r} for the {scheme!r} scheme{hint}")


@runtime_checkable
class ActionScheme(Protocol):
    """The interface of an action scheme (turns, headings, nodes).

    Attributes
    ----------
    name
        Scheme name used on the command line and in records.
    n_actions
        Number of action slots (the size of the ``Discrete`` action space); slot 0 = stop.
    multi_step
        Whether one action may traverse several edges (then :attr:`last_route` lists the
        nodes traversed by the last :meth:`step`).
    """

    name: ClassVar[str]
    n_actions: int
    multi_step: ClassVar[bool]

    def start(self, node: int, heading: float) -> AgentState:
        """The state at the start of an episode (schemes with memory reset it here)."""
        ...

    def labels(self, state: AgentState) -> tuple[str, ...]:
        """A label for every slot (``""`` for slots unused in this state)."""
        ...

    def valid(self, state: AgentState) -> tuple[bool, ...]:
        """Which slots can be taken in ``state`` (the action mask)."""
        ...

    def actions(self, state: AgentState) -> tuple[tuple[int, str], ...]:
        """The valid actions as ``(slot, label)`` pairs, stop first."""
        ...

    def step(self, state: AgentState, action: int) -> AgentState:
        """The state after ``action`` (not for stop); raises :class:`InvalidActionError`."""
        ...

    def parse(self, text: str, state: AgentState) -> int:
        """The slot named by ``text``; raises :class:`UnknownActionError`."""
        ...


class MultiStepScheme(ActionScheme, Protocol):
    """A scheme whose one action may traverse several edges (:attr:`multi_step` true)."""

    def plan(self, state: AgentState, action: int) -> list[int]:
        """The nodes that ``action`` walks through (excluding the current node)."""
        ...

    def follow(self, state: AgentState, route: list[int]) -> AgentState:
        """The state after walking ``route`` (a prefix of a :meth:`plan`)."""
        ...


class TargetSlots(Protocol):
    """A scheme that names the slot leading to a given node (headings, nodes)."""

    def slot_of(self, state: AgentState, target: int) -> int:
        """Slot that moves to node ``target`` (-1 if none)."""
        ...


def valid_pairs(labels: tuple[str, ...], mask: tuple[bool, ...]) -> tuple[tuple[int, str], ...]:
    """``(slot, label)`` for the slots that ``mask`` allows."""
    return tuple((i, label) for i, (label, ok) in enumerate(zip(labels, mask, strict=True)) if ok)


def normalize_name(text: str) -> str:
    """Lower-case, trim, and turn spaces and dashes into underscores (``"Turn around"``)."""
    return "_".join(text.strip().lower().replace("-", " ").split())


__all__ = [
    "STOP",
    "ActionScheme",
    "InvalidActionError",
    "MultiStepScheme",
    "TargetSlots",
    "UnknownActionError",
    "normalize_name",
    "valid_pairs",
]

"""Per-episode state of the CitySeeker agent, shared with its strategies."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from flaneur.agents.cityseeker.memory import GraphMemory
from flaneur.tasks.episode import Episode
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph


@dataclass(slots=True)
class StepMemo:
    """One step the agent took (decided by the model, or a backtracking move).

    Attributes
    ----------
    step
        Step index (0-based).
    node, heading
        Where the agent stood and faced.
    decision
        ``"B:LEFT"``, ``"stop"`` or ``"backtrack"``.
    target
        Node moved to (``None`` for a stop).
    confidence
        The model's confidence in the decision (``None`` if unknown).
    thought
        The model's reasoning.
    backtrack
        Whether the move was part of a backtracking walk.
    """

    step: int
    node: int
    heading: float
    decision: str
    target: int | None
    confidence: float | None
    thought: str = ""
    backtrack: bool = False


@dataclass(slots=True)
class BacktrackPlan:
    """A strategy's request to walk back to ``target`` (a node index).

    Attributes
    ----------
    target
        Where the walk ends.
    reason
        The strategy event that says why.
    code
        The strategy (``"b1"``, ...).
    via
        The nodes to walk through in order, ending at ``target`` (B1 under ``paper``: the
        agent's own trail, reversed); empty: along a shortest path.
    """

    target: int
    reason: str
    code: str
    via: tuple[int, ...] = ()


@dataclass
class EpisodeRun:
    """Everything the agent and its strategies know about the running episode.

    Attributes
    ----------
    city, episode, task, round
        The task and which round of it this is.
    privileged
        The :class:`~flaneur.agents.envinfo.Privileged` access of the episode (only B2's
        oracle distance and B3's optional oracle hint read the goal through it; every use
        marks the row privileged), or ``None``.
    memory
        The graph memory of this (task, episode), or ``None`` when no strategy needs it.
    node, heading, step
        The current position, heading and step.
    start
        Start node.
    history
        Every step taken so far.
    queue
        Nodes still to walk through while backtracking.
    returning
        The plan being executed (set when a backtrack starts, cleared on arrival).
    backtracks
        Number of backtracks started in this episode.
    events
        Strategy events of the current step (go into the step record).
    record_extra
        Extra keys for the current step record (e.g. a cognition prompt).
    cache
        Per-strategy scratch space (e.g. the cognitive map built at the first step).
    paper
        Whether the run follows ``--protocol paper`` (the strategies then do what CitySeeker
        does where it differs from flaneur; ``docs/fidelity.md``).
    rounds
        CitySeeker's retrieval cycle (``retrieve_epoch``, 3): under ``paper``, R1 and R2
        retrieve only in the last round of each cycle.
    """

    city: City
    episode: Episode
    task: str
    round: int
    privileged: Any
    memory: GraphMemory | None
    node: int
    heading: float
    step: int = 0
    start: int = -1
    history: list[StepMemo] = field(default_factory=list)
    queue: deque[int] = field(default_factory=deque)
    returning: BacktrackPlan | None = None
    backtracks: int = 0
    events: list[str] = field(default_factory=list)
    record_extra: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)
    paper: bool = False
    rounds: int = 3

    @property
    def graph(self) -> StreetGraph:
        """The city's street graph."""
        return self.city.graph

    def node_id(self, node: int | None = None) -> str:
        """String id of ``node`` (default: the current node)."""
        return str(self.city.graph.ids[self.node if node is None else node])

    @property
    def xy(self) -> np.ndarray:
        """Metric position of the current node."""
        return self.city.graph.xy[self.node]

    def decided(self) -> list[StepMemo]:
        """Steps decided by the model (not backtracking moves, not stops)."""
        return [m for m in self.history if not m.backtrack and m.target is not None]


__all__ = ["BacktrackPlan", "EpisodeRun", "StepMemo"]

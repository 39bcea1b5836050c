"""CitySeeker's BCR strategies: Backtracking (B1-B3), Cognition (C1, C2), Retrieval (R1-R3).

Each strategy is a switch (``strategies="b1,r3"``) and they combine freely. A strategy hooks
into the agent's step loop at five points (all optional):

* :meth:`Strategy.prepare` - once, before the first step (e.g. build a cognitive map);
* :meth:`Strategy.observe` - on arriving at a node after a decided move;
* :meth:`Strategy.check` - may ask to backtrack (a :class:`BacktrackPlan`);
* :meth:`Strategy.on_return` - when a backtracking walk has arrived;
* :meth:`Strategy.context` / :meth:`Strategy.hint` - text for the prompts.

========  ==========================================================================
``b1``    confidence backtracking: mean confidence of the last ``k`` decisions below
          ``theta`` -> walk back to the last trusted node (``paper``: the last ``k``
          nodes of CitySeeker's trajectory)
``b2``    step-reward backtracking: graph distance to the goal rising ``k`` moves in a
          row -> walk back to where it started rising (uses the oracle distance, like
          CitySeeker's step reward; ``paper``: streets to the goal not falling over the
          last ``k`` moves -> back as B1 goes back under ``paper``)
``b3``    B1 plus a hint toward the best option once back
``c1``    topology cognitive graph of earlier rounds' trajectories
``c2``    relative position map of earlier rounds' trajectories
``r1``    topology retrieval: memory of the h-hop neighbourhood
``r2``    spatial retrieval: memory within ``radius_m`` metres
``r3``    the last ``n`` steps of this episode
========  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from flaneur.agents.cityseeker.options import Option
from flaneur.agents.cityseeker.state import BacktrackPlan, EpisodeRun
from flaneur.errors import FlaneurError

STRATEGY_CODES = ("b1", "b2", "b3", "c1", "c2", "r1", "r2", "r3")
"""Known strategy switches."""

Ask = Callable[[str, str], Awaitable[tuple[str, str]]]
"""``await ask(kind, summary) -> (reply text, prompt id)``: the agent's model asked to turn a
deterministic trajectory summary into a cognitive map of the given kind (C1, C2)."""


class Strategy:
    """Base class of the BCR strategies (every hook does nothing by default)."""

    code: ClassVar[str] = ""
    needs_memory: ClassVar[bool] = False

    async def prepare(self, run: EpisodeRun, ask: Ask | None) -> None:
        """Called once before the first step."""

    def observe(self, run: EpisodeRun) -> None:
        """Called on every step that is not part of a backtracking walk."""

    def check(self, run: EpisodeRun) -> BacktrackPlan | None:
        """A backtracking plan, or ``None``."""
        return None

    def on_return(self, run: EpisodeRun, plan: BacktrackPlan) -> None:
        """Called when a backtracking walk has reached its target."""

    def on_plan(self, run: EpisodeRun, plan: BacktrackPlan) -> None:
        """Called when any strategy starts a backtracking walk (reset windows)."""

    def after_decision(self, run: EpisodeRun) -> None:
        """Called after the model decided a move (``run.history[-1]``)."""

    def context(self, run: EpisodeRun) -> str:
        """Text for the stop and choice prompts ("" for none)."""
        return ""

    def hint(self, run: EpisodeRun, options: Sequence[Option]) -> str:
        """Text for the choice prompt only ("" for none)."""
        return ""


def parse_strategies(spec: str | Sequence[str] | None) -> tuple[str, ...]:
    """Normalise ``"b1,r3"`` / ``["B1", "r3"]`` to known codes (order kept, no repeats).

    Raises
    ------
    FlaneurError
        On an unknown code.
    """
    if spec is None:
        return ()
    items = spec.split(",") if isinstance(spec, str) else [str(s) for s in spec]
    out: list[str] = []
    for item in items:
        code = item.strip().lower()
        if not code or code in ("none", "-"):
            continue
        if code not in STRATEGY_CODES:
            known = ", ".join(STRATEGY_CODES)
            raise FlaneurError(f"unknown CitySeeker strategy {item.strip()!r}; choose from {known}")
        if code not in out:
            out.append(code)
    return tuple(out)


def make_strategies(codes: Sequence[str], **params: Any) -> list[Strategy]:
    """Strategy objects for ``codes`` (``b3`` replaces ``b1`` when both are given).

    Parameters
    ----------
    codes
        Normalised codes (see :func:`parse_strategies`).
    params
        ``k``, ``theta``, ``b2_k``, ``hops``, ``radius_m``, ``recent``, ``b3_oracle``,
        ``cognition_model``.
    """
    # the strategies import this package's base classes
    from flaneur.agents.cityseeker.strategies.backtrack import (
        ConfidenceBacktrack,
        HintedBacktrack,
        RewardBacktrack,
    )
    from flaneur.agents.cityseeker.strategies.cognition import PositionMap, TopologyMap
    from flaneur.agents.cityseeker.strategies.retrieval import (
        RecentHistory,
        SpatialRetrieval,
        TopologyRetrieval,
    )

    k = int(params.get("k", 3))
    theta = float(params.get("theta", 0.75))
    use_model = bool(params.get("cognition_model", False))
    factories: dict[str, Callable[[], Strategy]] = {
        "b1": lambda: ConfidenceBacktrack(k=k, theta=theta),
        "b3": lambda: HintedBacktrack(
            k=k, theta=theta, oracle=bool(params.get("b3_oracle", False))
        ),
        "b2": lambda: RewardBacktrack(k=int(params.get("b2_k", k))),
        "c1": lambda: TopologyMap(use_model=use_model),
        "c2": lambda: PositionMap(use_model=use_model),
        "r1": lambda: TopologyRetrieval(hops=int(params.get("hops", 2))),
        "r2": lambda: SpatialRetrieval(radius_m=float(params.get("radius_m", 50.0))),
        "r3": lambda: RecentHistory(n=int(params.get("recent", 3))),
    }
    wanted = [c for c in codes if not (c == "b1" and "b3" in codes)]
    return [factories[c]() for c in wanted]


__all__ = [
    "STRATEGY_CODES",
    "Ask",
    "BacktrackPlan",
    "Strategy",
    "make_strategies",
    "parse_strategies",
]

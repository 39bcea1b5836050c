"""Retrieval strategies: R1 (topology), R2 (spatial) and R3 (recent history).

R1 and R2 query the persistent graph memory (:mod:`flaneur.agents.cityseeker.memory`) of
this (task, episode): everything earlier rounds wrote plus the steps of this round so far.

* **R1** takes the nodes within ``hops`` streets of the current node (breadth-first search
  on the city graph) and asks the store for their visits;
* **R2** asks the store for every visit within ``radius_m`` metres (default 50);
* **R3** lists the last ``n`` steps (default 3) of this episode from the agent's own history.

Each remembered node becomes one line: where it is relative to the agent, how often it was
visited and in which rounds, which way the agent went from it, the mean confidence and the
rounds' outcomes.

Under ``--protocol paper`` (``run.paper``) they do what CitySeeker's released ``map.py`` and
``agent.py`` do: the retrieved text goes into the choice prompt only (CitySeeker's stop
prompt carries none); R1 and R2 retrieve only in the last round of each cycle of
``run.rounds`` (3) rounds, counting rounds from 1 (``round_num % retrieve_epoch == 0``), from
the memory of that cycle (CitySeeker clears it after each cycle); R3 starts once ``n`` steps
were taken (``current_step > history_steps``). R1's default neighbourhood is then 1 street
(``retrieve_distance=1``), set by the agent.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from typing import ClassVar

from flaneur.agents.cityseeker.memory import Visit
from flaneur.agents.cityseeker.options import Option, compass, node_kind
from flaneur.agents.cityseeker.state import EpisodeRun
from flaneur.agents.cityseeker.strategies import Strategy
from flaneur.env.state import direction_label, relative_angle
from flaneur.world.graph import StreetGraph

MAX_LINES = 8


def hop_neighbourhood(graph: StreetGraph, node: int, hops: int) -> dict[int, int]:
    """``{node: hops}`` for every node within ``hops`` streets of ``node`` (itself: 0)."""
    targets_of = graph.adjacency[0]
    seen = {node: 0}
    frontier = deque([node])
    while frontier:
        u = frontier.popleft()
        if seen[u] >= hops:
            continue
        for v in targets_of[u]:
            if v not in seen:
                seen[v] = seen[u] + 1
                frontier.append(v)
    return seen


def where(run: EpisodeRun, node: int) -> str:
    """``"here"`` or ``"40 m slightly left"`` relative to the agent's position and heading."""
    if node == run.node:
        return "here"
    dx, dy = run.graph.xy[node] - run.xy
    dist = math.hypot(dx, dy)
    rel = relative_angle(math.degrees(math.atan2(dx, dy)) % 360.0, run.heading)
    return f"{dist:.0f} m {direction_label(rel)}"


def _went(run: EpisodeRun, node: int, target: str | None) -> str:
    if target is None:
        return "stopped"
    graph = run.graph
    if target not in graph:
        return "moved"
    t = graph.index(target)
    targets_of, headings_of = graph.adjacency
    if t not in targets_of[node]:
        return "moved"
    h = headings_of[node][targets_of[node].index(t)]
    way = f"went {compass(h)}"
    if node == run.node:
        way += f" (now your {direction_label(relative_angle(h, run.heading))})"
    return way


def describe_visits(
    run: EpisodeRun, visits: Iterable[Visit], *, hops: dict[int, int] | None = None
) -> list[str]:
    """One line per remembered node, nearest (fewest hops, then metres) first."""
    graph = run.graph
    by_node: dict[str, list[Visit]] = {}
    for v in visits:
        by_node.setdefault(v.node, []).append(v)
    entries = []
    for node_id, vs in by_node.items():
        if node_id not in graph:
            continue
        node = graph.index(node_id)
        dist = float(math.hypot(*(graph.xy[node] - run.xy)))
        entries.append(((hops or {}).get(node, 0), dist, node, vs))
    entries.sort(key=lambda e: (e[0], e[1]))
    lines = []
    for hop, _, node, vs in entries[:MAX_LINES]:
        rounds = sorted({v.round for v in vs})
        named = ", ".join("this round" if r == run.round else f"round {r}" for r in rounds)
        ways = Counter(_went(run, node, v.target) for v in vs if not v.backtrack)
        went = ", ".join(f"{w} {c}x" for w, c in ways.most_common(3)) or "passed by"
        confs = [v.confidence for v in vs if v.confidence is not None]
        conf = f"; mean confidence {sum(confs) / len(confs):.2f}" if confs else ""
        outcomes = sorted({f"{v.outcome} (round {v.round})" for v in vs if v.outcome})
        ended = f"; outcome: {', '.join(outcomes)}" if outcomes else ""
        away = f" ({hop} street{'s' if hop != 1 else ''} away)" if hops is not None and hop else ""
        lines.append(
            f"- {where(run, node)}{away}, {node_kind(run.city, node)}: visited {len(vs)}x "
            f"({named}); {went}{conf}{ended}"
        )
    return lines


def paper_retrieves(run: EpisodeRun) -> bool:
    """Under ``paper``: whether this round retrieves (R1, R2). CitySeeker counts rounds from 1
    and retrieves in round ``r`` only when ``r % retrieve_epoch == 0`` (``run.rounds``)."""
    return run.round >= 1 and run.round % max(1, run.rounds) == 0


def this_cycle(run: EpisodeRun, visits: Iterable[Visit]) -> list[Visit]:
    """The visits of this round's cycle (CitySeeker clears its memory after each cycle)."""
    return [v for v in visits if v.round > run.round - max(1, run.rounds)]


class _Retrieval(Strategy):
    """Where a retrieval's text goes: every prompt (flaneur) or, under ``paper``, the choice
    prompt of a retrieving round only."""

    needs_memory: ClassVar[bool] = True

    def text(self, run: EpisodeRun) -> str:
        raise NotImplementedError

    def context(self, run: EpisodeRun) -> str:
        return "" if run.paper else self.text(run)

    def hint(self, run: EpisodeRun, options: Sequence[Option]) -> str:
        return self.text(run) if run.paper and paper_retrieves(run) else ""


class TopologyRetrieval(_Retrieval):
    """R1: the memory of the ``hops``-street neighbourhood of the current node."""

    code: ClassVar[str] = "r1"

    def __init__(self, *, hops: int = 2) -> None:
        self.hops = max(0, int(hops))

    def text(self, run: EpisodeRun) -> str:
        """The remembered visits of the neighbourhood, one line per node."""
        if run.memory is None:
            return ""
        near = hop_neighbourhood(run.graph, run.node, self.hops)
        ids = [str(run.graph.ids[n]) for n in near]
        visits = run.memory.visits_at(ids)
        if run.paper:
            visits = this_cycle(run, visits)
        streets = "street" if self.hops == 1 and run.paper else "streets"
        head = f"Memory of places within {self.hops} {streets} of you (R1, topology retrieval):"
        if not visits:
            return head + "\n- nothing remembered around here."
        run.events.append(f"r1: {len(visits)} remembered visits")
        return head + "\n" + "\n".join(describe_visits(run, visits, hops=near))


class SpatialRetrieval(_Retrieval):
    """R2: the memory within ``radius_m`` metres of the current node."""

    code: ClassVar[str] = "r2"

    def __init__(self, *, radius_m: float = 50.0) -> None:
        self.radius_m = float(radius_m)

    def text(self, run: EpisodeRun) -> str:
        """The remembered visits within the radius, one line per node."""
        if run.memory is None:
            return ""
        found = [v for v, _ in run.memory.visits_within(run.xy, self.radius_m)]
        if run.paper:
            found = this_cycle(run, found)
        head = f"Memory of places within {self.radius_m:.0f} m of you (R2, spatial retrieval):"
        if not found:
            return head + "\n- nothing remembered around here."
        run.events.append(f"r2: {len(found)} remembered visits")
        return head + "\n" + "\n".join(describe_visits(run, found))


class RecentHistory(Strategy):
    """R3: the last ``n`` steps of this episode (under ``paper``: in the choice prompt, once
    ``n`` steps were taken)."""

    code: ClassVar[str] = "r3"

    def __init__(self, *, n: int = 3) -> None:
        self.n = max(1, int(n))

    def context(self, run: EpisodeRun) -> str:
        return "" if run.paper else self.text(run)

    def hint(self, run: EpisodeRun, options: Sequence[Option]) -> str:
        return self.text(run) if run.paper and run.step >= self.n else ""

    def text(self, run: EpisodeRun) -> str:
        """The last ``n`` steps, one line each."""
        recent = run.history[-self.n :]
        head = f"Your last {self.n} steps (R3, recent history):"
        if not recent:
            return head + "\n- none yet (this is the first step)."
        lines = []
        for m in recent:
            if m.backtrack:
                what = "walked back (backtracking)"
            elif m.target is None:
                what = "decided to stop"
            else:
                h = _edge_heading(run.graph, m.node, m.target)
                toward = f" (toward the {compass(h)})" if h is not None else ""
                what = f"chose {m.decision}{toward}"
            conf = f", confidence {m.confidence:.2f}" if m.confidence is not None else ""
            thought = f" - {m.thought[:150]}" if m.thought else ""
            lines.append(
                f"- step {m.step + 1} at {node_kind(run.city, m.node)}: {what}{conf}{thought}"
            )
        return head + "\n" + "\n".join(lines)


def _edge_heading(graph: StreetGraph, u: int, v: int) -> float | None:
    targets_of, headings_of = graph.adjacency
    try:
        return headings_of[u][targets_of[u].index(v)]
    except ValueError:
        return None


__all__ = [
    "RecentHistory",
    "SpatialRetrieval",
    "TopologyRetrieval",
    "describe_visits",
    "hop_neighbourhood",
    "paper_retrieves",
    "this_cycle",
    "where",
]

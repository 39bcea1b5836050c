"""Cognition strategies: C1 (topology cognitive graph) and C2 (relative position map).

Both are built once per episode, before the first step, from the trajectories that earlier
rounds of the same (task, episode) left in the graph memory, and are put into every prompt.
Nodes of those trajectories are labelled ``P1``, ``P2``, ... in order of first visit (``P1``
is this episode's start when it was visited).

* **C1** lists the labelled nodes (kind of node, named places nearby), the streets walked
  between them (compass direction and length) and each round's route and outcome.
* **C2** places every labelled node (and each round's end) at metric offsets from the
  start (``x m east, y m north``) and, each step, where the agent is now.

By default a deterministic summariser writes the text; with ``cognition_model=True`` the
agent's model rewrites that summary into its own cognitive map (prompt
``cityseeker/cognition``), as CitySeeker builds the map with a model.
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar

from flaneur.agents.cityseeker.memory import Visit
from flaneur.agents.cityseeker.options import compass, node_kind
from flaneur.agents.cityseeker.state import EpisodeRun
from flaneur.agents.cityseeker.strategies import Ask, Strategy

MAX_NODES = 30
MAX_EDGES = 40


def route_of(visits: list[Visit]) -> list[str]:
    """Node ids of a round's walk, consecutive repeats dropped, final target included."""
    path: list[str] = []
    for v in visits:
        for node in (v.node, v.target):
            if node is not None and (not path or path[-1] != node):
                path.append(node)
    return path


def label_nodes(run: EpisodeRun, routes: dict[int, list[str]]) -> dict[str, str]:
    """``{node id: "P<k>"}`` in order of first visit, the episode start first."""
    order = [run.node_id(run.start)] if run.start >= 0 else []
    for path in routes.values():
        order += path
    labels: dict[str, str] = {}
    for node in order:
        if node not in labels and node in run.graph:
            labels[node] = f"P{len(labels) + 1}"
    return labels


def _outcome(outcomes: dict[int, dict], rnd: int) -> str:
    info = outcomes.get(rnd)
    return str(info["outcome"]) if info and info.get("outcome") else "unfinished"


def _offset(run: EpisodeRun, node: int) -> str:
    dx, dy = (round(float(v)) for v in run.graph.xy[node] - run.graph.xy[run.start])
    ew = f"{abs(dx)} m {'east' if dx >= 0 else 'west'}"
    ns = f"{abs(dy)} m {'north' if dy >= 0 else 'south'}"
    return f"{ew}, {ns}"


def _near_places(run: EpisodeRun, node: int, limit: int = 2) -> str:
    if len(run.city.places) == 0:
        return ""
    rows, _ = run.city.places_near_node(node, 25.0)
    names = [str(run.city.places.names[int(r)]) for r in rows if run.city.places.names[int(r)]]
    return "; near " + ", ".join(names[:limit]) if names else ""


def topology_summary(run: EpisodeRun, routes: dict[int, list[str]], outcomes: dict) -> str:
    """C1's deterministic text (see the module docstring)."""
    graph = run.graph
    labels = label_nodes(run, routes)
    start_id = run.node_id(run.start)
    nodes = []
    for node_id, label in list(labels.items())[:MAX_NODES]:
        i = graph.index(node_id)
        start = "start; " if node_id == start_id else ""
        nodes.append(f"{label} ({start}{node_kind(run.city, i)}{_near_places(run, i)})")
    edges: dict[tuple[str, str], str] = {}
    for path in routes.values():
        for a, b in itertools.pairwise(path):
            key = (a, b) if labels.get(a, "") <= labels.get(b, "") else (b, a)
            if key in edges or a not in graph or b not in graph:
                continue
            ia, ib = graph.index(a), graph.index(b)
            e = graph.edge_index(ia, ib)
            if e < 0:
                continue
            edges[key] = (
                f"{labels[a]}-{labels[b]} ({compass(float(graph.headings[e]))}, "
                f"{float(graph.lengths[e]):.0f} m)"
            )
    lines = [
        f"Cognitive graph of your {len(routes)} earlier round(s) on this task "
        "(C1; places P1, P2, ... in order of first visit):",
        "Nodes: " + ", ".join(nodes),
        "Streets walked: " + (", ".join(list(edges.values())[:MAX_EDGES]) or "none"),
    ]
    for rnd, path in routes.items():
        walk = " > ".join(labels.get(n, "?") for n in path[:60])
        lines.append(f"Round {rnd}: {walk}; outcome: {_outcome(outcomes, rnd)}.")
    return "\n".join(lines)


def position_summary(run: EpisodeRun, routes: dict[int, list[str]], outcomes: dict) -> str:
    """C2's deterministic text (see the module docstring)."""
    graph = run.graph
    labels = label_nodes(run, routes)
    lines = [
        f"Relative position map of your {len(routes)} earlier round(s) "
        "(C2; offsets from your start point):"
    ]
    spots = [f"{label} {_offset(run, graph.index(n))}" for n, label in labels.items()]
    lines.append("; ".join(spots[:MAX_NODES]) + ".")
    for rnd, path in routes.items():
        if path and path[-1] in graph:
            end = graph.index(path[-1])
            lines.append(
                f"Round {rnd} ended at {labels.get(path[-1], '?')} ({_offset(run, end)}); "
                f"outcome: {_outcome(outcomes, rnd)}."
            )
    return "\n".join(lines)


class _CognitiveMap(Strategy):
    needs_memory: ClassVar[bool] = True
    kind: ClassVar[str] = ""

    def __init__(self, *, use_model: bool = False) -> None:
        self.use_model = use_model

    def summarise(self, run: EpisodeRun, routes: dict[int, list[str]], outcomes: dict) -> str:
        raise NotImplementedError

    async def prepare(self, run: EpisodeRun, ask: Ask | None) -> None:
        text = ""
        if run.memory is not None:
            trajectories = run.memory.trajectories(before_round=run.round)
            routes = {r: route_of(vs) for r, vs in trajectories.items() if vs}
            outcomes = run.memory.round_outcomes(before_round=run.round)
            if routes:
                text = self.summarise(run, routes, outcomes)
                run.cache[f"{self.code}_labels"] = label_nodes(run, routes)
                run.events.append(f"{self.code}: map of {len(routes)} earlier round(s)")
                if self.use_model and ask is not None:
                    reply, _ = await ask(self.kind, text)  # the agent records the call
                    text = f"{text.splitlines()[0]}\n{reply.strip()}" if reply.strip() else text
        run.cache[self.code] = text

    def where_now(self, run: EpisodeRun) -> str:
        raise NotImplementedError

    def context(self, run: EpisodeRun) -> str:
        text = run.cache.get(self.code, "")
        if not text:
            return ""
        return f"{text}\n{self.where_now(run)}"


class TopologyMap(_CognitiveMap):
    """C1: a topology cognitive graph of earlier rounds."""

    code: ClassVar[str] = "c1"
    kind: ClassVar[str] = "topology cognitive graph (nodes, streets, routes)"

    def summarise(self, run: EpisodeRun, routes: dict[int, list[str]], outcomes: dict) -> str:
        return topology_summary(run, routes, outcomes)

    def where_now(self, run: EpisodeRun) -> str:
        label = run.cache.get("c1_labels", {}).get(run.node_id())
        return f"You are now at {label}." if label else "You are now at a node not in this graph."


class PositionMap(_CognitiveMap):
    """C2: a relative position map of earlier rounds."""

    code: ClassVar[str] = "c2"
    kind: ClassVar[str] = "relative position map (metric offsets from the start)"

    def summarise(self, run: EpisodeRun, routes: dict[int, list[str]], outcomes: dict) -> str:
        return position_summary(run, routes, outcomes)

    def where_now(self, run: EpisodeRun) -> str:
        dx, dy = run.xy - run.graph.xy[run.start]
        dist = math.hypot(dx, dy)
        return (
            f"You are now {_offset(run, run.node)} of the start ({dist:.0f} m away), facing "
            f"{compass(run.heading)}."
        )


__all__ = [
    "PositionMap",
    "TopologyMap",
    "label_nodes",
    "position_summary",
    "route_of",
    "topology_summary",
]

"""Annotation: a person watches a route's views and writes its instruction.

The route is a task set's episode, or one drawn on the map: a start and an end point,
each snapped to the nearest viewpoint (:func:`snap`), joined by the metre-shortest walk of
the Directions service (:func:`flaneur.services.directions.directions`, see
:func:`drawn_episode`). Each saved instruction becomes an episode of flaneur's episode
format (the route's start, heading, goal and reference path with the new instruction)
appended to ``<play dir>/annotations/<file>.jsonl``, a task file that
``flaneur run --tasks FILE`` runs (a drawn route is a ``turns`` / TC episode: its goal is
the end viewpoint).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from flaneur.errors import FlaneurError
from flaneur.services.directions import directions
from flaneur.tasks.episode import Episode, read_episodes, write_episodes
from flaneur.web.world import street_map
from flaneur.world.city import City

MAX_INSTRUCTION = 4000
"""Longest instruction accepted, in characters."""
DRAW_MARGIN_M = 250.0
"""Streets shown around the context route when drawing a route, in metres."""
SNAP_M = 150.0
"""A drawn point farther than this from every viewpoint is refused, in metres."""


def snap(city: City, xy: Sequence[float]) -> str:
    """Id of the located viewpoint nearest to ``xy`` (metres of the city's local
    projection, as :func:`~flaneur.web.world.street_map` draws them).

    Raises
    ------
    FlaneurError
        When ``xy`` is not two finite numbers or lies more than :data:`SNAP_M` from every
        viewpoint.
    """
    graph = city.graph
    point = np.asarray(xy, dtype=np.float64)
    if point.shape != (2,) or not np.all(np.isfinite(point)):
        raise FlaneurError("a drawn point must be two numbers x,y (metres)")
    located = np.flatnonzero(graph.located)
    if not len(located):
        raise FlaneurError(f"{city.name} has no located viewpoints to draw on")
    gaps = np.hypot(*(graph.xy[located] - point).T)
    best = int(np.argmin(gaps))
    if gaps[best] > SNAP_M:
        raise FlaneurError(f"the drawn point lies more than {SNAP_M:g} m from every viewpoint")
    return str(graph.ids[located[best]])


def drawn_episode(city: City, start: str, end: str) -> tuple[Episode, list[str]]:
    """The episode of a route drawn from viewpoint ``start`` to ``end`` (metre-shortest walk,
    facing along its first street; category ``drawn``; no instruction yet) and the
    Directions service's step instructions along it.

    Raises
    ------
    FlaneurError
        Unknown or equal viewpoints, or an end that cannot be reached from the start.
    """

    graph = city.graph
    for node in (start, end):
        if node not in graph:
            raise FlaneurError(f"no viewpoint {node!r} in {city.name}")
    if start == end:
        raise FlaneurError("the start and the end snap to the same viewpoint: draw a longer route")
    route = directions(city, graph.index(start), graph.index(end))
    nodes = [str(graph.ids[n]) for n in route.nodes]
    first, second = route.nodes[0], route.nodes[1]
    heading = float(graph.out_headings(first)[list(graph.neighbors(first)).index(second)])
    episode = Episode(
        id=f"drawn-{start}-{end}",
        city=city.name,
        instruction="",
        start_node=start,
        start_heading=round(heading, 2) % 360.0,
        goal_nodes=(end,),
        reference_path=tuple(nodes),
        category="drawn",
        max_steps=max(55, 3 * len(nodes)),
        metadata={"drawn": True, "distance_m": round(route.distance_m, 1)},
    )
    return episode, [step.instruction for step in route.steps]


class AnnotationStore:
    """Task files of annotations under ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()

    def route(
        self, city: City, episode: Episode, *, context: Sequence[str] = (), margin_m: float = 120.0
    ) -> dict[str, Any]:
        """The route to annotate: its nodes with the heading along it, and the map (of the
        route and the ``context`` nodes)."""
        graph = city.graph
        nodes = list(episode.reference_path) or [episode.start_node]
        steps = []
        heading = float(episode.start_heading)
        for i, node in enumerate(nodes):
            if i + 1 < len(nodes) and node in graph and nodes[i + 1] in graph:
                a, b = graph.index(node), graph.index(nodes[i + 1])
                if graph.has_edge(a, b):
                    heading = float(graph.out_headings(a)[list(graph.neighbors(a)).index(b)])
            steps.append({"node": node, "heading": round(heading, 2)})
        return {
            "episode_id": episode.id,
            "city": city.name,
            "category": episode.category,
            "original": episode.instruction,
            "steps": steps,
            "goals": list(episode.goal_nodes),
            "map": street_map(city, [*context, *nodes], margin_m=margin_m),
        }

    def draw(
        self,
        city: City,
        context: Episode,
        points: tuple[Sequence[float], Sequence[float]] | None = None,
    ) -> dict[str, Any]:
        """What the drawing page shows: the streets around ``context`` (a task set's
        episode) and, given two drawn points, the route between them snapped to viewpoints,
        with its steps and the Directions service's instructions."""
        around = list(context.reference_path) or [context.start_node]
        if points is None:
            return {"map": street_map(city, around, margin_m=DRAW_MARGIN_M), "steps": []}
        start, end = snap(city, points[0]), snap(city, points[1])
        episode, steps = drawn_episode(city, start, end)
        out = self.route(city, episode, context=around, margin_m=DRAW_MARGIN_M)
        out.update(
            start=start, end=end, directions=steps, distance_m=episode.metadata["distance_m"]
        )
        return out

    def save(self, episode: Episode, instruction: str, file: str, annotator: str) -> dict:
        """Append the annotated episode to ``<file>.jsonl``; its id is ``<episode id>-<n>``.
        The answer names the file relative to the play folder (the server's own paths are
        never sent)."""
        text = " ".join(instruction.split())
        if not text:
            raise FlaneurError("the instruction is empty")
        if len(text) > MAX_INSTRUCTION:
            raise FlaneurError(f"the instruction is longer than {MAX_INSTRUCTION} characters")
        path = self.folder / f"{file}.jsonl"
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            existing = read_episodes(path) if path.is_file() else []
            ids = {e.id for e in existing}
            n = 1
            while f"{episode.id}-{n}" in ids:
                n += 1
            metadata = {**episode.metadata, "annotator": annotator}
            if not episode.metadata.get("drawn"):
                metadata["source_episode"] = episode.id
                metadata["original_instruction"] = episode.instruction
            new = dataclasses.replace(
                episode, id=f"{episode.id}-{n}", instruction=text, metadata=metadata
            )
            write_episodes([*existing, new], path)
        return {
            "file": path.name,
            "path": f"{self.folder.name}/{path.name}",  # in the play folder; never absolute
            "episode_id": new.id,
            "episodes": len(existing) + 1,
        }

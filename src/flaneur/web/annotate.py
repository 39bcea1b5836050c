"""Annotation: a person watches a route's views and writes its instruction.

Each saved instruction becomes an episode of flaneur's episode format (the route's start,
heading, goal and reference path with the new instruction) appended to
``<play dir>/annotations/<file>.jsonl``, a task file that ``flaneur run --tasks FILE`` runs.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

from flaneur.errors import FlaneurError
from flaneur.tasks.episode import Episode, read_episodes, write_episodes
from flaneur.web.world import street_map
from flaneur.world.city import City

MAX_INSTRUCTION = 4000
"""Longest instruction accepted, in characters."""


class AnnotationStore:
    """Task files of annotations under ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()

    def route(self, city: City, episode: Episode) -> dict[str, Any]:
        """The route to annotate: its nodes with the heading along it, and the map."""
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
            "map": street_map(city, nodes),
        }

    def save(self, episode: Episode, instruction: str, file: str, annotator: str) -> dict:
        """Append the annotated episode to ``<file>.jsonl``; its id is ``<episode id>-<n>``."""
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
            metadata = {
                **episode.metadata,
                "annotator": annotator,
                "source_episode": episode.id,
                "original_instruction": episode.instruction,
            }
            new = dataclasses.replace(
                episode, id=f"{episode.id}-{n}", instruction=text, metadata=metadata
            )
            write_episodes([*existing, new], path)
        return {
            "file": path.name,
            "path": str(path),
            "episode_id": new.id,
            "episodes": len(existing) + 1,
        }

"""Check a generated need-task file against its city (``flaneur tasks validate``).

For every episode: the reference path starts at the start node and is a walk along edges; each
goal node lies on it in order and the last node is the last goal; every target place is visible
(within the linking radius) from its goal node; and no other matching place is as close (in
hops) as the target from the start of its leg.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flaneur.tasks.episode import Episode
from flaneur.tasks.generate import GoalField
from flaneur.tasks.needs import PlaceMatcher
from flaneur.world.city import City


@dataclass
class TaskCheck:
    """Result of checking a task file: counts and the first problems found."""

    episodes: int = 0
    valid: int = 0
    problems: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON summary (problems grouped by episode id)."""
        return {
            "episodes": self.episodes,
            "valid": self.valid,
            "invalid": self.episodes - self.valid,
            "problems": self.problems,
        }


def check_need_episode(city: City, episode: Episode, fields: dict) -> list[str]:
    """Problems of one generated episode (empty list when it is valid)."""
    graph, places = city.graph, city.places
    problems: list[str] = []
    nodes = (episode.start_node, *episode.reference_path, *episode.goal_nodes)
    unknown = [n for n in nodes if n not in graph]
    if unknown:
        return [f"unknown node id(s) {unknown[:3]}"]
    if not episode.reference_path:
        return ["reference path is empty (a need task needs its gold path)"]
    path = graph.indices(episode.reference_path).tolist()
    if not path or path[0] != graph.index(episode.start_node):
        problems.append("reference path does not start at the start node")
    if not graph.path_is_walk(path):
        problems.append("reference path is not a walk along edges")
    goals = [graph.index(g) for g in episode.goal_nodes]
    if not goals or path[-1] != goals[-1]:
        problems.append("reference path does not end at the last goal node")
    specs = episode.metadata.get("goals") or []
    radius = float(episode.metadata.get("visible_radius_m", 50.0))
    if len(specs) != len(goals) or len(episode.goal_place_ids) != len(goals):
        return [*problems, "metadata 'goals', goal_nodes and goal_place_ids differ in length"]
    leg_start = path[0]
    cursor = 0
    for k, (goal, place_id, spec) in enumerate(
        zip(goals, episode.goal_place_ids, specs, strict=True)
    ):
        try:
            cursor = path.index(goal, cursor)
        except ValueError:
            problems.append(f"goal {k + 1} is not on the reference path")
            break
        row = places.index(place_id)
        distance = float(((graph.xy[goal] - places.xy[row]) ** 2).sum() ** 0.5)
        if distance > radius + 1e-6:
            problems.append(f"target {place_id} is {distance:.1f} m from goal node (> {radius} m)")
        matcher = PlaceMatcher.from_json(spec)
        key = (matcher, radius)
        if key not in fields:
            fields[key] = GoalField.build(city, matcher, radius)
        field_ = fields[key]
        hits = [j for j, r in enumerate(field_.rows.tolist()) if r == row]
        if not hits:
            problems.append(f"target {place_id} does not match {matcher.describe()}")
        else:
            target_hops = field_.hops[hits[0], leg_start]
            closer = [
                places.ids[r]
                for j, r in enumerate(field_.rows.tolist())
                if j != hits[0] and field_.hops[j, leg_start] <= target_hops
            ]
            if closer:
                problems.append(f"goal {k + 1}: place(s) {closer[:3]} as close as the target")
            if cursor - path.index(leg_start) != target_hops:
                problems.append(f"goal {k + 1}: the path leg is not a shortest path")
        leg_start = goal
    return problems


def check_need_tasks(city: City, episodes: list[Episode], *, max_listed: int = 20) -> TaskCheck:
    """Check every episode; list problems of at most ``max_listed`` episodes."""
    report = TaskCheck(episodes=len(episodes))
    fields: dict = {}
    for episode in episodes:
        problems = check_need_episode(city, episode, fields)
        if problems:
            if len(report.problems) < max_listed:
                report.problems[episode.id] = problems
        else:
            report.valid += 1
    return report

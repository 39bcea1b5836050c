"""What the replay page needs about one episode row: the steps, the map, the text.

The steps come from the row (trajectory, actions, the agent's step records, invalid actions);
the observation text of each step is recomputed by replaying the row's actions in a fresh
:class:`~flaneur.env.navigation_env.NavigationEnv` with ``verbalize=True`` (the environment is
deterministic, so this is the text an agent reading it saw).
"""

from __future__ import annotations

from typing import Any

from flaneur.env.navigation_env import NavigationEnv
from flaneur.errors import FlaneurError
from flaneur.tasks.episode import Episode
from flaneur.web.world import street_map, view_directions
from flaneur.world.city import City


def _states(row: dict[str, Any], city: City) -> list[tuple[str, float]]:
    """``(node id, heading)`` where each action was taken, then the final state."""
    trajectory = [(str(n), float(h)) for n, h in row.get("trajectory") or []]
    actions = row.get("actions") or []
    if len(trajectory) == len(actions) + 1:
        return trajectory
    ids = city.graph.ids
    out, j = [], 0
    for index in row.get("action_nodes") or []:
        node = str(ids[int(index)])
        while j < len(trajectory) - 1 and trajectory[j][0] != node:
            j += 1
        out.append(trajectory[j] if trajectory else (node, 0.0))
    return [*out, trajectory[-1]] if trajectory else out


def _slot_of(name: str, env: Any) -> Any:
    if name == "invalid":
        return -1
    labels = tuple(getattr(env.scheme, "labels_all", ()))
    if name in labels:
        return labels.index(name)
    head, _, _ = name.partition(":")
    if env.scheme.name == "headings" and head.isdigit():
        return int(head)
    return name


def observation_texts(row: dict[str, Any], city: City, episode: Episode) -> list[str | None]:
    """The ``text`` observation before each action (None where the replay cannot follow)."""

    actions = row.get("actions") or []
    try:
        env = NavigationEnv(city, [episode], scheme=row.get("scheme") or "turns", verbalize=True)
        obs, _ = env.reset(options={"episode": episode})
        texts: list[str | None] = []
        for name in actions:
            texts.append(str(obs.get("text") or ""))
            obs, _, terminated, truncated, _ = env.step(_slot_of(str(name), env))
            if terminated or truncated:
                break
    except FlaneurError:
        texts = []
    return texts + [None] * (len(actions) - len(texts))


def _mark_chosen(step: dict[str, Any], action: str, scheme: str) -> None:
    """Flag the view down the street a ``headings`` action took (``"k:label"``: street k)."""
    head = action.partition(":")[0]
    if scheme == "headings" and head.isdigit() and 0 < int(head) <= len(step["views"]):
        step["views"][int(head) - 1]["chosen"] = True


def replay_data(row: dict[str, Any], city: City, episode: Episode | None) -> dict[str, Any]:
    """The JSON of the replay page for one row.

    Besides the row's fields: ``steps`` (per step the node, heading, views, action, record
    and observation text), ``reference`` (the reference path), ``path`` (the agent's),
    ``start`` (the episode's start node), ``goals`` (its target nodes) and ``map``
    (:func:`~flaneur.web.world.street_map` around them: streets, street names, scale).
    """
    states = _states(row, city)
    actions = row.get("actions") or []
    records = row.get("records") or []
    invalid = {int(r.get("step", -1)): r for r in row.get("invalid_actions") or []}
    texts = observation_texts(row, city, episode) if episode else [None] * len(actions)
    steps = []
    scheme = str(row.get("scheme") or "turns")
    for i, (node, heading) in enumerate(states):
        step: dict[str, Any] = {
            "index": i,
            "node": node,
            "heading": round(heading, 2),
            "views": view_directions(city, node, heading, scheme),
        }
        if i < len(actions):
            step["action"] = actions[i]
            _mark_chosen(step, str(actions[i]), scheme)
            step["record"] = records[i] if i < len(records) else {}
            step["text"] = texts[i]
            if i in invalid:
                step["invalid"] = invalid[i]
        steps.append(step)
    reference = list(episode.reference_path) if episode else []
    path = [str(n) for n in row.get("path") or []]
    goals = list(episode.goal_nodes) if episode else []
    start = episode.start_node if episode else (states[0][0] if states else None)
    shown = ([start] if start else []) + reference + path + goals
    return {
        "task": row.get("task"),
        "agent": row.get("agent"),
        "episode_id": row.get("episode_id"),
        "scheme": row.get("scheme"),
        "city": city.name,
        "instruction": episode.instruction if episode else "",
        "termination": row.get("termination"),
        "error": row.get("error"),
        "metrics": row.get("metrics") or {},
        "usage": row.get("usage") or {},
        "duration_s": row.get("duration_s"),
        "player": row.get("player"),
        "reference": reference,
        "path": path,
        "start": start,
        "goals": goals,
        "map": street_map(city, shown),
        "steps": steps,
    }

"""The episode record and its JSON lines format.

An episode is one navigation task: where the agent starts, what it is told, and what counts
as reaching the goal. Node ids are the city's string ids. One episode per line in a
``.jsonl`` file; the schema is documented in ``docs/episodes.md``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from flaneur.errors import DataError

EPISODE_FIELDS = (
    "id",
    "city",
    "instruction",
    "start_node",
    "start_heading",
    "goal_nodes",
    "goal_place_ids",
    "goal_categories",
    "reference_path",
    "category",
    "max_steps",
    "metadata",
)


@dataclass(frozen=True)
class Episode:
    """One navigation task.

    Parameters
    ----------
    id
        Unique id within its task set.
    city
        Name of the city pack the node ids refer to.
    instruction
        What the agent is told (route description or need).
    start_node
        Node id where the agent starts.
    start_heading
        Initial heading in degrees (0 = north, clockwise).
    goal_nodes
        Target node ids. With several goals and ``metadata["ordered"]`` true, they must be
        reached in order (CitySeeker "X and then Y" tasks); otherwise any one counts.
    goal_place_ids
        Target place ids, when the goal is a place.
    goal_categories
        Target place categories (for need tasks; TCC counts any place of these).
    reference_path
        Gold path as node ids, first = start, last = goal (may be empty when unknown).
    category
        Task category used to break results down (e.g. ``"question1"``, ``"basic_poi"``).
    max_steps
        Step limit of the episode.
    metadata
        Free, JSON-serialisable extras (source row id, difficulty, ...).
    """

    id: str
    city: str
    instruction: str
    start_node: str
    start_heading: float
    goal_nodes: tuple[str, ...] = ()
    goal_place_ids: tuple[str, ...] = ()
    goal_categories: tuple[str, ...] = ()
    reference_path: tuple[str, ...] = ()
    category: str = ""
    max_steps: int = 55
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def goal_node(self) -> str:
        """The final goal node (last of :attr:`goal_nodes`, else the last reference node)."""
        if self.goal_nodes:
            return self.goal_nodes[-1]
        if self.reference_path:
            return self.reference_path[-1]
        raise ValueError(f"episode {self.id!r} has no goal node")

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        data = asdict(self)
        for key in ("goal_nodes", "goal_place_ids", "goal_categories", "reference_path"):
            data[key] = list(data[key])
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], *, where: str = "") -> Episode:
        """Build from a dict, naming missing or mistyped fields in a :class:`DataError`."""
        prefix = f"{where}: " if where else ""
        if not isinstance(data, dict):
            raise DataError(f"{prefix}expected a JSON object, got {type(data).__name__}")
        unknown = set(data) - set(EPISODE_FIELDS)
        if unknown:
            raise DataError(f"{prefix}unknown episode field(s) {sorted(unknown)}")
        for key in ("id", "city", "instruction", "start_node", "start_heading"):
            if key not in data:
                raise DataError(f"{prefix}missing required field {key!r}")
        try:
            return cls(
                id=str(data["id"]),
                city=str(data["city"]),
                instruction=str(data["instruction"]),
                start_node=str(data["start_node"]),
                start_heading=float(data["start_heading"]) % 360.0,
                goal_nodes=tuple(str(x) for x in data.get("goal_nodes", ())),
                goal_place_ids=tuple(str(x) for x in data.get("goal_place_ids", ())),
                goal_categories=tuple(str(x) for x in data.get("goal_categories", ())),
                reference_path=tuple(str(x) for x in data.get("reference_path", ())),
                category=str(data.get("category", "")),
                max_steps=int(data.get("max_steps", 55)),
                metadata=dict(data.get("metadata") or {}),
            )
        except (TypeError, ValueError) as err:
            raise DataError(f"{prefix}bad field value ({err})") from None


def iter_json_lines(path: str | Path, *, what: str = "file") -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` of each non-blank line of a JSON-lines file.

    Raises
    ------
    DataError
        If the file is missing (``"<what> not found"``) or a line is not JSON, naming the
        file and line.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what} not found", path=path)
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield line_no, json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"invalid JSON ({err.msg})", path=path, line=line_no) from None


def read_episodes(path: str | Path) -> list[Episode]:
    """Read an episodes ``.jsonl`` file; errors name the file and line."""
    episodes: list[Episode] = []
    for line_no, data in iter_json_lines(path, what="episode file"):
        try:
            episodes.append(Episode.from_json(data))
        except DataError as err:
            raise DataError(err.reason, path=path, line=line_no) from None
    return episodes


def write_episodes(episodes: Iterable[Episode], path: str | Path) -> Path:
    """Write episodes as JSON lines (one object per line)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for episode in episodes:
            handle.write(json.dumps(episode.to_json(), ensure_ascii=False) + "\n")
    return path


def iter_unknown_nodes(episode: Episode, known: Any) -> Iterator[tuple[str, str]]:
    """Yield ``(field, node_id)`` for every node id of ``episode`` not in ``known``."""
    if episode.start_node not in known:
        yield "start_node", episode.start_node
    for key in ("goal_nodes", "reference_path"):
        for node_id in getattr(episode, key):
            if node_id not in known:
                yield key, node_id

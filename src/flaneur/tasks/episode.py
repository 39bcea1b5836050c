"""The episode record and its JSON lines format.

An episode is one navigation task: where the agent starts, what it is told, and what counts
as reaching the goal. Node ids are the city's string ids. One episode per line in a
``.jsonl`` file; the schema is documented in ``docs/episodes.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
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
            episode = cls(
                id=str(data["id"]),
                city=str(data["city"]),
                instruction=str(data["instruction"]),
                start_node=str(data["start_node"]),
                start_heading=float(data["start_heading"]),
                goal_nodes=tuple(str(x) for x in data.get("goal_nodes", ())),
                goal_place_ids=tuple(str(x) for x in data.get("goal_place_ids", ())),
                goal_categories=tuple(str(x) for x in data.get("goal_categories", ())),
                reference_path=tuple(str(x) for x in data.get("reference_path", ())),
                category=str(data.get("category", "")),
                max_steps=_whole_number(data.get("max_steps", 55)),
                metadata=dict(data.get("metadata") or {}),
            )
        except (TypeError, ValueError) as err:
            raise DataError(f"{prefix}bad field value ({err})") from None
        problem = episode.problem()
        if problem:
            raise DataError(f"{prefix}episode {episode.id!r}: {problem}")
        return replace(episode, start_heading=episode.start_heading % 360.0)

    def problem(self) -> str | None:
        """What makes this episode unusable (``None`` when it is fine): an empty id, a
        heading that is not a finite number, ``max_steps`` below 1, or no goal at all."""
        if not self.id:
            return "field 'id' is empty"
        if not math.isfinite(self.start_heading):
            heading = self.start_heading
            return f"field 'start_heading' must be a finite number of degrees, not {heading}"
        if self.max_steps < 1:
            return f"field 'max_steps' must be at least 1, not {self.max_steps}"
        if not (
            self.goal_nodes or self.reference_path or self.goal_place_ids or self.goal_categories
        ):
            return (
                "no goal: goal_nodes, reference_path, goal_place_ids and goal_categories "
                "are all empty"
            )
        return None


def _whole_number(value: Any) -> int:
    """``value`` as an int, refusing fractions and booleans (``max_steps: 2.5``)."""
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"max_steps must be a whole number, not {value!r}")
    return int(value)


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
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                what_it_is = "a binary file?" if b"\0" in raw else "save it as UTF-8"
                raise DataError(
                    f"not UTF-8 text (byte 0x{raw[err.start]:02x} at column {err.start + 1}; "
                    f"{what_it_is})",
                    path=path,
                    line=line_no,
                ) from None
            if not line.strip():
                continue
            try:
                yield line_no, json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"invalid JSON ({err.msg})", path=path, line=line_no) from None


def read_episodes(path: str | Path) -> list[Episode]:
    """Read an episodes ``.jsonl`` file; errors name the file and line.

    Raises
    ------
    DataError
        If the file is missing, not UTF-8, holds no episode, a line is not a valid episode
        (see :meth:`Episode.problem`) or an id repeats.
    """
    episodes: list[Episode] = []
    first_line: dict[str, int] = {}
    for line_no, data in iter_json_lines(path, what="episode file"):
        try:
            episode = Episode.from_json(data)
        except DataError as err:
            raise DataError(err.reason, path=path, line=line_no) from None
        if episode.id in first_line:
            raise DataError(
                f"duplicate episode id {episode.id!r} (first on line {first_line[episode.id]})",
                path=path,
                line=line_no,
            )
        first_line[episode.id] = line_no
        episodes.append(episode)
    if not episodes:
        raise DataError("no episodes (the file is empty)", path=path)
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

"""Task items that are not navigation episodes, and their file format.

A navigation task set holds :class:`~flaneur.tasks.episode.Episode` records. Every other
kind of task (V-IRL's place recognition, place VQA and place detection benchmarks, and the
exemplar scenarios of V-IRL's planner agents: Aria, Vivek, Peng, Diego, Local, RX-399,
Imani) holds :class:`TaskItem` records: an id, a category to break results down by, and the
item's data (the place and view to recognise, the question and options, the persona and what
it asks for).

An *item file* is JSON Lines: a header line that names the kind and declares the set's facts,
then one item per line::

    {"kind": "virl-recognition", "version": 1, "city": "helsinki", "success_metric": "top1", ...}
    {"id": "n123", "category": "cafe", "place_id": "n123", "node": "osm42", ...}

Reading is strict (UTF-8, a header with ``kind`` and ``version``, one JSON object with a
unique non-empty ``id`` per line); every error names the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flaneur.errors import DataError

ITEM_HEADER_KEYS = ("kind", "version")
"""Keys every item file's header holds (they tell an item file from other task files)."""


@dataclass(frozen=True)
class TaskItem:
    """One item of a task set that is not a navigation episode.

    Attributes
    ----------
    id
        Unique id within its task set.
    category
        Group to break results down by (a place type, a scenario's agent, ...).
    data
        The item's fields (JSON-ready).
    """

    id: str
    category: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``data[key]`` or ``default``."""
        return self.data.get(key, default)

    def to_json(self) -> dict[str, Any]:
        """The item's line in an item file."""
        return {"id": self.id, "category": self.category, **dict(self.data)}

    @classmethod
    def from_json(cls, row: Mapping[str, Any], *, where: str = "") -> TaskItem:
        """The item of a line (``id`` and ``category`` taken out of the data)."""
        prefix = f"{where}: " if where else ""
        ident = row.get("id")
        if not isinstance(ident, str | int) or isinstance(ident, bool) or str(ident) == "":
            raise DataError(f"{prefix}an item needs a non-empty 'id' (text or integer)")
        category = row.get("category", "")
        if not isinstance(category, str):
            raise DataError(f"{prefix}field 'category' must be text, not {category!r}")
        data = {k: v for k, v in row.items() if k not in ("id", "category")}
        return cls(str(ident), category, data)


def write_items(
    path: str | Path, header: Mapping[str, Any], items: Iterable[TaskItem | Mapping[str, Any]]
) -> Path:
    """Write an item file: ``header`` then one item per line (atomically: a temporary file
    renamed into place)."""
    missing = [k for k in ITEM_HEADER_KEYS if k not in header]
    if missing:
        raise DataError(f"an item file's header needs {', '.join(missing)}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as out:
        out.write(json.dumps(dict(header), ensure_ascii=False) + "\n")
        for item in items:
            row = item.to_json() if isinstance(item, TaskItem) else dict(item)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def _json_lines(path: Path) -> list[tuple[int, Any]]:
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise DataError(f"cannot read item file ({err.strerror})", path=path) from None
    except UnicodeDecodeError:
        raise DataError("not a UTF-8 text file (expected JSON lines)", path=path) from None
    rows = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((no, json.loads(line)))
        except json.JSONDecodeError as err:
            raise DataError(f"not JSON ({err.msg})", path=path, line=no) from None
    return rows


def read_item_header(path: str | Path) -> dict[str, Any]:
    """The header of an item file (its first line), checked."""
    path = Path(path)
    rows = _json_lines(path)
    if not rows:
        raise DataError("empty item file (expected a header line, then items)", path=path)
    return _header(path, *rows[0])


def _header(path: Path, no: int, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or any(k not in value for k in ITEM_HEADER_KEYS):
        raise DataError(
            "the first line must be a header object with 'kind' and 'version'", path=path, line=no
        )
    if not isinstance(value["kind"], str) or not value["kind"]:
        raise DataError("header field 'kind' must be a non-empty text", path=path, line=no)
    return value


def read_items(
    path: str | Path, *, kind: str | None = None, version: int | None = None
) -> tuple[dict[str, Any], list[TaskItem]]:
    """Read an item file: its header and its items.

    Parameters
    ----------
    path
        The file.
    kind, version
        When given, the header must declare this kind (and version).

    Raises
    ------
    DataError
        Naming the file and line: not UTF-8, a line that is not JSON, no header, another
        kind or version, an item without an id, a repeated id, or no items at all.
    """
    path = Path(path)
    rows = _json_lines(path)
    if not rows:
        raise DataError("empty item file (expected a header line, then items)", path=path)
    header = _header(path, *rows[0])
    if kind is not None and (header["kind"], header["version"]) != (kind, version or 1):
        raise DataError(
            f"expected a {kind!r} item file of version {version or 1}, got "
            f"{header['kind']!r} version {header['version']!r}",
            path=path,
            line=rows[0][0],
        )
    items: list[TaskItem] = []
    seen: dict[str, int] = {}
    for no, value in rows[1:]:
        if not isinstance(value, dict):
            raise DataError("expected a JSON object per line", path=path, line=no)
        item = TaskItem.from_json(value, where=f"{path}:{no}")
        if item.id in seen:
            raise DataError(f"item id {item.id!r} repeats line {seen[item.id]}", path=path, line=no)
        seen[item.id] = no
        items.append(item)
    if not items:
        raise DataError("the item file holds a header but no items", path=path)
    return header, items


def item_ids(items: Sequence[Any]) -> list[str]:
    """The ids of episodes or items, in order."""
    return [str(item.id) for item in items]


__all__ = [
    "ITEM_HEADER_KEYS",
    "TaskItem",
    "item_ids",
    "read_item_header",
    "read_items",
    "write_items",
]

"""Personas: who an agent is and what it wants (V-IRL's agent template), from TOML or YAML.

A persona file holds ``name``, ``city``, ``start`` (a place name, address or ``"lat,lng"``),
``background`` and ``intention`` (all required), ``status`` values 0-100 (optional; each
defaults to 50 as in V-IRL's template) and ``budget`` (optional). Any other top-level key is
an agent option (``places``, ``question``, ``listings``...) kept in :attr:`Persona.options`.
``KEY=VALUE`` overrides (``status.hunger=80``, ``budget=60``) apply on top of the file.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import yaml

from flaneur.errors import DataError
from flaneur.options import Range, option

REQUIRED = ("name", "city", "start", "background", "intention")
DEFAULT_STATUS = 50.0


@dataclass(frozen=True)
class PersonaFields:
    """The typed fields every scenario of V-IRL's agents holds (a persona file's keys);
    each scenario kind adds its own (``question``, ``sentence``, ``wishes``, ...)."""

    name: str = option("", "who the persona is")
    city: str = option("", "their city (built-in name or city pack); default: --city")
    start: str = option("", "where they start: a place name, an address or lat,lng")
    background: str = option("", "what kind of person they are")
    intention: str = option("", "what they want")
    status: dict[str, Annotated[float, Range(0, 100)]] = option({}, "status values, 0-100")
    budget: Annotated[float, Range(0, 1e12)] | None = option(None, "money available")

    def __post_init__(self) -> None:
        for key in ("name", "start", "background", "intention"):
            if not str(getattr(self, key)).strip():
                raise DataError(f"field {key!r} must be a non-empty string (it is missing)")


@dataclass
class Persona:
    """An agent's identity, goals, status values and budget.

    Attributes
    ----------
    name, city, start, background, intention
        Who, where, from where, what kind of person, what they want.
    status
        Named values in [0, 100] (e.g. ``hunger``, ``energy``).
    budget
        Money available (currency units of the city), or ``None``.
    options
        Agent-specific settings from the same file.
    source
        The file the persona came from (for error messages).
    """

    name: str
    city: str
    start: str
    background: str
    intention: str
    status: dict[str, float] = field(default_factory=dict)
    budget: float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    source: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (without the source path)."""
        return {
            "name": self.name,
            "city": self.city,
            "start": self.start,
            "background": self.background,
            "intention": self.intention,
            "status": dict(self.status),
            "budget": self.budget,
            "options": dict(self.options),
        }


def parse_value(text: str) -> Any:
    """A ``KEY=VALUE`` value: JSON if it parses (numbers, booleans, lists), else the text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def apply_overrides(data: dict[str, Any], overrides: list[str] | tuple[str, ...]) -> None:
    """Apply ``KEY=VALUE`` strings to a nested dict in place (``a.b=1`` sets ``data[a][b]``).

    Raises
    ------
    DataError
        An override without ``=`` or with an empty key.
    """
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise DataError(f"override {item!r} must look like KEY=VALUE")
        parts = key.strip().split(".")
        target = data
        for part in parts[:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise DataError(f"override {item!r}: {part!r} is not a table")
        target[parts[-1]] = parse_value(value)


def read_config(path: str | Path) -> dict[str, Any]:
    """Read a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file into a dict.

    Raises
    ------
    DataError
        A missing file, a parse error (with its line where known), or a top level that is
        not a table.
    """
    file = Path(path)
    if not file.is_file():
        raise DataError("config file not found (expected .toml or .yaml)", path=file)
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise DataError("not a UTF-8 text file (expected TOML or YAML)", path=file) from None
    if "\x00" in text:
        raise DataError("a binary file, not TOML or YAML text", path=file)
    if file.suffix.lower() in (".yaml", ".yml"):
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise DataError(
                f"invalid YAML ({getattr(err, 'problem', err)})", path=file, line=line
            ) from None
    elif file.suffix.lower() == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise DataError(f"invalid TOML ({err})", path=file) from None
    else:
        raise DataError("expected a .toml, .yaml or .yml file", path=file)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DataError("the top level must be a table of keys", path=file)
    return data


def persona_from_dict(data: dict[str, Any], *, source: Path | None = None) -> Persona:
    """Validate a dict into a :class:`Persona`.

    Raises
    ------
    DataError
        A missing or empty required field, a status value outside 0-100, or a bad budget;
        the message names the field.
    """
    for key in REQUIRED:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            got = "missing" if value is None else f"got {value!r}"
            raise DataError(f"field {key!r} must be a non-empty string ({got})", path=source)
    raw_status = data.get("status") or {}
    if not isinstance(raw_status, dict):
        raise DataError("field 'status' must be a table of name = value (0-100)", path=source)
    status: dict[str, float] = {}
    for name, value in raw_status.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
            raise DataError(
                f"field 'status.{name}' must be a number in 0-100 (got {value!r})", path=source
            )
        status[str(name)] = float(value)
    budget = data.get("budget")
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int | float) or budget < 0
    ):
        raise DataError(f"field 'budget' must be a number >= 0 (got {budget!r})", path=source)
    options = {k: v for k, v in data.items() if k not in (*REQUIRED, "status", "budget")}
    return Persona(
        name=data["name"].strip(),
        city=data["city"].strip(),
        start=data["start"].strip(),
        background=data["background"].strip(),
        intention=data["intention"].strip(),
        status=status,
        budget=None if budget is None else float(budget),
        options=options,
        source=source,
    )


def load_persona(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Persona:
    """Read, override and validate a persona file (TOML or YAML)."""
    data = read_config(path)
    apply_overrides(data, list(overrides))
    return persona_from_dict(data, source=Path(path))

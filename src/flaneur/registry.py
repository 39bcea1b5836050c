"""Named plug-in registries: built-ins, ``module:Name`` strings and Python entry points.

Every kind of plug-in (agents, view providers, landmark scorers, city sources) has one
:class:`Registry`, defined beside the things it registers (``flaneur.agents.AGENTS``,
``flaneur.views.registry.VIEWS``, ...). A registry maps a name to an object; an entry can
be given lazily as a ``"package.module:Name"`` string, imported on first use, so that
listing names never imports heavy modules. Outside packages add entries without any change
to flaneur through an entry-point group (``flaneur.agents``, ``flaneur.views``,
``flaneur.landmarks``, ``flaneur.cities``) in their own packaging metadata::

    [project.entry-points."flaneur.agents"]
    wanderer = "my_package.agent:WandererAgent"

and a user may name any importable object directly: ``--agent my_package.agent:WandererAgent``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any, Generic, TypeVar, cast

from flaneur.errors import FlaneurError

T = TypeVar("T")
_MISSING: Any = object()


def import_object(spec: str, *, what: str = "object") -> Any:
    """Import ``"package.module:Name"`` (``Name`` may be dotted: ``Outer.Inner``).

    Raises
    ------
    FlaneurError
        One line naming ``spec`` when the module or the name cannot be imported.
    """
    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise FlaneurError(f"{what} {spec!r}: expected 'package.module:Name'")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise FlaneurError(f"{what} {spec!r}: cannot import {module_name!r} ({err})") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise FlaneurError(f"{what} {spec!r}: {module_name!r} has no {attr!r}") from None
    return obj


class Registry(Generic[T]):
    """Plug-ins of one kind by name.

    Parameters
    ----------
    kind
        What the entries are, for messages (``"agent"``, ``"view provider"``).
    group
        Entry-point group read on first lookup (``"flaneur.agents"``); ``None`` for none.
    check
        Called on every loaded entry; raises :class:`FlaneurError` when it is not usable
        (e.g. not an :class:`~flaneur.agents.Agent` subclass).
    importable
        Whether a ``"module:Name"`` given as a name is imported directly (plug-in classes);
        ``False`` for registries of records whose names may hold ``:`` (task-set ids).
    """

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        check: Callable[[str, Any], None] | None = None,
        importable: bool = True,
    ) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self.importable = importable
        self._entries: dict[str, T | str] = {}
        self._scanned = group is None

    # ------------------------------------------------------------------ adding
    def register(self, name: str, entry: T | str, *, replace: bool = False) -> None:
        """Add ``entry`` (an object or a ``"module:Name"`` string) under ``name``."""
        self._scan()
        if not name or (self.importable and ":" in name):
            raise FlaneurError(f"{self.kind} name {name!r} must be non-empty and have no ':'")
        if name in self._entries and not replace:
            raise FlaneurError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` (no error when absent)."""
        self._entries.pop(name, None)

    def _scan(self) -> None:
        """Read the entry-point group once (entries registered in code win)."""
        if self._scanned:
            return
        self._scanned = True
        for ep in metadata.entry_points(group=self.group or ""):
            self._entries.setdefault(ep.name, ep.value)

    # ------------------------------------------------------------------ looking up
    def names(self) -> list[str]:
        """Registered names (built-ins first, then plug-ins), without importing anything."""
        self._scan()
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        importable = self.importable and ":" in str(name)
        return isinstance(name, str) and (importable or name in self.names())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def get(self, name: str, default: Any = _MISSING) -> T:
        """The entry for ``name``, or for a ``"module:Name"`` string given directly.

        With ``default``, an unknown name gives ``default`` instead of an error (as
        ``dict.get``).

        Raises
        ------
        FlaneurError
            One line: an unknown name (listing the known ones), an import failure, or an
            entry that fails the registry's check.
        """
        self._scan()
        if name in self._entries:
            entry = self._entries[name]
            if isinstance(entry, str) and self.importable:
                entry = import_object(entry, what=f"{self.kind} {name!r}")
                self._entries[name] = entry
        elif self.importable and ":" in name:
            entry = import_object(name, what=self.kind)
        elif default is not _MISSING:
            return default
        else:
            known = ", ".join(self.names())
            direct = " or module:Name" if self.importable else ""
            raise FlaneurError(f"unknown {self.kind} {name!r}; choose from {known}{direct}")
        if self._check is not None:
            self._check(name, entry)
        return cast(T, entry)  # a "module:Name" entry is imported above

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __setitem__(self, name: str, entry: T | str) -> None:
        self.register(name, entry, replace=True)

    def __delitem__(self, name: str) -> None:
        self.unregister(name)

    def items(self) -> list[tuple[str, T]]:
        """Every ``(name, entry)``, importing lazy entries."""
        return [(name, self.get(name)) for name in self.names()]


__all__ = ["Registry", "import_object"]

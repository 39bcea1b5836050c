"""Evaluation protocols: ``paper`` (a seed paper's own settings) or ``flaneur`` (ours).

``flaneur run --protocol paper`` runs each agent and task set as its paper and released code
define it, where flaneur's defaults differ on purpose (``docs/fidelity.md`` lists every
setting, its value under each protocol and the test that pins it). The protocol is part of
the run's configuration, of every row (``"protocol"``) and of the summary; results of
different protocols are never paired (:func:`check_same_protocol`).

What a protocol changes is declared where the setting lives: a task set's step limit in
its :class:`~flaneur.tasks.spec.TaskSpec` (``paper_max_steps``), an agent's behaviour by
reading ``env_info.protocol``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from flaneur.errors import FlaneurError

PROTOCOLS = ("flaneur", "paper")
"""The protocols a run can follow."""

DEFAULT_PROTOCOL = "flaneur"
"""The protocol of a run that names none, and of rows written before protocols existed."""


def check_protocol(value: str, where: str = "--protocol") -> str:
    """``value`` when it names a protocol.

    Raises
    ------
    FlaneurError
        One line naming ``where`` and the protocols there are.
    """
    if value not in PROTOCOLS:
        raise FlaneurError(f"{where} must be one of {', '.join(PROTOCOLS)}, not {value!r}")
    return value


def row_protocol(row: Mapping[str, Any]) -> str:
    """The protocol a row was made under (:data:`DEFAULT_PROTOCOL` for older rows)."""
    return str(row.get("protocol") or DEFAULT_PROTOCOL)


def protocols_of(rows: Iterable[Mapping[str, Any]]) -> set[str]:
    """The protocols ``rows`` were made under."""
    return {row_protocol(row) for row in rows}


def check_same_protocol(named: Sequence[tuple[str, Iterable[Mapping[str, Any]]]]) -> None:
    """Refuse to pair results made under different protocols.

    Parameters
    ----------
    named
        ``(name, rows)`` of each run (or group of rows) to be paired.

    Raises
    ------
    FlaneurError
        One line naming each run's protocols, when they are not all one protocol.
    """
    found = [(name, sorted(protocols_of(rows))) for name, rows in named]
    if len({p for _, protocols in found for p in protocols}) > 1:
        said = "; ".join(f"{name}: {', '.join(protocols)}" for name, protocols in found)
        raise FlaneurError(
            f"cannot pair results of different protocols ({said}): compare runs made with "
            "the same --protocol"
        )


def protocol_episodes(spec: Any, items: list[Any], protocol: str) -> list[Any]:
    """A task set's items under ``protocol``: with ``paper``, navigation episodes take the
    paper's step limit where the task set declares one (``spec.paper_max_steps``), and
    V-IRL's VLN routes their instruction without distances
    (:func:`flaneur.bench.vln_routes.paper_episode`)."""
    if protocol == "paper":
        from flaneur.bench.vln_routes import paper_episode  # lazy: CLI start-up

        items = [paper_episode(e) for e in items]
    limit = getattr(spec, "paper_max_steps", None)
    if protocol != "paper" or not limit:
        return items
    return [replace(e, max_steps=int(limit)) if hasattr(e, "max_steps") else e for e in items]

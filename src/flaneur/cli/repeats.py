"""Refuse ``--out`` given more than once (``--out r -o tau``).

Click keeps the last value of a repeated option and says nothing. For most options that is
the usual override (``--concurrency 1 ... --concurrency 3``), but ``-o`` once meant
``--option`` in ``flaneur run`` and ``flaneur bench``, so ``flaneur run --out r -o tau`` would
write the run to ``tau``. Such a command line is a usage error naming both values, before
anything runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer


def _flag_of(token: str) -> str:
    """``--out=x`` -> ``--out``; other tokens unchanged."""
    return token.split("=", 1)[0] if token.startswith("--") else token


def _leaf(command: Any, argv: Sequence[str]) -> tuple[Any, list[str]]:
    """The sub-command ``argv`` names and the arguments after its name."""
    rest = list(argv)
    while getattr(command, "commands", None):
        words = [i for i, token in enumerate(rest) if not token.startswith("-")]
        if not words or rest[words[0]] not in command.commands:
            break
        command = command.commands[rest[words[0]]]
        rest = rest[words[0] + 1 :]
    return command, rest


def _values(rest: list[str], names: set[str]) -> list[str]:
    """The values given to the option called by ``names`` in ``rest``."""
    values = []
    for i, token in enumerate(rest):
        if token.startswith("--") and "=" in token and _flag_of(token) in names:
            values.append(token.split("=", 1)[1])
        elif token in names:
            values.append(rest[i + 1] if i + 1 < len(rest) else "")
    return values


def check_repeated_out(root: Any, argv: Sequence[str]) -> None:
    """Raise a usage error if ``argv`` gives ``--out`` (``-o``) of the command it names
    (under ``root``, the click command of the app) more than once.

    Raises
    ------
    typer.BadParameter
        Naming the option and the values given.
    """
    argv = list(argv[: argv.index("--")] if "--" in argv else argv)
    command, rest = _leaf(root, argv)
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", "") != "option" or "--out" not in param.opts:
            continue
        names = set(param.opts) | set(param.secondary_opts)
        values = _values(rest, names)
        if len(values) > 1:
            shown = ", ".join(values)
            raise typer.BadParameter(
                f"given {len(values)} times ({shown}); give it once "
                "(agent and solver options are --option KEY=VALUE)",
                param_hint=" / ".join(f"'{n}'" for n in sorted(names, key=len)),
            )

"""The task-set options shared by ``run``, ``validate gold``, ``tasks check/ls`` and ``report``.

Every command resolves ``--tasks`` through :func:`flaneur.tasks.resolve.resolve_tasks` (one
resolver: registered ids and task files alike); this module only holds the option texts and
the call that registers ``--registry`` files first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from flaneur.tasks.spec import TaskSpec

TASKS_HELP = (
    "Task set(s), comma-separated: registered ids (see `flaneur tasks ls`) and/or task files "
    "(flaneur episodes .jsonl, map2seq/Touchdown JSON lines, CitySeeker question(s).json)."
)
FORMAT_HELP = (
    "Format of the task file(s): episodes, map2seq, touchdown or cityseeker "
    "(default: detected from the first row)."
)
CITY_HELP = (
    "City of the task file(s): a city pack folder, helsinki, touchdown:DIR, cityseeker:DIR or "
    "an .osm.pbf (default: implied by where the file lies, e.g. a data directory)."
)
REGISTRY_HELP = (
    "TOML file registering task sets (id, files, format, city, scheme, success_metric); "
    "repeatable. $FLANEUR_TASKS and `flaneur.tasks` entry points are read too."
)

FORMAT_OPTION = typer.Option(None, "--format", metavar="FORMAT", help=FORMAT_HELP)
CITY_OPTION = typer.Option(None, "--city", metavar="PACK|SOURCE", help=CITY_HELP)
REGISTRY_OPTION = typer.Option(None, "--registry", metavar="FILE", help=REGISTRY_HELP)


def resolve_cli_tasks(
    tasks: str,
    *,
    fmt: str | None = None,
    city: str | None = None,
    registries: Sequence[Path] | None = None,
) -> list[TaskSpec]:
    """Register ``--registry`` files, then resolve ``--tasks`` (ids and files) in order."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.tasks.resolve import register_registries, resolve_tasks

    register_registries(registries)
    return resolve_tasks(tasks, fmt=fmt, city=city)


def registry_paths(registries: Sequence[Path] | None) -> tuple[str, ...]:
    """Absolute paths of ``--registry`` files, as recorded in a run's configuration."""
    return tuple(str(Path(p).expanduser().resolve()) for p in registries or ())

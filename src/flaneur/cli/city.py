"""``flaneur city``: build, describe and map city packs."""

from __future__ import annotations

import typer

city_app = typer.Typer(help="Build, describe and map city packs.", no_args_is_help=True)

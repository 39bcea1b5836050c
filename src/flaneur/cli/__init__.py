"""The ``flaneur`` command line.

Each command group lives in its own module and is registered here; ``main`` turns every
failure into one line on stderr and an exit code (:mod:`flaneur.cli.failures`) instead of a
traceback. Command modules import their heavy dependencies inside the commands, so that
``flaneur --help`` starts quickly.
"""

from __future__ import annotations

import sys

import typer
import typer.main

from flaneur import __version__
from flaneur.cli.agents import agents_command
from flaneur.cli.bench import bench_app
from flaneur.cli.city import city_app
from flaneur.cli.demo import demo_command
from flaneur.cli.export import export_app
from flaneur.cli.models import cache_app, fake_llm_command
from flaneur.cli.perception import perception_app
from flaneur.cli.render import render_command
from flaneur.cli.repeats import check_repeated_out
from flaneur.cli.report import report_command
from flaneur.cli.run import run_command, validate_app
from flaneur.cli.serve import serve_command
from flaneur.cli.tasks import tasks_app
from flaneur.cli.train import train_app
from flaneur.cli.virl import virl_app

app = typer.Typer(
    rich_markup_mode=None,
    name="flaneur",
    help=(
        "Agents that live in real cities: build city models from OpenStreetMap, Touchdown "
        "and CitySeeker data, run navigation agents on them, and evaluate them."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(city_app, name="city")
app.add_typer(tasks_app, name="tasks")
app.add_typer(bench_app, name="bench")
app.add_typer(export_app, name="export")
app.add_typer(train_app, name="train")
app.command("demo")(demo_command)
app.command("run")(run_command)
app.command("agents")(agents_command)
app.command("report")(report_command)
app.add_typer(validate_app, name="validate")
app.add_typer(cache_app, name="cache")
app.command("fake-llm")(fake_llm_command)
app.command("render")(render_command)
app.add_typer(virl_app, name="virl")
app.add_typer(perception_app, name="perception")
app.command("serve")(serve_command)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"flaneur {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version."
    ),
) -> None:
    """Agents that live in real cities."""


def main(argv: list[str] | None = None) -> None:
    """Run the ``flaneur`` command; see :mod:`flaneur.cli.failures` for how failures end.

    Usage errors print the usage line and one error line, user errors one line, both exit
    with code 2; Ctrl-C exits 130; no failure prints a traceback (unless ``FLANEUR_DEBUG=1``).
    """
    try:
        command = typer.main.get_command(app)
        check_repeated_out(command, sys.argv[1:] if argv is None else argv)
        code = command(args=argv, prog_name="flaneur", standalone_mode=False)
    except BaseException as err:
        # lazy: CLI start-up (docs/DESIGN.md, Imports)
        from flaneur.cli.failures import report_failure

        sys.exit(report_failure(err))
    if isinstance(code, int) and code:
        sys.exit(code)

"""``flaneur serve``: the local web app (runs, replay, live runs, human play, annotation)."""

from __future__ import annotations

from pathlib import Path

import typer

from flaneur.cli.output import err_console

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def serve_command(
    runs: list[Path] | None = typer.Argument(
        None, help="Run folders, or folders of run folders (default: the current folder)."
    ),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="TCP port."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to bind; anything but loopback is warned about."
    ),
    play_dir: Path | None = typer.Option(
        None,
        "--play-dir",
        help="Where human play and annotations are written (default: the "
        "first RUNS folder): one run folder human-<player> per player.",
    ),
    tasks: list[Path] | None = typer.Option(
        None,
        "--tasks",
        metavar="FILE",
        help="Task file offered for play and annotation "
        "besides the registered task sets; repeatable.",
    ),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="Datasets folder for task sets that read one ($FLANEUR_DATA)."
    ),
    cache_dir: Path | None = typer.Option(
        None, "--view-cache", help="View cache folder (default $FLANEUR_CACHE_DIR/views)."
    ),
    tiles: str | None = typer.Option(
        None,
        "--tiles",
        metavar="URL_TEMPLATE",
        help="Draw raster map tiles under the street maps, e.g. "
        "https://tile.openstreetmap.org/{z}/{x}/{y}.png (follow the tile server's usage "
        "policy). Off by default: the app then references no web address.",
    ),
) -> None:
    """Serve the web app: runs and their metrics, episode replay with street views, live
    runs, human play (rows of agent `human` that `flaneur report` compares with agents) and
    route annotation. Offline; binds 127.0.0.1 unless --host says otherwise.
    """
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    import uvicorn

    from flaneur.web import create_app

    everywhere = host in WILDCARD_HOSTS
    app = create_app(
        runs or [Path.cwd()],
        play_dir=play_dir,
        cache_dir=cache_dir,
        data_dir=data_dir,
        task_files=tasks,
        tiles=tiles,
        hosts=("*",) if everywhere else (*LOCAL_HOSTS, host),
    )
    if host not in LOCAL_HOSTS:
        err_console.print(
            f"[yellow]warning: serving on {host}: anyone who can reach this address can read "
            "the runs and open the pages"
            + (" (and the Host check is off: any name is accepted)" if everywhere else "")
            + "[/]"
        )
    shown = f"[{host}]" if ":" in host else host
    err_console.print(f"flaneur web app on http://{shown}:{port}/  (Ctrl-C stops it)")
    # open event streams and requests get 2 s to finish after SIGTERM or Ctrl-C
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2)

"""The Starlette application of ``flaneur serve`` (see :func:`create_app`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from flaneur.errors import FlaneurError
from flaneur.web.annotate import AnnotationStore
from flaneur.web.api import (
    AppState,
    annotate_routes,
    error_response,
    play_routes,
    runs_routes,
    view_routes,
)
from flaneur.web.catalog import RunCatalog
from flaneur.web.guard import LOOPBACK_HOSTS, BodyTooLarge, RequestGuard, new_token
from flaneur.web.play import PlayFolders
from flaneur.web.world import TaskStore, ViewService

STATIC = Path(__file__).parent / "static"
PAGES = {
    "/": "runs.html",
    "/replay": "replay.html",
    "/live": "live.html",
    "/play": "play.html",
    "/annotate": "annotate.html",
    "/glossary": "glossary.html",
    "/compare": "compare.html",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
    "script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def tile_origin(template: str) -> str:
    """The origin (``scheme://host[:port]``) of a tile URL template, checked.

    Raises
    ------
    FlaneurError
        Unless the template is an http(s) URL holding ``{z}``, ``{x}`` and ``{y}``.
    """

    parts = urlsplit(template)
    missing = [k for k in ("{z}", "{x}", "{y}") if k not in template]
    if parts.scheme not in ("http", "https") or not parts.netloc or missing:
        raise FlaneurError(
            "--tiles must be an http(s) URL template with {z}, {x} and {y}, such as "
            f"https://tile.openstreetmap.org/{{z}}/{{x}}/{{y}}.png, not {template[:80]!r}"
        )
    return f"{parts.scheme}://{parts.netloc}"


def security_headers(tiles: str | None = None) -> dict[str, str]:
    """:data:`SECURITY_HEADERS`, with the tile server's origin allowed for images when the
    app draws a tile layer (``flaneur serve --tiles``)."""
    if not tiles:
        return dict(SECURITY_HEADERS)
    policy = SECURITY_HEADERS["Content-Security-Policy"].replace(
        "img-src 'self' data:", f"img-src 'self' data: {tile_origin(tiles)}"
    )
    return {**SECURITY_HEADERS, "Content-Security-Policy": policy}


def create_app(
    runs_dirs: list[Path] | list[str],
    *,
    play_dir: Path | str | None = None,
    cache_dir: Path | str | None = None,
    data_dir: Path | str | None = None,
    task_files: list[Path] | None = None,
    poll_s: float = 0.5,
    tiles: str | None = None,
    hosts: Iterable[str] = LOOPBACK_HOSTS,
) -> Starlette:
    """The web app.

    Parameters
    ----------
    runs_dirs
        Run folders, or folders of run folders, to serve (read only).
    play_dir
        Where human play writes its run folders and annotation files (default: the first of
        ``runs_dirs``).
    cache_dir
        View cache folder (default ``$FLANEUR_CACHE_DIR/views``).
    data_dir
        Datasets folder for task sets that need one.
    task_files
        Task files offered for play and annotation besides the registered task sets.
    poll_s
        How often the live stream looks for new rows, in seconds.
    tiles
        URL template of a raster tile layer drawn under the street maps (``{z}/{x}/{y}``;
        default none: the app is offline and references no web address).
    hosts
        Host names the ``Host`` header may name (:class:`~flaneur.web.guard.RequestGuard`;
        default the loopback names; ``("*",)`` accepts any, for a server bound to every
        interface).
    """
    headers = security_headers(tiles)
    token = new_token()
    catalog = RunCatalog([Path(p) for p in runs_dirs])
    root = Path(play_dir) if play_dir is not None else catalog.roots[0]
    root.mkdir(parents=True, exist_ok=True)
    state = AppState(
        catalog=catalog,
        tasks=TaskStore(Path(data_dir) if data_dir else None, task_files),
        views=ViewService(Path(cache_dir) if cache_dir else None),
        folders=PlayFolders(root),
        notes=AnnotationStore(root / "annotations"),
        sessions={},
        poll_s=poll_s,
    )
    routes = [
        *page_routes(headers, tiles, token),
        *runs_routes(state),
        *view_routes(state),
        *play_routes(state),
        *annotate_routes(state),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={FlaneurError: _on_error, BodyTooLarge: _on_too_large},
        middleware=[
            Middleware(RequestGuard, token=token, hosts=hosts),
            Middleware(SecurityHeaders, headers=headers),
        ],
    )
    app.state.token = token

    app.state.catalog, app.state.sessions, app.state.play_root = catalog, state.sessions, root
    return app


def page_routes(headers: dict[str, str], tiles: str | None, token: str) -> list[Route]:
    """The HTML pages (:data:`PAGES`), the empty favicon and ``/api/settings`` (the tile
    layer and the server's token, which the pages send on state-changing requests)."""

    def page(name: str):
        async def handler(request: Request) -> Response:
            return FileResponse(STATIC / name, headers=headers)

        return handler

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    async def api_settings(request: Request) -> Response:
        return JSONResponse({"tiles": tiles or None, "token": token})

    routes = [Route(path, page(name)) for path, name in PAGES.items()]
    routes.append(Route("/favicon.ico", favicon))
    routes.append(Route("/api/settings", api_settings))
    return routes


async def _on_error(request: Request, exc: Exception) -> Response:
    """A :class:`FlaneurError` as JSON: 404 when something is missing, 400 otherwise."""
    message = str(exc).splitlines()[0][:300]
    missing = message.startswith(("no ", "unknown ")) or " has no " in message
    return error_response(message, 404 if missing else 400)


async def _on_too_large(request: Request, exc: Exception) -> Response:
    return error_response(str(exc), 413)


class SecurityHeaders:
    """ASGI middleware adding ``headers`` (:func:`security_headers`) to every response."""

    def __init__(self, app: Any, headers: dict[str, str] | None = None) -> None:
        self.app = app
        self.headers = headers or SECURITY_HEADERS

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [
                    (k.lower().encode(), v.encode())
                    for k, v in self.headers.items()
                    if k.lower().encode() not in present
                ]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)

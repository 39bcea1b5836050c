"""The Starlette application of ``flaneur serve`` (see :func:`create_app`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import read_rows, row_success
from flaneur.web.annotate import AnnotationStore, drawn_episode
from flaneur.web.catalog import RunCatalog, safe_name
from flaneur.web.play import PlayFolders, PlaySession
from flaneur.web.replay import replay_data
from flaneur.web.runs import (
    is_live,
    read_summary,
    run_config,
    run_overview,
    run_progress,
    run_tables,
)
from flaneur.web.world import TaskStore, ViewService, street_map, view_directions

STATIC = Path(__file__).parent / "static"
PAGES = {
    "/": "runs.html",
    "/replay": "replay.html",
    "/live": "live.html",
    "/play": "play.html",
    "/annotate": "annotate.html",
}
BRIEF_FIELDS = ("task", "agent", "episode_id", "category", "termination", "steps", "player")
"""Row fields the live stream sends (never the whole row: it may hold long prompts)."""
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
    from urllib.parse import urlsplit

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


def _error(message: str, status: int = 404) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(
    runs_dirs: list[Path] | list[str],
    *,
    play_dir: Path | str | None = None,
    cache_dir: Path | str | None = None,
    data_dir: Path | str | None = None,
    task_files: list[Path] | None = None,
    poll_s: float = 0.5,
    tiles: str | None = None,
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
    """
    headers = security_headers(tiles)
    catalog = RunCatalog([Path(p) for p in runs_dirs])
    root = Path(play_dir) if play_dir is not None else catalog.roots[0]
    root.mkdir(parents=True, exist_ok=True)
    tasks = TaskStore(Path(data_dir) if data_dir else None, task_files)
    views = ViewService(Path(cache_dir) if cache_dir else None)
    folders = PlayFolders(root)
    notes = AnnotationStore(root / "annotations")
    sessions: dict[str, PlaySession] = {}

    def page(name: str):
        async def handler(request: Request) -> Response:
            return FileResponse(STATIC / name, headers=headers)

        return handler

    async def api_settings(request: Request) -> Response:
        return JSONResponse({"tiles": tiles or None})

    async def api_runs(request: Request) -> Response:
        return JSONResponse([run_overview(e) for e in catalog.runs().values()])

    async def api_run(request: Request) -> Response:
        entry = catalog.get(request.path_params["key"])
        return JSONResponse(await asyncio.to_thread(run_tables, entry))

    def _row(request: Request) -> tuple[dict[str, Any], dict[str, Any]]:
        entry = catalog.get(request.path_params["key"])
        q = request.query_params
        rows, _ = read_rows(entry.folder / "episodes.jsonl")
        wanted = (q.get("task"), q.get("agent"), q.get("id"))
        for row in reversed(rows):
            if (row.get("task"), row.get("agent"), row.get("episode_id")) == wanted:
                return row, read_summary(entry.folder) or {}
        raise FlaneurError(f"run {entry.key!r} has no row {wanted!r}")

    async def api_episode(request: Request) -> Response:
        row, summary = _row(request)
        entry = catalog.get(request.path_params["key"])

        def build() -> dict[str, Any]:
            _, city, episode = tasks.episode(str(row["task"]), str(row["episode_id"]), summary)
            return {
                **replay_data(row, city, episode),
                "views": run_config(entry.folder, summary).get("views"),
            }

        return JSONResponse(await asyncio.to_thread(build))

    async def api_view(request: Request) -> Response:
        q = request.query_params
        try:
            heading, fov = float(q.get("heading", "0")), float(q.get("fov", "60"))
        except ValueError:
            return _error("heading and fov must be numbers", 400)
        if not 10.0 <= fov <= 120.0:
            return _error("fov must lie between 10 and 120 degrees", 400)
        summary, spec = None, ""
        if q.get("run"):
            folder = catalog.get(q["run"]).folder
            summary = read_summary(folder) or {}
            spec = str(run_config(folder, summary).get("views") or "")
        _, city, _ = await asyncio.to_thread(tasks.load, q.get("task", ""), summary)
        node = q.get("node", "")
        data, source = None, "synthetic"
        if spec:
            data = await asyncio.to_thread(views.real_png, spec, city, node, heading, fov)
            source = spec.partition(":")[0] if data is not None else "synthetic"
        if data is None:
            data = await asyncio.to_thread(views.png, city, node, heading, fov)
        headers = {"Cache-Control": "max-age=3600", "X-Flaneur-View": source}
        return Response(data, media_type="image/png", headers=headers)

    async def api_events(request: Request) -> StreamingResponse:
        entry = catalog.get(request.path_params["key"])
        log = entry.folder / "episodes.jsonl"

        async def stream():
            sent = 0
            yield "retry: 2000\n\n"
            while True:
                rows, _ = await asyncio.to_thread(read_rows, log)
                for row in rows[sent:]:
                    brief = {k: row.get(k) for k in BRIEF_FIELDS}
                    brief["success"] = row_success(row)
                    yield f"event: row\ndata: {json.dumps(brief, default=str)}\n\n"
                if len(rows) != sent or sent == 0:
                    progress = await asyncio.to_thread(run_progress, entry.folder, rows)
                    yield f"event: progress\ndata: {json.dumps(progress)}\n\n"
                sent = len(rows)
                if not is_live(entry.folder) and (entry.folder / "summary.json").is_file():
                    yield "event: done\ndata: {}\n\n"
                    return
                if await request.is_disconnected():
                    return
                await asyncio.sleep(poll_s)

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )

    async def api_tasks(request: Request) -> Response:
        return JSONResponse(tasks.available())

    async def api_task_episodes(request: Request) -> Response:
        q = request.query_params
        task = q.get("task", "")
        _, _, episodes = await asyncio.to_thread(tasks.load, task)
        player = safe_name(q.get("player", ""))
        into = catalog.get(q["into"]).folder if q.get("into") else None
        played = folders.played(player, task, into)
        return JSONResponse(
            [
                {
                    "id": e.id,
                    "category": e.category,
                    "played": e.id in played,
                    "instruction": e.instruction[:120],
                }
                for e in episodes
            ]
        )

    async def api_play_start(request: Request) -> Response:
        body = await _json(request)
        task, player = str(body.get("task", "")), safe_name(str(body.get("player", "")))
        spec, city, episodes = await asyncio.to_thread(tasks.load, task)
        into = catalog.get(str(body["into"])).folder if body.get("into") else None
        wanted = body.get("episode_id")
        if not wanted:
            played = folders.played(player, task, into)
            left = [e for e in episodes if e.id not in played]
            if not left:
                return _error(f"{player} has played every episode of {task}", 409)
            wanted = left[0].id
        _, _, episode = tasks.episode(task, str(wanted))
        session = PlaySession(task, spec, city, episode, episodes, player, into)
        if len(sessions) > 200:
            sessions.pop(next(iter(sessions)))
        sessions[session.id] = session
        return JSONResponse(_play_view(session))

    def _play_view(session: PlaySession) -> dict[str, Any]:
        out = session.view()
        if session.scheme == "turns" or session.row is not None:
            out["views"] = view_directions(session.city, out["node"], out["heading"], "turns")
        else:  # one view down each street the player can take, labelled like its button
            out["views"] = [
                {"label": f"{c['slot']} · {c['label']}", "heading": c["heading"]}
                for c in out["choices"]
                if "heading" in c
            ]
        if session.row is not None:
            out["map"] = street_map(session.city, list(session.row.get("path") or []))
            out["path"] = list(session.row.get("path") or [])
        return out

    async def api_play(request: Request) -> Response:
        session = sessions.get(request.path_params["sid"])
        if session is None:
            return _error("no such play session (it may have ended; start again)")
        if request.method == "GET":
            return JSONResponse(_play_view(session))
        body = await _json(request)
        with session.lock:
            if body.get("stop"):
                session.stop_early()
            else:
                try:
                    slot = int(body.get("slot"))
                except (TypeError, ValueError):
                    return _error("slot must be an integer", 400)
                session.act(slot)
            out = _play_view(session)
            if session.row is not None and session.saved is None:
                plan = (session.task, session.city, tasks.load(session.task)[2], session.scheme)
                folder = await asyncio.to_thread(folders.append, session.row, plan, session.into)
                session.saved = folder.name
            out["saved_to"] = session.saved
        return JSONResponse(out)

    async def api_route(request: Request) -> Response:
        q = request.query_params
        task, episode_id = q.get("task", ""), q.get("id", "")
        _, city, episode = await asyncio.to_thread(tasks.episode, task, episode_id)
        return JSONResponse(notes.route(city, episode))

    async def api_draw(request: Request) -> Response:
        q = request.query_params
        _, city, context = await asyncio.to_thread(
            tasks.episode, q.get("task", ""), q.get("id", "")
        )
        points = None
        if q.get("from") or q.get("to"):
            points = (_point(q.get("from", "")), _point(q.get("to", "")))
        return JSONResponse(await asyncio.to_thread(notes.draw, city, context, points))

    async def api_annotate(request: Request) -> Response:
        body = await _json(request)
        task = str(body.get("task", ""))
        if body.get("from") or body.get("to"):  # a drawn route: recomputed from its ends
            _, city, _ = await asyncio.to_thread(tasks.load, task)
            start, end = str(body.get("from", "")), str(body.get("to", ""))
            episode, _ = await asyncio.to_thread(drawn_episode, city, start, end)
        else:
            episode_id = str(body.get("episode_id", ""))
            _, _, episode = await asyncio.to_thread(tasks.episode, task, episode_id)
        saved = notes.save(
            episode,
            str(body.get("instruction", "")),
            safe_name(str(body.get("file", "")), default="annotations"),
            safe_name(str(body.get("annotator", ""))),
        )
        return JSONResponse(saved)

    async def on_error(request: Request, exc: Exception) -> Response:
        message = str(exc).splitlines()[0][:300]
        missing = message.startswith(("no ", "unknown ")) or " has no " in message
        return _error(message, 404 if missing else 400)

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    routes = [Route(path, page(name)) for path, name in PAGES.items()]
    routes.append(Route("/favicon.ico", favicon))
    routes += [
        Route("/api/settings", api_settings),
        Route("/api/runs", api_runs),
        Route("/api/runs/{key}", api_run),
        Route("/api/runs/{key}/episode", api_episode),
        Route("/api/runs/{key}/events", api_events),
        Route("/api/view", api_view),
        Route("/api/tasks", api_tasks),
        Route("/api/episodes", api_task_episodes),
        Route("/api/play", api_play_start, methods=["POST"]),
        Route("/api/play/{sid}", api_play, methods=["GET", "POST"]),
        Route("/api/route", api_route),
        Route("/api/draw", api_draw),
        Route("/api/annotate", api_annotate, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={FlaneurError: on_error},
        middleware=[Middleware(SecurityHeaders, headers=headers)],
    )

    app.state.catalog, app.state.sessions, app.state.play_root = catalog, sessions, root
    return app


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


def _point(text: str) -> tuple[float, float]:
    """``"x,y"`` (metres) as two floats; :class:`FlaneurError` otherwise."""
    try:
        x, y = (float(v) for v in text.split(","))
    except ValueError:
        raise FlaneurError(f"a drawn point must be x,y in metres, not {text[:40]!r}") from None
    return x, y


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise FlaneurError("the request body must be a JSON object") from None
    if not isinstance(body, dict):
        raise FlaneurError("the request body must be a JSON object")
    return body

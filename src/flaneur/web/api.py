"""The JSON and image routes of the web app, one factory per part (runs, view, play, annotate).

Each factory takes the app's :class:`AppState` and returns its routes; :func:`create_app
<flaneur.web.app.create_app>` joins them.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from flaneur.errors import FlaneurError
from flaneur.evaluate.runlog import read_rows, row_success
from flaneur.web.annotate import AnnotationStore, drawn_episode
from flaneur.web.catalog import RunCatalog, safe_name
from flaneur.web.compare import compare_view
from flaneur.web.episode_rows import (
    EpisodeFilter,
    episode_entry,
    rows_csv,
    rows_jsonl,
    usage_totals,
)
from flaneur.web.folder_cache import FolderCache
from flaneur.web.glossary import kind_glossary_apart, metric_glossary
from flaneur.web.play import PlayFolders, PlaySession
from flaneur.web.replay import replay_data
from flaneur.web.runs import (
    category_chart,
    is_live,
    read_summary,
    run_config,
    run_overview,
    run_progress,
    run_rows,
    run_tables,
)
from flaneur.web.world import TaskStore, ViewService, street_map, view_directions, view_size

BRIEF_FIELDS = ("task", "agent", "episode_id", "category", "termination", "steps", "player")
"""Row fields the live stream sends (never the whole row: it may hold long prompts)."""
MAX_SESSIONS = 200
"""Play sessions kept at once; the oldest is dropped when a new one would pass this."""


@dataclass
class AppState:
    """What the routes of one web app share.

    Attributes
    ----------
    catalog
        The served run folders.
    tasks
        Task sets offered for replay, play and annotation.
    views
        Street views (synthetic, or real imagery from a run's view source).
    folders
        Where human play writes its run folders.
    notes
        Where annotations are written.
    sessions
        Open play sessions by id.
    poll_s
        How often the live stream looks for new rows, in seconds.
    cache
        Runs lists and tables computed from run folders, kept while their files are
        unchanged.
    kind_glossary
        The task kinds' descriptions, once asked for (:func:`kind_glossary_apart`).
    kinds_lock
        Held while they are read, so that they are read once.
    """

    catalog: RunCatalog
    tasks: TaskStore
    views: ViewService
    folders: PlayFolders
    notes: AnnotationStore
    sessions: dict[str, PlaySession]
    poll_s: float
    cache: FolderCache = field(default_factory=FolderCache)
    kind_glossary: list[dict[str, str]] | None = None
    kinds_lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def error_response(message: str, status: int = 404) -> JSONResponse:
    """A JSON ``{"error": message}`` response with ``status``."""
    return JSONResponse({"error": message}, status_code=status)


def runs_routes(state: AppState) -> list[Route]:
    """``/api/runs``: the served runs, one run's tables, one episode's replay, the live stream."""
    catalog, tasks = state.catalog, state.tasks

    def overviews() -> list[dict[str, Any]]:
        return [run_overview(e, state.cache) for e in catalog.runs().values()]

    async def api_runs(request: Request) -> Response:
        return JSONResponse(await asyncio.to_thread(overviews))  # off the event loop

    async def api_run(request: Request) -> Response:
        entry = catalog.get(request.path_params["key"])
        return JSONResponse(await asyncio.to_thread(run_tables, entry, state.cache))

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

    async def api_events(request: Request) -> StreamingResponse:
        entry = catalog.get(request.path_params["key"])
        return StreamingResponse(
            _live_events(request, entry.folder, state.poll_s),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache"},
        )

    return [
        Route("/api/runs", api_runs),
        Route("/api/runs/{key}", api_run),
        Route("/api/runs/{key}/episode", api_episode),
        Route("/api/runs/{key}/events", api_events),
        *research_routes(state),
    ]


def research_routes(state: AppState) -> list[Route]:
    """The run view's research tools: filtered episodes with totals, CSV and JSONL export of
    the same selection, charts by category, the glossary and the comparison of runs."""
    catalog = state.catalog

    async def api_episodes(request: Request) -> Response:
        entry = catalog.get(request.path_params["key"])
        wanted = EpisodeFilter.from_query(request.query_params)

        def build() -> dict[str, Any]:
            chosen = wanted.select(run_rows(entry, state.cache))
            return {"episodes": [episode_entry(r) for r in chosen], "totals": usage_totals(chosen)}

        return JSONResponse(await asyncio.to_thread(build))

    async def api_export(request: Request) -> Response:
        entry = catalog.get(request.path_params["key"])
        wanted = EpisodeFilter.from_query(request.query_params)
        form = request.query_params.get("format", "csv")
        if form not in ("csv", "jsonl"):
            raise FlaneurError(f"query parameter 'format' must be csv or jsonl, not {form[:20]!r}")

        def build() -> str:
            chosen = wanted.select(read_rows(entry.folder / "episodes.jsonl")[0])
            return rows_csv(chosen) if form == "csv" else rows_jsonl(chosen)

        media = "text/csv" if form == "csv" else "application/x-ndjson"
        name = f"{safe_name(entry.folder.name)}-episodes.{form}"
        return Response(
            await asyncio.to_thread(build),
            media_type=f"{media}; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    async def api_chart(request: Request) -> Response:
        entry = catalog.get(request.path_params["key"])
        q = request.query_params
        svg = await asyncio.to_thread(
            category_chart, entry, q.get("task", ""), q.get("metric", ""), state.cache
        )
        return Response(svg, media_type="image/svg+xml")

    async def api_glossary(request: Request) -> Response:
        """The metrics' glossary; with ``?kinds=yes`` the task kinds' too (read once)."""
        if request.query_params.get("kinds") != "yes":
            return JSONResponse(metric_glossary())
        async with state.kinds_lock:
            if state.kind_glossary is None:
                state.kind_glossary = await asyncio.to_thread(kind_glossary_apart)
        return JSONResponse({**metric_glossary(), "kinds": state.kind_glossary})

    async def api_compare(request: Request) -> Response:
        entries = [catalog.get(key) for key in request.query_params.getlist("run")]
        return JSONResponse(await asyncio.to_thread(compare_view, entries, state.cache))

    return [
        Route("/api/runs/{key}/episodes", api_episodes),
        Route("/api/runs/{key}/export", api_export),
        Route("/api/runs/{key}/chart.svg", api_chart),
        Route("/api/glossary", api_glossary),
        Route("/api/compare", api_compare),
    ]


async def _live_events(request: Request, folder: Path, poll_s: float) -> AsyncIterator[str]:
    """Server-sent events of a run folder: each new row (brief), progress, then ``done``."""
    log = folder / "episodes.jsonl"
    sent = 0
    yield "retry: 2000\n\n"
    while True:
        rows, _ = await asyncio.to_thread(read_rows, log)
        for row in rows[sent:]:
            brief = {k: row.get(k) for k in BRIEF_FIELDS}
            brief["success"] = row_success(row)
            yield f"event: row\ndata: {json.dumps(brief, default=str)}\n\n"
        if len(rows) != sent or sent == 0:
            progress = await asyncio.to_thread(run_progress, folder, rows)
            yield f"event: progress\ndata: {json.dumps(progress)}\n\n"
        sent = len(rows)
        if not is_live(folder) and (folder / "summary.json").is_file():
            yield "event: done\ndata: {}\n\n"
            return
        if await request.is_disconnected():
            return
        await asyncio.sleep(poll_s)


def view_routes(state: AppState) -> list[Route]:
    """``/api/view``: one street view as PNG (a run's real imagery when it has some)."""

    async def api_view(request: Request) -> Response:
        q = request.query_params
        try:
            heading, fov = float(q.get("heading", "0")), float(q.get("fov", "60"))
        except ValueError:
            return error_response("heading and fov must be numbers", 400)
        if not math.isfinite(heading):
            return error_response("heading must be a finite number of degrees", 400)
        if not 10.0 <= fov <= 120.0:
            return error_response("fov must lie between 10 and 120 degrees", 400)
        size = view_size(q.get("width"))  # a FlaneurError (400) unless a bounded integer
        summary, spec = None, ""
        if q.get("run"):
            folder = state.catalog.get(q["run"]).folder
            summary = read_summary(folder) or {}
            spec = str(run_config(folder, summary).get("views") or "")
        _, city, _ = await asyncio.to_thread(state.tasks.load, q.get("task", ""), summary)
        node = q.get("node", "")
        data, source = None, "synthetic"
        if spec:
            data = await asyncio.to_thread(
                state.views.real_png, spec, city, node, heading, fov, size
            )
            source = spec.partition(":")[0] if data is not None else "synthetic"
        if data is None:
            data = await asyncio.to_thread(state.views.png, city, node, heading, fov, size)
        headers = {"Cache-Control": "max-age=3600", "X-Flaneur-View": source}
        return Response(data, media_type="image/png", headers=headers)

    return [Route("/api/view", api_view)]


def play_routes(state: AppState) -> list[Route]:
    """``/api/tasks``, ``/api/episodes`` and ``/api/play``: human play of a task set."""
    catalog, tasks, folders, sessions = state.catalog, state.tasks, state.folders, state.sessions

    async def api_tasks(request: Request) -> Response:
        return JSONResponse(tasks.available())

    async def api_task_episodes(request: Request) -> Response:
        q = request.query_params
        task = q.get("task", "")
        _, _, episodes = await asyncio.to_thread(tasks.load, task)
        player = safe_name(q.get("player", ""))
        into = catalog.get(q["into"]).folder if q.get("into") else None
        played = folders.played(player, task, into)
        return JSONResponse([_episode_entry(e, e.id in played) for e in episodes])

    async def api_play_start(request: Request) -> Response:
        body = await _read_json(request)
        task, player = str(body.get("task", "")), safe_name(str(body.get("player", "")))
        spec, city, episodes = await asyncio.to_thread(tasks.load, task)
        into = catalog.get(str(body["into"])).folder if body.get("into") else None
        wanted = body.get("episode_id")
        if not wanted:
            played = folders.played(player, task, into)
            left = [e for e in episodes if e.id not in played]
            if not left:
                return error_response(f"{player} has played every episode of {task}", 409)
            wanted = left[0].id
        _, _, episode = tasks.episode(task, str(wanted))
        session = PlaySession(task, spec, city, episode, episodes, player, into)
        if len(sessions) > MAX_SESSIONS:
            sessions.pop(next(iter(sessions)))
        sessions[session.id] = session
        return JSONResponse(_play_view(session))

    async def api_play(request: Request) -> Response:
        session = sessions.get(request.path_params["sid"])
        if session is None:
            return error_response("no such play session (it may have ended; start again)")
        if request.method == "GET":
            return JSONResponse(_play_view(session))
        body = await _read_json(request)
        stop, given = body.get("stop"), body.get("slot")
        if not isinstance(stop, bool | None):
            return error_response("stop must be true or false", 400)
        slot = given if isinstance(given, int) and not isinstance(given, bool) else None
        if not stop and slot is None:
            return error_response("slot must be an integer (an action's index)", 400)
        async with session.lock:  # an asyncio lock: other requests go on while one waits
            if stop or slot is None:
                session.stop_early()
            else:
                session.act(slot)
            out = _play_view(session)
            if session.row is not None and session.saved is None:
                plan = (session.task, session.city, tasks.load(session.task)[2], session.scheme)
                folder = await asyncio.to_thread(folders.append, session.row, plan, session.into)
                session.saved = folder.name
            out["saved_to"] = session.saved
        return JSONResponse(out)

    return [
        Route("/api/tasks", api_tasks),
        Route("/api/episodes", api_task_episodes),
        Route("/api/play", api_play_start, methods=["POST"]),
        Route("/api/play/{sid}", api_play, methods=["GET", "POST"]),
    ]


def _episode_entry(episode: Any, played: bool) -> dict[str, Any]:
    """One episode of the play list: id, category, whether played, the instruction's start."""
    return {
        "id": episode.id,
        "category": episode.category,
        "played": played,
        "instruction": episode.instruction[:120],
    }


def _play_view(session: PlaySession) -> dict[str, Any]:
    """What the play page shows of ``session``: its state, views and, once over, the map."""
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


def annotate_routes(state: AppState) -> list[Route]:
    """``/api/route``, ``/api/draw`` and ``/api/annotate``: writing route instructions."""
    tasks, notes = state.tasks, state.notes

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
        body = await _read_json(request)
        texts = ("task", "instruction", "file", "annotator", "from", "to", "episode_id")
        wrong = [k for k in texts if not isinstance(body.get(k, ""), str)]
        if wrong:
            return error_response(f"{wrong[0]} must be a string", 400)
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

    return [
        Route("/api/route", api_route),
        Route("/api/draw", api_draw),
        Route("/api/annotate", api_annotate, methods=["POST"]),
    ]


def _point(text: str) -> tuple[float, float]:
    """``"x,y"`` (metres) as two floats; :class:`FlaneurError` otherwise."""
    try:
        x, y = (float(v) for v in text.split(","))
    except ValueError:
        raise FlaneurError(f"a drawn point must be x,y in metres, not {text[:40]!r}") from None
    return x, y


async def _read_json(request: Request) -> dict[str, Any]:
    """The request body as a JSON object; :class:`FlaneurError` otherwise."""
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise FlaneurError("the request body must be a JSON object") from None
    if not isinstance(body, dict):
        raise FlaneurError("the request body must be a JSON object")
    return body

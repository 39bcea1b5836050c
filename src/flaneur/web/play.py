"""Human play: a person acts through the browser as agent ``human``, one env per session.

The episode runs through the runner's own job code (:func:`flaneur.evaluate.runner.run_job`
on an environment of the runner's pool, then :func:`~flaneur.evaluate.runner.score_jobs`),
so a human's row is built and scored exactly like any agent's. :class:`HumanAgent` suspends
the episode coroutine at each decision; the server resumes it with the slot the player
chose. Finished rows are appended to ``<play dir>/human-<player>/episodes.jsonl`` (or to a
chosen run folder) and the folder's ``summary.json`` is rewritten, so ``flaneur report``
compares the player with agents.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import secrets
import threading
import time
from collections.abc import Coroutine, Generator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from flaneur.agents.base import Action, Agent, step_record
from flaneur.errors import FlaneurError
from flaneur.evaluate.kinds.navigation import navigation_context
from flaneur.evaluate.protocol import DEFAULT_PROTOCOL, protocol_episodes
from flaneur.evaluate.resources import RunResources
from flaneur.evaluate.runlog import FINISHED, read_rows, row_key
from flaneur.evaluate.runner import Job, RunConfig, SolverFactories, run_job, score_jobs
from flaneur.evaluate.summary import outside_entries, summarize_run
from flaneur.evaluate.summary import write_summary as write_whole
from flaneur.tasks.episode import Episode
from flaneur.tasks.spec import TaskSpec
from flaneur.web.catalog import safe_name
from flaneur.web.runs import run_config
from flaneur.world.city import City

HUMAN = "human"
"""Agent name of every human row."""


class _Decision:
    """What :class:`HumanAgent` awaits: the slot the player chooses (sent in by the session)."""

    def __await__(self) -> Generator[_Decision, int, int]:
        slot = yield self
        return slot


class HumanAgent(Agent):
    """An agent whose decisions come from a person (see the module docstring)."""

    name = HUMAN

    def __init__(self) -> None:
        self.observation: Mapping[str, Any] | None = None
        self.shown_at = time.monotonic()

    async def act(self, observation: Mapping[str, Any]) -> Action:
        """Wait for the player's slot; the record holds how long they took to decide."""
        self.observation = observation
        self.shown_at = time.monotonic()
        slot = await _Decision()
        decided_ms = round((time.monotonic() - self.shown_at) * 1000)
        return Action(
            int(slot), str(slot), step_record(parsed_action=int(slot), latency_ms=decided_ms)
        )


def _bearing(city: City, a: int, b: int) -> float:
    xy = city.graph.xy
    dx, dy = xy[b] - xy[a]
    return math.degrees(math.atan2(dx, dy)) % 360.0


class PlaySession:
    """One human episode in progress.

    Parameters
    ----------
    task, spec, city, episode, task_episodes
        The task set and the episode to play.
    player
        Sanitised player name (recorded in the row as ``player``).
    into
        A served run folder to append the row to (default: the player's own folder).
    """

    def __init__(
        self,
        task: str,
        spec: TaskSpec,
        city: City,
        episode: Episode,
        task_episodes: list[Episode],
        player: str,
        into: Path | None = None,
    ) -> None:

        self.id = secrets.token_urlsafe(12)
        self.task, self.city, self.episode, self.player = task, city, episode, player
        self.scheme = spec.scheme
        self.agent = HumanAgent()
        # beside a run's agents, under that run's protocol (its step limits, its rows' field)
        protocol = DEFAULT_PROTOCOL
        if into is not None:
            protocol = str(run_config(into).get("protocol") or DEFAULT_PROTOCOL)
        config = RunConfig(agents=(HUMAN,), tasks=(task,), protocol=protocol)
        (episode,) = protocol_episodes(spec, [episode], protocol)
        self.episode = episode
        task_episodes = protocol_episodes(spec, list(task_episodes), protocol)
        context = replace(
            navigation_context(spec, city, task_episodes, spec.scheme, {}), protocol=protocol
        )
        self._job = Job(
            task, HUMAN, spec.scheme, episode, config.config_hash(task, HUMAN, spec.scheme), context
        )
        factories = SolverFactories(config, lambda _name: self.agent)
        self._episode: Coroutine[Any, Any, dict[str, Any]] = run_job(
            self._job, factories, config, RunResources()
        )
        self.row: dict[str, Any] | None = None
        self.into = into
        self.saved: str | None = None
        self.lock = asyncio.Lock()  # per session; never held by a thread across an await
        self._resume(None)

    @property
    def env(self) -> Any:
        """The player's goal-free view of the environment (:class:`flaneur.agents.EnvView`:
        own state, scheme, step limit, invalid actions), as any agent gets it."""
        return self.agent.env_info.env

    def _resume(self, value: int | None) -> None:

        try:
            self._episode.send(value)
        except StopIteration as done:
            (row,) = score_jobs([(self._job, done.value)])  # the runner's scoring
            self.row = {**row, "player": self.player}

    def act(self, slot: int) -> None:
        """Take the player's action (an action slot; invalid ones count as in any run)."""
        if self.row is not None:
            raise FlaneurError("the episode is over")
        self._resume(int(slot))

    def stop_early(self) -> None:
        """End the episode by stopping where the player stands."""
        if self.row is None:
            self.act(0)

    def choices(self) -> list[dict[str, Any]]:
        """The valid actions now: ``slot``, ``label`` and, when it moves, ``heading``."""
        env = self.env
        state = env.state
        graph = self.city.graph
        out = []
        for slot, label in env.scheme.actions(state):
            item: dict[str, Any] = {"slot": slot, "label": label}
            if self.scheme == "headings" and slot:
                item["heading"] = float(graph.out_headings(state.node)[slot - 1])
            elif self.scheme == "nodes" and slot:
                target = graph.index(label)
                item["heading"] = _bearing(self.city, state.node, target)
            out.append(item)
        return out

    def view(self) -> dict[str, Any]:
        """What the page shows: instruction, position, choices, and the result when over."""
        env = self.env
        state = env.state
        node_id = str(self.city.graph.ids[state.node])
        out: dict[str, Any] = {
            "session": self.id,
            "task": self.task,
            "episode_id": self.episode.id,
            "instruction": self.episode.instruction,
            "scheme": self.scheme,
            "node": node_id,
            "heading": round(float(state.heading), 2),
            "steps": int(state.steps),
            "max_steps": int(env.step_limit),
            "player": self.player,
            "done": self.row is not None,
        }
        if self.row is None:
            out["choices"] = self.choices()
            if env.invalid_actions:
                out["last_invalid"] = env.invalid_actions[-1].get("reason")
        else:
            out["termination"] = self.row.get("termination")
            out["success"] = bool(self.row.get("success"))
            out["metrics"] = self.row.get("metrics") or {}
        return out


class PlayFolders:
    """Where human rows go: ``root/human-<player>`` per player, or one chosen run folder.

    Parameters
    ----------
    root
        Folder holding the players' run folders.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        self._lock = threading.Lock()

    def folder(self, player: str, into: Path | None = None) -> Path:
        """The run folder ``into`` (a served run), else the own folder of ``player``."""
        return into if into is not None else self.root / f"human-{safe_name(player)}"

    def played(self, player: str, task: str, into: Path | None = None) -> set[str]:
        """Episode ids of ``task`` finished by a human in the player's folder (or ``into``)."""
        rows, _ = read_rows(self.folder(player, into) / "episodes.jsonl")
        return {
            str(r["episode_id"])
            for r in rows
            if r.get("agent") == HUMAN
            and r.get("task") == task
            and r.get("termination") in FINISHED
        }

    def append(
        self,
        row: dict[str, Any],
        plan: tuple[str, City, list[Episode], str],
        into: Path | None = None,
    ) -> Path:
        """Append a finished row durably and rewrite the folder's ``summary.json`` (only the
        ``human`` entry of the task; an agents' run keeps its other entries)."""
        folder = self.folder(str(row.get("player") or ""), into)
        with self._lock:
            rows = append_row(folder, row)
            write_summary(folder, rows, plan)
        return folder


def append_row(folder: Path, row: dict[str, Any]) -> list[dict[str, Any]]:
    """Append ``row`` to ``folder/episodes.jsonl`` durably (one write, flush, fsync) and
    return every row of the log. Rows already there are kept as they are (an agents' run
    keeps its errored rows for its own ``--resume``); a line cut short by a kill is dropped
    first, as the runner's resume drops it. An episode the log already holds finished is
    refused."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "episodes.jsonl"
    rows, good = read_rows(log)
    if any(row_key(r) == row_key(row) and r.get("termination") in FINISHED for r in rows):
        raise FlaneurError(f"episode {row['episode_id']!r} is already played in {folder.name}")
    if log.is_file() and log.stat().st_size != good:
        with log.open("r+b") as handle:
            handle.truncate(good)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return [*rows, row]


def write_summary(
    folder: Path, rows: list[dict[str, Any]], plan: tuple[str, City, list[Episode], str]
) -> None:
    """Rewrite ``summary.json`` of a folder after a human row, with the runner's summariser.

    A player's own folder is summarised as a run of agent ``human``. In an agents' run the
    summary is kept and its ``human`` entries are replaced by those the runner itself writes
    when the run is resumed (:func:`flaneur.evaluate.summary.outside_entries`), so a later
    ``flaneur run --resume`` of that folder keeps them as they are.
    """

    path = folder / "summary.json"
    old: dict[str, Any] = {}
    if path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            old = {}
    runs = [r for r in old.get("runs") or [] if isinstance(r, dict)]
    if any(r.get("agent") != HUMAN for r in runs):  # an agents' run: keep what it wrote
        mine = [r for r in runs if r.get("agent") != HUMAN]
        summary = {**old, "runs": mine + outside_entries(rows, [plan])}
    else:
        task = plan[0]
        config = RunConfig(agents=(HUMAN,), tasks=(task,))
        played = [r for r in rows if r.get("task") == task and r.get("agent") == HUMAN]
        summary = summarize_run(
            config, played, [plan], wall_s=0.0, ran=len(played), resumed=True, dropped_errors=0
        )
        summary["runs"] += [r for r in runs if r.get("task") != task]
    summary["episodes"] = len(rows)
    summary["players"] = sorted({str(r.get("player")) for r in rows if r.get("player")})
    write_whole(folder, summary)

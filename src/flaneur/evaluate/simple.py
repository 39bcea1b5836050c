"""A minimal sequential runner: agents on task sets, one JSONL row per episode, a summary.

``run_simple`` runs each agent on each task set, one episode after the other, scores the
runs with :func:`flaneur.metrics.batch_metrics` and writes ``DIR/episodes.jsonl`` and
``DIR/summary.json``. Episode rows hold the ids, agent, task, scheme, termination reason
(``stopped``, ``step_limit``, ``invalid_action``, ``task_error``, ``agent_error``), the
trajectory (node ids and headings), the actions, invalid-action records, the agents' step
records and the metrics. A broken episode (unknown node, ...) or a failing agent gives a row
with the error; the run goes on. The full runner (concurrency, resume) replaces this later.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flaneur.agents import Agent, env_info_for, make_agent
from flaneur.env.navigation_env import NavigationEnv
from flaneur.env.registration import load_task_cached
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.teacher import gold_rollout
from flaneur.errors import FlaneurError
from flaneur.models.errors import ModelError
from flaneur.models.usage import BudgetExceeded
from flaneur.tasks.episode import Episode
from flaneur.world.city import City


def average_reference_length(episodes: Sequence[Episode]) -> float | None:
    """Mean number of nodes of the reference paths of a task set (None without any).

    Agents receive it as ``env_info["avg_reference_length"]`` (baselines stop after about
    that many steps); it is taken over the whole task set, never over a run's selection.
    """
    refs = [len(e.reference_path) for e in episodes if e.reference_path]
    return sum(refs) / len(refs) if refs else None


async def run_episode(
    env: NavigationEnv, agent: Agent, episode: Episode, *, seed: int, task_id: str, **info: Any
) -> dict[str, Any]:
    """Run ``agent`` on one episode; a row without metrics (see the module docstring)."""
    row: dict[str, Any] = {
        "task": task_id, "episode_id": episode.id, "agent": agent.name,
        "scheme": env.scheme.name, "seed": seed, "category": episode.category,
    }  # fmt: skip
    try:
        obs, step_info = env.reset(options={"episode": episode})
    except FlaneurError as err:
        return {**row, "termination": "task_error", "error": str(err)}
    agent.reset(episode, env_info_for(env, seed=seed, task_id=task_id, **info))
    records: list[dict[str, Any]] = []
    at_nodes: list[int] = []
    done = False
    try:
        while not done:
            action = await agent.act({**obs, "info": step_info})
            records.append({k: v for k, v in action.record.items() if v not in (None, 0)})
            at_nodes.append(env.state.node)
            obs, _, terminated, truncated, step_info = env.step(action.slot)
            done = terminated or truncated
        termination = env.termination
        error = None
    except BudgetExceeded:
        raise  # the runner stops scheduling episodes; this one is not written
    except ModelError as err:
        termination, error = "model_error", str(err)
    except FlaneurError as err:
        termination, error = "agent_error", str(err)
    except Exception as err:  # an agent bug must not end the whole run
        termination, error = "agent_error", f"{type(err).__name__}: {err}"
    ids = env.city.graph.ids
    row.update(
        termination=termination,
        steps=env.state.steps,
        success=bool(env.success),
        path=env.path_ids(),
        trajectory=[[str(ids[n]), round(h, 2)] for n, h in env.trajectory],
        actions=list(env.action_log),
        action_nodes=at_nodes,
        invalid_actions=list(env.invalid_actions),
        records=records,
    )
    if error:
        row["error"] = error
    return row


def _turns_pairs(row: dict[str, Any]) -> list[tuple[str, int]]:
    return [(a.upper(), n) for a, n in zip(row["actions"], row["action_nodes"], strict=False)]


def score_rows(city: City, episodes: Sequence[Episode], rows: list[dict[str, Any]]) -> None:
    """Add ``metrics`` to every row that ran (gold actions for KPA from the turns teacher)."""
    from flaneur.metrics import batch_metrics

    ran = [i for i, row in enumerate(rows) if row.get("path")]
    if not ran:
        return
    graph = city.graph
    turns = TurnsScheme(graph)
    gold: list[Any] = []
    agent: list[Any] = []
    for i in ran:
        row, episode = rows[i], episodes[i]
        if row["scheme"] == "turns" and episode.reference_path:
            actions, states = gold_rollout(turns, graph, episode)
            pairs = zip(actions, states, strict=False)  # no state after the final stop
            gold.append([(turns.labels_all[a].upper(), s.node) for a, s in pairs])
            agent.append(_turns_pairs(row))
        else:
            gold.append(None)
            agent.append(None)
    metrics = batch_metrics(
        city,
        [episodes[i] for i in ran],
        [graph.indices(rows[i]["path"]) for i in ran],
        gold_actions=gold,
        agent_actions=agent,
    )
    for i, m in zip(ran, metrics, strict=True):
        rows[i]["metrics"] = m


def declared_scheme(task: str, episodes: Sequence[Episode]) -> str:
    """The scheme a task set declares; a pre-loaded set that is not registered declares it
    by its episodes (see :func:`flaneur.tasks.formats.episode_facts`)."""
    from flaneur.tasks.formats import episode_facts
    from flaneur.tasks.resolve import resolve_task

    try:
        return resolve_task(task).scheme
    except FlaneurError:
        return episode_facts(list(episodes))[0]


def run_simple(
    agents: Sequence[str],
    tasks: Sequence[str],
    data_dir: str | Path,
    out: str | Path,
    *,
    scheme: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    loaded: dict[str, tuple[City, list[Episode]]] | None = None,
) -> dict[str, Any]:
    """Run every agent on every task set and write ``episodes.jsonl`` and ``summary.json``.

    Parameters
    ----------
    agents
        Agent names (see :data:`flaneur.agents.AGENTS`).
    tasks
        Task-set ids.
    data_dir
        The data directory.
    out
        Output folder (created).
    scheme
        Action scheme for all tasks (default: per task, see
        :func:`declared_scheme`).
    limit
        Run only the first ``limit`` episodes of each task set.
    seed
        Run seed (random agents seed each episode from it and the episode id).
    loaded
        Optional pre-loaded ``{task_id: (city, episodes)}`` (tests).

    Returns
    -------
    dict
        The summary written to ``summary.json``.
    """
    from flaneur.metrics import summarize

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    all_rows: list[dict[str, Any]] = []
    runs = []
    for task_id in tasks:
        city, episodes = (loaded or {}).get(task_id) or load_task_cached(task_id, data_dir)
        avg = average_reference_length(episodes)  # the whole set, as in the runner
        episodes = list(episodes)[:limit] if limit is not None else list(episodes)
        env = NavigationEnv(city, episodes, scheme=scheme or declared_scheme(task_id, episodes))
        for name in agents:
            agent = make_agent(name)
            rows = [
                asyncio.run(
                    run_episode(
                        env, agent, ep, seed=seed, task_id=task_id, avg_reference_length=avg
                    )
                )
                for ep in episodes
            ]
            score_rows(city, episodes, rows)
            all_rows += rows
            scored = [r["metrics"] for r in rows if "metrics" in r]
            runs.append({
                "task": task_id, "agent": name, "scheme": env.scheme.name,
                "episodes": len(rows),
                "by_termination": dict(Counter(r["termination"] for r in rows)),
                "summary": summarize(scored) if scored else None,
            })  # fmt: skip
    with (out / "episodes.jsonl").open("w", encoding="utf-8") as handle:
        for row in all_rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    summary = {
        "episodes": len(all_rows),
        "seed": seed,
        "by_termination": dict(Counter(r["termination"] for r in all_rows)),
        "runs": runs,
        "out": str(out),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


def replay_gold(
    city: City, episodes: Sequence[Episode], scheme: str, *, show: int = 5
) -> dict[str, Any]:
    """Replay the teacher in ``scheme`` on every episode inside :class:`NavigationEnv`.

    Returns
    -------
    dict
        ``episodes``, ``tc`` (rate, from :func:`flaneur.metrics.batch_metrics`),
        ``with_reference`` (episodes with a reference path), ``exact_paths`` (of those, runs
        whose path equals the reference path and that stopped), ``by_termination``,
        ``mismatch_count`` and up to ``show`` ``mismatches`` (episode ids; broken episodes
        count as mismatches).
    """
    from flaneur.metrics import batch_metrics

    env = NavigationEnv(city, episodes, scheme=scheme)
    paths, ok_eps, mismatches = [], [], []
    terminations: Counter[str] = Counter()
    exact = with_reference = 0
    for ep in episodes:
        try:
            env.reset(options={"episode": ep})
        except FlaneurError:
            terminations["task_error"] += 1
            mismatches.append(ep.id)
            continue
        teacher = env.teacher()
        done = False
        try:
            while not done:
                _, _, terminated, truncated, _ = env.step(teacher.act(env.state))
                done = terminated or truncated
            termination = env.termination or ""
        except FlaneurError:  # e.g. a reference path that jumps between unlinked nodes
            termination = "teacher_error"
        terminations[termination] += 1
        path = env.path_ids()
        if ep.reference_path:
            with_reference += 1
            if path == list(ep.reference_path) and termination == "stopped":
                exact += 1
            else:
                mismatches.append(ep.id)
        paths.append(city.graph.indices(path))
        ok_eps.append(ep)
    rows = batch_metrics(city, ok_eps, paths) if ok_eps else []
    tc = sum(1 for r in rows if r["tc"]) / len(episodes) if episodes else None
    return {
        "episodes": len(episodes),
        "tc": tc,
        "with_reference": with_reference,
        "exact_paths": exact,
        "by_termination": dict(terminations),
        "mismatch_count": len(mismatches),
        "mismatches": mismatches[:show],
    }


__all__ = ["replay_gold", "run_episode", "run_simple", "score_rows"]

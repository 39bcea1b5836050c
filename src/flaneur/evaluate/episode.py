"""One episode as a unit of work: run an agent in an environment, then score the row.

:func:`run_episode` runs an agent on one episode and returns its row: the ids, agent, task,
scheme, termination reason (``stopped``, ``step_limit``, ``invalid_action``, ``task_error``,
``agent_error``, ``model_error``), the trajectory (node ids and headings), the actions,
invalid-action records and the agents' step records. A broken episode (unknown node, ...)
or a failing agent gives a row with the error. :func:`score_rows` adds the metrics. The
runner (:mod:`flaneur.evaluate.runner`) calls both for every episode it schedules.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from flaneur.agents import Agent, env_info_for
from flaneur.env.navigation_env import NavigationEnv
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.teacher import gold_rollout
from flaneur.errors import FlaneurError
from flaneur.metrics import batch_metrics
from flaneur.models.errors import ModelError
from flaneur.models.usage import BudgetExceeded
from flaneur.tasks.episode import Episode
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph

_SCORING_SCHEMES: OrderedDict[int, tuple[StreetGraph, TurnsScheme]] = OrderedDict()


def share_scoring_scheme(scheme: TurnsScheme) -> None:
    """Use an environment's ``turns`` scheme to score its graph too: the scheme holds only
    memoised transitions, so one table serves both and fills once."""
    _SCORING_SCHEMES[id(scheme.graph)] = (scheme.graph, scheme)
    _SCORING_SCHEMES.move_to_end(id(scheme.graph))
    while len(_SCORING_SCHEMES) > 4:
        _SCORING_SCHEMES.popitem(last=False)


def scoring_scheme(graph: StreetGraph) -> TurnsScheme:
    """The ``turns`` scheme that replays gold actions for KPA on ``graph``, built once per
    process (its transition table fills as it is used) for the last few graphs."""
    known = _SCORING_SCHEMES.get(id(graph))
    if known is not None and known[0] is graph:
        _SCORING_SCHEMES.move_to_end(id(graph))
        return known[1]
    scheme = TurnsScheme(graph)
    _SCORING_SCHEMES[id(graph)] = (graph, scheme)
    while len(_SCORING_SCHEMES) > 4:
        _SCORING_SCHEMES.popitem(last=False)
    return scheme


def average_reference_length(episodes: Sequence[Episode]) -> float | None:
    """Mean number of nodes of the reference paths of a task set (None without any).

    Agents receive it as ``env_info.avg_reference_length`` (baselines stop after about
    that many steps); it is taken over the whole task set, never over a run's selection.
    """
    refs = [len(e.reference_path) for e in episodes if e.reference_path]
    return sum(refs) / len(refs) if refs else None


async def run_episode(
    env: NavigationEnv, agent: Agent, episode: Episode, *, seed: int, task_id: str, **info: Any
) -> dict[str, Any]:
    """Run ``agent`` on one episode; a row without metrics (see the module docstring)."""
    row: dict[str, Any] = {
        "task": task_id,
        "episode_id": episode.id,
        "agent": agent.name,
        "scheme": env.scheme.name,
        "seed": seed,
        "category": episode.category,
    }
    try:
        obs, step_info = env.reset(options={"episode": episode})
    except FlaneurError as err:
        return {**row, "termination": "task_error", "error": str(err)}
    env_info = env_info_for(env, seed=seed, task_id=task_id, **info)
    agent.reset(episode, env_info)
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
    visited = env.city.graph.ids[[n for n, _ in env.trajectory]].tolist()
    row.update(
        termination=termination,
        steps=env.state.steps,
        success=bool(env.success),
        path=env.path_ids(),
        trajectory=[
            [str(i), round(h, 2)] for i, (_, h) in zip(visited, env.trajectory, strict=True)
        ],
        actions=list(env.action_log),
        action_nodes=at_nodes,
        invalid_actions=list(env.invalid_actions),
        records=records,
    )
    # what the agent read of the privileged field (empty: nothing); reports flag the others
    row["privileged"] = sorted(env_info.privileged.uses) if env_info.privileged else []
    ablations = list(agent.ablations())  # what the run lacked, said (VELMA: "no image")
    if ablations:
        row["ablations"] = ablations
    if error:
        row["error"] = error
    return row


_GOLD: OrderedDict[int, tuple[Episode, TurnsScheme, list[tuple[str, int]]]] = OrderedDict()
_GOLD_KEPT = 50_000


def gold_turns_actions(turns: TurnsScheme, episode: Episode) -> list[tuple[str, int]]:
    """The teacher's ``turns`` actions on ``episode`` as ``[(LABEL, node), ...]`` (for KPA),
    computed once per episode (every agent of a run is scored against the same ones)."""
    known = _GOLD.get(id(episode))
    if known is not None and known[0] is episode and known[1] is turns:
        return known[2]
    actions, states = gold_rollout(turns, turns.graph, episode)
    pairs = zip(actions, states, strict=False)  # no state after the final stop
    gold = [(turns.labels_all[a].upper(), s.node) for a, s in pairs]
    _GOLD[id(episode)] = (episode, turns, gold)
    while len(_GOLD) > _GOLD_KEPT:
        _GOLD.popitem(last=False)
    return gold


def _turns_pairs(row: dict[str, Any]) -> list[tuple[str, int]]:
    return [(a.upper(), n) for a, n in zip(row["actions"], row["action_nodes"], strict=False)]


def score_rows(city: City, episodes: Sequence[Episode], rows: list[dict[str, Any]]) -> None:
    """Add ``metrics`` to every row that ran (gold actions for KPA from the turns teacher)."""

    ran = [i for i, row in enumerate(rows) if row.get("path")]
    if not ran:
        return
    graph = city.graph
    turns = scoring_scheme(graph)
    gold: list[Any] = []
    agent: list[Any] = []
    for i in ran:
        row, episode = rows[i], episodes[i]
        if row["scheme"] == "turns" and episode.reference_path:
            gold.append(gold_turns_actions(turns, episode))
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


__all__ = [
    "average_reference_length",
    "run_episode",
    "score_rows",
    "scoring_scheme",
    "share_scoring_scheme",
]

"""``flaneur validate gold``: replay the teacher on every episode of a task set."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from flaneur.env.navigation_env import NavigationEnv
from flaneur.errors import FlaneurError
from flaneur.metrics import batch_metrics
from flaneur.tasks.episode import Episode
from flaneur.world.city import City


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


__all__ = ["replay_gold"]

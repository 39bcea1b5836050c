"""Gymnasium ids: ``flaneur/toy-v0`` and ``flaneur/<task-id>`` for the task sets.

``gymnasium.make("flaneur/map2seq-unseen-dev-v1", data_dir="../shared/data")`` loads the
task set through :func:`flaneur.tasks.registry.load_task` (once per ``(task, data_dir)``)
and builds a :class:`~flaneur.env.navigation_env.NavigationEnv`; other keyword arguments go
to the environment. The default scheme is ``turns`` for map2seq and Touchdown and
``headings`` for CitySeeker. Importing :mod:`flaneur.env` registers the ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium

from flaneur.env.navigation_env import NavigationEnv
from flaneur.env.toy import toy_city, toy_episodes
from flaneur.errors import FlaneurError

TASK_IDS = (
    "map2seq-unseen-dev-v1",
    "map2seq-seen-dev-v1",
    "touchdown-unseen-dev-v1",
    "cityseeker-shanghai2-v1",
)
"""Task sets registered as ``flaneur/<task-id>``."""

_TASK_CACHE: dict[tuple[str, str], tuple[Any, list[Any]]] = {}


def default_scheme(task_id: str) -> str:
    """``headings`` for need-finding sets (CitySeeker, generated ``*-needs-*``), else ``turns``."""
    return "headings" if task_id.startswith("cityseeker") or "-needs-" in task_id else "turns"


def load_task_cached(task_id: str, data_dir: str | Path) -> tuple[Any, list[Any]]:
    """``(city, episodes)`` of a task set, loaded once per ``(task_id, data_dir)``."""
    key = (task_id, str(Path(data_dir).resolve()))
    if key not in _TASK_CACHE:
        try:
            from flaneur.tasks.registry import load_task
        except ImportError as err:  # pragma: no cover - registry is another module
            raise FlaneurError(f"the task registry is not available ({err})") from None
        city, episodes = load_task(task_id, data_dir)
        _TASK_CACHE[key] = (city, list(episodes))
    return _TASK_CACHE[key]


def make_task_env(task_id: str, data_dir: str | Path | None = None, **kwargs: Any) -> NavigationEnv:
    """Entry point of ``flaneur/<task-id>``: the task set's city and episodes in an env."""
    if data_dir is None:
        raise FlaneurError(f"flaneur/{task_id} needs data_dir=... (the folder of the data)")
    city, episodes = load_task_cached(task_id, data_dir)
    kwargs.setdefault("scheme", default_scheme(task_id))
    return NavigationEnv(city, episodes, **kwargs)


def make_toy_env(**kwargs: Any) -> NavigationEnv:
    """Entry point of ``flaneur/toy-v0``: the built-in toy city and its five episodes."""
    return NavigationEnv(toy_city(), toy_episodes(), **kwargs)


def register_envs() -> list[str]:
    """Register all flaneur ids with Gymnasium (idempotent); returns them."""
    ids = []
    specs = [("flaneur/toy-v0", "flaneur.env.registration:make_toy_env", {})]
    for task_id in TASK_IDS:
        name, _, version = task_id.rpartition("-v")
        specs.append(
            (f"flaneur/{name}-v{version}", "flaneur.env.registration:make_task_env",
             {"task_id": task_id})
        )  # fmt: skip
    for env_id, entry, kwargs in specs:
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry, kwargs=kwargs)
        ids.append(env_id)
    return ids


__all__ = [
    "TASK_IDS",
    "default_scheme",
    "load_task_cached",
    "make_task_env",
    "make_toy_env",
    "register_envs",
]

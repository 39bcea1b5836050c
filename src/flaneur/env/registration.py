"""Gymnasium ids: ``flaneur/toy-v0`` and ``flaneur/<task-id>`` for every registered task set.

``gymnasium.make("flaneur/map2seq-unseen-dev-v1", data_dir="../shared/data")`` loads the
task set through :func:`flaneur.tasks.registry.load_spec` (once per ``(task, data_dir)``)
and builds a :class:`~flaneur.env.navigation_env.NavigationEnv` with the set's declared
scheme; other keyword arguments go to the environment. Sets that need no data directory
(``gymnasium.make("flaneur/helsinki-needs-v1")``) take no ``data_dir``. Importing
:mod:`flaneur.env` registers an id for every task set registered at that time (built-in,
``$FLANEUR_TASKS``, ``flaneur.tasks`` entry points); sets registered later get theirs from
:func:`flaneur.tasks.register_task`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium

from flaneur.env.navigation_env import NavigationEnv
from flaneur.env.toy import toy_city, toy_episodes
from flaneur.errors import FlaneurError
from flaneur.tasks.registry import BUILTIN_TASKS, DATA_ENV, get_task, list_tasks, load_spec
from flaneur.tasks.resolve import resolve_task

if TYPE_CHECKING:
    from flaneur.tasks.spec import TaskSpec

_TASK_CACHE: dict[tuple, tuple[Any, list[Any]]] = {}


def default_scheme(task: str) -> str:
    """The action scheme a task set declares (a registered id or a task file)."""

    return resolve_task(task).scheme


def load_spec_cached(spec: TaskSpec, data_dir: str | Path | None) -> tuple[Any, list[Any]]:
    """``(city, episodes)`` of a task set, loaded once per ``(set, data_dir)`` per process."""

    raw = data_dir if data_dir is not None else os.environ.get(DATA_ENV)
    folder = str(Path(raw).resolve()) if raw and spec.needs_data_dir else None
    key = (spec.id, spec.city, spec.files, spec.loader, folder)
    if key not in _TASK_CACHE:
        city, episodes = load_spec(spec, data_dir)
        _TASK_CACHE[key] = (city, list(episodes))
    return _TASK_CACHE[key]


def load_task_cached(task: str, data_dir: str | Path | None) -> tuple[Any, list[Any]]:
    """``(city, episodes)`` of a registered id or task file, loaded once per process."""

    return load_spec_cached(resolve_task(task), data_dir)


def make_task_env(task_id: str, data_dir: str | Path | None = None, **kwargs: Any) -> NavigationEnv:
    """Entry point of ``flaneur/<task-id>``: the task set's city and episodes in an env."""

    spec = get_task(task_id)
    if spec.needs_data_dir and data_dir is None and not os.environ.get(DATA_ENV):
        raise FlaneurError(
            f"flaneur/{task_id} needs data_dir=... (the folder of the data) or ${DATA_ENV}"
        )
    city, episodes = load_spec_cached(spec, data_dir)
    kwargs.setdefault("scheme", spec.scheme)
    return NavigationEnv(city, episodes, **kwargs)


def make_toy_env(**kwargs: Any) -> NavigationEnv:
    """Entry point of ``flaneur/toy-v0``: the built-in toy city and its five episodes."""
    return NavigationEnv(toy_city(), toy_episodes(), **kwargs)


def register_task_env(task_id: str) -> str:
    """Register ``flaneur/<task_id>`` with Gymnasium (idempotent); returns the id."""
    env_id = f"flaneur/{task_id}"
    if env_id not in gymnasium.registry:
        gymnasium.register(
            id=env_id,
            entry_point="flaneur.env.registration:make_task_env",
            kwargs={"task_id": task_id},
        )
    return env_id


def register_envs() -> list[str]:
    """Register ``flaneur/toy-v0`` and every registered navigation task set with Gymnasium
    (idempotent; task sets of other kinds are not environments).

    Returns the ids. A registry file or entry point that fails to load leaves its sets out
    here; the error is reported by the command or call that looks tasks up.
    """

    if "flaneur/toy-v0" not in gymnasium.registry:
        gymnasium.register(id="flaneur/toy-v0", entry_point="flaneur.env.registration:make_toy_env")
    try:
        specs = list_tasks()
    except FlaneurError:
        specs = list(BUILTIN_TASKS)
    navigation = [spec for spec in specs if spec.kind == "navigation"]
    return ["flaneur/toy-v0", *(register_task_env(spec.id) for spec in navigation)]


__all__ = [
    "default_scheme",
    "load_spec_cached",
    "load_task_cached",
    "make_task_env",
    "make_toy_env",
    "register_envs",
    "register_task_env",
]

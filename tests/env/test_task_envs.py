"""``gymnasium.make("flaneur/<id>")`` for every registered task set: API check and determinism.

Sets that need no data directory are made every time (``helsinki-needs-v1`` builds the
built-in Helsinki pack on first use); the data sets are made when ``/work/shared/data`` (or
``$FLANEUR_DATA``) is there, and skipped otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import flaneur.env  # noqa: F401  (registers the ids)
from flaneur.env.registration import register_envs
from flaneur.errors import FlaneurError
from flaneur.tasks import list_tasks

SHARED = Path(os.environ.get("FLANEUR_DATA") or Path(__file__).parents[3] / "shared" / "data")
if not SHARED.is_dir():
    SHARED = Path("/work/shared/data")
ROLLOUT_STEPS = 30


def _data_dir_for(task_id: str) -> Path | None:
    spec = next(s for s in list_tasks() if s.id == task_id)
    if not spec.needs_data_dir:
        return None
    if not SHARED.is_dir():
        pytest.skip(f"{task_id} needs the datasets ({SHARED} is missing)")
    return SHARED


def _make(task_id: str, **kwargs):
    data_dir = _data_dir_for(task_id)
    extra = {"data_dir": str(data_dir)} if data_dir is not None else {}
    return gym.make(f"flaneur/{task_id}", disable_env_checker=True, **extra, **kwargs)


def _rollout(env, seed: int) -> list:
    """Observations, rewards and flags of a seeded random rollout over masked actions."""
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = [(info["node_id"], float(obs["heading"][0]))]
    for _ in range(ROLLOUT_STEPS):
        legal = np.flatnonzero(obs["action_mask"])
        action = int(rng.choice(legal))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((info["node_id"], float(obs["heading"][0]), reward, terminated, truncated))
        if terminated or truncated:
            obs, info = env.reset()
            trace.append(("reset", info["node_id"]))
    return trace


TASK_IDS = [spec.id for spec in list_tasks() if spec.kind == "navigation"]


def test_every_registered_set_has_an_id() -> None:
    ids = set(register_envs())
    assert {f"flaneur/{t}" for t in TASK_IDS} <= ids
    assert "flaneur/helsinki-needs-v1" in ids


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_make_check_and_declared_scheme(task_id: str) -> None:
    env = _make(task_id)
    spec = next(s for s in list_tasks() if s.id == task_id)
    assert env.unwrapped.scheme.name == spec.scheme
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_same_seed_same_rollout(task_id: str) -> None:
    first, second = _make(task_id), _make(task_id)
    assert _rollout(first, seed=7) == _rollout(second, seed=7)
    assert _rollout(first, seed=7) != _rollout(first, seed=8)


def test_data_set_without_data_dir_is_one_clear_error(monkeypatch) -> None:
    monkeypatch.delenv("FLANEUR_DATA", raising=False)
    with pytest.raises(FlaneurError, match=r"flaneur/map2seq-seen-dev-v1 needs data_dir"):
        gym.make("flaneur/map2seq-seen-dev-v1")


def test_validate_gold_needs_no_data_dir_for_generated_sets(monkeypatch, capsys) -> None:
    import json

    from flaneur.cli import main

    monkeypatch.delenv("FLANEUR_DATA", raising=False)
    main(
        [
            "validate",
            "gold",
            "--tasks",
            "helsinki-needs-v1",
            "--schemes",
            "headings",
            "--limit",
            "20",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["results"][0]["exact_paths"] == 20

"""NavigationEnv: Gymnasium conformance, ids, determinism, invalid actions, bad episodes."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import flaneur.env  # noqa: F401  (registers the ids)
from flaneur.env import NavigationEnv, toy_city, toy_episodes
from flaneur.env.registration import register_envs
from flaneur.env.schemes.turns import FORWARD, LEFT, TURN_AROUND
from flaneur.errors import FlaneurError, UnknownNodeError
from flaneur.tasks import list_tasks

ALL_SENSORS = ["intersection", "landmarks", "nearby", "online_map"]


@pytest.fixture(scope="module")
def city():
    return toy_city()


@pytest.mark.parametrize("scheme", ["turns", "headings", "nodes"])
@pytest.mark.parametrize("verbalize", [False, True])
def test_check_env_passes(city, scheme, verbalize):
    sensors = ALL_SENSORS if verbalize else None
    env = NavigationEnv(city, toy_episodes(), scheme=scheme, sensors=sensors, verbalize=verbalize)
    check_env(env, skip_render_check=True)


def test_check_env_with_jumps_terminate_policy_and_render():
    env = gym.make(
        "flaneur/toy-v0",
        scheme="nodes",
        scheme_options={"allow_jumps": True},
        invalid_action="terminate",
        render_mode="ansi",
    )
    check_env(env.unwrapped)


def test_registered_ids_and_make(city):
    ids = register_envs()
    assert "flaneur/toy-v0" in ids
    navigation = {f"flaneur/{t.id}" for t in list_tasks() if t.kind == "navigation"}
    assert navigation <= set(ids) and not any("recognition" in i for i in ids)
    env = gym.make("flaneur/toy-v0", scheme="headings")
    obs, _info = env.reset(seed=3)
    assert env.action_space.n == 1 + 5  # stop + the 5 streets of F5
    assert obs["instruction"] in {e.instruction for e in toy_episodes()}
    with pytest.raises(FlaneurError, match="data_dir"):
        gym.make("flaneur/map2seq-unseen-dev-v1")


def test_observation_fields(city):
    env = NavigationEnv(city, toy_episodes(), scheme="turns")
    obs, info = env.reset(options={"episode": "toy-east"})
    assert set(obs) == {"instruction", "node", "heading", "action_mask", "step"}
    assert obs["node"] == city.graph.index("W1") and info["node_id"] == "W1"
    assert obs["heading"].dtype == np.float32 and obs["heading"].shape == (1,)
    assert obs["action_mask"].tolist() == [1, 1, 0, 0, 1]  # 2-way node: no left/right
    obs, reward, terminated, truncated, info = env.step(FORWARD)
    assert info["node_id"] == "X4" and obs["step"] == 1 and obs["action_mask"].tolist() == [1] * 5
    assert (reward, terminated, truncated) == (0.0, False, False)


def test_text_observation(city):
    env = NavigationEnv(
        city,
        toy_episodes(),
        scheme="turns",
        sensors=["intersection", "landmarks"],
        verbalize=True,
    )
    env.reset(options={"episode": "toy-east"})
    obs, *_, info = env.step("forward")
    assert obs["text"].startswith("There is a 4-way intersection.")
    assert "Cafe Aalto" in obs["text"] and obs["text"].endswith(
        "Actions: stop, forward, left, right, turn_around."
    )
    assert info["sensors"]["intersection"] == 4


def test_step_limit_truncates(city):
    env = NavigationEnv(city, toy_episodes(), scheme="turns", max_steps=3)
    env.reset(options={"episode": "toy-east"})
    for _ in range(2):
        assert not any(env.step(FORWARD)[2:4])
    _, _, terminated, truncated, info = env.step(FORWARD)
    assert truncated and not terminated and info["termination"] == "step_limit"
    with pytest.raises(FlaneurError, match="reset"):
        env.step(FORWARD)


def test_stop_off_goal_gives_no_reward(city):
    env = NavigationEnv(city, toy_episodes(), scheme="turns")
    env.reset(options={"episode": "toy-east"})
    _, reward, terminated, _, info = env.step(0)
    assert terminated and reward == 0.0 and info["termination"] == "stopped"
    assert env.path_ids() == ["W1"]


@pytest.mark.parametrize("bad", [LEFT, 9, -1, "fly", 2.5, None, np.int64(7)])
def test_invalid_actions_noop(city, bad):
    env = NavigationEnv(city, toy_episodes(), scheme="turns")
    env.reset(options={"episode": "toy-east"})  # W1: 2-way node, left is invalid
    obs, _reward, terminated, truncated, info = env.step(bad)
    assert not terminated and not truncated
    assert info["action"] == "invalid" and info["invalid_action"]["policy"] == "noop"
    assert info["node_id"] == "W1" and obs["step"] == 1
    assert len(env.invalid_actions) == 1


def test_invalid_action_terminate_and_remap(city):
    env = NavigationEnv(city, toy_episodes(), scheme="turns", invalid_action="terminate")
    env.reset(options={"episode": "toy-east"})
    _, _, terminated, _, info = env.step(LEFT)
    assert terminated and info["termination"] == "invalid_action"
    env = NavigationEnv(city, toy_episodes(), scheme="turns", invalid_action="remap")
    env.reset(options={"episode": "toy-east"})
    _, _, _, _, info = env.step(LEFT)  # VELMA: left on a 2-way node means forward
    assert info["node_id"] == "X4" and info["invalid_action"]["remapped_to"] == FORWARD


def test_unknown_node_and_missing_goal_are_clear_errors(city):
    bad = dataclasses.replace(toy_episodes()[0], id="bad", start_node="nowhere")
    env = NavigationEnv(city, [bad, *toy_episodes()])
    with pytest.raises(UnknownNodeError, match=r"nowhere.*episode 'bad', field start_node"):
        env.reset(options={"episode": "bad"})
    _obs, info = env.reset(options={"episode": "toy-east"})  # the env still works
    assert info["node_id"] == "W1"
    no_goal = dataclasses.replace(toy_episodes()[0], id="nogoal", goal_nodes=(), reference_path=())
    with pytest.raises(FlaneurError, match="neither goal_nodes nor reference_path"):
        NavigationEnv(city, no_goal).reset()
    with pytest.raises(FlaneurError, match="no episode with id"):
        env.reset(options={"episode": "missing"})
    with pytest.raises(FlaneurError, match="unknown action scheme"):
        NavigationEnv(city, toy_episodes(), scheme="teleport")


def test_same_seed_same_episodes_and_sequential_order(city):
    def sample(seed):
        env = NavigationEnv(city, toy_episodes())
        out = [env.reset(seed=seed)[1]["episode_id"]]
        out += [env.reset()[1]["episode_id"] for _ in range(6)]
        return out

    assert sample(7) == sample(7)
    env = NavigationEnv(city, toy_episodes(), episode_order="sequential")
    assert [env.reset()[1]["episode_id"] for _ in range(6)] == [
        "toy-east",
        "toy-fork",
        "toy-five",
        "toy-back",
        "toy-goal",
        "toy-east",
    ]


def test_nodes_scheme_jumps_use_one_step_per_edge(city):
    env = NavigationEnv(city, toy_episodes(), scheme="nodes", scheme_options={"allow_jumps": True})
    env.reset(options={"episode": "toy-east"})  # W1, neighbours X4 and W2
    env.step("X4")  # observes N1, E1, S1
    _, _, _, _, info = env.step("W2")  # W2 was observed from W1: back through W1
    assert info["node_id"] == "W2" and info["steps"] == 3
    assert env.path_ids() == ["W1", "X4", "W1", "W2"]
    obs, *_ = env.step("E1")  # not adjacent: W1, X4, E1 = 3 edges
    assert obs["step"] == 6 and env.path_ids()[-1] == "E1"


def test_ansi_render(city):
    env = NavigationEnv(city, toy_episodes(), render_mode="ansi")
    env.reset(options={"episode": "toy-back"})
    text = env.render()
    assert "node X4" in text and "turn_around" in text
    env.step(TURN_AROUND)
    assert "heading 180" in env.render()

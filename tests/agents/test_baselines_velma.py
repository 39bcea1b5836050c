"""The random and forward baselines follow VELMA's run_baselines.py on its datasets."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import random

import pytest

from flaneur.agents import ForwardAgent, RandomAgent
from flaneur.agents.base import env_info_for
from flaneur.env import NavigationEnv, toy_city, toy_episodes
from flaneur.evaluate.episode import run_episode


def as_dataset(episode, dataset):
    return dataclasses.replace(episode, metadata={**episode.metadata, "dataset": dataset})


def run(env, agent, episode, seed=0, **info):
    return asyncio.run(run_episode(env, agent, episode, seed=seed, task_id="toy", **info))


@pytest.fixture(scope="module")
def env():
    return NavigationEnv(toy_city(), toy_episodes())


def test_velma_datasets_stop_after_40_panoramas_or_56_actions(env):
    episode = toy_episodes()[0]
    for agent in (RandomAgent(), ForwardAgent()):
        env.reset(options={"episode": episode})
        agent.reset(as_dataset(episode, "map2seq"), env_info_for(env, avg_reference_length=7))
        assert (agent.stop_after, agent.action_limit) == (40, 56)
        agent.reset(episode, env_info_for(env, avg_reference_length=7))
        assert (agent.stop_after, agent.action_limit) == (7, None)


def test_map2seq_random_always_starts_forward(env):
    # toy-fork starts on X4 (4 streets): on map2seq the first action is forward (VELMA's
    # map2seq agents begin with it); on Touchdown the start intersection is a random choice
    fork = toy_episodes()[1]
    firsts = {
        run(env, RandomAgent(), as_dataset(fork, "map2seq"), seed=s)["actions"][0]
        for s in range(20)
    }
    assert firsts == {"forward"}
    firsts = {
        run(env, RandomAgent(), as_dataset(fork, "touchdown"), seed=s)["actions"][0]
        for s in range(20)
    }
    assert firsts == {"forward", "left", "right"}  # never turn_around (as released)


def test_turn_start_option_turns_around_on_some_episodes(env):
    east = as_dataset(toy_episodes()[0], "touchdown")
    firsts = {run(env, RandomAgent(start="turn"), east, seed=s)["actions"][0] for s in range(20)}
    assert firsts == {"forward", "turn_around"}
    with pytest.raises(ValueError, match="start must be one of velma, turn"):
        RandomAgent(start="spin")


def test_rotation_is_followed_by_forward_and_dead_ends_stop(env):
    fork = as_dataset(toy_episodes()[1], "touchdown")
    for seed in range(20):
        actions = run(env, RandomAgent(), fork, seed=seed)["actions"]
        for before, after in itertools.pairwise(actions):
            if before in ("left", "right"):
                assert after == "forward", actions
        assert "turn_around" not in actions  # VELMA stops at a dead end instead
        assert actions[-1] == "stop"


def test_velma_dead_end_stops_even_facing_its_only_street(env):
    # W2 has one street; toy-goal starts there facing it (270 degrees)
    goal = toy_episodes()[4]
    other = run(env, ForwardAgent(), goal)
    velma = run(env, ForwardAgent(), as_dataset(goal, "map2seq"))
    assert velma["actions"] == ["stop"] and velma["path"] == ["W2"]
    assert len(other["path"]) > 1


def test_forward_first_move_takes_the_closest_street_whatever_its_angle():
    # CitySeeker episodes start facing north: the first move may have to turn round
    back = dataclasses.replace(toy_episodes()[4], start_heading=90.0)  # W2's street is at 270
    env = NavigationEnv(toy_city(), [back], scheme="headings")
    row = run(env, ForwardAgent(), back)
    assert row["path"][:2] == ["W2", "W1"] and row["actions"][0] != "stop"


# ---------------------------------------------------------------------- --protocol paper
def paper_run(agent, episode, pool, seed=0):
    env = NavigationEnv(toy_city(), pool)
    return run(env, agent, episode, seed=seed, task_episodes=pool, protocol="paper")


def test_paper_map2seq_baselines_begin_forward_even_at_a_dead_end():
    # toy-goal starts on W2, a dead end: VELMA's map2seq agents step forward before asking
    goal = as_dataset(toy_episodes()[4], "map2seq")
    for agent in (ForwardAgent(), RandomAgent()):
        row = paper_run(agent, goal, [goal])
        assert row["actions"][0] == "forward" and row["path"][:2] == ["W2", "W1"]
        assert "begin with forward" in row["records"][0]["thoughts"]
    env = NavigationEnv(toy_city(), [goal])
    assert run(env, ForwardAgent(), goal, task_episodes=[goal])["actions"] == ["stop"]
    touchdown = as_dataset(toy_episodes()[4], "touchdown")
    assert paper_run(ForwardAgent(), touchdown, [touchdown])["actions"] == ["stop"]


def test_paper_random_draws_from_velma_seeded_stream_shared_in_file_order():
    # toy-fork starts on X4 (4 streets): its first decision is VELMA's first draw
    pool = [as_dataset(e, "touchdown") for e in toy_episodes()]
    fork = pool[1]
    first = paper_run(RandomAgent(), fork, [fork])["actions"][0]
    assert first == random.Random(1).choice(["forward", "left", "right"])
    seeded = paper_run(RandomAgent(seed=7), fork, [fork])["actions"][0]
    assert seeded == random.Random(7).choice(["forward", "left", "right"])
    # an episode's draws depend on the episodes before it; any run order gives the same rows
    in_order = [paper_run(RandomAgent(), e, pool)["actions"] for e in pool]
    backwards = [paper_run(RandomAgent(), e, pool)["actions"] for e in pool[::-1]]
    assert backwards[::-1] == in_order
    assert paper_run(RandomAgent(), fork, pool, seed=5)["actions"] == in_order[1]  # not --seed
    # toy-east starts on W1 (2 streets): no draw, as the only reading of VELMA's code that runs
    assert {paper_run(RandomAgent(seed=s), pool[0], pool)["actions"][0] for s in range(5)} == {
        "forward"
    }

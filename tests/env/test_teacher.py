"""The teacher reproduces hand-made routes (with a revisit) in every scheme and finds goals."""

from __future__ import annotations

import pytest

from flaneur.env import NavigationEnv, make_scheme, toy_city, toy_episodes
from flaneur.env.schemes.base import STOP
from flaneur.env.schemes.turns import FORWARD, LEFT, RIGHT, TURN_ACTIONS, TURN_AROUND
from flaneur.env.teacher import Teacher, TeacherError, action_toward, gold_rollout, node_path
from flaneur.tasks.episode import Episode


@pytest.fixture(scope="module")
def city():
    return toy_city()


def ids(city, nodes):
    return [str(city.graph.ids[v]) for v in nodes]


@pytest.mark.parametrize("scheme", ["turns", "headings", "nodes"])
@pytest.mark.parametrize("episode", toy_episodes()[:4], ids=lambda e: e.id)
def test_gold_rollout_reproduces_reference_paths(city, scheme, episode):
    actions, states = gold_rollout(make_scheme(scheme, city.graph), city.graph, episode)
    assert actions[-1] == STOP
    assert ids(city, node_path(states)) == list(episode.reference_path)


def test_turns_gold_actions_of_the_toy_routes(city):
    #   W1 -> X4 -> E1 -> T3 -> E3 -> D: straight on through the 4-way X4 and the T3 bar
    s = make_scheme("turns", city.graph)
    east, fork, five, back = toy_episodes()[:4]
    names = lambda ep: [TURN_ACTIONS[a] for a in gold_rollout(s, city.graph, ep)[0]]  # noqa: E731
    assert names(east) == ["forward"] * 5 + ["stop"]
    # X4 -> E1 -> T3, rotate right at the T junction, then down to the fork and left
    assert names(fork)[:4] == ["forward", "forward", "right", "forward"]
    assert names(fork)[-1] == "stop"
    # the 5-way F5: the agent arrives facing south; F5W (west) is a right turn
    assert "right" in names(five)
    # the revisit: north, turn around at N1, back through X4 (no stop there), then east
    assert names(back) == ["forward", "turn_around", "forward", "left", "forward", "stop"]


def test_revisit_pointer_does_not_stop_at_the_first_visit(city):
    ep = toy_episodes()[3]  # X4, N1, X4, E1: X4 appears twice
    s = make_scheme("headings", city.graph)
    teacher = Teacher.for_episode(s, city.graph, ep)
    state = s.start(city.graph.index("X4"), 0.0)
    seen = []
    while True:
        a = teacher.act(state)
        if a == STOP:
            break
        state = s.step(state, a)
        seen.append(str(city.graph.ids[state.node]))
    assert seen == ["N1", "X4", "E1"]


def test_off_path_the_teacher_leads_back_to_the_goal(city):
    ep = toy_episodes()[0]  # W1 ... D
    s = make_scheme("turns", city.graph)
    teacher = Teacher.for_episode(s, city.graph, ep)
    state = s.start(city.graph.index("N2"), 180.0)  # not on the reference path
    for _ in range(30):
        a = teacher.act(state)
        if a == STOP:
            break
        state = s.step(state, a)
    assert str(city.graph.ids[state.node]) == "D"


def test_goal_only_and_ordered_goals(city):
    g = city.graph
    goal = toy_episodes()[4]  # W2 -> find D, no reference path
    actions, states = gold_rollout(make_scheme("nodes", g), g, goal)
    assert ids(city, node_path(states)) == ["W2", "W1", "X4", "E1", "T3", "E3", "D"]
    ordered = Episode(
        id="ordered",
        city="toy",
        instruction="first the bookshop corner, then north",
        start_node="W1",
        start_heading=90.0,
        goal_nodes=("T3", "N2"),
        metadata={"ordered": True},
    )
    actions, states = gold_rollout(make_scheme("turns", g), g, ordered)
    path = ids(city, node_path(states))
    assert path[-1] == "N2" and "T3" in path and path.index("T3") < len(path) - 1
    assert actions[-1] == STOP


def test_action_toward_a_non_neighbour_raises(city):
    s = make_scheme("turns", city.graph)
    state = s.start(city.graph.index("W2"), 90.0)
    with pytest.raises(TeacherError):
        action_toward(s, state, city.graph.index("D"))


def test_turns_teacher_uses_rotations_in_velma_order(star):
    #   at a 4-way node facing north, the street south needs a turn around; east needs
    #   right; west needs left
    graph, s = star([0, 90, 180, 270])
    st = s.state(graph.edge_index(graph.index("A180"), graph.index("C")))
    assert action_toward(s, st, graph.index("A0")) == FORWARD
    assert action_toward(s, st, graph.index("A90")) == RIGHT
    assert action_toward(s, st, graph.index("A270")) == LEFT
    assert action_toward(s, st, graph.index("A180")) == TURN_AROUND


def test_oracle_in_the_env_stops_on_the_goal(city):
    for scheme in ("turns", "headings", "nodes"):
        env = NavigationEnv(city, toy_episodes(), scheme=scheme)
        for ep in env.episodes:
            env.reset(options={"episode": ep})
            teacher = env.teacher()
            done, reward = False, 0.0
            while not done:
                _, reward, terminated, truncated, _ = env.step(teacher.act(env.state))
                done = terminated or truncated
            assert env.termination == "stopped" and reward == 1.0, (scheme, ep.id)
            if ep.reference_path:
                assert env.path_ids() == list(ep.reference_path)

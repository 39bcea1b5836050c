"""The ``turns`` rules (VELMA's corrected Touchdown navigator) on hand-made nodes.

Diagrams: ``C`` is the node under test, ``A<h>`` the first node of the street leaving ``C``
at heading ``h`` (0 = north, 90 = east). ``^`` marks the agent arriving at ``C`` (facing
north unless said otherwise).
"""

from __future__ import annotations

import pytest

from flaneur.env.schemes.base import STOP, InvalidActionError, UnknownActionError
from flaneur.env.schemes.turns import FORWARD, LEFT, RIGHT, TURN_AROUND, TurnsScheme


def go(graph, scheme, state, action):
    """``(node id, heading)`` after ``action``, or ``None`` if it is invalid."""
    if not scheme.valid(state)[action]:
        with pytest.raises(InvalidActionError):
            scheme.step(state, action)
        return None
    nxt = scheme.step(state, action)
    return str(graph.ids[nxt.node]), round(nxt.heading)


def test_two_way_node_forward_turn_around_and_no_left_right(star):
    #   A0          arriving from A180 (facing 0): a 2-way node, not an intersection
    #   |
    #   C
    #   ^
    #   A180
    graph, s = star([0, 180])
    st = s.state(graph.edge_index(graph.index("A180"), graph.index("C")))
    assert go(graph, s, st, FORWARD) == ("A0", 0)
    assert go(graph, s, st, LEFT) is None and go(graph, s, st, RIGHT) is None
    assert go(graph, s, st, TURN_AROUND) == ("C", 180)
    back = s.step(st, TURN_AROUND)
    assert go(graph, s, back, FORWARD) == ("A180", 180)
    # VELMA's remapping: left/right on a 2-way node become forward
    assert s.remap(st, LEFT) == FORWARD and s.remap(st, RIGHT) == FORWARD


def test_two_way_bend_forward_follows_the_closest_street(star, at):
    #      A60          arriving from A200 facing 20: no street at exactly 20,
    #     /             forward takes the closest one (60), and the agent then faces 60
    #   C
    #    \
    #     A200
    graph, s = star([60, 200])
    st = at(s, graph, "A200", "C")
    assert round(st.heading) == 20
    assert go(graph, s, st, FORWARD) == ("A60", 60)


def test_dead_end(star, at):
    #   B0  (dead end: one street, back to A0)
    #   ^
    #   A0
    #   |
    #   C
    graph, s = star([0, 180])
    st = at(s, graph, "A0", "B0")
    assert s.valid(st) == (True, False, False, False, True)
    assert go(graph, s, st, TURN_AROUND) == ("B0", 180)
    turned = s.step(st, TURN_AROUND)
    assert s.valid(turned)[FORWARD]  # facing its only street, forward works again
    assert go(graph, s, turned, FORWARD) == ("A0", 180)
    # VELMA remaps anything but stop/turn_around to stop at a dead end
    assert s.remap(st, FORWARD) == STOP and s.remap(st, TURN_AROUND) == TURN_AROUND


def test_t_junction_from_the_stem_is_a_tie_that_goes_left(star, at):
    #   A270 --- C --- A90       arriving from A180 facing 0; the two streets ahead are
    #            ^               90 degrees off each: forward takes the left one (tie)
    #           A180
    graph, s = star([90, 180, 270])
    st = at(s, graph, "A180", "C")
    assert go(graph, s, st, FORWARD) == ("A270", 270)
    assert go(graph, s, st, LEFT) == ("C", 270)  # left-most street ahead
    assert go(graph, s, st, RIGHT) == ("C", 90)  # right-most street ahead
    assert go(graph, s, st, TURN_AROUND) == ("C", 180)


def test_t_junction_along_the_bar(star, at):
    #   A270 --> C --- A90      arriving from A270 facing 90: streets ahead are A90
    #            |              (straight, rel 0) and A180 (rel +90). At a 3-way node
    #           A180            left/right face the left-most/right-most street ahead,
    #                           so LEFT faces straight on here.
    graph, s = star([90, 180, 270])
    st = at(s, graph, "A270", "C")
    assert go(graph, s, st, FORWARD) == ("A90", 90)
    assert go(graph, s, st, LEFT) == ("C", 90)
    assert go(graph, s, st, RIGHT) == ("C", 180)


def test_y_fork(star, at):
    #           A0
    #           v             arriving from A0 facing 180; branches at 150 (rel -30,
    #           C             left of the agent) and 220 (rel +40, right)
    #          / \\
    #      A220   A150
    graph, s = star([0, 150, 220])
    st = at(s, graph, "A0", "C")
    assert round(st.heading) == 180
    assert go(graph, s, st, FORWARD) == ("A150", 150)  # the branch closer to straight
    assert go(graph, s, st, LEFT) == ("C", 150)
    assert go(graph, s, st, RIGHT) == ("C", 220)


def test_four_way(star, at):
    #            A0
    #            |
    #   A270 --- C --- A90
    #            ^
    #           A180
    graph, s = star([0, 90, 180, 270])
    st = at(s, graph, "A180", "C")
    assert go(graph, s, st, FORWARD) == ("A0", 0)
    assert go(graph, s, st, LEFT) == ("C", 270)
    assert go(graph, s, st, RIGHT) == ("C", 90)
    assert go(graph, s, st, TURN_AROUND) == ("C", 180)


def test_street_at_the_heading_wins_over_the_middle_street(star):
    #      A330  A20        arriving from A200 facing 20. Streets ahead (back street
    #         \  |          A200 excluded), left to right: 250 (-130), 330 (-50), 20 (0).
    #   A250 - C            The middle one is 330, but a street at exactly the agent's
    #          ^            heading is always followed first (rule 1): forward -> A20.
    #        A200
    graph, s = star([20, 200, 250, 330])
    st = s.state(graph.edge_index(graph.index("A200"), graph.index("C")))
    assert round(st.heading) == 20
    assert go(graph, s, st, FORWARD) == ("A20", 20)
    # left/right still count from the middle street (330), as in VELMA
    assert go(graph, s, st, LEFT) == ("C", 250)
    assert go(graph, s, st, RIGHT) == ("C", 20)


def test_middle_street_when_no_street_is_straight_on(star):
    #   A300   A10           arriving from P along a one-way edge with heading 60 (the
    #       \   |            agent faces 60; no street leaves C at 60, none goes back to
    #        \  |            P). Streets ahead, left to right: 300 (-120), 10 (-50),
    #          C --- A100    100 (+40): forward is the middle one (10); at this 3-way node
    #         ^              left/right face the left-most/right-most street (300/100).
    #        P
    graph, s = star([10, 100, 300], extra=[("P", "C", 60)])
    st = s.state(graph.edge_index(graph.index("P"), graph.index("C")))
    assert go(graph, s, st, FORWARD) == ("A10", 10)
    assert go(graph, s, st, LEFT) == ("C", 300)
    assert go(graph, s, st, RIGHT) == ("C", 100)


def test_five_way_even_count_ahead(star, at):
    #   A290   A0   A80      arriving from A180 facing 0; four streets ahead sorted
    #       \  |  /          left to right: 225 (-135), 290 (-70), 0 (0), 80 (+80).
    #          C             Even count: forward is the middle one closer to the heading
    #         /^             (0); left/right are the nearest streets counter-clockwise /
    #     A225 A180          clockwise of it (290 / 80). 225 needs a second LEFT.
    graph, s = star([0, 80, 180, 225, 290])
    st = at(s, graph, "A180", "C")
    assert go(graph, s, st, FORWARD) == ("A0", 0)
    assert go(graph, s, st, LEFT) == ("C", 290)
    assert go(graph, s, st, RIGHT) == ("C", 80)
    once = s.step(st, LEFT)
    assert go(graph, s, once, LEFT) == ("C", 225)  # settled: next street counter-clockwise


def test_five_way_even_count_right_middle(star, at):
    #   streets ahead of an agent facing 0 (from A180): 250 (-110), 340 (-20), 30 (+30),
    #   120 (+120): the middle two are 340 and 30; 340 is closer, so forward = 340,
    #   left = 250, right = 30.
    graph, s = star([30, 120, 180, 250, 340])
    st = at(s, graph, "A180", "C")
    assert go(graph, s, st, FORWARD) == ("A340", 340)
    assert go(graph, s, st, LEFT) == ("C", 250)
    assert go(graph, s, st, RIGHT) == ("C", 30)


def test_settled_rotations_cycle_through_all_streets(star, at):
    #   after a rotation the agent is *settled*: left/right face the next street
    #   counter-clockwise/clockwise, including the one it came from.
    graph, s = star([0, 90, 180, 270])
    st = at(s, graph, "C", "A0", rotated=True)
    seen = []
    for _ in range(4):
        st = s.step(st, LEFT)
        seen.append(round(st.heading))
    assert seen == [270, 180, 90, 0]
    seen = []
    for _ in range(4):
        st = s.step(st, RIGHT)
        seen.append(round(st.heading))
    assert seen == [90, 180, 270, 0]
    assert s.step(st, FORWARD).node == graph.index("A0")


def test_start_heading_is_snapped_and_start_counts_as_settled(star):
    graph, s = star([0, 90, 180, 270])
    st = s.start(graph.index("C"), 100.0)
    assert st.heading == 90 and st.prev_node == -1 and not st.arrived
    assert go(graph, s, st, FORWARD) == ("A90", 90)
    assert go(graph, s, st, LEFT) == ("C", 0)


def test_node_without_streets_only_stops():
    from flaneur.world.graph import StreetGraph

    graph = StreetGraph.from_edges(["lonely", "x"], [60, 60.001], [25, 25], [1], [1])
    s = TurnsScheme(graph)
    st = s.start(0, 45.0)
    assert s.valid(st) == (True, False, False, False, False)
    assert s.step(st, STOP).node == 0


def test_parse_and_unknown_actions(star):
    graph, s = star([0, 180])
    st = s.start(graph.index("C"), 0)
    assert s.parse("Turn around", st) == TURN_AROUND
    assert s.parse("turn_left", st) == LEFT and s.parse("FORWARD", st) == FORWARD
    assert s.parse("0", st) == STOP
    with pytest.raises(UnknownActionError):
        s.parse("fly", st)
    with pytest.raises(UnknownActionError):
        s.step(st, 7)
    with pytest.raises(UnknownActionError):
        s.step(st, -1)


def test_transition_table_agrees_with_step(star):
    graph, s = star([0, 80, 180, 225, 290])
    for code in range(2 * graph.n_edges):
        st = s.state(code)
        for a in (FORWARD, LEFT, RIGHT, TURN_AROUND):
            nxt = s.transition(code, a)
            if nxt < 0:
                assert not s.valid(st)[a]
            else:
                assert s.step(st, a).code == nxt

"""Ling's offline policy: the legs of an instruction walked with V-IRL's actions.

A rule of our own design (V-IRL asks an LLM at every step). The instruction's legs
(:func:`flaneur.agents.virl.instructions.parse_instruction`) are walked in order. At the
start of each leg Ling turns to face its way (``turn_direction(<compass word>)``): the
leg's compass direction, or the street closest to its relative turn ("turn left"; when no
street branches off where she stands, at the next intersection within
:data:`TURN_SEEK_M`); she turns again whenever the street bends more than
:data:`REFACE_DEG` away from it, and otherwise moves ``forward()``. A leg ends

* with a told distance and a landmark at its end (the template's "At the intersection with
  X on your left"): from ``slack_m`` before the distance on, where the landmark is seen
  (looking towards the side told), or, not seen, ``lost_after_m`` beyond the distance;
* with a told distance only: ``slack_m`` before it (viewpoints lie about 10-20 m apart);
* at the N-th intersection; at an intersection where the ``until`` landmark is seen; once
  the ``past`` landmark has been seen and is out of sight again; where a street of the told
  name leaves (a street sign read);
* with no end told: at the next intersection, or for the last leg where the destination is
  seen (at the latest after :data:`LAST_LEG_M`).

After the last leg she stops. Landmarks are seen through the run's landmark scorer (see
:class:`flaneur.agents.virl.ling.Sight`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from flaneur.agents.virl.instructions import COMPASS_DEG, TURN_OFFSET, Leg
from flaneur.geo import angular_distance
from flaneur.services.directions import COMPASS, compass
from flaneur.services.geocode import normalize
from flaneur.world.city import City

REFACE_DEG = 60.0
"""She faces the leg's way again when the street bends more than this."""
TURN_SEEK_M = 25.0
"""A relative turn told where no street branches off is taken at the next intersection
within this many metres."""
LAST_LEG_M = 120.0
"""A last leg with no end in the text ends where the destination is seen, or after this."""

Sees = Callable[[int, float, Sequence[str], str], Awaitable[dict[str, str]]]
"""``sees(node, facing, names, side) -> {name: relative direction}`` of the names seen."""


def _apart(a: float, b: float) -> float:
    return float(angular_distance(a, b))


class LegRule:
    """The offline policy over one instruction's ``legs`` in ``city`` (see the module
    docstring), seeing landmarks through ``sees`` (:data:`Sees`); ``goal`` is the destination's
    name (ends a last leg without an end when seen), ``slack_m`` how much before a told
    distance a leg ends, ``lost_after_m`` how far beyond it an unseen landmark is given up."""

    def __init__(
        self,
        city: City,
        legs: Sequence[Leg],
        sees: Sees,
        *,
        goal: str = "",
        slack_m: float = 10.0,
        lost_after_m: float = 20.0,
    ) -> None:
        self.city, self.graph = city, city.graph
        self.legs = list(legs)
        self.sees = sees
        self.goal = goal
        self.slack_m, self.lost_after_m = slack_m, lost_after_m
        self.leg = 0
        self.walked_leg = 0.0
        self.crossings = 0
        self.way = ""  # the compass word of the current leg, once chosen
        self.last_way = ""
        self.faced = -1  # the leg she last turned to face
        self.moved = True  # whether the leg before ended after walking
        self.seen_past = False

    def walked(self, end: int, metres: float) -> None:
        """Count a ``forward()`` of ``metres`` that ended at ``end``."""
        self.walked_leg += metres
        self.crossings += int(self.graph.degree[end] > 2)

    async def _seen(self, node: int, facing: float, name: str, side: str = "") -> bool:
        return bool(name) and name in await self.sees(node, facing, [name], side)

    async def _leg_done(self, node: int, facing: float) -> bool:
        """Whether the current leg ends at ``node``."""
        leg, walked = self.legs[self.leg], self.walked_leg
        junction = int(self.graph.degree[node]) > 2
        last = self.leg + 1 == len(self.legs)
        if leg.metres is not None:
            if not leg.landmark or last:
                return walked >= leg.metres - self.slack_m
            if walked < leg.metres - self.slack_m:
                return False
            if walked >= leg.metres + self.lost_after_m:
                return True  # not seen: given up, she turns here
            return await self._seen(node, facing, leg.landmark, leg.side)
        if leg.intersections:
            return self.crossings >= leg.intersections
        if leg.until:  # in sight, at a junction (turns are taken at intersections)
            return junction and await self._seen(node, facing, leg.until)
        if leg.past:
            now = await self._seen(node, facing, leg.past)
            self.seen_past = self.seen_past or now
            return self.seen_past and not now
        if leg.street:
            return self._on_street(node, leg.street) and walked > 0
        if not last:
            return self.crossings >= 1  # "turn left, then ...": at the next intersection
        return walked >= LAST_LEG_M or await self._seen(node, facing, self.goal)

    async def next_action(self, node: int, facing: float, came_from: int | None) -> tuple[str, str]:
        """``("turn", <compass word>)``, ``("forward", "")`` or ``("stop", "")`` at ``node``
        facing ``facing`` (``came_from``: the node she walked from, if any)."""
        if self.leg < len(self.legs) and await self._leg_done(node, facing):
            self.moved, self.last_way = self.walked_leg > 0, self.way
            self.leg, self.walked_leg, self.crossings, self.way = self.leg + 1, 0.0, 0, ""
            self.seen_past = False
        if self.leg >= len(self.legs):
            return ("stop", "")
        leg = self.legs[self.leg]
        sideways = leg.turn not in ("", "straight")
        alone = int(self.graph.degree[node]) <= 2 and self.walked_leg < TURN_SEEK_M
        if not self.way and sideways and self.moved and alone:
            return ("forward", "")  # "turn left" where none branches off: further on
        if not self.way:
            ahead = facing if self.moved or not self.last_way else COMPASS_DEG[self.last_way]
            if leg.direction or leg.turn != "straight" or not self.last_way:
                self.way = leg.direction or self._turn_way(node, ahead, leg.turn, came_from)
            else:
                self.way = self.last_way  # "carry straight on": the way of the last leg
            self.walked_leg = 0.0 if sideways else self.walked_leg
        if self.faced != self.leg or _apart(facing, COMPASS_DEG[self.way]) > REFACE_DEG:
            self.faced = self.leg
            return ("turn", self.way)
        return ("forward", "")

    def _turn_way(self, node: int, facing: float, turn: str, came_from: int | None) -> str:
        """The compass word for a relative turn (``"left"``, ...) at ``node``.

        Of the streets not leading back, the one closest to the turned heading; then the
        compass word closest to that street among those for which ``forward()`` takes it
        (the 8 words are coarse: a street at 200° is "south", but "south" may pick another).
        """
        want = facing + TURN_OFFSET.get(turn, 0.0)
        targets_of, headings_of = self.graph.adjacency
        heads, targets = headings_of[node], targets_of[node]
        ways = [k for k, t in enumerate(targets) if t != came_from or turn == "around"]
        ways = ways or list(range(len(heads)))
        if not turn or not heads:
            return compass(want)
        street = min(ways, key=lambda k: _apart(heads[k], want))
        for word in sorted(COMPASS, key=lambda w: _apart(COMPASS_DEG[w], heads[street])):
            if min(ways, key=lambda k: _apart(heads[k], COMPASS_DEG[word])) == street:
                return word
        return compass(heads[street])

    def _on_street(self, node: int, street: str) -> bool:
        """Whether a street leaving ``node`` carries the name (a street sign read)."""
        names = self.city.edge_streets
        if not len(names):
            return False
        graph = self.graph
        want = normalize(street)
        here = names[graph.indptr[node] : graph.indptr[node + 1]].tolist()
        return any(want and normalize(n).startswith(want) for n in here if n)

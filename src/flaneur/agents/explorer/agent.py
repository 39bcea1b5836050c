"""``ExplorerAgent``: an offline, perception-driven need finder that needs no language model.

At each node, in CitySeeker's ``headings`` action space, the explorer looks along every
street, reads what it sees (:mod:`.perception`: place names from the
map, or signs read by OCR in rendered views), remembers where each text is
(:mod:`.memory`) and scores the texts against the need with a sentence embedder and fuzzy
string matching (:mod:`.scoring`). The views cover every street and, for places beside the
street, the way the agent faces and its left and right. Then it

1. stops when a text scoring at least ``tau`` is within ``stop_radius_m`` (for ordered
   multi-goal needs it moves on to the next sub-need instead, until the last);
2. walks towards the best text scoring at least ``tau`` that it saw farther away;
3. otherwise explores: it takes the street with the best value, made of the score above
   ``floor`` of the texts that street leads towards, the street's coverage gain (the prior
   weight of places not yet seen that a short walk along it would show, see
   :mod:`.coverage`), a bonus for a street to a node never stood on, penalties for
   visited nodes, for streets already taken from here and for turning back, and a slight
   preference for going straight; ties are broken by a seeded generator. When every
   street around leads to visited nodes and nothing scores above the floor, it walks to
   the nearest unvisited node (frontier exploration);
4. when the step budget is about to run out, it walks to the best candidate it saw (if it
   scores at least ``fallback_min``), or else to the likeliest spot left (the node within
   reach with the most prior weight of the goal around it, discounted where it has
   looked), and stops there.

It never reads the goal: only the instruction, the observation, the map (graph and named
places, as a map app shows them) and, with ``--views ... --landmarks ocr``, view images.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields, make_dataclass, replace
from typing import Any, ClassVar

import numpy as np

from flaneur.agents.ablations import nothing_to_see
from flaneur.agents.base import Action, Agent, EnvInfo, step_record
from flaneur.agents.baselines import episode_seed
from flaneur.agents.explorer.coverage import CoveragePlan, near_matrix
from flaneur.agents.explorer.memory import Memory
from flaneur.agents.explorer.perception import MapPerception, OCRPerception, map_perception
from flaneur.agents.explorer.routes import first_step_to_unvisited, hops_within, shortest_path
from flaneur.agents.explorer.scoring import NeedScorer, Thresholds
from flaneur.env.schemes.base import STOP
from flaneur.env.state import angular_distance, direction_label, relative_angle
from flaneur.errors import FlaneurError
from flaneur.tasks.episode import Episode
from flaneur.text import shared_embedder


@dataclass(frozen=True)
class ExplorerParams:
    """Weights of the explorer's choices (see the module docstring).

    Attributes
    ----------
    stop_radius_m
        A matching text must be this close to count as reached.
    w_lead
        Weight of the score above the floor of texts a street leads towards.
    new_bonus
        Bonus for a street leading to a node never stood on.
    visit_penalty
        Penalty per earlier visit of the street's target node.
    tried_penalty
        Penalty per earlier use of the same street from this node.
    back_penalty
        Penalty for going back the way the agent came (not at a dead end).
    straight_bonus
        Bonus for going straight on, scaled by ``cos`` of the turn.
    fallback_min
        Minimum score of the best candidate seen for the agent to walk to it and stop
        there when the step budget runs out (above 1: never).
    w_novel
        Weight of ``log(1 + number of texts along a street not seen before)``: streets with
        many new signs are likelier to hold the place sought.
    home_ratio
        Without a candidate worth ``fallback_min``, the budget fallback ends the episode at
        a visited node about ``home_ratio`` x the average reference length from the start
        (0 disables this).
    look_sides
        Also look left and right (90 degrees off the way the agent faces) at every node:
        places beside the street are out of every street's view sector.
    w_cover
        Weight of a street's coverage gain (:mod:`.coverage`: the prior weight of unseen
        nodes a greedy walk of ``cover_depth`` steps along it would see), relative to the
        best street's gain.
    cover_depth
        Steps of that walk.
    cover_radius_m
        A node counts as seen once the agent stood this close to it.
    guess_miss
        At or above 0, the budget fallback without a candidate ends at the node within
        reach whose surroundings (``view_radius_m``) hold the most prior weight
        (:meth:`.coverage.CoveragePlan.stop_values`), counting places already seen around
        ``guess_miss`` times; below 0, it uses the ``home_ratio`` rule.
    """

    stop_radius_m: float = 30.0
    w_lead: float = 1.0
    new_bonus: float = 0.2
    visit_penalty: float = 0.4
    tried_penalty: float = 0.6
    back_penalty: float = 0.3
    straight_bonus: float = 0.5
    fallback_min: float = 0.45
    w_novel: float = 1.0
    home_ratio: float = 0.5
    look_sides: bool = True
    w_cover: float = 4.0
    cover_depth: int = 6
    cover_radius_m: float = 40.0
    guess_miss: float = 0.5


def _explorer_options() -> type:
    """The explorer's options: the four named thresholds (``None``: the calibrated value),
    ``seed``, ``view_radius_m`` and every other field of :class:`~.scoring.Thresholds` and
    :class:`ExplorerParams`."""
    named = ("tau", "floor", "lexical_ratio", "name_cap")
    spec: list[tuple[str, Any, Any]] = [(n, float | None, None) for n in named]
    spec += [("seed", int | None, None), ("view_radius_m", float, 50.0)]
    for cls in (Thresholds, ExplorerParams):
        hints = typing.get_type_hints(cls)
        spec += [(f.name, hints[f.name], f.default) for f in fields(cls) if f.name not in named]
    options = make_dataclass("ExplorerOptions", spec, frozen=True)
    options.__module__ = __name__
    return options


ExplorerOptions = _explorer_options()


class ExplorerAgent(Agent):
    """Find the place a need asks for by looking around, without a language model.

    Parameters
    ----------
    tau, floor, lexical_ratio, name_cap
        Score thresholds (defaults: :class:`~.scoring.Thresholds`, calibrated on generated
        tasks of another seed than the evaluation set).
    seed
        Base seed of tie-breaking (default: the run seed ``env_info.seed``).
    view_radius_m
        How far the map perception sees.
    params
        Further weights (:class:`ExplorerParams`).
    embedder
        A sentence embedder (default: the shared :class:`flaneur.text.SentenceEmbedder`).
    ocr
        The OCR engine of the ``ocr`` perception (default: one shared
        :class:`flaneur.perception.OCR`).
    **overrides
        Fields of :class:`ExplorerParams` or :class:`~.scoring.Thresholds` to change
        (``straight_bonus=0.3``, ``expand_k=0``), e.g. from a run's agent options.
    """

    name: ClassVar[str] = "explorer"
    schemes: ClassVar[tuple[str, ...]] = ("headings",)
    Options: ClassVar[type] = ExplorerOptions

    def __init__(
        self,
        *,
        tau: float | None = None,
        floor: float | None = None,
        lexical_ratio: float | None = None,
        name_cap: float | None = None,
        seed: int | None = None,
        view_radius_m: float = 50.0,
        params: ExplorerParams | None = None,
        embedder: Any = None,
        ocr: Any = None,
        **overrides: Any,
    ) -> None:
        named = {"tau": tau, "floor": floor, "lexical_ratio": lexical_ratio, "name_cap": name_cap}
        limits = set(Thresholds.__dataclass_fields__)
        known = set(ExplorerParams.__dataclass_fields__)
        unknown = sorted(set(overrides) - known - limits)
        if unknown:
            allowed = sorted(known | limits | {"seed", "view_radius_m"})
            raise FlaneurError(f"unknown explorer option(s) {unknown}; known: {allowed}")
        chosen: dict[str, Any] = {k: float(v) for k, v in named.items() if v is not None}
        chosen.update({k: overrides.pop(k) for k in list(overrides) if k in limits})
        self.thresholds = replace(Thresholds(), **chosen)
        self.params = replace(params or ExplorerParams(), **overrides)
        self.seed = seed
        self.view_radius_m = view_radius_m
        self._embedder = embedder
        self._ocr = ocr

    @classmethod
    def check_setup(cls, options: dict[str, Any], setup: Any) -> None:
        """The OCR perception reads signs in views: ``--landmarks ocr`` needs ``--views``."""
        if setup.landmarks == "ocr" and setup.views is None:
            raise FlaneurError("the explorer's OCR perception needs views: add --views synthetic")

    # ------------------------------------------------------------------ episode
    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        """Embed the need, choose the perception, clear the memory."""
        super().reset(episode, env_info)
        if env_info.scheme != "headings":
            raise FlaneurError(
                f"the explorer acts in the 'headings' scheme, not {env_info.scheme!r} "
                "(use --scheme headings)"
            )
        if env_info.city is None:
            raise FlaneurError("the explorer needs the city map: env_info.city is missing")
        if self._embedder is None:
            self._embedder = shared_embedder()
        self.city = env_info.city
        self.graph = self.city.graph
        self.targets_of, self.headings_of = self.graph.adjacency
        self.perception = self._perception(env_info)
        self.blind = nothing_to_see(
            "explorer",
            self.city,
            places_only=isinstance(self.perception, MapPerception),
            hint="add --views synthetic --landmarks ocr to read signs",
        )
        self.scorer = NeedScorer(self._embedder, episode.instruction, self.thresholds)
        base = self.seed if self.seed is not None else int(env_info.seed)
        self.rng = np.random.default_rng(episode_seed(base, episode.id))
        self.max_steps = int(env_info.max_steps or 35)
        self.sub = 0
        self.memory = Memory(self.graph)
        self.avg_reference = float(env_info.avg_reference_length or 0.0)
        self._start_hops: dict[int, int] = {}
        self._last_seen: dict[int, int] = {}
        self._returning = False
        self.plan: CoveragePlan | None = None
        self._guess: int | None = None
        self.prev_node: int | None = None
        self._heading = 0.0

    def _perception(self, env_info: EnvInfo) -> MapPerception | OCRPerception:
        views, landmarks = env_info.views, env_info.landmarks
        if landmarks == "ocr":
            if views is None:
                raise FlaneurError(
                    "the explorer's OCR perception needs views: add --views synthetic"
                )
            return OCRPerception(self.city, views, ocr=self._ocr)
        return map_perception(self.city, radius_m=self.view_radius_m)

    def ablations(self) -> tuple[str, ...]:
        """``("nothing to see",)`` when it perceives only named places and the city has
        none (:func:`flaneur.agents.ablations.nothing_to_see`)."""
        return getattr(self, "blind", ())

    # ------------------------------------------------------------------ acting
    async def act(self, observation: Mapping[str, Any]) -> Action:
        """Look along every street, then stop, walk to a match, or explore."""
        node = int(observation["node"])
        heading = float(np.asarray(observation["heading"]).reshape(-1)[0])
        remaining = self.max_steps - int(observation.get("step", 0))
        self._heading = heading
        if not self._start_hops:
            self._start_hops = hops_within(self.targets_of, node, self.max_steps)
            mean = max(self.avg_reference - 1.0, 1.0) if self.avg_reference else 12.0
            self.plan = CoveragePlan(
                self.graph,
                self.targets_of,
                self._start_hops,
                mean,
                radius_m=self.params.cover_radius_m,
            )
        assert self.plan is not None
        self.plan.visit(node)
        self.memory.visits[node] += 1
        self._last_seen[node] = len(self._last_seen) + 1
        heads = self.headings_of[node]
        looks = list(heads)
        extra = [heading]
        if self.params.look_sides:
            extra += [(heading + 90.0) % 360.0, (heading - 90.0) % 360.0]
        for h in extra:  # the current view and the sides, unless a street goes that way
            if all(angular_distance(h, x) > 20.0 for x in looks):
                looks.append(h)
        self._counts = []
        look_many = getattr(self.perception, "look_many", None)  # OCR: one batch per node
        seen = await look_many(node, looks) if look_many is not None else None
        for k, h in enumerate(looks):
            sightings = seen[k] if seen is not None else await self.perception.look(node, h)
            self._counts.append(self.memory.novel(node, sightings))
            self.memory.add(node, sightings)
        scores, dist = self._scores(node)
        tau, near = self.thresholds.tau, self.params.stop_radius_m
        while True:
            hits = np.flatnonzero((scores >= tau) & (dist <= near))
            if hits.size == 0 or self.sub == len(self.scorer) - 1:
                break
            self.sub += 1  # an intermediate goal is in reach: go on to the next sub-need
            scores, dist = self._scores(node)
        if hits.size:
            best = int(hits[np.argmax(scores[hits])])
            return self._stop(f"found {self.memory.seen[best].text!r}", float(scores[best]))
        if not self.targets_of[node]:
            return self._stop("no street leads on", None)
        action = self._budget(node, scores, remaining)
        if action is None:
            action = self._towards_match(node, scores, remaining)
        return action or self._explore(node, heading, scores, dist)

    def _scores(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """Score (current sub-need) and distance of every remembered text."""
        texts = self.memory.texts()
        if not texts:
            return np.zeros(0, np.float32), np.zeros(0)
        by_text = dict(zip(texts, self.scorer.scores(texts, self.sub).tolist(), strict=True))
        scores = np.asarray([by_text[e.text] for e in self.memory.seen], dtype=np.float32)
        return scores, self.memory.distances(node)

    def _budget(self, node: int, scores: np.ndarray, remaining: int) -> Action | None:
        """Near the end of the budget, walk to where stopping is the best bet and stop there.

        That is the best candidate seen if it scores at least ``fallback_min``; otherwise
        the likeliest spot left (:meth:`_best_guess`), or with ``guess_miss < 0`` a node
        already visited at about ``home_ratio`` times the task set's average reference
        length from the start (``env_info.avg_reference_length``, which the baselines use
        too).
        """
        dest, why = self._fallback_destination(node, scores, remaining)
        if dest is None:
            return None
        if dest == node:
            if self._returning or remaining <= 2:
                conf = float(scores.max()) if scores.size else None
                return self._stop(f"budget: stopping at {why}", conf)
            return None
        path = shortest_path(self.targets_of, node, dest, limit=remaining)
        if path is None or len(path) - 1 < remaining - 1:
            return None  # unreachable, or still time to explore and come back
        self._returning = True
        return self._go(node, self._slot(node, path[1]), f"budget: walking to {why}", None)

    def _fallback_destination(
        self, node: int, scores: np.ndarray, remaining: int
    ) -> tuple[int | None, str]:
        last = self.sub == len(self.scorer) - 1
        if last and scores.size and scores.max() >= self.params.fallback_min:
            entry = self.memory.seen[int(np.argmax(scores))]
            return entry.node, f"the best candidate {entry.text!r}"
        if self.params.guess_miss >= 0 and self.plan is not None:
            return self._best_guess(node, remaining)
        if self.params.home_ratio <= 0 or not self.avg_reference:
            return None, ""
        want = self.params.home_ratio * self.avg_reference
        hops = self._start_hops
        visited = [v for v in self.memory.visits if v in hops]
        if not visited:
            return None, ""
        home = min(visited, key=lambda v: (abs(hops[v] - want), -self._last_seen.get(v, 0)))
        return home, f"a visited node {hops[home]} steps from the start"

    def _best_guess(self, node: int, remaining: int) -> tuple[int | None, str]:
        """The node within ``remaining - 1`` steps where a stop has the most prior weight
        of the goal around it; kept once the agent heads there."""
        if self._guess is not None and self._returning:
            return self._guess, "the likeliest spot left"
        assert self.plan is not None
        reach = hops_within(self.targets_of, node, max(remaining - 1, 0))
        values = self.plan.stop_values(
            near_matrix(self.graph, self.view_radius_m), self.params.guess_miss
        )
        nodes = np.fromiter(reach, dtype=np.int64, count=len(reach))
        self._guess = int(nodes[np.argmax(values[nodes])])
        return self._guess, "the likeliest spot left"

    def _towards_match(self, node: int, scores: np.ndarray, remaining: int) -> Action | None:
        """Walk towards the best text at least ``tau`` seen farther away."""
        order = np.argsort(-scores, kind="stable")
        for i in order[:5].tolist():
            if scores[i] < self.thresholds.tau:
                return None
            entry = self.memory.seen[i]
            if entry.node == node:
                # as close as the streets get: the place is here
                return self._stop(f"found {entry.text!r} (nearest street point)", float(scores[i]))
            path = shortest_path(self.targets_of, node, entry.node, limit=remaining)
            if path is not None:
                why = f"towards {entry.text!r} seen {len(path) - 1} steps away"
                return self._go(node, self._slot(node, path[1]), why, float(scores[i]))
        return None

    def _explore(self, node: int, heading: float, scores: np.ndarray, dist: np.ndarray) -> Action:
        p, floor = self.params, self.thresholds.floor
        targets, heads = self.targets_of[node], self.headings_of[node]
        lead_rows = np.flatnonzero((scores >= floor) & (dist > p.stop_radius_m))
        here = self.graph.xy[node]
        if lead_rows.size:
            delta = np.asarray([self.memory.seen[i].xy for i in lead_rows]) - here
            lead_bearing = np.degrees(np.arctan2(delta[:, 0], delta[:, 1])) % 360.0
            lead_gain = scores[lead_rows] - floor
        values, pulls = [], []
        cover = np.zeros(len(targets))
        if p.w_cover and self.plan is not None:
            cover = np.asarray([self.plan.gain(node, t, p.cover_depth) for t in targets])
            cover = cover / max(float(cover.max()), 1e-4)
        for k, (target, h) in enumerate(zip(targets, heads, strict=True)):
            pull = 0.0
            if lead_rows.size:
                off = np.abs((lead_bearing - h + 180.0) % 360.0 - 180.0)
                pull = float((lead_gain * np.clip(np.cos(np.radians(off)), 0.0, None)).max())
            pulls.append(pull)
            value = p.w_lead * pull + p.w_novel * math.log1p(self._counts[k])
            value += p.w_cover * float(cover[k])
            visits = self.memory.visits[target]
            value += p.new_bonus if visits == 0 else -p.visit_penalty * visits
            value -= p.tried_penalty * self.memory.tried[(node, k + 1)]
            if target == self.prev_node and len(targets) > 1:
                value -= p.back_penalty
            value += p.straight_bonus * math.cos(math.radians(angular_distance(h, heading)))
            values.append(value + float(self.rng.uniform(0.0, 1e-6)))
        best = int(np.argmax(values))
        why = "explore: best street"
        if pulls[best] <= 0.0 and all(self.memory.visits[t] > 0 for t in targets):
            frontier = first_step_to_unvisited(self.targets_of, node, self.memory.visits)
            if frontier is not None:
                best, why = self._slot(node, frontier) - 1, "explore: nearest unvisited node"
        elif pulls[best] > 0.0:
            why = f"explore: towards texts scoring up to {floor + pulls[best]:.2f}"
        return self._go(node, best + 1, why, None)

    # ------------------------------------------------------------------ graph helpers
    def _slot(self, node: int, target: int) -> int:
        return self.targets_of[node].index(target) + 1

    # ------------------------------------------------------------------ answers
    def _go(self, node: int, slot: int, why: str, confidence: float | None) -> Action:
        self.memory.tried[(node, slot)] += 1
        self.prev_node = node
        rel = relative_angle(self.headings_of[node][slot - 1], self._heading)
        name = f"{slot}:{direction_label(rel)}"
        return Action(
            slot, name, step_record(parsed_action=name, thoughts=why, confidence=_unit(confidence))
        )

    def _stop(self, why: str, confidence: float | None) -> Action:
        return Action(
            STOP,
            "stop",
            step_record(parsed_action="stop", thoughts=why, confidence=_unit(confidence)),
        )


def _unit(value: float | None) -> float | None:
    return None if value is None else round(min(1.0, max(0.0, float(value))), 4)


__all__ = ["ExplorerAgent", "ExplorerParams"]

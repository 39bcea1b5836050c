"""``HiroAgent``: V-IRL's intentional explorer on flaneur's need tasks (``--agent hiro``).

Hiro walks the ``headings`` scheme (one action per street, as the explorer) with street
views (``--views``). For each thing the need asks for (ordered needs are split as the
explorer splits them), he

1. turns the intention into a place type: the language model (``--llm``, prompt
   ``hiro/type``) or, offline, the sentence embedder against the taxonomy (Aria's
   :func:`~flaneur.agents.virl.rating.type_similarities`, the :data:`types_kept` closest
   types; a brand is read through the explorer's glossary first);
2. at every step detects those types in 3 views (6 at the start) with the OCR storefront
   detector, confirms each box by active detection (re-aimed at the box and zoomed in,
   detected again at a higher threshold; ``active=false``: one pass) and matches each
   (zoomed) box to a place of the type within 20 m whose bearing lies in the box's heading
   span +- 5 degrees (:mod:`.perception`, :mod:`.rules`);
3. reads each matched place's overview (:func:`flaneur.services.overview.place_overview`)
   and decides to enter (stop) or continue: the language model (prompt ``hiro/enter``), or
   offline Aria's rating against ``enter_min`` (:func:`.rules.should_enter`); a place is
   judged once;
4. moves: at the start or at a junction with more than 2 roads he chooses among the roads
   but the one he came by — by a vision-language model shown one view per road (prompt
   ``hiro/road``) when ``--llm`` serves one, else by the text read (OCR) in each road's
   view scored against the need by the embedder, with the explorer's navigation memory (a
   bonus for new streets, a penalty for visited ones, the nearest unvisited node when every
   road is known and no text fits); elsewhere he keeps his heading.

Beyond V-IRL (the explorer's navigation memory): when the step budget is about to run out he
walks back to the best place he judged (rating at least ``fallback_min``) and stops there.
A reply of the model that cannot be used, or a failed call, is counted (step records'
``parse_failures``) and the offline answer is taken. He never reads the episode's goal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from flaneur.agents.ablations import nothing_to_see
from flaneur.agents.base import Action, Agent, EnvInfo, StepRecord, step_record
from flaneur.agents.baselines import episode_seed
from flaneur.agents.explorer.glossary import gloss
from flaneur.agents.explorer.routes import first_step_to_unvisited, shortest_path
from flaneur.agents.explorer.scoring import SubNeed, split_need
from flaneur.agents.hiro import rules
from flaneur.agents.hiro.perception import HiroEyes
from flaneur.agents.hiro.thinking import HiroThinker, ordinal
from flaneur.agents.virl.aria import rate_offline
from flaneur.agents.virl.rating import type_similarities
from flaneur.env.schemes.base import STOP
from flaneur.env.state import direction_label, relative_angle
from flaneur.errors import FlaneurError
from flaneur.perception.matching import fuzzy_ratio
from flaneur.services.nearby import NearbyResult, prominence
from flaneur.services.overview import place_overview
from flaneur.tasks.episode import Episode
from flaneur.world.taxonomy import CATEGORIES, category_label


@dataclass(frozen=True)
class HiroOptions:
    """Hiro's options (``--option hiro.enter_min=6.5``).

    Attributes
    ----------
    enter_min
        Offline rating (0-10) from which he enters a place.
    types_kept
        Place types kept from the embedder (the language model names one).
    road_choice
        ``auto``: a vision-language model with ``--llm``, else OCR + embedder; ``vlm`` or
        ``ocr`` to force one.
    fallback_min
        Minimum rating of a judged place for the end-of-budget walk back to it (above 10:
        never).
    seed
        Base seed of tie-breaking (default: the run seed).
    active
        Active detection (V-IRL's visual checker): confirm every box in a view re-aimed at
        it and zoomed in, and place it with the zoomed box; ``false``: one detection pass.
    """

    enter_min: float = rules.ENTER_MIN
    types_kept: int = 3
    road_choice: Literal["auto", "vlm", "ocr"] = "auto"
    fallback_min: float = 6.0
    seed: int | None = None
    active: bool = True

    def __post_init__(self) -> None:
        if self.types_kept < 1:
            raise ValueError(f"types_kept must be at least 1, not {self.types_kept}")


@dataclass
class Judged:
    """A place Hiro judged: its rating, whether he entered, and where he saw it from."""

    row: int
    name: str
    rating: float
    enter: bool
    node: int
    by: str


class HiroAgent(Agent):
    """The intentional explorer (see the module docstring).

    Parameters
    ----------
    enter_min, types_kept, road_choice, fallback_min, seed, active
        :class:`HiroOptions`.
    embedder, ocr, detector
        Perception parts (defaults: the shared sentence embedder, one OCR engine caching
        on disk, the OCR storefront detector).
    """

    name: ClassVar[str] = "hiro"
    schemes: ClassVar[tuple[str, ...]] = ("headings",)
    needs_views: ClassVar[bool] = True
    Options: ClassVar[type] = HiroOptions

    def __init__(
        self,
        *,
        enter_min: float = rules.ENTER_MIN,
        types_kept: int = 3,
        road_choice: Literal["auto", "vlm", "ocr"] = "auto",
        fallback_min: float = 6.0,
        seed: int | None = None,
        active: bool = True,
        embedder: Any = None,
        ocr: Any = None,
        detector: Any = None,
    ) -> None:
        self.options = HiroOptions(enter_min, types_kept, road_choice, fallback_min, seed, active)
        self._embedder, self._ocr, self._detector = embedder, ocr, detector

    @classmethod
    def check_setup(cls, options: dict[str, Any], setup: Any) -> None:
        """``road_choice=vlm`` needs a model (``--llm``)."""
        if options.get("road_choice") == "vlm" and setup.llm is None:
            raise FlaneurError("road_choice=vlm needs a vision-language model: add --llm")

    # ------------------------------------------------------------------ episode
    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        """Split the need, set up perception, the model and the memory."""
        super().reset(episode, env_info)
        if env_info.scheme != "headings":
            raise FlaneurError(f"hiro acts in the 'headings' scheme, not {env_info.scheme!r}")
        if env_info.city is None:
            raise FlaneurError("hiro needs the city map: env_info.city is missing")
        if env_info.views is None:
            raise FlaneurError("hiro looks at street views: add --views synthetic")
        if self.options.road_choice == "vlm" and env_info.model is None:
            raise FlaneurError("road_choice=vlm needs a vision-language model: add --llm")
        self.city = env_info.city
        self.targets_of, self.headings_of = self.city.graph.adjacency
        self.eyes = HiroEyes(
            self.city,
            env_info.views,
            detector=self._detector,
            ocr=self._ocr,
            embedder=self._embedder,
            active=self.options.active,
        )
        self.thinker = HiroThinker(env_info.model) if env_info.model is not None else None
        self.blind = nothing_to_see(
            "hiro",
            self.city,
            places_only=True,  # a box counts only when it matches a named place
            hint="give it a city with places",
        )
        self.use_vlm = self.thinker is not None and self.options.road_choice != "ocr"
        self.subs: list[SubNeed] = split_need(episode.instruction)
        self.sub = 0
        self.types: dict[str, float] | None = None
        self.types_by = ""
        base = self.options.seed if self.options.seed is not None else int(env_info.seed)
        self.rng = np.random.default_rng(episode_seed(base, episode.id))
        self.max_steps = int(env_info.max_steps or 35)
        self.visits: Counter[int] = Counter()
        self.judged: dict[int, Judged] = {}
        self.arrival: float | None = None
        self.returning = False
        self.vlm_errors = 0

    def ablations(self) -> tuple[str, ...]:
        """``("nothing to see",)`` when it perceives only named places and the city has
        none (:func:`flaneur.agents.ablations.nothing_to_see`)."""
        return getattr(self, "blind", ())

    # ------------------------------------------------------------------ acting
    async def act(self, observation: Mapping[str, Any]) -> Action:
        """Look for the place, decide whether to enter, else move on."""
        node = int(observation["node"])
        heading = float(np.asarray(observation["heading"]).reshape(-1)[0])
        step = int(observation.get("step", 0))
        remaining = self.max_steps - step
        start = not self.visits
        self.visits[node] += 1
        self.log: dict[str, Any] = {"failures": 0, "prompt_id": None, "raw": None}
        while True:
            if self.types is None:
                await self._choose_types()
            found = await self._search(node, heading, start)
            if found is None:
                break
            if self.sub == len(self.subs) - 1:
                return self._stop(f"enters {found.name!r} (rated {found.rating:g})", found)
            self.sub += 1  # an intermediate goal reached: on to the next thing to find
            self.types = None
            start = True
        fallback = self._budget(node, remaining)
        if fallback is not None:
            return fallback
        return await self._move(node, heading, start)

    # ------------------------------------------------------------------ step 1: place type
    async def _choose_types(self) -> None:
        need = self.subs[self.sub]
        if self.thinker is not None:
            ex = await self.thinker.place_type(need.text)
            self._note(ex)
            if ex.parsed is not None:
                self.types, self.types_by = {ex.parsed: 1.0}, "llm"
                return

        query = (gloss(need.core) or need.text) if need.is_name else need.text
        sims = type_similarities(query)
        top = sorted(sims, key=lambda k: -sims[k])[: self.options.types_kept]
        self.types, self.types_by = {k: float(sims[k]) for k in top}, "embedder"

    # ------------------------------------------------------------------ steps 2-3: detect, judge
    async def _search(self, node: int, heading: float, start: bool) -> Judged | None:
        assert self.types is not None
        headings = rules.view_headings(heading, start=start)
        zoomed = self.eyes.zoom_views
        per_view = await self.eyes.look(node, headings, list(self.types))
        zoomed = self.eyes.zoom_views - zoomed
        self.log["views"] = self.log.get("views", 0) + len(headings) + zoomed
        self.log["zoom_views"] = self.log.get("zoom_views", 0) + zoomed
        self.log["sightings"] = [
            {
                "place": s.match.name,
                "label": s.detection.label,
                "score": round(s.detection.score, 3),
            }
            for hits in per_view
            for s in hits
        ]
        for hits in per_view:
            for sighting in hits:
                place_row = sighting.match.place_row
                assert place_row is not None, "sightings are boxes matched to a place"
                row = int(place_row)
                if row in self.judged:
                    continue
                judged = await self._judge(row, node, float(sighting.match.distance_m or 0.0))
                self.judged[row] = judged
                self.log.setdefault("judged", []).append(
                    {"place": judged.name, "rating": judged.rating, "enter": judged.enter}
                )
                if judged.enter:
                    return judged
        return None

    async def _judge(self, row: int, node: int, distance_m: float) -> Judged:

        assert self.types is not None
        need = self.subs[self.sub]
        places = self.city.places
        place = places[row]
        delta = places.xy[row] - self.city.graph.xy[node]
        result = NearbyResult(
            row=row,
            name=place.name or category_label(place.categories[0]),
            categories=tuple(place.categories),
            distance_m=distance_m,
            heading=float(np.degrees(np.arctan2(delta[0], delta[1])) % 360.0),
            prominence=prominence(place.tags),
        )
        rated = rate_offline(self.city, need.text, self.types, result)
        rating = float(rated["rating"])
        name_sim = None
        if need.is_name:
            keys = [place.name, place.tags.get("brand", "")]
            name_sim = max(fuzzy_ratio(need.core, k) for k in keys if k) if any(keys) else 0.0
        enter = rules.should_enter(
            rating, enter_min=self.options.enter_min, name_similarity=name_sim
        )
        by = "offline"
        if self.thinker is not None:
            kind = category_label(next(iter(self.types)))
            overview = place_overview(self.city, row)
            ex = await self.thinker.enter(need.text, kind, ordinal(len(self.judged) + 1), overview)
            self._note(ex)
            if ex.parsed is not None:
                enter, by = bool(ex.parsed), "llm"
        return Judged(row, result.name, rating, enter, node, by)

    # ------------------------------------------------------------------ step 4: move
    async def _move(self, node: int, heading: float, start: bool) -> Action:
        targets, heads = self.targets_of[node], self.headings_of[node]
        if not targets:
            return self._stop("no street leads on", None)
        back = rules.road_back(heads, self.arrival)
        if len(targets) == 1:
            return self._go(node, 0, heading, "the only street")
        if not rules.road_choice_needed(len(targets), start=start):
            k = rules.momentum_road(heads, heading)
            return self._go(node, k, heading, "keeps his heading")
        options = rules.road_options(len(targets), back)
        if self.use_vlm:
            chosen = await self._road_by_vlm(node, options, heads)
            if chosen is not None:
                return self._go(node, chosen, heading, "junction: the model's road")
        k, why = await self._road_by_text(node, options, heads)
        return self._go(node, k, heading, why)

    async def _road_by_vlm(self, node: int, options: list[int], heads: list[float]) -> int | None:
        assert self.thinker is not None and self.types is not None
        images = [(await self.eyes.read(node, heads[k]))[0].image for k in options]

        kind = category_label(next(iter(self.types)))
        ex = await self.thinker.road(self.subs[self.sub].text, kind, images)
        self._note(ex)
        if ex.error is not None:
            self.vlm_errors += 1
            if self.vlm_errors >= 2 and self.options.road_choice == "auto":
                self.use_vlm = False  # the model does not take images: OCR from now on
        return None if ex.parsed is None else options[int(ex.parsed)]

    async def _road_by_text(
        self, node: int, options: list[int], heads: list[float]
    ) -> tuple[int, str]:

        assert self.types is not None
        need = self.subs[self.sub]
        queries = [need.text] + [CATEGORIES[t].label for t in self.types if t in CATEGORIES]
        fits = []
        for k in options:
            _, lines = await self.eyes.read(node, heads[k])
            fits.append(self.eyes.text_fit(lines, queries))
        targets = self.targets_of[node]
        visits = [self.visits[targets[k]] for k in options]
        values = rules.road_values(fits, visits) + self.rng.uniform(0.0, 1e-6, len(options))
        best = int(np.argmax(values))
        if max(fits) <= 0.0 and all(v > 0 for v in visits):
            step = first_step_to_unvisited(self.targets_of, node, self.visits)
            if step is not None:
                return targets.index(step), "junction: towards the nearest unvisited node"
        return options[best], f"junction: road whose signs fit best ({fits[best]:.2f})"

    def _budget(self, node: int, remaining: int) -> Action | None:
        """Near the end of the budget, walk back to the best place judged and stop there."""
        good = [j for j in self.judged.values() if j.rating >= self.options.fallback_min]
        if not good:
            return None
        best = max(good, key=lambda j: j.rating)
        if best.node == node:
            if self.returning or remaining <= 1:
                return self._stop(f"budget: back at {best.name!r}", best)
            return None
        path = shortest_path(self.targets_of, node, best.node, limit=remaining)
        if path is None or len(path) - 1 < remaining - 2:
            return None  # unreachable, or time to look further (one step of slack: a
            # step away from the place costs two of the margin)
        self.returning = True
        k = self.targets_of[node].index(path[1])
        return self._go(node, k, None, f"budget: walking back to {best.name!r}")

    # ------------------------------------------------------------------ answers
    def _note(self, exchange: Any) -> None:
        self.log["prompt_id"] = exchange.prompt_id
        self.log["raw"] = exchange.raw
        if exchange.parsed is None:
            self.log["failures"] += 1

    def _record(self, parsed: str, why: str, confidence: float | None) -> StepRecord:
        return step_record(
            prompt_id=self.log.get("prompt_id"),
            raw_output=self.log.get("raw"),
            parsed_action=parsed,
            thoughts=why,
            confidence=confidence,
            parse_failures=int(self.log.get("failures", 0)),
            place_types=dict(self.types or {}),
            types_by=self.types_by,
            views=self.log.get("views", 0),
            zoom_views=self.log.get("zoom_views", 0),
            sightings=self.log.get("sightings", []),
            judged=self.log.get("judged", []),
        )

    def _go(self, node: int, k: int, heading: float | None, why: str) -> Action:
        road = self.headings_of[node][k]
        self.arrival = road
        rel = relative_angle(road, heading if heading is not None else road)
        name = f"{k + 1}:{direction_label(rel)}"
        return Action(k + 1, name, self._record(name, why, None))

    def _stop(self, why: str, judged: Judged | None) -> Action:
        conf = None if judged is None else round(min(1.0, max(0.0, judged.rating / 10.0)), 4)
        return Action(STOP, "stop", self._record("stop", why, conf))


__all__ = ["HiroAgent", "HiroOptions", "Judged"]

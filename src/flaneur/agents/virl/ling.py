"""Ling, V-IRL's tourist: follows walking directions step by step in ``NavigationEnv``.

One agent for every use: V-IRL's VLN benchmark (episodes whose instruction holds the
directions, ``flaneur run --tasks helsinki-virl-vln-v1 --agent ling``), Ling's trips by
asking (episodes whose metadata holds a ``question``: she asks Local at the start, and
again from where she stands after an early stop, at most ``max_asks`` times; where the
directions end without the destination in sight counts as an early stop) and the
``followed`` check of Local's directions (:func:`follow_offline`). Each ask is recorded in
the step record (``asked``: the question, why, Local's route and instruction).

Actions are V-IRL's: ``turn_direction(<compass word>)`` turns in place inside :meth:`act`
(recorded in the step record's ``moves``), ``forward()`` takes the street closest to where
she faces (never the one back unless it is the only one) and is the environment's move in
the ``headings`` scheme, ``stop()`` is slot 0. She stops early after ``max_turns_in_a_row``
turns in a row, after ``max_steps_away`` moves that each take her farther from every key
position of the route (V-IRL's harness rule: the key positions the episode's metadata
names, or those of Local's answer), and after ``step_limit`` actions.

She sees landmarks through the run's landmark scorer (``--landmarks``, see
:class:`~flaneur.agents.virl.sight.Sight`): ``map`` (the default; V-IRL's oracle row: a
place of that name within ``landmark_radius_m``, all around), or ``ocr``, ``clip``, ``vlm``
or a plug-in scorer on the run's views (``--views``): one view of ``view_fov`` towards the
side the instruction names, else views all around.

Under ``--protocol paper`` she acts as V-IRL's tourist (``virl/actions/navigation/
vision_language_navigator.py``): ``turn_direction(<word>)`` turns *and* moves one step, the
street closest to the word (lines 296-314: one action, recorded as the step's action);
``forward()`` takes the street closest to the way the last ``turn_direction`` set (the start
heading before any), the way back included (lines 284-295); the model sees every
observation and action of the walk so far, not the last five (lines 113-143); Local answers
as V-IRL's (:mod:`flaneur.agents.virl.local`); with ``--landmarks map`` she sees as V-IRL's
oracle, the route's landmarks only at its key positions (:meth:`Sight.as_oracle`).

Offline her policy is :class:`~flaneur.agents.virl.ling_rule.LegRule` over the legs of the
instruction. With a model (``--llm``) every action comes from the model given V-IRL's
observation (``ling/action``: "There is a 4-way intersection." near a key position, "X is
on your left." for the instruction's landmarks in sight, else "No landmarks nearby."); an
unusable reply falls back to the rule's action, counted in the step record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import numpy as np

from flaneur.agents.ablations import nothing_to_see
from flaneur.agents.base import Action, Agent, EnvInfo, StepRecord, step_record
from flaneur.agents.envinfo import env_info_for
from flaneur.agents.virl.common import walking_env
from flaneur.agents.virl.instructions import COMPASS_DEG, parse_instruction
from flaneur.agents.virl.ling_rule import LegRule
from flaneur.agents.virl.local import give_directions
from flaneur.agents.virl.sight import Sight, check_landmarks, landmark_scorer, landmarks_in
from flaneur.agents.virl.thinking import Thinker
from flaneur.errors import FlaneurError
from flaneur.geo import angular_distance
from flaneur.models.sync import run_sync
from flaneur.options import Range, option
from flaneur.services.directions import compass
from flaneur.services.errors import UnreachableError
from flaneur.services.geocode import GeocodeResult, normalize
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

STEP_LIMIT = 40
"""V-IRL actions per set of directions in V-IRL's benchmark (its tourist alone: 30)."""
KEY_POSITION_NEAR_M = 10.0
_ACTION = re.compile(
    r"(forward)\s*\(\s*\)|turn_direction\s*\(\s*['\"]?([a-z_-]+)['\"]?\s*\)|(stop)\s*\(\s*\)",
    re.IGNORECASE,
)


def parse_action(text: str) -> tuple[str, str] | None:
    """``("forward", "")``, ``("turn", "<compass>")`` or ``("stop", "")`` from a reply."""
    match = _ACTION.search(text or "")
    if not match:
        return None
    if match.group(1):
        return ("forward", "")
    if match.group(3):
        return ("stop", "")
    word = match.group(2).lower().replace("_", "-")
    if "-" not in word and word[:5] in ("north", "south") and len(word) > 5:
        word = f"{word[:5]}-{word[5:]}"  # "northeast"
    return ("turn", word) if word in COMPASS_DEG else None


@dataclass(frozen=True)
class LingOptions:
    """Ling's options (``--option ling.max_asks=1``, ``flaneur virl ling FILE step_limit=60``)."""

    step_limit: Annotated[int, Range(1, 400)] = option(
        STEP_LIMIT, "V-IRL actions (turns and moves) per set of directions"
    )
    max_asks: Annotated[int, Range(0, 5)] = option(
        2, "times she asks Local again after an early stop (episodes with a question)"
    )
    max_turns_in_a_row: Annotated[int, Range(1, 20)] = option(5, "early stop after these turns")
    max_steps_away: Annotated[int, Range(0, 50)] = option(
        6, "early stop after these moves away from every key position (0: never)"
    )
    landmark_radius_m: Annotated[float, Range(1, 200)] = option(
        20.0, "how far map landmarks are seen, m"
    )
    view_fov: Annotated[float, Range(30, 180)] = option(90.0, "field of view of each view")
    leg_slack_m: Annotated[float, Range(0, 100)] = option(
        10.0, "a leg of told length ends this much before it, m"
    )
    lost_after_m: Annotated[float, Range(0, 500)] = option(
        20.0, "a turn's landmark not seen this far past the told length is given up, m"
    )
    clip_model: str = option("ViT-B-32", "open_clip architecture for --landmarks clip")
    clip_weights: str = option("", "open_clip weights for --landmarks clip (file or tag)")


class LingAgent(Agent):
    """The tourist (see the module docstring): her :class:`LingOptions`, and ``scorer``, a
    landmark scorer for views (default: from the run's ``--landmarks``)."""

    name: ClassVar[str] = "ling"
    schemes: ClassVar[tuple[str, ...]] = ("headings",)
    Options: ClassVar[type] = LingOptions

    def __init__(self, *, scorer: Any = None, **options: Any) -> None:
        self.options = LingOptions(**options)
        self.scorer = scorer

    @classmethod
    def check_setup(cls, options: dict[str, Any], setup: Any) -> None:
        """View scorers need ``--views``; ``clip`` needs weights, ``vlm`` a model."""
        check_landmarks(setup.landmarks, setup.views, setup.llm, options.get("clip_weights"))

    # ------------------------------------------------------------------ episode
    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        """Choose the sight, read the episode (directions or a question), clear the walk."""
        super().reset(episode, env_info)
        if env_info.scheme != "headings":
            raise FlaneurError(f"agent ling acts in the 'headings' scheme, not {env_info.scheme!r}")
        if env_info.city is None:
            raise FlaneurError("agent ling needs the city map (env_info.city)")
        self.city = env_info.city
        self.graph = self.city.graph
        scorer = landmark_scorer(self.city, env_info, self.options, self.scorer)
        radius, fov = self.options.landmark_radius_m, self.options.view_fov
        self.sight = Sight(self.city, scorer, env_info.views, radius_m=radius, fov=fov)
        self.blind = nothing_to_see(
            "ling",
            self.city,
            places_only=scorer is None,  # the map (V-IRL's oracle row)
            hint="add --views synthetic --landmarks ocr to read signs",
        )
        self.thinker = Thinker(env_info.model, "ling")
        self.local = Thinker(env_info.model, "local")
        self.question = str(episode.metadata.get("question") or "").strip()
        self.asks = 0
        self.goal: GeocodeResult | None = None
        self.goal_name = "" if self.question else str(episode.metadata.get("destination") or "")
        self.facing = float(episode.start_heading)
        self.paper = env_info.protocol == "paper"
        self.target = self.facing  # paper: the way forward() keeps (V-IRL's target heading)
        self.came_from: int | None = None
        self.rule: LegRule | None = None
        self.recorded = (0, 0)  # model exchanges of Ling's and Local's put in step records

    async def _follow(self, instruction: str, keys: Sequence[int]) -> None:
        """Start walking a new instruction from where she stands."""
        self.instruction = instruction
        self.landmarks = await self._landmarks(instruction)
        keyed = {normalize(x): x for x in self.landmarks}

        def find(phrase: str) -> list[str]:
            text = f" {normalize(phrase)} "
            return [name for key, name in keyed.items() if f" {key} " in text]

        legs = parse_instruction(instruction, find)
        self.landmarks += [x for leg in legs for x in (leg.landmark, leg.until, leg.past) if x]
        self.rule = LegRule(
            self.city,
            legs,
            self.sight.seen,
            goal=self.goal_name,
            slack_m=self.options.leg_slack_m,
            lost_after_m=self.options.lost_after_m,
        )
        self.keys = list(keys)
        if self.paper:  # the map as V-IRL's oracle, on this route
            self.sight.as_oracle(self.keys[:-1], self.goal_name)
        here = self.graph.xy[self.node]
        self.best = {k: float(np.hypot(*(here - self.graph.xy[k]))) for k in self.keys}
        self.actions = self.turns = self.away = 0
        self.walked_m = 0.0
        self.history: list[str] = []
        self.observed: list[str] = []  # paper, with a model: the observation of each action

    async def _landmarks(self, instruction: str) -> list[str]:
        reply = await self.thinker.ask("landmarks", instruction=instruction)
        if reply is not None:
            start, end = reply.find("["), reply.rfind("]")
            try:
                items = json.loads(reply[start : end + 1]) if start >= 0 < end else None
            except json.JSONDecodeError:
                items = None
            if isinstance(items, list):
                return [str(x) for x in items if str(x).strip()]
            self.thinker.fell_back()
        return landmarks_in(self.city, instruction)

    async def _ask_local(self, asked: list[dict[str, Any]], after: str) -> bool:
        """Ask Local the episode's question from where she stands (``after``: why); whether
        he could say."""
        try:
            answer = await give_directions(
                self.city,
                self.local,
                self.question,
                self.node,
                destination=self.goal,
                protocol=self.env_info.protocol,
            )
        except UnreachableError:
            return False
        self.goal, self.goal_name = answer.destination, answer.destination.name
        self.asks += 1
        asked.append(
            {
                "question": self.question,
                "after": after,
                "from_node": str(self.graph.ids[self.node]),
                "destination": answer.destination.name,
                "destination_latlng": [answer.destination.lat, answer.destination.lng],
                "route": [str(self.graph.ids[n]) for n in answer.route.nodes],
                "instruction": answer.instruction,
                "written_by": answer.written_by,
            }
        )
        await self._follow(answer.instruction, answer.route.key_positions)
        return True

    async def _start(self, asked: list[dict[str, Any]]) -> bool:
        if self.question:
            return await self._ask_local(asked, "start")
        ids = self.episode.metadata.get("key_positions") or ()
        keys = [self.graph.index(k) for k in ids if k in self.graph]
        await self._follow(self.episode.instruction, keys)
        return True

    # ------------------------------------------------------------------ acting
    def ablations(self) -> tuple[str, ...]:
        """``("nothing to see",)`` when it perceives only named places and the city has
        none (:func:`flaneur.agents.ablations.nothing_to_see`)."""
        return getattr(self, "blind", ())

    async def act(self, observation: Mapping[str, Any]) -> Action:
        """V-IRL's turns in place, then ``forward()`` or ``stop()``."""
        self.node = int(observation["node"])
        if self.came_from is not None:  # the last action was forward()
            self.facing = float(np.asarray(observation["heading"]).reshape(-1)[0])
            self._arrived()
        moves: list[str] = []
        asked: list[dict[str, Any]] = []
        if self.rule is None and not await self._start(asked):
            return self._stop(moves, asked, "no_route")
        while True:
            ended = self._early_stop()
            if ended:
                again = self.question and self.asks <= self.options.max_asks
                if again and await self._ask_local(asked, ended):
                    continue
                return self._stop(moves, asked, ended)
            kind, word = await self._choose()
            self.actions += 1
            if kind == "stop":
                lost = await self._lost()
                if lost and await self._ask_local(asked, lost):
                    continue
                return self._stop(moves, asked, lost)
            if kind == "turn":
                self.facing = self.target = COMPASS_DEG[word]
                self.turns += 1
                if self.paper:  # V-IRL's turn_direction moves too
                    return self._move(f"turn_direction({word})", moves, asked)
                moves.append(f"turn_direction({word})")
                self.history.append(moves[-1])
                continue
            self.turns = 0
            return self._move("forward()", moves, asked)

    def _move(self, action: str, moves: list[str], asked: list[dict[str, Any]]) -> Action:
        """The step of ``action`` (``forward()``, or a paper ``turn_direction``): the street
        :meth:`_forward_slot` picks, or ``stop()`` where none leaves."""
        slot = self._forward_slot()
        if slot == 0:
            return self._stop(moves, asked, "dead_end")
        self.history.append(action)
        self.came_from = self.node
        return Action(slot, action, self._record(action, moves, asked, ""))

    async def _lost(self) -> str:
        """``"not_in_sight"`` when she asked the way, may ask again and does not see the
        destination where the directions end; else ``""``."""
        if not (self.question and self.asks <= self.options.max_asks and self.goal_name):
            return ""
        seen = await self.sight.seen(self.node, self.facing, [self.goal_name])
        return "" if seen else "not_in_sight"

    def _early_stop(self) -> str:
        if self.actions >= self.options.step_limit:
            return "step_limit"
        if self.turns >= self.options.max_turns_in_a_row:
            return "too_many_turns"
        if self.options.max_steps_away and self.away >= self.options.max_steps_away:
            return "moving_away"
        return ""

    def _arrived(self) -> None:
        """Bookkeeping after a ``forward()`` (distance walked, moves away from the route)."""
        graph, start, end = self.graph, self.came_from, self.node
        assert start is not None and self.rule is not None
        metres = float(np.hypot(*(graph.xy[end] - graph.xy[start])))
        self.walked_m += metres
        self.rule.walked(end, metres)
        if self.keys:
            dists = {k: float(np.hypot(*(graph.xy[end] - graph.xy[k]))) for k in self.keys}
            farther = all(dists[k] > self.best[k] for k in self.keys)
            self.away = self.away + 1 if farther else 0
            self.best = {k: min(self.best[k], dists[k]) for k in self.keys}

    def _forward_slot(self) -> int:
        """Slot of the street closest to where she faces, avoiding the way back when she
        can (0 where no street leaves); under ``paper`` closest to the way the last turn
        set, the way back included (V-IRL's)."""
        targets_of, headings_of = self.graph.adjacency
        heads, targets = headings_of[self.node], targets_of[self.node]
        facing = self.target if self.paper else self.facing
        order = sorted(range(len(heads)), key=lambda k: float(angular_distance(heads[k], facing)))
        if self.paper:
            return order[0] + 1 if order else 0
        ahead = [k for k in order if targets[k] != self.came_from] or order
        return ahead[0] + 1 if ahead else 0

    async def _choose(self) -> tuple[str, str]:
        """The rule's action, or the model's when it gives a usable one."""
        assert self.rule is not None
        rule = await self.rule.next_action(self.node, self.facing, self.came_from)
        if not self.thinker.online:
            return rule
        observation = await self._observation()
        if self.paper:  # V-IRL's prompt holds the whole walk: O_1, A_1, ..., O_k
            self.observed.append(observation)
            history = self._sequence()
        else:
            history = ", ".join(self.history[-5:]) or "none"
        reply = await self.thinker.ask(
            "action_paper" if self.paper else "action",
            instruction=self.instruction,
            landmarks=", ".join(dict.fromkeys(self.landmarks)) or "none",
            walked_m=round(self.walked_m),
            heading_words=compass(self.facing),
            observation=observation,
            history=history,
        )
        parsed = parse_action(reply or "")
        if parsed is None:
            if reply is not None:
                self.thinker.fell_back()
            return rule
        return parsed

    def _sequence(self) -> str:
        """Every observation and action of this set of directions so far (V-IRL's
        ``O_k: ... / A_k: ...`` lines), the current observation last."""
        lines = []
        for k, seen in enumerate(self.observed, start=1):
            lines.append(f"O_{k}: {seen}")
            if k <= len(self.history):
                lines.append(f"A_{k}: {self.history[k - 1]}")
        return "\n".join(lines)

    async def _observation(self) -> str:
        """V-IRL's observation where she stands (see the module docstring)."""
        graph, node = self.graph, self.node
        parts = []
        near = not self.keys or any(
            float(np.hypot(*(graph.xy[node] - graph.xy[k]))) <= KEY_POSITION_NEAR_M
            for k in self.keys
        )
        if near and graph.degree[node] > 2:
            parts.append(f"There is a {int(graph.degree[node])}-way intersection.")
        seen = await self.sight.seen(node, self.facing, [*self.landmarks, self.goal_name])
        parts += [f"{name} is on your {where}." for name, where in seen.items()]
        return " ".join(parts or ["No landmarks nearby."])

    def _stop(self, moves: list[str], asked: list[dict[str, Any]], ended: str) -> Action:
        return Action(0, "stop()", self._record("stop()", moves, asked, ended))

    def _record(
        self, action: str, moves: list[str], asked: list[dict[str, Any]], ended: str
    ) -> StepRecord:
        ling, local = self.thinker.records, self.local.records
        mine = ling[self.recorded[0] :]
        new = [*local[self.recorded[1] :], *mine]
        self.recorded = (len(ling), len(local))
        last = mine[-1] if mine else {}
        extra: dict[str, Any] = {}
        if new:
            extra["calls"] = new
        if asked:
            extra["asked"] = asked
        if ended:
            extra["ended"] = ended
        return step_record(
            parsed_action=action,
            moves=moves,
            prompt_id=last.get("prompt_id"),
            raw_output=last.get("raw_output"),
            parse_failures=sum(1 for r in new if r.get("parse_failures") or r.get("error")),
            **extra,
        )


async def _walk(env: Any, agent: LingAgent, protocol: str = "flaneur") -> int:

    obs, info = env.reset()
    agent.reset(env.episode, env_info_for(env, protocol=protocol))
    done = False
    while not done:
        action = await agent.act({**obs, "info": info})
        obs, _, terminated, truncated, info = env.step(action.slot)
        done = terminated or truncated
    return int(env.state.node)


def follow_offline(
    city: City,
    instruction: str,
    start: int,
    heading: float,
    *,
    step_limit: int = STEP_LIMIT,
    protocol: str = "flaneur",
    keys: Sequence[int] = (),
    destination: str = "",
) -> int:
    """Where Ling's offline rule (map landmarks, no model) ends walking ``instruction`` from
    viewpoint ``start`` facing ``heading`` under ``protocol``: the final viewpoint. Under
    ``paper`` she knows the route's key positions ``keys`` (where V-IRL's oracle sees
    landmarks) and the ``destination``'s name (where a last leg told without a distance
    ends); under ``flaneur`` neither is read."""
    paper = protocol == "paper"
    ids = [str(city.graph.ids[k]) for k in keys] if paper else []
    metadata = {"key_positions": ids, "destination": destination} if paper else None
    env = walking_env(
        city,
        "follow",
        instruction,
        start,
        start,
        steps=step_limit,
        heading=heading,
        metadata=metadata,
    )
    return run_sync(_walk(env, LingAgent(step_limit=step_limit), protocol))


__all__ = ["STEP_LIMIT", "LingAgent", "LingOptions", "follow_offline", "parse_action"]

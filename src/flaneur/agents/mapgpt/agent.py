"""``MapGPTAgent``: MapGPT's single navigation expert on the ``nodes`` scheme.

At each step the agent sends one prompt (``prompts/mapgpt/system.txt`` or
``system_vision.txt``, and ``step.txt``) with the instruction, its history, the trajectory
of place numbers, the map connectivity of the places it visited, supplementary info about
places seen but not visited, its previous planning, and lettered action options (one per
candidate node of the ``nodes`` scheme; ``stop`` from step ``stop_after`` on). The
reply's ``Thought``, ``New Planning`` and ``Action`` letter are parsed leniently
(:mod:`flaneur.agents.mapgpt.parse`).

Modes: ``two-stage`` describes the options in text (:mod:`flaneur.agents.mapgpt.describe`:
map topology and nearby names, OCR'd signs or model captions); ``one-stage`` attaches the
view towards every adjacent option to the message for a vision-language model. ``auto``
(default) picks from the run's options:

* no ``--views``: two-stage with map descriptions;
* ``--views V --landmarks ocr|vlm``: two-stage with descriptions from perception;
* ``--views V`` alone, or with ``--landmarks map``: one-stage (with ``map``, the options
  also carry their map description next to the image).

Backtracking: with the scheme option ``allow_jumps=True`` the ``nodes`` scheme also offers
observed but unvisited places, which appear as ``go back to Place N`` options (the
environment walks the route, one step per edge).

Fallback: a reply that names no offered option (an echoed option list names none; a reply
cut off at ``max_tokens`` names one only in an explicit ``Action`` field, see
:mod:`flaneur.agents.mapgpt.parse`) is a counted parse failure (step record
``parse_failures=1``, :attr:`MapGPTAgent.parse_failures` per episode); the agent then takes
the option closest to straight ahead among the adjacent places (never stop), keeping its
previous planning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from flaneur.agents.base import Action, Agent, EnvInfo, step_record
from flaneur.agents.mapgpt import prompt_builder as pb
from flaneur.agents.mapgpt.describe import PlaceDescriber
from flaneur.agents.mapgpt.parse import ParsedReply, parse_reply
from flaneur.agents.prompts import load_prompt, prompt_hash
from flaneur.env.online_map import OnlineMap
from flaneur.env.state import relative_angle
from flaneur.errors import FlaneurError
from flaneur.geo import bearing, haversine
from flaneur.models import messages as msg
from flaneur.tasks.episode import Episode

MODES = ("auto", "two-stage", "one-stage")
PERCEPTION_SOURCES = ("ocr", "vlm")


@dataclass(frozen=True)
class MapGPTOptions:
    """The options of :class:`MapGPTAgent` (see its parameters)."""

    mode: Literal["auto", "two-stage", "one-stage"] = "auto"
    stop_after: int = 3
    history_window: int | None = None
    map_window: int | None = None
    supplementary_limit: int = 8
    radius_m: float = 30.0
    max_tokens: int = 400
    temperature: float = 0.0


class MapGPTAgent(Agent):
    """MapGPT (Chen et al., ACL 2024) for street navigation.

    Parameters
    ----------
    mode
        ``"auto"``, ``"two-stage"`` or ``"one-stage"`` (see the module docstring).
    stop_after
        Stop is offered from this step on, counting steps from 1 as the prompt does
        (``Action options (step 3)``); the default 3 follows MapGPT's set-up, so the agent
        makes at least two moves. 1 offers stop from the start.
    history_window
        Keep only the last moves in ``History`` (``None``: all).
    map_window
        Keep only the connectivity lines of the last explored places (``None``: all).
    supplementary_limit
        Most recently observed unvisited places listed in ``Supplementary Info``.
    radius_m
        Radius of map descriptions (named places near a node).
    max_tokens, temperature
        Sampling parameters of the navigation call.
    """

    name: ClassVar[str] = "mapgpt"
    schemes: ClassVar[tuple[str, ...]] = ("nodes",)
    needs_model: ClassVar[bool] = True
    Options: ClassVar[type] = MapGPTOptions

    def __init__(
        self,
        *,
        mode: str = "auto",
        stop_after: int = 3,
        history_window: int | None = None,
        map_window: int | None = None,
        supplementary_limit: int = 8,
        radius_m: float = 30.0,
        max_tokens: int = 400,
        temperature: float = 0.0,
    ) -> None:
        if mode not in MODES:
            raise FlaneurError(f"mapgpt mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.stop_after = int(stop_after)
        self.history_window = history_window
        self.map_window = map_window
        self.supplementary_limit = int(supplementary_limit)
        self.radius_m = radius_m
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.parse_failures = 0

    @classmethod
    def check_setup(cls, options: dict[str, Any], setup: Any) -> None:
        """One-stage mode sees images: it needs ``--views``."""
        if options.get("mode") == "one-stage" and setup.views is None:
            raise FlaneurError("mapgpt in one-stage mode needs --views")

    # ------------------------------------------------------------------ episode set-up
    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        """Check the run set-up and start a fresh map, history and planning."""
        super().reset(episode, env_info)
        self.model = env_info.model
        if self.model is None:
            raise FlaneurError("agent mapgpt needs --llm (a chat model)")
        scheme = env_info.scheme
        if scheme != "nodes":
            raise FlaneurError(
                f"agent mapgpt acts in the 'nodes' action scheme; run it with --scheme nodes "
                f"(this run uses {scheme!r})"
            )
        env = env_info.env
        if env is None:
            raise FlaneurError("agent mapgpt needs env_info.env (a view of the environment)")
        self.env = env
        self.city = env.city
        self.graph = env.city.graph
        views = env_info.views
        landmarks = env_info.landmarks
        perceive = views is not None and landmarks in PERCEPTION_SOURCES
        mode = self.mode
        if mode == "auto":
            mode = "one-stage" if views is not None and not perceive else "two-stage"
        if mode == "one-stage" and views is None:
            raise FlaneurError("agent mapgpt in one-stage mode needs --views")
        self.active_mode = mode
        source = str(landmarks) if mode == "two-stage" and perceive else "map"
        self.describe_images = mode == "one-stage" and landmarks == "map"
        self.describer = PlaceDescriber(
            self.city, source=source, views=views, model=self.model, radius_m=self.radius_m
        )
        vision = mode == "one-stage"
        self.system_prompt = load_prompt("mapgpt", "system_vision" if vision else "system")
        self.step_prompt = load_prompt("mapgpt", "step")
        self.map = OnlineMap(self.graph)
        self.history: list[str] = []
        self.planning = ""
        self.parse_failures = 0
        self._targets, self._headings = self.graph.adjacency

    # ------------------------------------------------------------------ candidates
    def candidates(self, observation: Mapping[str, Any]) -> list[tuple[int, int]]:
        """``(slot, node index)`` of the current candidates of the ``nodes`` scheme."""
        info = observation.get("info") or {}
        pairs = info.get("actions")
        if pairs is None:
            env = self.env
            pairs = env.scheme.actions(env.state)
        out = []
        for slot, label in pairs:
            if int(slot) > 0 and label:
                out.append((int(slot), self.graph.index(str(label))))
        return out

    def _bearing_to(self, a: int, b: int) -> float:
        g = self.graph
        return bearing(g.lat[a], g.lng[a], g.lat[b], g.lng[b])

    async def _supplementary(
        self, current: int, heading: float, exclude: set[int]
    ) -> list[tuple[int, str]]:
        unexplored = [v for v in self.map.unexplored() if v not in exclude]
        if self.supplementary_limit <= 0:
            return []
        chosen = unexplored[-self.supplementary_limit :]
        g = self.graph
        out = []
        for v in chosen:
            where = pb.where_phrase(relative_angle(self._bearing_to(current, v), heading))
            dist = haversine(g.lat[current], g.lng[current], g.lat[v], g.lng[v])
            text = f"{where}, {round(dist)} m away"
            if self.active_mode == "two-stage":
                text += f"; {self.describer.map_description(v)}"
            out.append((self.map.number(v), text))
        return out

    # ------------------------------------------------------------------ one step
    async def build_prompt(
        self, observation: Mapping[str, Any]
    ) -> tuple[list[msg.Message], list[pb.Option], str, str]:
        """The messages, options, full prompt text and prompt id of this step."""
        node = int(observation["node"])
        heading = float(observation["heading"][0])
        step = int(observation["step"])
        pb.advance_map(self.map, node)
        cands = self.candidates(observation)
        cand_nodes = {v for _, v in cands}
        edge_headings = {
            t: self._headings[node][k] for k, t in enumerate(self._targets[node]) if t in cand_nodes
        }
        far = {v: self._bearing_to(node, v) for _, v in cands if v not in edge_headings}
        options = pb.move_options(
            cands,
            self.map,
            current=node,
            heading=heading,
            edge_headings=edge_headings,
            xy_bearing=far,
            with_stop=step + 1 >= self.stop_after,
        )
        images: list[Any] = []
        labels: list[str] = []
        moves = [o for o in options if not o.is_stop]
        if self.active_mode == "one-stage":
            updated = []
            for o in options:
                if o.node in edge_headings:
                    images.append(await self.describer.view_image(node, edge_headings[o.node]))
                    labels.append(f"view towards {pb.place(o.place)} (option {o.letter})")
                    text = self.describer.map_description(o.node) if self.describe_images else ""
                    o = pb.Option(o.letter, o.slot, o.node, o.place, o.phrase, text, len(images))
                updated.append(o)
            options = updated
        else:
            items = [(o.node, edge_headings.get(o.node)) for o in moves]
            texts = iter(await self.describer.describe_many(node, items))
            options = [
                o
                if o.is_stop
                else pb.Option(o.letter, o.slot, o.node, o.place, o.phrase, next(texts))
                for o in options
            ]
        supplementary = await self._supplementary(node, heading, {o.node for o in options})
        user_text, _ = self.step_prompt.fill(
            instruction=" ".join(observation["instruction"].split()),
            history=pb.history_text(self.history, window=self.history_window),
            trajectory=pb.trajectory_text(self.map),
            map="\n".join(pb.map_lines(self.map, window=self.map_window)),
            supplementary=pb.supplementary_text(supplementary),
            planning=self.planning or pb.NO_PLANNING,
            step=step + 1,
            options=pb.options_text(options),
        )
        user_text = user_text.strip()
        system_text = self.system_prompt.text.strip()
        messages = [msg.system(system_text), msg.user(user_text, *images)]
        full = pb.full_prompt_text(system_text, user_text, labels)
        prompt_id = f"{self.step_prompt.version}:{prompt_hash(full)}"
        return messages, options, full, prompt_id

    def fallback(self, options: list[pb.Option], heading: float, node: int) -> pb.Option | None:
        """The documented fallback: the adjacent option closest to straight ahead."""
        best, best_angle = None, 361.0
        for k, t in enumerate(self._targets[node]):
            angle = abs(relative_angle(self._headings[node][k], heading))
            opt = next((o for o in options if o.node == t), None)
            if opt is not None and angle < best_angle:
                best, best_angle = opt, angle
        if best is None:
            best = next((o for o in options if not o.is_stop), None)
        return best or next((o for o in options if o.is_stop), None)

    async def act(self, observation: Mapping[str, Any]) -> Action:
        """One model call: prompt, parse, and the chosen slot."""
        messages, options, full, prompt_id = await self.build_prompt(observation)
        completion = await self.model.complete(
            messages, temperature=self.temperature, max_tokens=self.max_tokens
        )
        raw = completion.text or ""
        truncated = completion.finish_reason == "length"
        parsed: ParsedReply = parse_reply(raw, options, truncated=truncated)
        failures = 0
        chosen = parsed.option
        if chosen is None:
            failures = 1
            self.parse_failures += 1
            node = int(observation["node"])
            chosen = self.fallback(options, float(observation["heading"][0]), node)
        if parsed.planning:
            self.planning = " ".join(parsed.planning.split())
        if chosen is None:  # no option at all: nothing to do but stop
            slot, name, phrase = 0, "stop", pb.STOP_PHRASE
        else:
            slot = chosen.slot
            name = "stop" if chosen.is_stop else str(self.graph.ids[chosen.node])
            phrase = chosen.phrase
        self.history.append(phrase)
        usage = completion.usage
        captions = self.describer.drain_captions()
        record = step_record(
            prompt_id=prompt_id,
            raw_output=raw,
            parsed_action=name,
            thoughts=parsed.thought or None,
            parse_failures=failures,
            prompt=full,
            planning=parsed.planning or None,
            letter=chosen.letter if chosen is not None and parsed.ok else None,
            parse_method=parsed.method,
            truncated=truncated or None,
            images=sum(len(m.images) for m in messages),
            tokens=[usage.prompt_tokens, usage.completion_tokens],
            **({"captions": captions} if captions else {}),
        )
        return Action(slot, name, record)


__all__ = ["MODES", "MapGPTAgent"]

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

Protocols: under ``env_info.protocol == "paper"`` the agent follows MapGPT's released code
where flaneur's rules differ (:mod:`flaneur.agents.mapgpt.paper`): steps counted from 0 and
stop after ``stop_after`` moves, MapGPT's move words, replies read as MapGPT reads them (an
unreadable one is option 0, i.e. stop once stop is offered), the plan replaced at every
step, a view of every place seen in one-stage mode, and supplementary places without
directions or distances. ``planning=False`` is the paper's ablation without planning (under
either protocol).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from flaneur.agents.ablations import nothing_to_see
from flaneur.agents.base import Action, Agent, EnvInfo, step_record
from flaneur.agents.mapgpt import paper as mp
from flaneur.agents.mapgpt import prompt_builder as pb
from flaneur.agents.mapgpt.describe import PlaceDescriber
from flaneur.agents.mapgpt.parse import ParsedReply, parse_reply
from flaneur.agents.prompts import Prompt, load_prompt, prompt_hash
from flaneur.env.online_map import OnlineMap
from flaneur.env.state import relative_angle
from flaneur.errors import FlaneurError
from flaneur.geo import bearing, haversine
from flaneur.models import messages as msg
from flaneur.options import option
from flaneur.tasks.episode import Episode

MODES = ("auto", "two-stage", "one-stage")
PERCEPTION_SOURCES = ("ocr", "vlm")
FLANEUR_SUPPLEMENTARY_LIMIT = 8
"""Places in ``Supplementary Info`` under the ``flaneur`` protocol (the most recent)."""


@dataclass(frozen=True)
class MapGPTOptions:
    """The options of :class:`MapGPTAgent` (see its parameters)."""

    mode: Literal["auto", "two-stage", "one-stage"] = option(
        "auto", "two-stage (text), one-stage (images) or auto (from --views and --landmarks)"
    )
    stop_after: int = option(
        3, "stop is offered from this step of the prompt on (paper: counted from 0)"
    )
    history_window: int | None = option(None, "keep only the last moves in History")
    map_window: int | None = option(None, "keep only the map lines of the last places")
    supplementary_limit: int | None = option(
        None, "places in Supplementary Info (None: 8; under --protocol paper all)"
    )
    planning: bool = option(True, "multi-step planning (False: MapGPT's no-planning ablation)")
    radius_m: float = option(30.0, "radius of map descriptions in metres")
    max_tokens: int = option(400, "reply length of the navigation call")
    temperature: float = option(0.0, "sampling temperature of the navigation call")


class MapGPTAgent(Agent):
    """MapGPT (Chen et al., ACL 2024) for street navigation.

    Under ``env_info.protocol == "paper"`` the agent follows MapGPT's released code where
    flaneur's rules differ (:mod:`flaneur.agents.mapgpt.paper`, ``docs/fidelity.md``).

    Parameters
    ----------
    mode
        ``"auto"``, ``"two-stage"`` or ``"one-stage"`` (see the module docstring).
    stop_after
        Stop is offered from this step on, as the prompt counts steps (``Action options
        (step 3)``): from 1 under the ``flaneur`` protocol (two moves before stop), from 0
        under ``paper`` as MapGPT counts (three moves before stop, MapGPT's
        ``--stop_after 3``). 0 offers stop from the start.
    history_window
        Keep only the last moves in ``History`` (``None``: all).
    map_window
        Keep only the connectivity lines of the last explored places (``None``: all).
    supplementary_limit
        Most recently observed unvisited places listed in ``Supplementary Info``
        (``None``: 8 under the ``flaneur`` protocol, every one under ``paper`` as MapGPT).
    planning
        Ask for a ``New Planning`` and show it back as ``Previous Planning``; ``False`` is
        the paper's ablation without planning (both lines leave the prompt).
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
        supplementary_limit: int | None = None,
        planning: bool = True,
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
        limit = supplementary_limit
        self.supplementary_limit = None if limit is None else int(limit)
        self.use_planning = bool(planning)
        self.radius_m = radius_m
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.parse_failures = 0
        self.paper = False

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
        self.paper = env_info.protocol == "paper"
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
        self.blind = nothing_to_see(
            "mapgpt",
            self.city,
            places_only=mode == "two-stage" and source == "map",
            hint="add --views synthetic (images) or --views synthetic --landmarks ocr",
        )
        self.system_prompt, self.step_prompt = self._prompts(mode == "one-stage")
        self.map = OnlineMap(self.graph)
        self.history: list[str] = []
        self.planning = ""
        self.parse_failures = 0
        self._targets, self._headings = self.graph.adjacency
        self._views_of: dict[int, tuple[int, float]] = {}
        self._image_parts: dict[tuple[int, float], Any] = {}

    def _prompts(self, vision: bool) -> tuple[Prompt, Prompt]:
        """The system and step templates of this episode's protocol, mode and planning.

        One-stage under ``paper`` shows the views of every place seen (MapGPT's images),
        so its system prompt says so (``system_vision_places``).
        """
        name = "system"
        if vision:
            name = "system_vision_places" if self.paper else "system_vision"
        system, step = load_prompt("mapgpt", name), load_prompt("mapgpt", "step")
        if not self.use_planning:
            system, step = pb.without_planning(system), pb.without_planning(step)
        return system, step

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

    def _options(self, observation: Mapping[str, Any]) -> tuple[list[pb.Option], dict[int, float]]:
        """The lettered options of this step and the street heading of each adjacent one."""
        node = int(observation["node"])
        heading = float(observation["heading"][0])
        cands = self.candidates(observation)
        cand_nodes = {v for _, v in cands}
        edge_headings = {
            t: self._headings[node][k] for k, t in enumerate(self._targets[node]) if t in cand_nodes
        }
        far = {v: self._bearing_to(node, v) for _, v in cands if v not in edge_headings}
        step = int(observation["step"])
        options = pb.move_options(
            cands,
            self.map,
            current=node,
            heading=heading,
            edge_headings=edge_headings,
            xy_bearing=far,
            with_stop=mp.stop_offered(step, self.stop_after, paper=self.paper),
            phrase_of=mp.move_phrase_paper if self.paper else pb.move_phrase,
        )
        return options, edge_headings

    async def _supplementary(self, current: int, heading: float, exclude: set[int]) -> str:
        """The ``Supplementary Info`` text: unvisited places that are not options."""
        unexplored = [v for v in self.map.unexplored() if v not in exclude]
        limit = self.supplementary_limit
        if limit is None and not self.paper:
            limit = FLANEUR_SUPPLEMENTARY_LIMIT
        chosen = unexplored if limit is None else unexplored[-limit:] if limit > 0 else []
        if self.paper:
            return self._supplementary_paper(chosen)
        g = self.graph
        out = []
        for v in chosen:
            where = pb.where_phrase(relative_angle(self._bearing_to(current, v), heading))
            dist = haversine(g.lat[current], g.lng[current], g.lat[v], g.lng[v])
            text = f"{where}, {round(dist)} m away"
            if self.active_mode == "two-stage":
                text += f"; {self.describer.map_description(v)}"
            out.append((self.map.number(v), text))
        return pb.supplementary_text(out)

    def _supplementary_paper(self, chosen: list[int]) -> str:
        """MapGPT's ``Supplementary Info``: the places alone, in number order, with no
        direction or distance; ``(Image N)`` in one-stage mode, their map description in
        two-stage mode (which has no images to point to)."""
        lines = []
        for v in sorted(chosen, key=self.map.number):
            text = pb.place(self.map.number(v))
            if self.active_mode == "two-stage":
                text += f": {self.describer.map_description(v)}"
            elif v in self._views_of:
                text += f" (Image {self.map.number(v)})"
            lines.append(text)
        return "\n".join(lines) if lines else pb.NO_SUPPLEMENTARY

    # ------------------------------------------------------------------ images and texts
    async def _image(self, node: int, heading: float) -> Any:
        """The view from ``node`` towards ``heading`` as a message part (kept per episode)."""
        key = (node, round(heading, 3))
        if key not in self._image_parts:
            self._image_parts[key] = await self.describer.view_image(node, heading)
        return self._image_parts[key]

    async def _option_images(
        self, options: list[pb.Option], node: int, edge_headings: dict[int, float]
    ) -> tuple[list[pb.Option], list[Any], list[str]]:
        """One-stage under ``flaneur``: the views towards the adjacent options, in option
        order, after the text (``(Image k)`` names the k-th)."""
        images: list[Any] = []
        labels: list[str] = []
        updated = []
        for o in options:
            if o.node in edge_headings:
                images.append(await self.describer.view_image(node, edge_headings[o.node]))
                labels.append(f"view towards {pb.place(o.place)} (option {o.letter})")
                text = self.describer.map_description(o.node) if self.describe_images else ""
                o = replace(o, description=text, image=len(images))
            updated.append(o)
        return updated, images, labels

    async def _place_images(
        self, options: list[pb.Option], node: int, edge_headings: dict[int, float]
    ) -> tuple[list[pb.Option], list[Any], list[str]]:
        """One-stage under ``paper``, as MapGPT: a view of every place seen so far, ``Image
        N:`` before the view of ``Place N``, all before the text. A place's view is the one
        towards it from the last place where it was an adjacent option."""
        for v, h in edge_headings.items():
            self._views_of[v] = (node, h)
        parts: list[Any] = []
        labels: list[str] = []
        for v, number in self.map.observed.items():
            seen = self._views_of.get(v)
            if seen is None:
                continue
            parts += [f"Image {number}:", await self._image(*seen)]
            src = pb.place(self.map.number(seen[0]))
            labels.append(f"Image {number}: view from {src} towards {pb.place(number)}")
        updated = []
        for o in options:
            if o.node in self._views_of:
                text = self.describer.map_description(o.node) if self.describe_images else ""
                o = replace(o, description=text, image=o.place)
            updated.append(o)
        return updated, parts, labels

    async def _described(
        self, options: list[pb.Option], node: int, edge_headings: dict[int, float]
    ) -> list[pb.Option]:
        """Two-stage: each move option with its description."""
        moves = [o for o in options if not o.is_stop]
        items = [(o.node, edge_headings.get(o.node)) for o in moves]
        texts = iter(await self.describer.describe_many(node, items))
        return [o if o.is_stop else replace(o, description=next(texts)) for o in options]

    # ------------------------------------------------------------------ one step
    async def build_prompt(
        self, observation: Mapping[str, Any]
    ) -> tuple[list[msg.Message], list[pb.Option], str, str]:
        """The messages, options, full prompt text and prompt id of this step."""
        node = int(observation["node"])
        heading = float(observation["heading"][0])
        pb.advance_map(self.map, node)
        options, edge_headings = self._options(observation)
        before: list[Any] = []  # message parts before the text (paper one-stage)
        after: list[Any] = []  # images after the text (flaneur one-stage)
        labels: list[str] = []
        if self.active_mode != "one-stage":
            options = await self._described(options, node, edge_headings)
        elif self.paper:
            options, before, labels = await self._place_images(options, node, edge_headings)
        else:
            options, after, labels = await self._option_images(options, node, edge_headings)
        supplementary = await self._supplementary(node, heading, {o.node for o in options})
        user_text, _ = self.step_prompt.fill(
            instruction=" ".join(observation["instruction"].split()),
            history=pb.history_text(
                self.history, window=self.history_window, first_step=0 if self.paper else 1
            ),
            trajectory=pb.trajectory_text(self.map),
            map="\n".join(pb.map_lines(self.map, window=self.map_window)),
            supplementary=supplementary,
            planning=self.planning or pb.NO_PLANNING,
            step=mp.prompt_step(int(observation["step"]), paper=self.paper),
            options=pb.options_text(options),
        )
        user_text = user_text.strip()
        system_text = self.system_prompt.text.strip()
        messages = [msg.system(system_text), msg.user(*before, user_text, *after)]
        full = pb.full_prompt_text(system_text, user_text, labels)
        prompt_id = f"{self.step_prompt.version}:{prompt_hash(full)}"
        return messages, options, full, prompt_id

    def fallback(self, options: list[pb.Option], heading: float, node: int) -> pb.Option | None:
        """flaneur's fallback: the adjacent option closest to straight ahead (never stop)."""
        best, best_angle = None, 361.0
        for k, t in enumerate(self._targets[node]):
            angle = abs(relative_angle(self._headings[node][k], heading))
            opt = next((o for o in options if o.node == t), None)
            if opt is not None and angle < best_angle:
                best, best_angle = opt, angle
        if best is None:
            best = next((o for o in options if not o.is_stop), None)
        return best or next((o for o in options if o.is_stop), None)

    def choose(
        self, raw: str, options: list[pb.Option], observation: Mapping[str, Any], truncated: bool
    ) -> tuple[ParsedReply, pb.Option | None]:
        """The reply as read, and the option taken (the fallback's when it names none).

        Under ``paper`` the reply is read by MapGPT's rules and an unreadable one takes
        option 0 (stop once stop is offered, :mod:`flaneur.agents.mapgpt.paper`); under
        ``flaneur`` it is read leniently and an unreadable one moves (:meth:`fallback`).
        """
        if self.paper:
            parsed = mp.parse_reply_paper(raw, options)
            chosen = parsed.option
            return parsed, chosen if chosen is not None else mp.fallback_paper(options)
        parsed = parse_reply(raw, options, truncated=truncated)
        if parsed.option is not None:
            return parsed, parsed.option
        node = int(observation["node"])
        return parsed, self.fallback(options, float(observation["heading"][0]), node)

    def _update_planning(self, parsed: ParsedReply) -> None:
        if not self.use_planning:
            return
        if self.paper:  # MapGPT replaces the plan, with "no plan" when the reply has none
            self.planning = parsed.planning or mp.NO_PLAN_READ
        elif parsed.planning:
            self.planning = " ".join(parsed.planning.split())

    def ablations(self) -> tuple[str, ...]:
        """``("nothing to see",)`` when it perceives only named places and the city has
        none (:func:`flaneur.agents.ablations.nothing_to_see`)."""
        return getattr(self, "blind", ())

    async def act(self, observation: Mapping[str, Any]) -> Action:
        """One model call: prompt, parse, and the chosen slot."""
        messages, options, full, prompt_id = await self.build_prompt(observation)
        completion = await self.model.complete(
            messages, temperature=self.temperature, max_tokens=self.max_tokens
        )
        raw = completion.text or ""
        truncated = completion.finish_reason == "length"
        parsed, chosen = self.choose(raw, options, observation, truncated)
        failures = 0 if parsed.ok else 1
        self.parse_failures += failures
        self._update_planning(parsed)
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

"""The CitySeeker agent: a ReAct loop over navigable headings, with the BCR strategies.

Each step the agent

1. asks the **stop prompt**: observe the current view (or a map description), think, decide
   ``continue`` or ``stop`` with a confidence in [0, 1];
2. unless it stops, asks the **choice prompt**: one option per navigable heading, lettered
   A, B, C ... from the most frontal street and labelled FRONT / LEFT / RIGHT / BACK, each
   with its perspective view (or map description); the model picks a letter with a
   confidence.

Replies are JSON, parsed leniently (:mod:`flaneur.agents.cityseeker.parse`). An
unparseable stop reply counts as a parse failure and the agent goes on; an unparseable
choice reply counts as a parse failure and falls back to option A (CitySeeker's action 0,
the street closest to straight on). A reply that echoes the prompt, and a choice reply
without a ``choice``, are parse failures with the same fallbacks; each failed call records
its ``reason``. Every call sends a ``max_tokens`` (``max_tokens`` for the stop and choice
calls, ``cognition_max_tokens`` for C1/C2 map building). Steps are independent (no
conversation history) unless a strategy adds memory. The agent stops by itself after
``step_limit`` (35) steps.

Strategies (``strategies="b1,r3"``, see :mod:`flaneur.agents.cityseeker.strategies`) add
text to the prompts or make the agent walk back: a backtrack is a queue of heading choices
along a shortest path (B1-B3 under ``paper``: along the agent's own trail), executed one per
step without a model call (``thoughts``: ``"backtracking to ..."``).

Under ``--protocol paper`` (``env_info.protocol == "paper"``) the agent follows CitySeeker's
paper and released code where flaneur differs on purpose (``docs/fidelity.md``): no step
count or budget in the prompts, the stop prompt shows the node's 360-degree panorama, option
views are 120 degrees wide (1024 x 512), an unparseable choice keeps CitySeeker's default
confidence 0.5, B1 and B3 go back the last 3 nodes of CitySeeker's trajectory
(:func:`~flaneur.agents.cityseeker.strategies.backtrack.paper_way_back`), B2 counts streets to
the goal, backtracks when the last 3 counts never fell and goes back as B1, B3's hint is the
oracle's, R1 looks 1 street around, and retrieval (R1-R3) goes into
the choice prompt only, R1/R2 in the last round of each cycle of ``rounds`` rounds only. The
options carry CitySeeker's eight direction labels, binned as its code bins them from the
direction of the last decided move
(:func:`~flaneur.agents.cityseeker.options.paper_direction`,
:func:`~flaneur.agents.cityseeker.options.paper_forward`). On a city with walkable headings
(CitySeeker's data) the options are the panorama's walkable headings in the data's order,
each leading along the out-edge of closest azimuth
(:func:`~flaneur.agents.cityseeker.options.walkable_options`). Options given explicitly win
over these defaults.

Every step record carries ``prompt_id`` (the ids of the prompts sent, joined by ``+``),
``prompt`` (the full text of every prompt sent in the step, images as ``[image k: ...]``
lines), ``raw_output`` (the replies), ``parsed_action``, ``thoughts``, ``confidence``,
``parse_failures`` and, when there are any, ``strategy_events`` and ``calls``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from flaneur.agents.base import Action, Agent, EnvInfo, step_record
from flaneur.agents.cityseeker.memory import GraphMemory, resolve_memory_path
from flaneur.agents.cityseeker.options import (
    Option,
    build_options,
    paper_forward,
    walkable_options,
    with_paper_directions,
)
from flaneur.agents.cityseeker.parse import parse_choice, parse_stop
from flaneur.agents.cityseeker.prompting import BuiltPrompt, PromptBuilder
from flaneur.agents.cityseeker.state import BacktrackPlan, EpisodeRun, StepMemo
from flaneur.agents.cityseeker.strategies import make_strategies, parse_strategies
from flaneur.env.schemes.base import STOP
from flaneur.errors import FlaneurError
from flaneur.tasks.episode import Episode

SUCCESS_RADIUS_M = 50.0
_SEPARATOR = "\n\n=====\n\n"

PAPER_DEFAULTS: dict[str, Any] = {
    "hops": 1,
    "b3_oracle": True,
    "view_fov": 120.0,
    "view_size": (1024, 512),
}
"""Option defaults under ``--protocol paper``: R1's neighbourhood (``retrieve_distance=1``),
B3's oracle hint, and the views of CitySeeker's ``PanoParams`` (fov 120, 1024 x 512)."""

FLANEUR_DEFAULTS: dict[str, Any] = {
    "hops": 2,
    "b3_oracle": False,
    "view_fov": 60.0,
    "view_size": (800, 460),
}
"""The same option defaults under ``--protocol flaneur``."""

PAPER_PARSE_CONFIDENCE = 0.5
"""Confidence of an unparseable choice under ``paper`` (CitySeeker's default reply)."""


@dataclass(frozen=True)
class CitySeekerOptions:
    """The options of :class:`CitySeekerAgent` (see its parameters)."""

    strategies: tuple[str, ...] = ()
    round: int = 0
    step_limit: int = 35
    k: int = 3
    theta: float = 0.75
    b2_k: int | None = None
    hops: int | None = None
    radius_m: float = 50.0
    recent: int = 3
    rounds: int = 3
    max_backtracks: int = 5
    memory: bool | None = None
    memory_path: str | None = None
    cognition_model: bool = False
    b3_oracle: bool | None = None
    view_fov: float | None = None
    view_size: tuple[int, int] | None = None
    temperature: float | None = 0.0
    max_tokens: int = 256
    cognition_max_tokens: int = 600
    json_mode: bool = False

    def __post_init__(self) -> None:
        parse_strategies(self.strategies)  # an unknown code fails here, before any episode


class CitySeekerAgent(Agent):
    """CitySeeker's ReAct agent with switchable BCR strategies.

    Parameters
    ----------
    strategies
        ``"b1,r3"`` or a sequence of codes (``b1 b2 b3 c1 c2 r1 r2 r3``).
    round
        Which round of the task this run is (memory strategies read earlier rounds).
    step_limit
        Steps after which the agent stops by itself (CitySeeker: 35).
    k, theta
        B1/B3 window and confidence threshold (3, 0.75).
    b2_k
        B2 window (default ``k``).
    hops, radius_m, recent
        R1 neighbourhood (2 streets; ``paper``: 1), R2 radius (50 m), R3 history length (3
        steps).
    rounds
        CitySeeker's retrieval cycle (3 rounds): under ``paper``, R1 and R2 retrieve only when
        ``round`` (counted from 1) is a multiple of it.
    max_backtracks
        Backtracks allowed per episode.
    memory
        Write and read the graph memory: ``None`` (default) when a C or R1/R2 strategy is
        on, ``True`` always (so that a later round can use it), ``False`` never.
    memory_path
        SQLite file or folder of the memory (default ``cache_dir("memory")``).
    cognition_model
        Build C1/C2 maps with the model instead of the deterministic summariser.
    b3_oracle
        Make B3's hint name the teacher's option (privileged; default: ``False``, ``paper``:
        ``True``).
    view_fov, view_size
        Field of view and size of the perspective views (60, (800, 460); ``paper``: 120,
        (1024, 512)).
    temperature, json_mode
        Sampling parameters of every model call.
    max_tokens
        Reply length of the stop and choice calls (a short JSON object with a thought).
    cognition_max_tokens
        Reply length of the C1/C2 cognitive-map calls.
    """

    name: ClassVar[str] = "cityseeker"
    schemes: ClassVar[tuple[str, ...]] = ("headings",)
    needs_model: ClassVar[bool] = True
    Options: ClassVar[type] = CitySeekerOptions

    def __init__(
        self,
        strategies: str | Sequence[str] = (),
        *,
        round: int = 0,
        step_limit: int = 35,
        k: int = 3,
        theta: float = 0.75,
        b2_k: int | None = None,
        hops: int | None = None,
        radius_m: float = 50.0,
        recent: int = 3,
        rounds: int = 3,
        max_backtracks: int = 5,
        memory: bool | None = None,
        memory_path: str | None = None,
        cognition_model: bool = False,
        b3_oracle: bool | None = None,
        view_fov: float | None = None,
        view_size: Sequence[int] | None = None,
        temperature: float | None = 0.0,
        max_tokens: int = 256,
        cognition_max_tokens: int = 600,
        json_mode: bool = False,
    ) -> None:
        if int(max_tokens) < 1 or int(cognition_max_tokens) < 1:
            raise FlaneurError("max_tokens and cognition_max_tokens must be at least 1")
        self.cognition_max_tokens = int(cognition_max_tokens)
        self.strategy_codes = parse_strategies(strategies)
        self.round = int(round)
        self.step_limit = int(step_limit)
        self.params: dict[str, Any] = {
            "k": k,
            "theta": theta,
            "b2_k": b2_k or k,
            "radius_m": radius_m,
            "recent": recent,
            "cognition_model": cognition_model,
        }
        self.given: dict[str, Any] = {  # None: the protocol's default (FLANEUR/PAPER_DEFAULTS)
            "hops": hops,
            "b3_oracle": b3_oracle,
            "view_fov": view_fov,
            "view_size": None if view_size is None else (int(view_size[0]), int(view_size[1])),
        }
        self.rounds = max(1, int(rounds))
        self.max_backtracks = int(max_backtracks)
        self.memory_option = memory
        self.memory_path = memory_path
        self.call_params = {
            "temperature": temperature,
            "max_tokens": int(max_tokens),
            "json_mode": json_mode or None,
        }
        self.parse_failures_total = 0

    # ------------------------------------------------------------------ episode
    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        """Prepare for ``episode`` (needs a model and the ``headings`` scheme)."""
        super().reset(episode, env_info)
        self.model = env_info.model
        if self.model is None:
            raise FlaneurError("agent cityseeker needs --llm (a model to ask)")
        if env_info.scheme != "headings":
            raise FlaneurError(
                "agent cityseeker acts in the headings scheme; run it with --scheme headings "
                f"(this task uses {env_info.scheme!r})"
            )
        city = env_info.city
        if city is None:
            raise FlaneurError("agent cityseeker needs the city map (env_info.city)")
        self.paper = env_info.protocol == "paper"
        defaults = PAPER_DEFAULTS if self.paper else FLANEUR_DEFAULTS
        settings = {k: defaults[k] if v is None else v for k, v in self.given.items()}
        self.view_fov, self.view_size = float(settings["view_fov"]), settings["view_size"]
        self.strategies = make_strategies(
            self.strategy_codes,
            hops=settings["hops"],
            b3_oracle=settings["b3_oracle"],
            **self.params,
        )
        wants_memory = any(s.needs_memory for s in self.strategies)
        use_memory = wants_memory if self.memory_option is None else bool(self.memory_option)
        task = str(env_info.task_id or episode.city)
        memory = None
        if use_memory:
            path = resolve_memory_path(self.memory_path, task, self.name)
            memory = GraphMemory(path, task, episode.id)
            memory.start_round(self.round)
        start = city.graph.index(episode.start_node)
        self.run = EpisodeRun(
            city=city,
            episode=episode,
            task=task,
            round=self.round,
            privileged=env_info.privileged,
            memory=memory,
            node=start,
            heading=float(episode.start_heading),
            start=start,
            paper=self.paper,
            rounds=self.rounds,
        )
        self.prompts = PromptBuilder(
            env_info.views,
            fov=self.view_fov,
            size=self.view_size,
            radius_m=float(self.params["radius_m"]),
            paper=self.paper,
        )
        self.env_limit = int(env_info.max_steps or episode.max_steps)
        self.limit = min(self.step_limit, self.env_limit)
        self._prepared = False
        self._goal_xy = [
            city.graph.xy[city.graph.index(g)] for g in episode.goal_nodes if g in city.graph
        ]

    async def _ask(self, prompt: BuiltPrompt) -> str:
        params = dict(self.call_params)
        if prompt.kind == "cognition":
            params["max_tokens"] = self.cognition_max_tokens
        completion = await self.model.complete(prompt.messages(self.prompts.system_text), **params)
        return completion.text or ""

    async def _ask_cognition(self, kind: str, summary: str) -> tuple[str, str]:
        prompt = self.prompts.cognition_prompt(kind, summary)
        reply = await self._ask(prompt)
        self.run.record_extra.setdefault("cognition", []).append(
            {
                "prompt_id": prompt.prompt_id,
                "prompt": prompt.log_text(self.prompts.system_text),
                "raw_output": reply,
            }
        )
        return reply, prompt.prompt_id

    # ------------------------------------------------------------------ step
    async def act(self, observation: Mapping[str, Any]) -> Action:
        """One step: walk back if backtracking, else the stop prompt then the choice prompt."""
        run = self.run
        run.node = int(observation["node"])
        run.heading = float(np.asarray(observation["heading"]).reshape(-1)[0])
        run.step = int(observation["step"])
        run.events = []
        if not self._prepared:
            self._prepared = True
            for s in self.strategies:
                await s.prepare(run, self._ask_cognition)
        if run.step >= self.step_limit:
            why = f"step limit ({self.step_limit}) reached"
            memo = StepMemo(run.step, run.node, run.heading, "stop", None, None, why)
            return self._emit(memo, STOP, "stop")
        if run.queue:
            return self._walk()
        if run.returning is not None:
            returned, run.returning = run.returning, None
            run.events.append(f"back: arrived at {run.node_id()}")
            for s in self.strategies:
                s.on_return(run, returned)
        else:
            for s in self.strategies:
                s.observe(run)
        for s in self.strategies:
            if run.backtracks >= self.max_backtracks:
                break
            plan = s.check(run)
            if plan is not None and self._start_backtrack(plan):
                return self._walk()
        return await self._decide()

    def _start_backtrack(self, plan: BacktrackPlan) -> bool:
        """Queue the walk back; ``False`` when there is nothing to walk."""
        run = self.run
        run.events.append(plan.reason)
        run.backtracks += 1
        for s in self.strategies:
            s.on_plan(run, plan)
        path, missed = self._way_back(plan)
        if missed is not None:
            run.events.append(f"cannot reach {run.node_id(missed)}; not backtracking")
            return False
        if len(path) < 2:
            for s in self.strategies:
                s.on_return(run, plan)
            return False
        run.queue.extend(path[1:])
        run.returning = plan
        return True

    def _way_back(self, plan: BacktrackPlan) -> tuple[list[int], int | None]:
        """The nodes of the walk back, the current one first: through ``plan.via`` street by
        street (a shortest path where a street of it is missing this way), else a shortest
        path to ``plan.target``; and the first node it cannot reach (``None``: none)."""
        graph = self.run.graph
        path = [self.run.node]
        for node in plan.via or (plan.target,):
            if node == path[-1]:
                continue
            if plan.via and graph.has_edge(path[-1], node):
                path.append(node)
                continue
            try:
                path += graph.shortest_path(path[-1], node)[1:]
            except ValueError:
                return path, node
        return path, None

    def _walk(self) -> Action:
        run = self.run
        target = run.queue.popleft()
        targets = run.graph.adjacency[0][run.node]
        if target not in targets:  # off the planned path: plan again from here
            goal = run.returning.target if run.returning else target
            path = run.graph.shortest_path(run.node, goal)
            run.queue.clear()
            run.queue.extend(path[2:])
            target = path[1]
        slot = targets.index(target) + 1
        goal_id = run.node_id(run.returning.target) if run.returning else run.node_id(target)
        thought = f"backtracking to {goal_id} ({len(run.queue)} more moves after this one)"
        memo = StepMemo(run.step, run.node, run.heading, "backtrack", target, None, thought, True)
        return self._emit(memo, slot, f"backtrack:{slot}")

    async def _decide(self) -> Action:
        run = self.run
        context = "\n\n".join(t for t in (s.context(run) for s in self.strategies) if t)
        calls: list[dict[str, Any]] = []
        stop_prompt = self.prompts.stop_prompt(run, self.limit, context)
        stop_text = await self._ask(stop_prompt)
        said = parse_stop(stop_text, stop_prompt.text)
        calls.append(
            self._call(
                stop_prompt,
                stop_text,
                said.ok,
                "stop" if said.stop else "continue",
                said.confidence,
                said.reason,
            )
        )
        options = self._options(run)
        if said.stop or not options:
            thought = said.thought or ("no street to take" if not options else "")
            memo = StepMemo(run.step, run.node, run.heading, "stop", None, said.confidence, thought)
            return self._emit(memo, STOP, "stop", calls)
        hint = "\n".join(t for t in (s.hint(run, options) for s in self.strategies) if t)
        choice_prompt = self.prompts.choice_prompt(run, self.limit, context, options, hint)
        choice_text = await self._ask(choice_prompt)
        chosen = parse_choice(choice_text, [o.coarse for o in options], choice_prompt.text)
        if self.paper and not chosen.ok:  # CitySeeker's default choice carries score 0.5
            chosen = replace(chosen, confidence=PAPER_PARSE_CONFIDENCE)
        option: Option = options[chosen.index]
        calls.append(
            self._call(
                choice_prompt,
                choice_text,
                chosen.ok,
                option.label,
                chosen.confidence,
                chosen.reason,
            )
        )
        thought = " | ".join(t for t in (said.thought, chosen.thought) if t)
        memo = StepMemo(
            run.step, run.node, run.heading, option.label, option.target, chosen.confidence, thought
        )
        run.history.append(memo)
        for s in self.strategies:
            s.after_decision(run)
        return self._emit(memo, option.slot, f"{option.slot}:{option.fine}", calls)

    def _options(self, run: EpisodeRun) -> list[Option]:
        """The options of the current node: the walkable headings in the data's order under
        ``paper`` where the city has them (CitySeeker's), else the graph's edges, most
        frontal first; under ``paper`` labelled with CitySeeker's eight directions from its
        forward azimuth."""
        found = walkable_options(run.city, run.node, run.heading) if self.paper else None
        options = found if found is not None else build_options(run.city, run.node, run.heading)
        if not self.paper:
            return options
        moves = [(m.node, m.backtrack) for m in run.history if m.target is not None]
        forward = paper_forward(run.city, run.node, run.heading, moves)
        return with_paper_directions(options, forward)

    def _call(
        self,
        prompt: BuiltPrompt,
        reply: str,
        ok: bool,
        parsed: str,
        confidence: float | None,
        reason: str = "",
    ) -> dict[str, Any]:
        call = {
            "kind": prompt.kind,
            "prompt_id": prompt.prompt_id,
            "ok": ok,
            "parsed": parsed,
            "confidence": confidence,
            "images": len(prompt.images),
            "_prompt": prompt.log_text(self.prompts.system_text),
            "_reply": reply,
        }
        if reason:
            call["reason"] = reason
        return call

    # ------------------------------------------------------------------ records
    def _emit(
        self, memo: StepMemo, slot: int, name: str, calls: list[dict[str, Any]] | None = None
    ) -> Action:
        """Remember the step, write it to memory, build its record and the action."""
        run = self.run
        if not run.history or run.history[-1] is not memo:
            run.history.append(memo)
        calls = calls or []
        failures = sum(1 for c in calls if not c["ok"])
        self.parse_failures_total += failures
        extra: dict[str, Any] = {}
        if calls:
            extra["prompt"] = _SEPARATOR.join(c.pop("_prompt") for c in calls)
            extra["raw_output"] = _SEPARATOR.join(c.pop("_reply") for c in calls)
            extra["calls"] = calls
        if run.events:
            extra["strategy_events"] = list(run.events)
        if self.strategy_codes:
            extra["strategies"] = ",".join(self.strategy_codes)
        extra.update(run.record_extra)
        run.record_extra = {}
        record = step_record(
            prompt_id="+".join(c["prompt_id"] for c in calls) or None,
            parsed_action=memo.decision if slot != STOP else "stop",
            thoughts=memo.thought or None,
            confidence=memo.confidence,
            parse_failures=failures,
            **extra,
        )
        self._remember(memo, slot)
        return Action(slot, name, record)

    def _remember(self, memo: StepMemo, slot: int) -> None:
        run = self.run
        memory = run.memory
        final = slot == STOP or run.step + 1 >= self.env_limit
        if memory is None:
            return
        ids = run.graph.ids
        memory.add_visit(
            run.round,
            memo.step,
            str(ids[memo.node]),
            run.graph.xy[memo.node],
            heading=memo.heading,
            decision=memo.decision,
            target=None if memo.target is None else str(ids[memo.target]),
            confidence=memo.confidence,
            backtrack=memo.backtrack,
        )
        if final:
            end = memo.node if memo.target is None else memo.target
            success = self._near_goal(end)
            outcome = (
                "success"
                if success
                else ("failure (stopped)" if slot == STOP else "failure (step limit)")
            )
            memory.finish_round(
                run.round, outcome, success=success, steps=memo.step + 1, end_node=str(ids[end])
            )
            memory.close()

    def _near_goal(self, node: int) -> bool:
        """Whether ``node`` lies within 50 m of a goal (the round's feedback, as CitySeeker's
        TCP)."""
        xy = self.run.graph.xy[node]
        return any(float(np.hypot(*(xy - g))) <= SUCCESS_RADIUS_M for g in self._goal_xy)


__all__ = ["CitySeekerAgent"]

"""``VelmaAgent``: VELMA's verbalization-embodied language-model agent (``--agent velma``).

At every step the agent verbalizes the task (description, ``k`` in-context examples, the
instructions and the numbered trajectory so far, see :mod:`flaneur.agents.velma.verbalize`)
and asks the model for the next word. The action is the argmax of the log-probabilities of
FORWARD, LEFT, RIGHT, TURN_AROUND and STOP at the first generated position where the
backend returns them, else the first action word in the reply (lenient parsing). Landmarks
are extracted from the instructions once per episode, on the first step (model + few-shot,
or the rule-based extractor), and observed on the map or, with views and an image scorer,
in the five VELMA views.

The log-probability choice is trusted only when the action words hold at least
``min_action_mass`` of the probability at that position (or one is the most likely token);
otherwise the reply text decides and the step counts a parse failure (see
:func:`flaneur.models.scoring.choose_literal`). The recorded ``confidence`` is the chosen
word's probability over the model's whole distribution; ``action_mass`` that of all five.

Invalid and unparseable answers never end an episode:

* a chosen action the state does not allow is replaced by the best-scored allowed one when
  log-probabilities exist, else remapped as VELMA does (left/right on a 2-way node become
  forward, anything but turn around at a dead end becomes stop);
* a reply naming no action counts as a parse failure (``parse_failures = 1`` in that step's
  record) and the agent takes the fallback action: FORWARD where allowed, else TURN_AROUND;
* an unparseable landmark-extraction reply falls back to the rule-based extractor and adds
  one to the first step's ``parse_failures``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from flaneur.agents.base import Action, Agent, EnvInfo, step_record
from flaneur.agents.prompts import load_prompt
from flaneur.agents.velma.examples import examples_text
from flaneur.agents.velma.verbalize import (
    ACTION_WORDS,
    MapLandmarkObserver,
    ObservationTracker,
    Trajectory,
    ViewLandmarkObserver,
    landmarks_text,
    slot_of,
    word_of,
)
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.state import AgentState
from flaneur.errors import FlaneurError
from flaneur.models.messages import system, user
from flaneur.models.scoring import score_actions
from flaneur.perception.extraction import (
    extraction_messages,
    parse_landmark_list,
    rule_based_landmarks,
)
from flaneur.perception.landmarks.registry import make_landmark_scorer
from flaneur.tasks.episode import Episode

IMAGE_SCORERS = ("ocr", "clip", "vlm")
"""Built-in scorers of view images; a plug-in scorer (``flaneur.landmarks``) works too."""


@dataclass(frozen=True)
class VelmaOptions:
    """The options of :class:`VelmaAgent` (see its parameters; ``examples_from``, ``scorer``
    and ``params`` are Python objects, given to the constructor only)."""

    k_shot: int = 2
    example_seed: int = 0
    extract: Literal["model", "rules"] = "model"
    landmarks_from: Literal["instruction", "all"] = "instruction"
    landmark_radius_m: float = 30.0
    min_action_mass: float = 0.5
    max_tokens: int = 8
    extract_max_tokens: int = 160


class VelmaAgent(Agent):
    """VELMA (Schumann et al., AAAI 2024) in the ``turns`` scheme.

    Parameters
    ----------
    k_shot
        Number of in-context examples (gold-path verbalizations of other episodes).
    examples_from
        Episodes to draw the examples from; default ``env_info.task_episodes``.
    example_seed
        Seed of the example choice (fixed, independent of the run seed).
    extract
        ``"model"`` (few-shot landmark extraction by the model, rule-based fallback) or
        ``"rules"`` (rule-based only, no extra call).
    landmarks_from
        ``"instruction"`` (VELMA: only the instruction's landmarks are observed) or ``"all"``
        (every named place on the map; map observations only).
    landmark_radius_m
        How far map landmarks are seen.
    scorer
        A landmark scorer for image observations (default from ``env_info.landmarks``
        through :func:`~flaneur.perception.landmarks.registry.make_landmark_scorer`: ``ocr``
        builds :class:`~flaneur.perception.OCRLandmarks`, ``vlm`` a
        :class:`~flaneur.perception.VLMLandmarks` on the run's model, a plug-in name its
        scorer; ``clip`` needs one given here, fitted on reference views).
    params
        Extra sampling parameters for the action call.
    min_action_mass
        Probability the action words must hold together for the log-probability choice.
    max_tokens
        Reply length of the action call (a word or two).
    extract_max_tokens
        Reply length of the landmark-extraction call (a short list).
    """

    name: ClassVar[str] = "velma"
    schemes: ClassVar[tuple[str, ...]] = ("turns",)
    needs_model: ClassVar[bool] = True
    Options: ClassVar[type] = VelmaOptions

    def __init__(
        self,
        *,
        k_shot: int = 2,
        examples_from: Sequence[Episode] | None = None,
        example_seed: int = 0,
        extract: str = "model",
        landmarks_from: str = "instruction",
        landmark_radius_m: float = 30.0,
        scorer: Any = None,
        params: Mapping[str, Any] | None = None,
        min_action_mass: float = 0.5,
        max_tokens: int = 8,
        extract_max_tokens: int = 160,
    ) -> None:
        if extract not in ("model", "rules"):
            raise FlaneurError(f"extract must be 'model' or 'rules', not {extract!r}")
        self.k_shot = int(k_shot)
        self.examples_from = list(examples_from) if examples_from is not None else None
        self.example_seed = int(example_seed)
        self.extract = extract
        self.landmarks_from = landmarks_from
        self.landmark_radius_m = float(landmark_radius_m)
        self.scorer = scorer
        self.params = dict(params or {})
        if not 0.0 <= float(min_action_mass) <= 1.0:
            raise FlaneurError(f"min_action_mass must be in [0, 1], not {min_action_mass!r}")
        if int(max_tokens) < 1 or int(extract_max_tokens) < 1:
            raise FlaneurError("max_tokens and extract_max_tokens must be at least 1")
        self.min_action_mass = float(min_action_mass)
        self.max_tokens = int(max_tokens)
        self.extract_max_tokens = int(extract_max_tokens)
        self.system_prompt = load_prompt("velma", "system")
        self.prompt = load_prompt("velma", "navigate")

    # ------------------------------------------------------------------ episode setup
    def reset(self, episode: Episode, env_info: EnvInfo) -> None:
        """Check the model and scheme, choose the observer and build the examples."""
        super().reset(episode, env_info)
        self.model = env_info.model
        if self.model is None:
            raise FlaneurError("agent velma needs --llm (a language model)")
        if env_info.scheme != "turns":
            raise FlaneurError(
                f"agent velma acts in the 'turns' scheme, but task {env_info.task_id!r} "
                f"runs in {env_info.scheme!r}: add --scheme turns"
            )
        if env_info.city is None:
            raise FlaneurError("agent velma needs the city map (env_info.city)")
        self.city = env_info.city
        scheme = env_info.env.scheme if env_info.env is not None else None
        self.scheme = scheme if isinstance(scheme, TurnsScheme) else TurnsScheme(self.city.graph)
        self.map_observer = MapLandmarkObserver(
            self.city, radius_m=self.landmark_radius_m, landmarks_from=self.landmarks_from
        )
        self.observer, self.landmark_source = self._observer(env_info)
        pool = self.examples_from
        if pool is None:
            pool = list(env_info.task_episodes)
        self.examples, self.example_ids = examples_text(
            self.scheme,
            self.city,
            pool,
            episode,
            self.k_shot,
            seed=self.example_seed,
            observer=self.map_observer,
        )
        if len(self.example_ids) < self.k_shot:
            warnings.warn(
                "velma runs with fewer in-context examples than k_shot: give the task set's "
                "episodes as env_info.task_episodes or the examples_from option",
                stacklevel=2,
            )
        self.system_text, _ = self.system_prompt.fill()
        self.trajectory = Trajectory()
        self.tracker = ObservationTracker(self.city.graph.degree)
        self.landmarks: list[str] | None = None
        self.parse_failures = 0

    def _observer(self, env_info: EnvInfo) -> tuple[Any, str]:
        views = env_info.views
        kind = env_info.landmarks
        if views is None or kind in (None, "map"):
            return self.map_observer, "map"
        scorer = self.scorer
        if scorer is None:
            if kind != "clip":
                scorer = make_landmark_scorer(kind, model=self.model)
            else:
                raise FlaneurError(
                    "agent velma with --landmarks clip needs a fitted CLIP scorer: pass "
                    "scorer=CLIPLandmarks(backend, reference_views) in the agent options"
                )
        return ViewLandmarkObserver(views, self.city, scorer), str(kind)

    # ------------------------------------------------------------------ landmarks
    async def _extract(self) -> dict[str, Any]:
        """Landmarks of the instruction (once per episode) and what to record about them."""

        instruction = self.episode.instruction
        info: dict[str, Any] = {"method": "rules"}
        found = None
        if self.extract == "model":
            messages = extraction_messages(instruction)
            reply = await self.model.complete(
                messages, temperature=0, max_tokens=self.extract_max_tokens
            )
            found = parse_landmark_list(reply.text or "")
            info = {
                "method": "model" if found is not None else "rules (unparseable reply)",
                "prompt": "\n\n".join(f"{m['role']}: {m['content']}" for m in messages),
                "raw_output": reply.text,
            }
            if found is None:
                self.parse_failures += 1
                info["parse_failures"] = 1
        self.landmarks = found if found is not None else rule_based_landmarks(instruction)
        info["landmarks"] = list(self.landmarks)
        return info

    # ------------------------------------------------------------------ acting
    async def act(self, observation: Mapping[str, Any]) -> Action:
        """Verbalize, ask the model for the next word, map it to a turns slot."""
        extraction = await self._extract() if self.landmarks is None else None
        node = int(observation["node"])
        heading = float(observation["heading"][0])
        mask = [bool(v) for v in observation["action_mask"]]
        seen = await self.observer.aseen(node, heading, self.landmarks or [])
        line = self.tracker.text(node, landmarks_text(seen))
        self.trajectory.observe(line)
        text, prompt_id = self.prompt.fill(
            examples=self.examples,
            instructions=self.episode.instruction,
            trajectory=self.trajectory.render(),
        )
        messages = [system(self.system_text), user(text)]
        params = {"max_tokens": self.max_tokens, "min_mass": self.min_action_mass, **self.params}
        score, reply = await score_actions(self.model, messages, ACTION_WORDS, **params)
        word, note, failed = self._decide(score, mask, node, heading)
        self.parse_failures += failed
        self.trajectory.act(word)
        failures = failed
        extra: dict[str, Any] = {}
        if score.scores:
            extra["scores"] = {k: round(v, 4) for k, v in score.scores.items()}
        if score.mass is not None:
            extra["action_mass"] = round(score.mass, 4)
        if extraction is not None:
            failures += extraction.get("parse_failures", 0)
            extra["landmarks"] = extraction.pop("landmarks")
            extra["landmark_extraction"] = extraction
            extra["landmark_source"] = self.landmark_source
            extra["examples"] = list(self.example_ids)
            if isinstance(self.observer, ViewLandmarkObserver):
                extra["landmark_prompts"] = self.observer.prompt_texts(self.landmarks or [])
        if isinstance(self.observer, ViewLandmarkObserver):
            extra["view_headings"] = [
                round(v.heading, 1) % 360.0 for v in self.observer.last_views.values()
            ]
        record = step_record(
            prompt_id=prompt_id,
            raw_output=reply.text,
            parsed_action=score.choice,
            thoughts=note,
            confidence=score.confidence,
            parse_failures=failures,
            prompt=text,
            system_prompt=self.system_text,
            observation=line,
            method=score.method,
            **extra,
        )
        return Action(slot_of(word), word.lower(), record)

    def _decide(
        self, score: Any, mask: list[bool], node: int, heading: float
    ) -> tuple[str, str | None, int]:
        """``(action word taken, note, parse failure 0/1)`` from the model's choice."""

        def allowed(word: str) -> bool:
            slot = slot_of(word)
            return slot < len(mask) and mask[slot]

        choice = score.choice
        if choice is None:
            fallback = next((w for w in ("FORWARD", "TURN_AROUND") if allowed(w)), "STOP")
            return fallback, f"no action in the reply: fallback {fallback}", 1
        failed = 1 if score.fallback else 0
        if score.fallback:
            mass = f"{score.mass:.3f}" if score.mass is not None else "?"
            note = f"action words hold {mass} of the probability: read {choice} from the text"
            if allowed(choice):
                return choice, note, failed
            slot = self.scheme.remap(AgentState(node, heading), slot_of(choice))
            return word_of(slot), f"{note}; not possible here: {word_of(slot)}", failed
        if allowed(choice):
            return choice, None, 0
        ranked = sorted((w for w in score.scores if allowed(w)), key=lambda w: -score.scores[w])
        if ranked:
            return ranked[0], f"{choice} not possible here: best allowed {ranked[0]}", 0
        slot = self.scheme.remap(AgentState(node, heading), slot_of(choice))
        word = word_of(slot)
        if word != choice:
            return word, f"{choice} not possible here: remapped to {word}", 0
        return choice, f"{choice} not possible here", 0


__all__ = ["VelmaAgent"]

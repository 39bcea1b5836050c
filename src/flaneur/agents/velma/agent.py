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

Under ``--protocol paper`` (``env_info.protocol``) the agent runs as VELMA's paper and
released code do instead (:mod:`flaneur.agents.velma.paper`): VELMA's prompt and numbering,
the first word of the reply and VELMA's ``validate_action``, an unqueried ``forward`` as the
first action of map2seq episodes, two in-context examples drawn per episode from the train
split with VELMA's seeded stream, and VELMA's landmark prompt or its released landmarks.
VELMA's prompt texts are not shipped with flaneur: they are read from the user's copy of
VELMA's ``llm/prompts`` folder (``prompts_dir``); without it the navigation prompt is
flaneur's template of VELMA's layout and landmarks come from flaneur's extraction prompt, with
a one-line warning (the first step's record says which: ``prompt_from``).

Without imagery - no views (or ``--landmarks map``) in a city without places, such as the
Manhattan and Shanghai packs - no landmark can ever be observed: that is VELMA's "no image"
ablation. Under both protocols the agent says so once per city at the start of a run (a
warning on the ``flaneur.agents.velma`` logger) and in every row (``"ablations": ["no
image"]``, also listed in the summary).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from flaneur.agents.ablations import NO_IMAGE
from flaneur.agents.ablations import say_once as say_once_as
from flaneur.agents.base import Action, Agent, EnvInfo, step_record
from flaneur.agents.prompts import load_prompt, prompt_hash
from flaneur.agents.velma.baselines import VELMA_SEED, forced_first_forward
from flaneur.agents.velma.examples import examples_text
from flaneur.agents.velma.paper import (
    PaperTrajectory,
    cached_example_lines,
    cached_view_example_lines,
    example_block,
    example_draws,
    fill_velma,
    filter_landmarks,
    paper_observation,
    parse_landmarks,
    read_reply,
    released_landmarks,
    train_episodes,
    validate,
    velma_fields,
    velma_prompt,
    velma_prompt_name,
)
from flaneur.agents.velma.traffic import traffic_detector, traffic_line, traffic_setup
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
from flaneur.options import Range, option
from flaneur.perception.extraction import (
    extraction_messages,
    parse_landmark_list,
    rule_based_landmarks,
)
from flaneur.perception.landmarks.reference import (
    DEFAULT_MODEL,
    VELMA_FOV,
    VELMA_TAU,
    MissingReferenceError,
    stored_clip_scorer,
)
from flaneur.perception.landmarks.registry import make_landmark_scorer
from flaneur.tasks.episode import Episode

IMAGE_SCORERS = ("ocr", "clip", "vlm")
"""Built-in scorers of view images; a plug-in scorer (``flaneur.landmarks``) works too."""

log = logging.getLogger("flaneur.agents.velma")


def say_once(key: tuple[str, str], text: str) -> None:
    """Log ``text`` as a warning the first time ``key`` is seen in this process
    (:func:`flaneur.agents.ablations.say_once` on VELMA's logger)."""
    say_once_as(("velma", *key), text, log)


@dataclass(frozen=True)
class VelmaOptions:
    """The options of :class:`VelmaAgent` (see its parameters; ``examples_from``, ``scorer``
    and ``params`` are Python objects, given to the constructor only)."""

    k_shot: int = 2
    example_seed: int | None = None
    examples_file: str | None = option(
        None, "--protocol paper: VELMA's train split to draw in-context examples from"
    )
    landmarks_file: str | None = option(
        None, "--protocol paper: VELMA's released landmarks (gpt3_5shot_unfiltered.json)"
    )
    prompts_dir: str | None = option(
        None, "--protocol paper: the llm/prompts folder of your copy of VELMA's repository"
    )
    extract: Literal["model", "rules"] = "model"
    landmarks_from: Literal["instruction", "all"] = "instruction"
    landmark_radius_m: float = 30.0
    min_action_mass: float = 0.5
    max_tokens: int = 8
    extract_max_tokens: int = 160
    clip_model: str = option(DEFAULT_MODEL, "open_clip architecture for --landmarks clip")
    clip_weights: str = option(
        "", "open_clip weights for --landmarks clip (file, open_clip folder or tag)"
    )
    clip_reference: str = option(
        "",
        "--landmarks clip: the stored reference set (name or file; default the one built for "
        "the run's views and weights by flaneur perception clip-reference)",
    )
    clip_tau: float = option(VELMA_TAU, "--landmarks clip: threshold on the standardised score")
    detector: str = option(
        "",
        "--protocol paper, Touchdown, --landmarks clip: the detector of the vehicles of VELMA's "
        "traffic flow (owlvit, grounding-dino, yolo-world, yolo or a plug-in)",
    )
    detector_weights: str = option("", "the weights of detector (file or folder)")
    detector_threshold: Annotated[float, Range(0.0, 1.0)] | None = option(
        None, "minimum score of a vehicle box (default the detector's)"
    )


class VelmaAgent(Agent):
    """VELMA (Schumann et al., AAAI 2024) in the ``turns`` scheme.

    Parameters
    ----------
    k_shot
        Number of in-context examples (gold-path verbalizations of other episodes).
    examples_from
        Episodes to draw the examples from; default ``env_info.task_episodes``.
    example_seed
        Seed of the example choice (fixed, independent of the run seed); default 0, and
        under ``--protocol paper`` VELMA's ``--seed 1``.
    examples_file
        ``--protocol paper``: the task file to draw in-context examples from, as VELMA
        draws them from the train split (its ``datasets/<dataset>_<scenario>/data/
        train.json``); without it they come from the task set itself, with a warning.
    landmarks_file
        ``--protocol paper``: VELMA's released landmarks
        (``datasets/landmarks/<dataset>/gpt3_5shot_unfiltered.json``), used instead of
        extracting them with VELMA's prompt.
    prompts_dir
        ``--protocol paper``: the ``llm/prompts`` folder of the user's copy of VELMA's
        repository, whose ``<dataset>/navigation/2shot.txt`` and
        ``<dataset>/landmarks/5shot.txt`` are used word for word (flaneur does not ship
        them); without it the navigation prompt is flaneur's template of the same layout and
        landmarks are extracted with flaneur's prompt, with a warning.
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
        scorer; ``clip`` a :class:`~flaneur.perception.CLIPLandmarks` of ``clip_model`` and
        ``clip_weights`` standardised on the reference set stored for the city and views).
    params
        Extra sampling parameters for the action call.
    min_action_mass
        Probability the action words must hold together for the log-probability choice.
    max_tokens
        Reply length of the action call (a word or two).
    extract_max_tokens
        Reply length of the landmark-extraction call (a short list).
    clip_model, clip_weights
        The open_clip model of ``--landmarks clip`` (an architecture, and a weights file, a
        folder in open_clip's format or a pretrained tag).
    clip_reference
        ``--landmarks clip``: the reference set to standardise on, by name or file; default
        the one stored in the city pack for the run's views, model and weights by ``flaneur
        perception clip-reference`` (VELMA's 60-degree views first, then the largest). A run
        without one stops at its first episode with one line naming the command.
    clip_tau
        ``--landmarks clip``: visibility threshold on the standardised score (VELMA: 3.5).
    detector, detector_weights, detector_threshold
        ``--protocol paper`` on Touchdown with views and ``--landmarks clip``: the detector
        (a name in :data:`~flaneur.perception.detection.DETECTORS`, or a
        :class:`~flaneur.perception.detection.Detector`) whose best box of each vehicle class
        in the views ahead and behind the start CLIP scores for VELMA's traffic flow
        (:mod:`flaneur.agents.velma.traffic`), its weights and box threshold; without one
        there is no traffic line, said once.
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
        example_seed: int | None = None,
        examples_file: str | None = None,
        landmarks_file: str | None = None,
        prompts_dir: str | None = None,
        extract: str = "model",
        landmarks_from: str = "instruction",
        landmark_radius_m: float = 30.0,
        scorer: Any = None,
        params: Mapping[str, Any] | None = None,
        min_action_mass: float = 0.5,
        max_tokens: int = 8,
        extract_max_tokens: int = 160,
        clip_model: str = DEFAULT_MODEL,
        clip_weights: str = "",
        clip_reference: str = "",
        clip_tau: float = VELMA_TAU,
        detector: Any = "",
        detector_weights: str = "",
        detector_threshold: float | None = None,
    ) -> None:
        if extract not in ("model", "rules"):
            raise FlaneurError(f"extract must be 'model' or 'rules', not {extract!r}")
        self.k_shot = int(k_shot)
        self.examples_from = list(examples_from) if examples_from is not None else None
        self.example_seed = None if example_seed is None else int(example_seed)
        self.examples_file = str(examples_file) if examples_file else None
        self.landmarks_file = str(landmarks_file) if landmarks_file else None
        self.prompts_dir = str(prompts_dir) if prompts_dir else None
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
        self.clip = (str(clip_model), str(clip_weights), str(clip_reference), float(clip_tau))
        self.detector = detector or None
        self.detector_settings = (str(detector_weights), detector_threshold)
        self.system_prompt = load_prompt("velma", "system")
        self.prompt = load_prompt("velma", "navigate")
        self.paper_prompt = load_prompt("velma", "paper_navigate")

    @classmethod
    def check_setup(cls, options: dict[str, Any], setup: Any) -> None:
        """Refuse, before the first episode, an ``examples_file`` or ``landmarks_file`` that
        is not a file, a ``prompts_dir`` that is not a folder and a ``detector`` that is
        unknown, finds no vehicles or lacks its weights."""
        for key in ("examples_file", "landmarks_file"):
            path = options.get(key)
            if path and not Path(str(path)).is_file():
                raise FlaneurError(f"{key} {path}: no such file")
        folder = options.get("prompts_dir")
        if folder and not Path(str(folder)).is_dir():
            raise FlaneurError(f"prompts_dir {folder}: no such folder")
        detector = options.get("detector")
        if detector and isinstance(detector, str):  # its weights are read on first use
            weights = str(options.get("detector_weights") or "")
            traffic_detector(detector, weights, options.get("detector_threshold"))

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
        self.ablations_said = self._no_image()
        self.paper = env_info.protocol == "paper"
        self.dataset = episode.metadata.get("dataset")
        self.examples_source = "task set"
        self.pending: list[Episode] | None = None
        if self.paper:
            self._reset_paper(episode, env_info)
        else:
            pool = self.examples_from
            if pool is None:
                pool = list(env_info.task_episodes)
            self.examples, self.example_ids = examples_text(
                self.scheme,
                self.city,
                pool,
                episode,
                self.k_shot,
                seed=self.example_seed or 0,
                observer=self.map_observer,
            )
            self.trajectory: Trajectory | PaperTrajectory = Trajectory()
            self.tracker = ObservationTracker(self.city.graph.degree)
        if self.pending is None:
            self._few_examples()
        self.system_text, _ = self.system_prompt.fill()
        self.landmarks: list[str] | None = None
        self.parse_failures = 0

    def ablations(self) -> tuple[str, ...]:
        """``("no image",)`` when no landmark can be observed (see the module docstring)."""
        return self.ablations_said

    def _no_image(self) -> tuple[str, ...]:
        """VELMA's "no image" ablation, said once per city: the map observer in a city
        without places never sees a landmark."""
        if self.observer is not self.map_observer or len(self.city.places):
            return ()
        say_once(
            ("no image", self.city.name),
            f"velma: no views and no places in city {self.city.name!r}: landmarks are never "
            "observed, so this runs VELMA's 'no image' ablation (rows say \"ablations\": "
            '["no image"]); add --views and --landmarks ocr|vlm|clip to observe them',
        )
        return (NO_IMAGE,)

    def _reset_paper(self, episode: Episode, env_info: EnvInfo) -> None:
        """VELMA's trajectory, first action, landmarks file, traffic flow, in-context examples
        (seen in the views on the first step when the episode is) and prompt."""
        self.trajectory = PaperTrajectory()
        self.forced = forced_first_forward(self.dataset)
        self._node: int | None = None
        self.released = released_landmarks(self.landmarks_file) if self.landmarks_file else None
        weights, threshold = self.detector_settings
        self.traffic, why = traffic_setup(
            self.dataset, self.observer, self.detector, weights=weights, threshold=threshold
        )
        self.traffic_record: dict[str, Any] | None = None if why is None else {"reason": why}
        if why is not None:
            say_once(
                ("traffic", env_info.task_id), f"velma --protocol paper: no traffic flow: {why}"
            )
        picks = self._paper_picks(episode, env_info)
        self.example_ids = [e.id for e in picks]
        self.example_pairs: list[tuple[str, str]] = []
        self.examples = ""
        if isinstance(self.observer, ViewLandmarkObserver):
            self.pending = picks  # seen in the views on the first step (async)
        else:
            self.example_pairs = self._map_examples(picks)
            self.examples = "".join(example_block(t, lines) for t, lines in self.example_pairs)
        self.velma_nav: tuple[str, str] | None = None
        if self.prompts_dir:
            self.prompt_from = "velma prompts_dir"
            self.velma_nav = self._velma_navigation()
        else:
            self.prompt_from = "flaneur template"
            extracted = self.released is None and self.extract == "model"
            also = " and landmarks use flaneur's extraction prompt" if extracted else ""
            say_once(
                ("prompts", env_info.task_id),
                "velma --protocol paper: flaneur does not ship VELMA's prompt texts and none "
                "were given (--option velma.prompts_dir=PATH, the llm/prompts folder of "
                "VELMA's repository), so the navigation prompt is flaneur's template of "
                f"VELMA's layout{also}",
            )

    def _paper_picks(self, episode: Episode, env_info: EnvInfo) -> list[Episode]:
        """VELMA's draws of the in-context examples of ``episode``, from the train file, else
        from the task set (with a warning)."""
        episodes = list(env_info.task_episodes) or [episode]
        if self.examples_file:
            pool: Sequence[Episode] = train_episodes(self.examples_file, self.city.name)
            self.examples_source = f"train file {self.examples_file}"
        else:
            pool = self.examples_from if self.examples_from is not None else episodes
            if self.k_shot > 0:
                say_once(
                    ("examples", env_info.task_id),
                    "velma --protocol paper: VELMA draws its in-context examples from the "
                    "train split; none given (--option velma.examples_file=PATH, VELMA's "
                    "datasets/<dataset>_<scenario>/data/train.json), so they come from the "
                    f"task set {env_info.task_id!r} itself",
                )
        ids = [e.id for e in episodes]
        index = ids.index(episode.id) if episode.id in ids else 0
        seed = VELMA_SEED if self.example_seed is None else self.example_seed
        return [pool[i] for i in example_draws(pool, episodes, index, self.k_shot, seed)]

    def _map_examples(self, picks: Sequence[Episode]) -> list[tuple[str, str]]:
        """The examples' ``(instruction, navigation lines)``, their landmarks seen on the map."""
        found = []
        for e in picks:
            landmarks = self._example_landmarks(e)
            found.append(
                (e, cached_example_lines(self.scheme, self.city, e, landmarks, self.map_observer))
            )
        return self._walked(found)

    async def _view_examples(self, picks: Sequence[Episode]) -> None:
        """The examples of an episode seen in views, made on its first step: their landmarks
        seen by the episode's view observer along their paths, as VELMA's CLIP sees them, and
        on Touchdown their start's traffic line (VELMA's train instances have theirs)."""
        found = []
        for e in picks:
            landmarks = self._example_landmarks(e)
            lines = await cached_view_example_lines(
                self.scheme, self.city, e, landmarks, self.observer, self.traffic
            )
            found.append((e, lines))
        self.example_pairs = self._walked(found)
        self.examples = "".join(example_block(t, lines) for t, lines in self.example_pairs)
        self._few_examples()

    def _walked(self, found: Sequence[tuple[Episode, str | None]]) -> list[tuple[str, str]]:
        """The pairs of the examples that could be walked (``example_ids`` names them)."""
        self.example_ids = [e.id for e, lines in found if lines is not None]
        return [(e.instruction, lines) for e, lines in found if lines is not None]

    def _few_examples(self) -> None:
        """Warn when fewer in-context examples than ``k_shot`` could be made."""
        if len(self.example_ids) < self.k_shot:
            warnings.warn(
                "velma runs with fewer in-context examples than k_shot: give the task set's "
                "episodes as env_info.task_episodes or the examples_from option",
                stacklevel=3,
            )

    def _velma_navigation(self) -> tuple[str, str]:
        """VELMA's navigation prompt file of the dataset and its name, its fields checked
        against ``k_shot`` (two per in-context example, then the instruction)."""
        assert self.prompts_dir is not None
        name = velma_prompt_name(self.dataset, "navigation")
        template = velma_prompt(self.prompts_dir, name)
        fields = velma_fields(template, name)
        if fields != 2 * self.k_shot + 1:
            raise FlaneurError(
                f"velma prompts_dir: {name} has {fields} {{}} fields (an instruction and its "
                "navigation lines per in-context example, then the instruction), but "
                f"k_shot={self.k_shot} fills {2 * self.k_shot + 1}: give "
                f"--option velma.k_shot={(fields - 1) // 2}"
            )
        return template, name

    def _example_landmarks(self, example: Episode) -> list[str]:
        """An example's landmarks: VELMA's released ones if given, else the rule-based."""
        if self.released is not None:
            return list(self.released.get(example.id, []))
        return filter_landmarks(rule_based_landmarks(example.instruction))

    def _observer(self, env_info: EnvInfo) -> tuple[Any, str]:
        views = env_info.views
        kind = env_info.landmarks
        if views is None or kind in (None, "map"):
            return self.map_observer, "map"
        scorer = self.scorer
        if scorer is None:
            ddof = 1 if env_info.protocol == "paper" else 0  # VELMA's torch.std
            scorer = (
                self._clip_scorer(views, ddof)
                if kind == "clip"
                else make_landmark_scorer(kind, model=self.model)
            )
        return ViewLandmarkObserver(views, self.city, scorer, fov=VELMA_FOV), str(kind)

    def _clip_scorer(self, views: Any, ddof: int) -> Any:
        """VELMA's CLIP scorer: ``clip_model``/``clip_weights`` standardised on the set stored
        for the city and views, with the standard deviation of ``ddof`` (1 under ``--protocol
        paper``: VELMA's torch.std; one line naming the command that builds the set when none
        is)."""
        model, weights, name, tau = self.clip
        if not weights:
            raise FlaneurError("--landmarks clip needs --option velma.clip_weights=FILE_OR_TAG")
        try:
            return stored_clip_scorer(
                self.city, views, model, weights, fov=VELMA_FOV, name=name, tau=tau, ddof=ddof
            )
        except MissingReferenceError as err:
            raise FlaneurError(f"velma --landmarks clip: {err}") from None

    # ------------------------------------------------------------------ landmarks
    async def _extract(self) -> dict[str, Any]:
        """Landmarks of the instruction (once per episode) and what to record about them."""
        if self.paper:
            return await self._extract_paper()
        instruction = self.episode.instruction
        info: dict[str, Any] = {"method": "rules"}
        if self.extract == "model":
            self.landmarks, info = await self._extract_model(instruction)
        else:
            self.landmarks = rule_based_landmarks(instruction)
        info["landmarks"] = list(self.landmarks)
        return info

    async def _extract_model(self, instruction: str) -> tuple[list[str], dict[str, Any]]:
        """Landmarks by flaneur's few-shot extraction prompt, by the rule-based extractor
        when the reply does not parse (one parse failure), and what to record."""
        messages = extraction_messages(instruction)
        reply = await self.model.complete(
            messages, temperature=0, max_tokens=self.extract_max_tokens
        )
        found = parse_landmark_list(reply.text or "")
        info: dict[str, Any] = {
            "method": "model" if found is not None else "rules (unparseable reply)",
            "prompt": "\n\n".join(f"{m['role']}: {m['content']}" for m in messages),
            "raw_output": reply.text,
        }
        if found is None:
            self.parse_failures += 1
            info["parse_failures"] = 1
            found = rule_based_landmarks(instruction)
        return found, info

    async def _extract_paper(self) -> dict[str, Any]:
        """VELMA's landmarks: its released file, else its five-shot prompt of the dataset from
        ``prompts_dir``, else flaneur's extraction prompt; filtered as VELMA filters them."""
        instruction = self.episode.instruction
        info: dict[str, Any]
        if self.released is not None:
            self.landmarks = list(self.released.get(self.episode.id, []))
            info = {"method": "released", "file": self.landmarks_file}
        elif self.extract == "rules":
            self.landmarks = filter_landmarks(rule_based_landmarks(instruction))
            info = {"method": "rules"}
        elif self.prompts_dir:
            name = velma_prompt_name(self.dataset, "landmarks")
            template = velma_prompt(self.prompts_dir, name)
            text = fill_velma(template, [instruction], name, "the instruction")
            reply = await self.model.complete(
                [user(text)], temperature=0, max_tokens=self.extract_max_tokens
            )
            self.landmarks = parse_landmarks(reply.text or "")
            info = {
                "method": "model (VELMA's prompt)",
                "prompt_id": f"velma:{name}:{prompt_hash(text)}",
                "prompt": text,
                "raw_output": reply.text,
            }
        else:
            found, info = await self._extract_model(instruction)
            self.landmarks = filter_landmarks(found)
            if info["method"] == "model":
                info["method"] = "model (flaneur's prompt)"
        info["landmarks"] = list(self.landmarks)
        return info

    def _first_fields(self, extraction: dict[str, Any] | None) -> tuple[dict[str, Any], int]:
        """The first step's extra record fields (landmarks, examples) and its extraction's
        parse failures; nothing on later steps."""
        if extraction is None:
            return {}, 0
        failures = int(extraction.get("parse_failures", 0))
        extra: dict[str, Any] = {
            "landmarks": extraction.pop("landmarks"),
            "landmark_extraction": extraction,
            "landmark_source": self.landmark_source,
            "examples": list(self.example_ids),
        }
        if self.paper:
            extra["examples_from"] = self.examples_source
            extra["prompt_from"] = self.prompt_from
            if self.traffic_record is not None:
                extra["traffic_flow"] = self.traffic_record
        if isinstance(self.observer, ViewLandmarkObserver):
            extra["landmark_prompts"] = self.observer.prompt_texts(self.landmarks or [])
            if getattr(self.observer.scorer, "reference", None):
                extra["clip_reference"] = self.observer.scorer.reference
        return extra, failures

    # ------------------------------------------------------------------ acting
    async def act(self, observation: Mapping[str, Any]) -> Action:
        """Verbalize, ask the model for the next word, map it to a turns slot."""
        if self.paper:
            return await self._act_paper(observation)
        extraction = await self._extract() if self.landmarks is None else None
        node = int(observation["node"])
        heading = float(observation["heading"][0])
        mask = [bool(v) for v in observation["action_mask"]]
        seen = await self.observer.aseen(node, heading, self.landmarks or [])
        line = self.tracker.text(node, landmarks_text(seen))
        assert isinstance(self.trajectory, Trajectory)
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
        first, failures = self._first_fields(extraction)
        failures += failed
        extra: dict[str, Any] = {}
        if score.scores:
            extra["scores"] = {k: round(v, 4) for k, v in score.scores.items()}
        if score.mass is not None:
            extra["action_mass"] = round(score.mass, 4)
        extra.update(first)  # the record's keys in their former order
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

    async def _act_paper(self, observation: Mapping[str, Any]) -> Action:
        """VELMA's step: its observation line, its prompt as one user message, the first word
        of the reply through ``validate_action``; map2seq's first action is ``forward``."""
        extraction = await self._extract() if self.landmarks is None else None
        node = int(observation["node"])
        heading = float(observation["heading"][0])
        traffic = await self._paper_start(node, heading) if extraction is not None else None
        seen = await self.observer.aseen(node, heading, self.landmarks or [])
        degree = int(self.city.graph.degree[node])
        line = paper_observation(degree, node != self._node, seen, traffic)
        self._node = node
        trajectory = self.trajectory
        assert isinstance(trajectory, PaperTrajectory)
        trajectory.observe(line)
        extra, failures = self._first_fields(extraction)
        if self.forced and not trajectory.actions:
            trajectory.act("forward")
            note = "VELMA's map2seq agents begin with forward, unqueried (vln/agent.py Agent.run)"
            record = step_record(parsed_action="forward", thoughts=note, observation=line, **extra)
            return Action(slot_of("forward"), "forward", record)
        text, prompt_id = self._paper_text(trajectory.render())
        params = {"temperature": 0, "max_tokens": self.max_tokens, **self.params}
        reply = await self.model.complete([user(text)], **params)
        read, failed = read_reply(reply.text or "")
        word = validate(read, degree)
        self.parse_failures += int(failed)
        trajectory.act(word)
        why = ["no action word in the reply: forward (VELMA)"] if failed else []
        if word != read:
            why.append(f"{read} at a {degree}-street node: {word} (validate_action)")
        record = step_record(
            prompt_id=prompt_id,
            raw_output=reply.text,
            parsed_action=read,
            thoughts="; ".join(why) or None,
            parse_failures=failures + int(failed),
            prompt=text,
            observation=line,
            method="text",
            **extra,
        )
        return Action(slot_of(word), word, record)

    async def _paper_start(self, node: int, heading: float) -> str | None:
        """On the first step: the in-context examples seen in views (when they are) and the
        traffic line of the start (Touchdown, :mod:`flaneur.agents.velma.traffic`), its record
        kept for the first step's record; one warning per run when no vehicle is found (the
        line then says VELMA's default, ``against``)."""
        if self.pending is not None:
            await self._view_examples(self.pending)
            self.pending = None
        if self.traffic is None:
            return None
        self.traffic_record = await self.traffic.apredict(self.scheme, node, heading)
        if "reason" in self.traffic_record:
            say_once(
                ("traffic none", self.env_info.task_id),
                f"velma --protocol paper: episode {self.episode.id!r}: "
                f"{self.traffic_record['reason']} (the first record of each such episode "
                "says so: traffic_flow)",
            )
        return traffic_line(self.traffic_record["flow"])

    def _paper_text(self, lines: str) -> tuple[str, str]:
        """The navigation prompt with the navigation lines ``lines`` and its id: VELMA's
        file filled with the examples and instruction, then the lines (as VELMA appends
        them), else flaneur's template."""
        if self.velma_nav is not None:
            template, name = self.velma_nav
            values = [v for pair in self.example_pairs for v in pair] + [self.episode.instruction]
            what = (
                f"{len(self.example_pairs)} in-context examples of k_shot={self.k_shot} (one "
                "whose route cannot be walked is left out), then the instruction"
            )
            text = fill_velma(template, values, name, what) + lines
            return text, f"velma:{name}:{prompt_hash(text)}"
        return self.paper_prompt.fill(
            examples=self.examples, instructions=self.episode.instruction, trajectory=lines
        )

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

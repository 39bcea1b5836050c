"""VELMA as its paper and released code run it: what :class:`VelmaAgent` does under
``--protocol paper`` (``docs/fidelity.md`` lists each setting and its test).

* **Prompt** (``llm/prompts/<dataset>/navigation/2shot.txt``, one user message as its GPT-4
  runs send it): the task line, the action space, the in-context examples and the episode,
  each as ``Navigation Instructions:`` / ``Action Sequence:``. VELMA's texts are not shipped
  with flaneur: the agent reads them from the user's copy of VELMA's ``llm/prompts`` folder
  (:func:`velma_prompt`, filled as VELMA fills them: :func:`fill_velma`), else uses
  flaneur's template of the same layout (``prompts/velma/paper_navigate.txt``).
* **Numbering** (``vln/prompt_builder.py``, ``get_navigation_lines``): only actions are
  numbered, by their index in the episode (``init`` is 0), in lower case; observations stand
  on their own lines after the action that led to them; the cue is the next action number::

      There is a 4-way intersection.
      1. forward
      2. left
      3.

* **Observations** (``vln/env.py``, ``get_observations``): the intersection on arriving at a
  node with more than two streets (and at the start); the landmarks seen, at every step,
  grouped by direction (``Starbucks and a bank on your left.``, directions ``on your left``,
  ``slightly left``, ``ahead``, ``slightly right``, ``on your right``).
* **Reply** (``vln/agent.py``, ``extract_next_action``; ``validate_action``): the first word
  of the reply, lower case (``turn around`` read as two words); an unknown word or an empty
  reply becomes ``forward``; at a node with at most one street anything but ``turn_around``
  becomes ``stop``, on a 2-way node ``left``/``right`` become ``forward``.
* **In-context examples** (``run_inference_gpt.py``): two per episode, drawn by
  ``random.sample(train_instances, 2)`` from the **train** split, with Python's ``random``
  seeded once (``--seed 1``) and drawn for each episode in file order: :func:`example_draws`;
  verbalized along their gold paths with the episode's observer (``process_instance``): in
  the views when the episode has them (:func:`cached_view_example_lines`), else on the map.
* **Traffic flow** (Touchdown, ``vln/dataset.py``): ``You are aligned with the flow of the
  traffic.`` first in the first observation of the episode and of each example
  (:mod:`flaneur.agents.velma.traffic`).
* **Landmarks** (``run_extract_landmarks.py``, ``vln/landmarks.py``): VELMA's five-shot prompt
  of the dataset (``llm/prompts/<dataset>/landmarks/5shot.txt`` in the same folder), its
  numbered-list parser and its filter (``filter_landmarks_5shot``), or the landmarks VELMA
  released (``datasets/landmarks/<dataset>/gpt3_5shot_unfiltered.json``).
"""

from __future__ import annotations

import json
import random
import string
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from functools import cache, partial
from pathlib import Path
from typing import Any

from flaneur.agents.velma.verbalize import Seen, word_of
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.state import AgentState
from flaneur.env.teacher import TeacherError, gold_rollout
from flaneur.errors import FlaneurError
from flaneur.perception.landmarks.reference import views_identity
from flaneur.tasks.episode import Episode
from flaneur.tasks.loaders import load_vln_jsonl
from flaneur.world.city import City

PAPER_WORDS = ("forward", "left", "right", "turn_around", "stop")
"""VELMA's action words (``BaseNavigator.action_list``)."""

PAPER_DIRECTIONS = ("on your left", "slightly left", "ahead", "slightly right", "on your right")
"""VELMA's five directions (``get_observations_str``)."""

_ALIASES = {
    "turnaround": "turn_around",
    "turn around": "turn_around",
    "turn_left": "left",
    "turn left": "left",
    "turn_right": "right",
    "turn right": "right",
}
"""``BaseNavigator.action_mapping``."""

_DRAWS: OrderedDict[tuple[Any, ...], tuple[random.Random, list[list[int]]]] = OrderedDict()
_DRAWS_KEPT = 8
_EXAMPLES: OrderedDict[tuple[Any, ...], str | None] = OrderedDict()
_EXAMPLES_KEPT = 512
_VIEW_EXAMPLES: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[Any, ...], str | None]] = (
    weakref.WeakKeyDictionary()
)


class PaperTrajectory:
    """VELMA's navigation lines: numbered actions, unnumbered observations, the cue."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.actions: list[str] = []

    def observe(self, text: str) -> None:
        """Add an observation line (nothing for empty text)."""
        if text:
            self.lines.append(text)

    def act(self, word: str) -> None:
        """Add the action taken, numbered by its index (``init`` is 0)."""
        self.actions.append(word.lower())
        self.lines.append(f"{len(self.actions)}. {word.lower()}")

    def render(self, *, cue: bool = True) -> str:
        """The lines, ending with the next action number when ``cue`` is true."""
        lines = [*self.lines, f"{len(self.actions) + 1}."] if cue else self.lines
        return "\n".join(lines)


def paper_landmarks_text(seen: Seen) -> str:
    """``"Starbucks and a bank on your left. A church ahead."``: the landmarks seen, by
    direction from left to right, in the order of the instruction's landmarks."""
    parts = []
    for direction, phrase in enumerate(PAPER_DIRECTIONS):
        names = [name for name, d in seen if d == direction]
        if names:
            joined = " and ".join(names)
            parts.append(f"{joined[0].upper()}{joined[1:]} {phrase}.")
    return " ".join(parts)


def paper_observation(ways: int, arrived: bool, seen: Seen, traffic: str | None = None) -> str:
    """VELMA's observation line: the traffic flow (``traffic``, the start's line on
    Touchdown, :func:`flaneur.agents.velma.traffic.traffic_line`), the intersection on
    arrival, then the landmarks seen (``get_observations_str``'s order)."""
    parts = [traffic] if traffic else []
    if arrived and ways > 2:
        parts.append(f"There is a {ways}-way intersection.")
    landmarks = paper_landmarks_text(seen)
    if landmarks:
        parts.append(landmarks)
    return " ".join(parts)


def read_reply(text: str) -> tuple[str, bool]:
    """``(action word, failed)`` from a reply, as ``extract_next_action`` reads it: the first
    word in lower case; ``turn`` takes the next word too; an empty reply is ``forward``
    (VELMA's exception path). ``failed`` says the word is none of VELMA's actions."""
    words = text.strip().split()
    if not words:
        return "forward", True
    word = words[0].lower()
    if word not in PAPER_WORDS:
        word = "".join(c for c in word if c.isalpha())
        if word == "turn":
            if len(words) < 2:
                return "forward", True
            word += " " + "".join(c for c in words[1] if c.isalpha()).lower()
    word = _ALIASES.get(word, word)
    return (word, False) if word in PAPER_WORDS else ("forward", True)


def validate(word: str, degree: int) -> str:
    """VELMA's ``validate_action`` at a node with ``degree`` streets."""
    if degree <= 1 and word not in ("stop", "turn_around"):
        return "stop"
    if degree == 2 and word in ("left", "right"):
        return "forward"
    return word


# ---------------------------------------------------------------------------- prompt files
VELMA_PROMPT_FILES = {"navigation": "navigation/2shot.txt", "landmarks": "landmarks/5shot.txt"}
"""VELMA's prompt files in its ``llm/prompts/<dataset>/`` folders (the defaults of
``run_inference_gpt.py`` and ``run_extract_landmarks.py``)."""


def velma_dataset(dataset: str | None) -> str:
    """VELMA's name of the dataset whose prompts an episode uses (map2seq's by default)."""
    return "touchdown" if dataset == "touchdown" else "map2seq"


def velma_prompt_name(dataset: str | None, kind: str) -> str:
    """``"map2seq/navigation/2shot.txt"``: the file of VELMA's ``kind`` prompt
    (``"navigation"`` or ``"landmarks"``) of ``dataset``, in its ``llm/prompts`` folder."""
    return f"{velma_dataset(dataset)}/{VELMA_PROMPT_FILES[kind]}"


@cache
def velma_prompt(prompts_dir: str, name: str) -> str:
    """The text of VELMA's prompt file ``name`` in ``prompts_dir``, read whole as VELMA reads
    it (its ``{}`` fields unfilled).

    Raises
    ------
    FlaneurError
        One line naming the file when it cannot be read.
    """
    path = Path(prompts_dir) / name
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise FlaneurError(
            f"velma prompts_dir {prompts_dir}: cannot read {name} ({reason}); give the "
            "llm/prompts folder of your copy of VELMA's repository"
        ) from None


def velma_fields(template: str, name: str) -> int:
    """How many ``{}`` fields VELMA's prompt file ``name`` has.

    Raises
    ------
    FlaneurError
        One line when the text is no ``str.format`` template.
    """
    try:
        return sum(1 for _, field, _, _ in string.Formatter().parse(template) if field is not None)
    except ValueError as err:
        raise FlaneurError(f"velma prompts_dir: cannot fill {name}: {err}") from None


def fill_velma(template: str, values: Sequence[str], name: str, what: str) -> str:
    """VELMA's prompt file ``name`` filled as VELMA fills it: ``str.format`` with ``values``
    in the order of its ``{}`` fields (``what`` says what they are, for the error). VELMA
    fills its navigation prompt in two calls (the examples, then the instruction); one call
    gives the same text unless an example's text holds braces.

    Raises
    ------
    FlaneurError
        One line when the file has another number of fields than ``values`` or cannot be
        filled.
    """
    fields = velma_fields(template, name)
    if fields != len(values):
        raise FlaneurError(
            f"velma prompts_dir: {name} has {fields} {{}} fields, but {len(values)} values "
            f"fill it ({what})"
        )
    try:
        return template.format(*values)
    except (IndexError, KeyError, ValueError) as err:
        raise FlaneurError(f"velma prompts_dir: cannot fill {name}: {err}") from None


# ---------------------------------------------------------------------------- landmarks
def parse_landmarks(reply: str) -> list[str]:
    """The landmarks of a reply, as ``get_unfiltered`` reads them and
    ``filter_landmarks_5shot`` filters them: the lines ``1. ...``, ``2. ...`` in order, every
    other line skipped (VELMA's completions begin on the ``Landmarks:`` line, whose rest it
    drops; a chat reply begins with the list itself)."""
    elements = []
    expected = 1
    for line in reply.split("\n"):
        head = line.split(".")[0]
        try:
            number = int(head)
        except ValueError:
            continue
        if number == expected:
            elements.append(" ".join(line.split(f"{number}.")[1:]).strip())
            expected += 1
    return filter_landmarks(elements)


def filter_landmarks(unfiltered: Sequence[str]) -> list[str]:
    """VELMA's ``filter_landmarks_5shot``: no intersections, side streets, traffic or double
    lights, bare buildings, empty or repeated entries."""
    out: list[str] = []
    for element in unfiltered:
        element = str(element).strip()
        if "intersection" in element or "side street" in element:
            continue
        if element in ("traffic lights", "double lights", "a building", "a large building"):
            continue
        if element and element not in out:
            out.append(element)
    return out


@cache
def released_landmarks(path: str) -> dict[str, list[str]]:
    """VELMA's released landmarks (``gpt3_5shot_unfiltered.json``): ``{id: landmarks}``,
    filtered as VELMA filters them.

    Raises
    ------
    FlaneurError
        One line when the file cannot be read or is not in that format.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        instances = data["instances"]
        return {str(k): filter_landmarks(v.get("unfiltered") or []) for k, v in instances.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise FlaneurError(
            f"velma landmarks_file {path}: not VELMA's released landmarks "
            f'({{"instances": {{id: {{"unfiltered": [...]}}}}}}): {err}'
        ) from None


# ---------------------------------------------------------------------------- examples
def example_draws(
    pool: Sequence[Episode], episodes: Sequence[Episode], index: int, k: int, seed: int
) -> list[int]:
    """Indices into ``pool`` of the in-context examples of ``episodes[index]``.

    VELMA draws ``random.sample(train_instances, k)`` for every episode in file order from
    one generator seeded once. When the pool is the task set itself (no train split given),
    each draw leaves out the episodes with the episode's instruction (itself included).
    """
    if k <= 0 or not pool or not 0 <= index < len(episodes):
        return []
    own = [e.id for e in pool] == [e.id for e in episodes]
    key = (tuple(e.id for e in pool), tuple(e.id for e in episodes), k, seed)
    known = _DRAWS.get(key)
    if known is None:
        known = (random.Random(seed), [])
        _DRAWS[key] = known
        while len(_DRAWS) > _DRAWS_KEPT:
            _DRAWS.popitem(last=False)
    rng, draws = known
    while len(draws) <= index:
        allowed = list(range(len(pool)))
        if own:
            text = episodes[len(draws)].instruction.strip()
            allowed = [i for i in allowed if pool[i].instruction.strip() != text]
        draws.append(rng.sample(allowed, min(k, len(allowed))))
    return draws[index]


def example_walk(
    scheme: TurnsScheme, city: City, example: Episode
) -> tuple[list[str | None], list[AgentState]] | None:
    """An example's gold path as VELMA's navigation lines take it: the action words (``None``
    first, VELMA's ``init``, then each action to ``stop``) and the state after each; ``None``
    if the teacher cannot walk it."""
    try:
        actions, states = gold_rollout(scheme, city.graph, example)
    except (TeacherError, FlaneurError):
        return None
    words: list[str | None] = [None, *(word_of(a) for a in actions)]
    return words, [states[min(i, len(states) - 1)] for i in range(len(words))]


def walk_lines(
    city: City,
    words: Sequence[str | None],
    states: Sequence[AgentState],
    found: Sequence[Seen],
    traffic: str | None = None,
) -> str:
    """The navigation lines of a walk (:func:`example_walk`) whose states saw ``found``,
    the traffic line ``traffic`` with the first observation."""
    trajectory = PaperTrajectory()
    degree = city.graph.degree
    previous = None
    for i, (word, state, seen) in enumerate(zip(words, states, found, strict=True)):
        if word is not None:
            trajectory.act(word)
        arrived = state.node != previous
        first = traffic if i == 0 else None
        trajectory.observe(paper_observation(int(degree[state.node]), arrived, seen, first))
        previous = state.node
    return trajectory.render(cue=False)


def example_lines(
    scheme: TurnsScheme,
    city: City,
    example: Episode,
    landmarks: Sequence[str],
    seen: Callable[[int, float, Sequence[str]], Seen],
) -> str | None:
    """An example's navigation lines as VELMA writes them: its gold path, ending with
    ``stop`` and the observation there; ``None`` if it cannot be walked."""
    walk = example_walk(scheme, city, example)
    if walk is None:
        return None
    words, states = walk
    found = [seen(state.node, state.heading, landmarks) for state in states]
    return walk_lines(city, words, states, found)


async def aexample_lines(
    scheme: TurnsScheme,
    city: City,
    example: Episode,
    landmarks: Sequence[str],
    aseen: Callable[[int, float, Sequence[str]], Awaitable[Seen]],
    traffic: Callable[[int, float], Awaitable[str | None]] | None = None,
) -> str | None:
    """:func:`example_lines` with an async ``aseen`` (a view observer's: VELMA's CLIP sees
    the example's landmarks along its path) and, on Touchdown, ``traffic(node, heading)``:
    the traffic line at the example's start (VELMA's train instances have theirs)."""
    walk = example_walk(scheme, city, example)
    if walk is None:
        return None
    words, states = walk
    found = [await aseen(state.node, state.heading, landmarks) for state in states]
    line = await traffic(states[0].node, states[0].heading) if traffic is not None else None
    return walk_lines(city, words, states, found, line)


def example_block(instruction: str, lines: str) -> str:
    """An in-context example in VELMA's layout: ``Navigation Instructions:``, the quoted
    instruction, ``Action Sequence:``, the lines and an empty line."""
    return f'Navigation Instructions:\n"{instruction}"\nAction Sequence:\n{lines}\n\n'


def cached_example_lines(
    scheme: TurnsScheme, city: City, example: Episode, landmarks: Sequence[str], observer: Any
) -> str | None:
    """:func:`example_lines` with the map observer ``observer``, kept for the last examples."""
    key = (
        id(city.graph),
        city.name,
        example.id,
        example.instruction,
        tuple(landmarks),
        observer.landmarks_from,
        observer.radius_m,
    )
    if key in _EXAMPLES:
        _EXAMPLES.move_to_end(key)
        return _EXAMPLES[key]
    lines = example_lines(scheme, city, example, landmarks, observer.seen)
    _EXAMPLES[key] = lines
    while len(_EXAMPLES) > _EXAMPLES_KEPT:
        _EXAMPLES.popitem(last=False)
    return lines


async def cached_view_example_lines(
    scheme: TurnsScheme,
    city: City,
    example: Episode,
    landmarks: Sequence[str],
    observer: Any,
    traffic: Any = None,
) -> str | None:
    """:func:`aexample_lines` with the view observer ``observer`` (a
    :class:`~flaneur.agents.velma.verbalize.ViewLandmarkObserver`) and the traffic flow
    ``traffic`` (a :class:`~flaneur.agents.velma.traffic.TrafficFlow` or ``None``), kept for
    the last examples of each scorer (while the scorer lives: a stored CLIP scorer lives as
    long as the process, so each example is seen once)."""
    sensor = observer.sensor
    key = (
        id(city.graph),
        city.name,
        example.id,
        example.instruction,
        tuple(landmarks),
        views_identity(sensor.provider),
        sensor.fov,
        tuple(sensor.size),
        None if traffic is None else traffic.key,
    )
    try:
        kept = _VIEW_EXAMPLES.setdefault(observer.scorer, OrderedDict())
    except TypeError:  # a scorer that cannot be hashed or weakly referenced: nothing kept
        kept = OrderedDict()
    if key in kept:
        kept.move_to_end(key)
        return kept[key]
    line = None if traffic is None else partial(traffic.aline, scheme)
    lines = await aexample_lines(scheme, city, example, landmarks, observer.aseen, line)
    kept[key] = lines
    while len(kept) > _EXAMPLES_KEPT:
        kept.popitem(last=False)
    return lines


@cache
def train_episodes(path: str, city: str) -> tuple[Episode, ...]:
    """The episodes of a map2seq or Touchdown file (VELMA's ``train.json``), in file order."""
    return tuple(load_vln_jsonl(path, category="velma-examples", city=city))


__all__ = [
    "PAPER_DIRECTIONS",
    "PAPER_WORDS",
    "VELMA_PROMPT_FILES",
    "PaperTrajectory",
    "aexample_lines",
    "cached_example_lines",
    "cached_view_example_lines",
    "example_block",
    "example_draws",
    "example_lines",
    "example_walk",
    "fill_velma",
    "filter_landmarks",
    "paper_landmarks_text",
    "paper_observation",
    "parse_landmarks",
    "read_reply",
    "released_landmarks",
    "train_episodes",
    "validate",
    "velma_dataset",
    "velma_fields",
    "velma_prompt",
    "velma_prompt_name",
    "walk_lines",
]

"""What the model learns from: gold steps (teacher forcing) and student walks (RBL).

Every example is one decision of the VELMA agent: its system message, the user message it
sends at that step (built by the exporter's :func:`~flaneur.agents.velma.finetune.gold_prompts`
for gold paths, and recorded from :class:`~flaneur.agents.velma.VelmaAgent` itself for student
walks, both with ``k_shot=0`` and rule-based landmarks, as VELMA fine-tunes) and the target
action word.

Student forcing (VELMA's Algorithm 1): the current model walks the episode in the
environment; if it stops on the goal or a neighbour of it (task completion), its own actions
are the targets; otherwise the teacher gives, at every state the student visited, the first
action of a shortest path to the goal from there (:class:`~flaneur.env.teacher.Teacher` with
the goal only), and those are the targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from flaneur.agents import env_info_for
from flaneur.agents.prompts import load_prompt
from flaneur.agents.velma.agent import VelmaAgent
from flaneur.agents.velma.finetune import gold_prompts
from flaneur.agents.velma.verbalize import MapLandmarkObserver, word_of
from flaneur.env.navigation_env import NavigationEnv
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.state import AgentState
from flaneur.env.teacher import Teacher
from flaneur.metrics.velma import task_completion
from flaneur.models.base import ChatModel
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

AGENT_OPTIONS = {"k_shot": 0, "extract": "rules"}
"""The VELMA agent options training assumes (run the trained model with them)."""


@dataclass(frozen=True)
class Example:
    """One decision: the chat the agent sends and the target action word."""

    episode_id: str
    system: str
    user: str
    target: str


@dataclass
class Walk:
    """A student's walk: the states it acted in, its prompts and words, where it ended."""

    episode: Episode
    states: list[AgentState] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    stop_node: int = -1
    stopped: bool = False


def gold_examples(
    scheme: TurnsScheme, city: City, episode: Episode, observer: MapLandmarkObserver | None = None
) -> list[Example]:
    """The teacher-forced examples of ``episode`` (its gold path, verbalized)."""
    system_text, _ = load_prompt("velma", "system").fill()
    return [
        Example(episode.id, system_text, text, word)
        for text, _, word in gold_prompts(scheme, city, episode, k_shot=0, observer=observer)
    ]


async def student_walk(model: ChatModel, city: City, episode: Episode) -> Walk:
    """Let ``model`` walk ``episode`` as the VELMA agent in a ``turns`` environment."""
    env = NavigationEnv(city, episode, scheme="turns")
    agent = VelmaAgent(**AGENT_OPTIONS)  # type: ignore[arg-type]
    obs, info = env.reset(options={"episode": episode})
    agent.reset(episode, env_info_for(env, task_id="train", model=model))
    walk = Walk(episode)
    done = False
    while not done:
        walk.states.append(env.state)
        action = await agent.act({**obs, "info": info})
        walk.systems.append(str(action.record.get("system_prompt") or ""))
        walk.prompts.append(str(action.record.get("prompt") or ""))
        walk.words.append(action.name.upper())
        obs, _, terminated, truncated, info = env.step(action.slot)
        done = terminated or truncated
    walk.stop_node = env.state.node
    walk.stopped = env.termination == "stopped"
    return walk


def goal_indices(city: City, episode: Episode) -> list[int]:
    """The goal nodes of ``episode`` (its goals, else the end of its reference path)."""
    goals: Sequence[str] = episode.goal_nodes or episode.reference_path[-1:]
    return [int(v) for v in city.graph.indices(list(goals))]


def corrected_examples(walk: Walk, scheme: TurnsScheme, city: City) -> tuple[list[Example], bool]:
    """The RBL targets of a student walk and whether they are its own actions.

    Its own words when it stopped within one node of the goal (TC); else the teacher's
    action toward the goal at every state it visited.
    """
    goals = goal_indices(city, walk.episode)
    own = walk.stopped and task_completion(city.graph, walk.stop_node, goals)
    if own:
        targets = list(walk.words)
    else:
        teacher = Teacher(scheme, city.graph, goals=goals)
        targets = [word_of(teacher.act(state)) for state in walk.states]
    examples = [
        Example(walk.episode.id, system_text, prompt, target)
        for system_text, prompt, target in zip(walk.systems, walk.prompts, targets, strict=True)
    ]
    return examples, own


__all__ = [
    "AGENT_OPTIONS",
    "Example",
    "Walk",
    "corrected_examples",
    "goal_indices",
    "gold_examples",
    "student_walk",
]

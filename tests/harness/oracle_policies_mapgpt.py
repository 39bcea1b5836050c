"""An oracle-fake policy for MapGPT prompts: it answers with the teacher's option.

The policy reads only the prompt and the task set (city and episodes). From the prompt it
takes the instruction, the trajectory of place numbers and the lettered options; from the
task set the episode with that instruction (its start node, start heading and reference
path). Replaying the trajectory from the start node on the street graph rebuilds MapGPT's
place numbering (places are numbered in the order they are first observed: the start, then
the out-neighbours of each newly visited node in ascending heading order), so every
``Place N`` maps back to a node id. A :class:`~flaneur.env.teacher.Teacher` replayed along
the same trajectory names the next node of the reference path, and the policy answers the
letter of the option that goes there (the stop option at the end).

Episodes that share an instruction are told apart by replaying each: among those whose
numbering and option directions agree with the prompt, the one whose teacher would have
made the most of the trajectory's moves (the replies this policy gave) wins. If stop is the
teacher's move but not yet offered, or nothing matches, the policy answers the first option.

Usage::

    policy = MapGPTOraclePolicy(city, episodes)            # or style="mixed"
    with FakeOpenAIServer(policy) as srv: ...

With ``flaneur fake-llm --policy harness.oracle_policies_mapgpt:oracle`` the task
sets come from ``$FLANEUR_ORACLE_TASKS`` (comma-separated ids) and ``$FLANEUR_DATA``.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flaneur.agents.mapgpt.paper import move_phrase_paper
from flaneur.agents.mapgpt.prompt_builder import move_phrase
from flaneur.env.online_map import OnlineMap
from flaneur.env.schemes.nodes import NodesScheme
from flaneur.env.state import AgentState, relative_angle
from flaneur.env.teacher import Teacher
from flaneur.tasks.episode import Episode
from flaneur.testing.fake_policies import FakeRequest
from flaneur.world.city import City

_INSTRUCTION = re.compile(r"^Instruction:\s*(.*)$", re.MULTILINE)
_TRAJECTORY = re.compile(r"^Trajectory:\s*(.*)$", re.MULTILINE)
_OPTIONS_HEAD = re.compile(r"^Action options[^\n]*:\s*$", re.MULTILINE)
_OPTION = re.compile(r"^([A-Z]{1,2})\.\s+(.*)$")
_PLACE = re.compile(r"Place (\d+)")
STYLES = ("canonical", "mixed")


@dataclass(frozen=True, slots=True)
class PromptOption:
    """An option as read from the prompt."""

    letter: str
    phrase: str
    place: int  # -1 for stop

    @property
    def is_stop(self) -> bool:
        return self.place < 0

    @property
    def is_jump(self) -> bool:
        return self.phrase.startswith("go back to")


def read_prompt(text: str) -> tuple[str, list[int], list[PromptOption]]:
    """``(instruction, trajectory place numbers, options)`` of a MapGPT step prompt."""
    m = _INSTRUCTION.search(text)
    instruction = " ".join(m.group(1).split()) if m else ""
    t = _TRAJECTORY.search(text)
    trajectory = [int(n) for n in _PLACE.findall(t.group(1))] if t else []
    options: list[PromptOption] = []
    head = _OPTIONS_HEAD.search(text)
    if head is not None:
        for line in text[head.end() :].splitlines():
            o = _OPTION.match(line.strip())
            if o is None:
                continue
            phrase = o.group(2).split(":", 1)[0].strip()
            p = _PLACE.search(phrase)
            place = -1 if phrase.startswith("stop") or p is None else int(p.group(1))
            options.append(PromptOption(o.group(1), phrase, place))
    return instruction, trajectory, options


class MapGPTOraclePolicy:
    """Fake-server policy answering MapGPT prompts with the teacher's option.

    Parameters
    ----------
    city
        The city of the episodes.
    episodes
        The task set's episodes.
    style
        ``"canonical"`` (``Thought`` / ``New Planning`` / ``Action: B``) or ``"mixed"``
        (cycles through JSON, bold markdown, ``(B)``, prose and option-text replies, to
        exercise the lenient parser).
    """

    def __init__(self, city: City, episodes: Sequence[Episode], *, style: str = "canonical"):
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}, not {style!r}")
        self.city = city
        self.graph = city.graph
        self.style = style
        self.by_instruction: dict[str, list[Episode]] = {}
        for ep in episodes:
            key = " ".join(ep.instruction.split())
            self.by_instruction.setdefault(key, []).append(ep)
        self._scheme = NodesScheme(self.graph)
        self._targets, self._headings = self.graph.adjacency
        self.unmatched = 0

    def _replay(
        self, episode: Episode, trajectory: list[int], options: list[PromptOption]
    ) -> tuple[int | None, OnlineMap, int] | None:
        """``(teacher's next node or None for stop, rebuilt map, agreement)`` if ``episode``
        fits the prompt, else ``None``; agreement counts the moves of the trajectory that
        the teacher would have made (the replies this policy gave)."""
        graph = self.graph
        if episode.start_node not in graph:
            return None
        start = graph.index(episode.start_node)
        heading = float(episode.start_heading)
        online = OnlineMap(graph)
        online.visit(start)
        teacher = Teacher.for_episode(self._scheme, graph, episode)
        if trajectory[:1] != [0]:
            return None
        node = start
        target = teacher.next_node(AgentState(node, heading))
        agree = 0
        for number in trajectory[1:]:
            nxt = online.node_of_number(number)
            if nxt < 0 or nxt not in self._targets[node]:
                return None
            agree += int(nxt == target)
            heading = self._headings[node][self._targets[node].index(nxt)]
            node = nxt
            online.visit(node)
            target = teacher.next_node(AgentState(node, heading))
        moves = [o for o in options if not (o.is_stop or o.is_jump)]
        if len(moves) != len(set(self._targets[node])):
            return None
        for opt in moves:
            v = online.node_of_number(opt.place)
            if v not in self._targets[node]:
                return None
            edge = self._headings[node][self._targets[node].index(v)]
            angle = relative_angle(edge, heading)  # flaneur's words, or MapGPT's (paper)
            if not opt.phrase.startswith((move_phrase(angle), move_phrase_paper(angle))):
                return None
        return target, online, agree

    def choose(self, text: str) -> tuple[PromptOption | None, str]:
        """The teacher's option for a prompt, and a one-line reason."""
        instruction, trajectory, options = read_prompt(text)
        fits = []
        for episode in self.by_instruction.get(instruction, []):
            fit = self._replay(episode, trajectory, options)
            if fit is not None:
                fits.append((fit[2], episode, fit[0], fit[1]))
        if fits:
            _, episode, target, online = max(fits, key=lambda f: f[0])  # first of the best
            if target is None:
                stop = next((o for o in options if o.is_stop), None)
                return stop or (options[0] if options else None), f"episode {episode.id}: stop"
            for opt in options:
                if not opt.is_stop and online.node_of_number(opt.place) == target:
                    return opt, f"episode {episode.id}: next node is Place {opt.place}"
        self.unmatched += 1
        return (options[0] if options else None), "no episode matches this prompt"

    def reply(self, option: PromptOption | None, reason: str, index: int) -> str:
        """The reply text in this policy's style."""
        letter = option.letter if option else "A"
        phrase = option.phrase if option else "stop"
        thought = f"I follow the reference route ({reason})."
        plan = f"Next: {phrase}."
        if self.style == "canonical":
            return f"Thought: {thought}\nNew Planning: {plan}\nAction: {letter}"
        variants = [
            f"Thought: {thought}\nNew Planning: {plan}\nAction: {letter}",
            json.dumps({"Thought": thought, "New Planning": plan, "Action": letter}),
            f"**Thought:** {thought}\n**New Planning:** {plan}\n**Action:** **{letter}**",
            f"Thought: {thought}\nNew Planning: {plan}\nAction: ({letter})",
            f"{thought} {plan}\nI choose option {letter}.",
            f"Thought: {thought}\nNew Planning: {plan}\nAction: {letter}. {phrase}",
        ]
        return variants[index % len(variants)]

    def __call__(self, request: FakeRequest) -> str:
        option, reason = self.choose(request.last_user_text)
        # the style follows the prompt, not the arrival order, so concurrent episodes get
        # the same replies whatever order their requests reach the server in
        return self.reply(option, reason, zlib.crc32(request.last_user_text.encode()))


_DEFAULT: dict[str, Any] = {}


def oracle(request: FakeRequest) -> str:
    """Module-level policy for ``flaneur fake-llm`` (task sets from the environment)."""
    policy = _DEFAULT.get("policy")
    if policy is None:
        from flaneur.tasks.registry import load_task, navigation_episodes

        ids = [t for t in os.environ.get("FLANEUR_ORACLE_TASKS", "").split(",") if t.strip()]
        if not ids:
            raise RuntimeError("set FLANEUR_ORACLE_TASKS to the task-set id(s) to answer for")
        data_dir = os.environ.get("FLANEUR_DATA")
        policies = []
        for task_id in ids:
            city, items = load_task(task_id.strip(), data_dir)
            policies.append(MapGPTOraclePolicy(city, navigation_episodes(items)))
        policy = _DEFAULT["policy"] = _Union(policies)
    return policy(request)


class _Union:
    """Try several task sets' policies; the first that recognises the prompt answers."""

    def __init__(self, policies: list[MapGPTOraclePolicy]):
        self.policies = policies

    def __call__(self, request: FakeRequest) -> str:
        text = request.last_user_text
        instruction = read_prompt(text)[0]
        for p in self.policies:
            if instruction in p.by_instruction:
                return p(request)
        return self.policies[0](request)


__all__ = ["STYLES", "MapGPTOraclePolicy", "PromptOption", "oracle", "read_prompt"]

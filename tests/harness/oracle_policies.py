"""An "oracle-fake" policy for the fake OpenAI server: it answers VELMA's prompts with the
teacher's action.

The policy knows only the task set (city and episodes) and what is in each request. From a
VELMA prompt it reads the instructions (the last ``Navigation instructions`` block, after the
in-context examples) and the action words of the numbered trajectory, finds the episode with
those instructions, replays the actions from the episode's start under the ``turns`` rules
(an action the state does not allow leaves it unchanged, as the environment's ``noop``
policy does), and answers the teacher's next action. Landmark-extraction requests get the
rule-based landmarks as a JSON list. If VELMA loses nothing between the environment and the
prompt, this policy makes it succeed on every episode (TC = 100%).

Use it in-process::

    policy = velma_oracle_policy(city, episodes)
    with FakeOpenAIServer(policy) as server: ...

or by name (``flaneur fake-llm --policy harness.oracle_policies:velma_oracle``),
with ``FLANEUR_ORACLE_TASKS`` (comma-separated task ids) and ``FLANEUR_DATA`` set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from flaneur.env.schemes.base import STOP
from flaneur.env.schemes.turns import TURN_ACTIONS, TurnsScheme
from flaneur.env.teacher import Teacher
from flaneur.errors import FlaneurError
from flaneur.models.scoring import NAV_ACTIONS
from flaneur.perception.extraction import SYSTEM as EXTRACTION_SYSTEM
from flaneur.perception.extraction import rule_based_landmarks
from flaneur.tasks.episode import Episode
from flaneur.testing.fake_policies import FakeReply, FakeRequest
from flaneur.world.city import City

NO_ANSWER = "I cannot tell."
"""Reply to a request the policy does not recognise (the agent counts a parse failure)."""


def _markers() -> tuple[str, str]:
    """The text just before the instructions and between them and the trajectory, taken
    from VELMA's prompt template (so a reworded template keeps the oracle working)."""
    from flaneur.agents.prompts import load_prompt

    template = load_prompt("velma", "navigate").text
    head, _, rest = template.partition("{instructions}")
    between, _, _ = rest.partition("{trajectory}")
    return head.rsplit("\n", 1)[-1], between


class VelmaOraclePolicy:
    """Answer VELMA's prompts with the teacher's action (see the module docstring).

    Parameters
    ----------
    tasks
        ``[(city, episodes), ...]``: the task sets whose episodes may be asked about.
    """

    def __init__(self, tasks: Sequence[tuple[City, Sequence[Episode]]]) -> None:
        self._by_text: dict[str, list[tuple[Episode, TurnsScheme]]] = {}
        for city, episodes in tasks:
            scheme = TurnsScheme(city.graph)
            for episode in episodes:
                key = episode.instruction.strip()
                self._by_text.setdefault(key, []).append((episode, scheme))
        self._head, self._between = _markers()
        self.unknown = 0

    def parse(self, text: str) -> tuple[str, list[str]] | None:
        """``(instructions, action words so far)`` of a VELMA prompt, or ``None``."""
        start = text.rfind(self._head)
        if start < 0:
            return None
        start += len(self._head)
        end = text.find(self._between, start)
        if end < 0:
            return None
        words = []
        for line in text[end + len(self._between) :].splitlines():
            _, _, content = line.partition(". ")
            if content.strip() in NAV_ACTIONS:
                words.append(content.strip())
        return text[start:end].strip(), words

    def answer(self, instructions: str, words: Sequence[str]) -> str | None:
        """The teacher's next action word after ``words`` (``None`` if unknown)."""
        for episode, scheme in self._by_text.get(instructions, []):
            graph = scheme.graph
            teacher = Teacher.for_episode(scheme, graph, episode)
            state = scheme.start(graph.index(episode.start_node), episode.start_heading)
            valid = True
            for word in words:
                teacher.act(state)  # advance the teacher's pointer as in a live episode
                slot = TURN_ACTIONS.index(word.lower())
                if slot == STOP:
                    valid = False
                    break
                nxt = scheme.transition(state.code, slot)
                if nxt < 0:
                    valid = False  # the environment would leave the state unchanged
                    continue
                state = scheme.state(nxt, state.steps + 1)
            if valid or len(self._by_text[instructions]) == 1:
                return TURN_ACTIONS[teacher.act(state)].upper()
        return None

    def __call__(self, request: FakeRequest) -> Any:
        system_text = " ".join(request.texts("system"))
        text = request.last_user_text
        if EXTRACTION_SYSTEM in system_text and text.startswith("Instruction: "):
            return json.dumps(rule_based_landmarks(text[len("Instruction: ") :]))
        parsed = self.parse(text)
        word = self.answer(*parsed) if parsed is not None else None
        if word is None:
            self.unknown += 1
            return NO_ANSWER
        return FakeReply(word)


def velma_oracle_policy(city: City, episodes: Sequence[Episode]) -> VelmaOraclePolicy:
    """The oracle-fake policy for one task set."""
    return VelmaOraclePolicy([(city, episodes)])


_FROM_ENV: list[VelmaOraclePolicy] = []


def velma_oracle(request: FakeRequest) -> Any:
    """Named policy for ``flaneur fake-llm``: task sets from ``FLANEUR_ORACLE_TASKS`` and
    ``FLANEUR_DATA``, loaded on the first request."""
    if not _FROM_ENV:
        from flaneur.tasks.registry import load_task, navigation_episodes

        ids = [t for t in os.environ.get("FLANEUR_ORACLE_TASKS", "").split(",") if t.strip()]
        if not ids:
            raise FlaneurError("set FLANEUR_ORACLE_TASKS to the task ids the oracle answers for")
        tasks = [load_task(t.strip()) for t in ids]
        _FROM_ENV.append(VelmaOraclePolicy([(c, navigation_episodes(e)) for c, e in tasks]))
    return _FROM_ENV[0](request)


__all__ = ["NO_ANSWER", "VelmaOraclePolicy", "velma_oracle", "velma_oracle_policy"]

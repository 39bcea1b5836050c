"""The language model of V-IRL's agents: the run's async model, versioned prompts, records.

Every V-IRL agent runs offline by default (rule-based or embedder-based steps of our own
design where V-IRL asked an LLM). With a model (``--llm``) the same steps send versioned
prompts (``flaneur/agents/prompts/<agent>/<name>.txt``, each with a ``# version:`` line)
through the run's :class:`~flaneur.models.ChatModel`, the same object every other agent of
the run uses: its response cache makes a re-run free and identical, its usage tracker counts
the tokens, its limits bound the requests in flight. A failed call or an unusable reply
never stops a run: the offline step answers instead, and the record says so.

Each exchange is a record (``prompt_id``, ``raw_output``, ``parse_failures``, ``error``) that
the agent returns with its result; the runner writes them into the row, so a row says which
prompt version produced which answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flaneur.agents.prompts import load_prompt
from flaneur.models import ModelError, system, user

MAX_TOKENS = 256
"""Reply length of every call (short answers: a choice, a name, a sentence or two)."""


@dataclass
class Thinker:
    """A V-IRL agent's calls to the run's ``model`` (:class:`~flaneur.models.ChatModel`,
    ``info.model`` / ``env_info.model``; ``None`` offline) with the prompts of its ``agent``
    folder (``"aria"``, ``"diego"``, ...), replies of ``max_tokens`` at most; ``records``
    holds every exchange."""

    model: Any
    agent: str
    max_tokens: int = MAX_TOKENS
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def online(self) -> bool:
        """Whether a model is attached."""
        return self.model is not None

    @property
    def fallbacks(self) -> int:
        """Calls whose reply could not be used (failed, or unparseable)."""
        return sum(1 for r in self.records if r.get("parse_failures") or r.get("error"))

    async def ask(self, prompt: str, *, system_text: str = "", **values: Any) -> str | None:
        """Send prompt ``prompt`` (a template name of this agent) filled with ``values``.

        Returns
        -------
        str or None
            The reply text; ``None`` offline or when the call failed (recorded).
        """
        if self.model is None:
            return None

        text, prompt_id = load_prompt(self.agent, prompt).fill(**values)
        messages = ([system(system_text)] if system_text else []) + [user(text)]
        record: dict[str, Any] = {"prompt_id": prompt_id}
        self.records.append(record)
        try:
            reply = await self.model.complete(messages, temperature=0, max_tokens=self.max_tokens)
        except ModelError as err:
            record["error"] = str(err)[:200]
            return None
        record["raw_output"] = reply.text or ""
        return reply.text or ""

    def fell_back(self) -> None:
        """Mark the last reply as unusable (the offline step answered instead)."""
        if self.records:
            self.records[-1]["parse_failures"] = 1

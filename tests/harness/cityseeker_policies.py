"""A scripted fake policy for the CitySeeker agent (tests, validation runs, ``flaneur fake-llm``).

:class:`ScriptedCitySeeker` answers the stop and choice prompts of
:class:`~flaneur.agents.cityseeker.agent.CitySeekerAgent` with JSON like a cooperative model
would, deterministically: every random draw comes from a hash of the prompt text and the
seed, so concurrent runs give the same replies whatever the request order. A share of the
replies is deliberately unparseable, to exercise the parse-failure fallback::

    with FakeOpenAIServer(ScriptedCitySeeker(seed=1)) as srv:
        ...

or from the command line: ``flaneur fake-llm --policy harness.cityseeker_policies:policy``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from flaneur.env.state import angular_distance
from flaneur.testing.fake_openai import FakeRequest

OPTION_LINE = re.compile(r"^([A-Z])\. ([A-Z_]+) \(", re.MULTILINE)
STEP_LINE = re.compile(r"Step (\d+) of at most (\d+)")
HEADING_LINE = re.compile(
    r"^([A-Z])\. [A-Z_]+ \((?:[^,()]+, )?toward the [a-z-]+, (\d+)°\)", re.MULTILINE
)
HINT_LINE = re.compile(r"(?:most promising option now is|best option from here is) option ([A-Z])")


def prompt_kind(text: str) -> str:
    """``"stop"``, ``"choice"``, ``"cognition"`` or ``"other"`` from a prompt's text."""
    if '"decision"' in text:
        return "stop"
    if '"choice"' in text:
        return "choice"
    if "Rewrite it as a short" in text:
        return "cognition"
    return "other"


def options_of(text: str) -> list[tuple[str, str]]:
    """``[(letter, direction), ...]`` listed in a choice prompt (FRONT, LEFT, RIGHT, BACK;
    under ``paper`` CitySeeker's eight: FRONT_LEFT, ...)."""
    return OPTION_LINE.findall(text)


def option_headings(text: str) -> dict[str, float]:
    """``{letter: compass heading}`` of the options of a choice prompt."""
    return {letter: float(h) for letter, h in HEADING_LINE.findall(text)}


def hinted_option(text: str) -> str | None:
    """The letter a B3 hint recommends, if the prompt has one."""
    match = HINT_LINE.search(text)
    return match.group(1) if match else None


def toward(heading: float):  # type: ignore[no-untyped-def]
    """``choose(prompt)`` picking the option whose street points closest to ``heading``."""

    def choose(text: str) -> str:
        heads = option_headings(text)
        return min(heads, key=lambda k: angular_distance(heads[k], heading))

    return choose


def reply(
    kind: str,
    *,
    decision: str = "continue",
    choice: str = "A",
    confidence: float = 0.9,
    thought: str = "",
) -> str:
    """A well-formed JSON reply to a stop (``kind="stop"``) or choice prompt."""
    if kind == "stop":
        body = {"thought": thought, "decision": decision, "confidence": confidence}
    else:
        body = {"thought": thought, "choice": choice, "confidence": confidence}
    return json.dumps(body)


@dataclass
class ScriptedCitySeeker:
    """A deterministic, mostly cooperative fake CitySeeker model.

    Parameters
    ----------
    seed
        Seed of the draws.
    stop_rate
        Chance of ``stop`` at each stop prompt (never at the first step).
    front_rate
        Chance of taking the FRONT option when there is one (else a uniform draw).
    garbage_rate
        Chance that a reply is prose without JSON (a parse failure).
    """

    seed: int = 0
    stop_rate: float = 0.06
    front_rate: float = 0.6
    garbage_rate: float = 0.05

    def _draws(self, text: str) -> list[float]:
        digest = hashlib.sha256(f"{self.seed}\n{text}".encode()).digest()
        return [int.from_bytes(digest[i : i + 4], "big") / 2**32 for i in range(0, 32, 4)]

    def __call__(self, request: FakeRequest) -> str:
        text = request.last_user_text
        r = self._draws(text)
        kind = prompt_kind(text)
        if kind == "cognition":
            return "P1 is the start; earlier walks went east and failed; try another street."
        if kind not in ("stop", "choice") or r[0] < self.garbage_rate:
            return "Let me look around a bit more before I decide."
        confidence = round(0.3 + 0.7 * r[1], 2)
        if kind == "stop":
            step = STEP_LINE.search(text)
            first = step is not None and step.group(1) == "1"
            decision = "stop" if (not first and r[2] < self.stop_rate) else "continue"
            body = {"thought": "I look around.", "decision": decision, "confidence": confidence}
            return json.dumps(body)
        options = options_of(text) or [("A", "FRONT")]
        fronts = [letter for letter, label in options if label == "FRONT"]
        if fronts and r[3] < self.front_rate:
            letter = fronts[0]
        else:
            letter = options[int(r[4] * len(options)) % len(options)][0]
        body = {
            "thought": f"Option {letter} looks promising.",
            "choice": letter,
            "confidence": confidence,
        }
        return "```json\n" + json.dumps(body) + "\n```"


policy = ScriptedCitySeeker()
"""A default instance (for ``--policy harness.cityseeker_policies:policy``)."""

__all__ = [
    "ScriptedCitySeeker",
    "hinted_option",
    "option_headings",
    "options_of",
    "policy",
    "prompt_kind",
    "reply",
]

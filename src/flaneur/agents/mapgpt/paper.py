"""MapGPT's own rules, which the agent follows under ``--protocol paper``.

Each rule is read from MapGPT's released code (github.com/chen-judge/MapGPT, commit
``37ed94b``; ``GPT/one_stage_prompt_manager.py`` and ``vln/gpt_agent.py``) and written
here for streets; ``docs/fidelity.md`` lists them with the tests that pin them. Under the
``flaneur`` protocol the agent keeps its own rules (:mod:`flaneur.agents.mapgpt.prompt_builder`,
:mod:`flaneur.agents.mapgpt.parse`).

* **Step numbers** start at 0 (``Action options (step 0)``, ``History: step 0: ...``), as
  MapGPT's loop counter ``t`` does; flaneur's prompt counts from 1.
* **Stop** is offered from step ``stop_after`` on, as the prompt counts steps
  (``make_action_options``: ``t >= stop_after``): with MapGPT's ``--stop_after 3`` the
  agent makes three moves before stop is offered (flaneur's prompt, counting from 1, offers
  it after two).
* **Moves** are named with MapGPT's four words (``get_action_concept``): ``go forward``
  when the street lies in the agent's own 30-degree view sector, ``turn left`` / ``turn
  right`` up to 90 degrees, ``turn around`` beyond. MapGPT compares the headings of
  Matterport's twelve 30-degree views; a street's angle is rounded to the nearest sector.
* **Replies** are read as ``parse_action`` reads them (the ``str`` format of its GPT-4V
  runs): from the last ``Action`` in the reply, the first capital letter ``A``-``M`` after
  ``Action:``; a letter that is not offered, or none, is option 0: stop when stop is
  offered, else the first move (``parse_action`` adds 1 to the index before step
  ``stop_after``). A reply without ``Action`` raises an ``IndexError`` in MapGPT's code; here
  it is read like any other reply without a letter.
* **Planning** is the text between ``New Planning:`` and ``Action:`` at the start of lines
  (``parse_planning``), with ``new`` written ``previous``; a reply without it leaves no plan
  (MapGPT writes ``No plans currently.``) rather than keeping the previous one.

Two more rules live in :class:`~flaneur.agents.mapgpt.agent.MapGPTAgent`, as they need its
map: in one-stage mode the message carries a view of every place seen so far (``Image N:``
then the view towards ``Place N`` from the last place where it was an adjacent option, all
before the text: ``make_action_prompt`` and ``GPT/api.py``), and ``Supplementary Info``
lists every observed place that is neither visited nor an option, in number order, without
direction or distance (``make_map_prompt``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from flaneur.agents.mapgpt.parse import ParsedReply, split_fields
from flaneur.agents.mapgpt.prompt_builder import Option

SECTOR_DEG = 30.0
"""Width of Matterport's view sectors, in which MapGPT's headings are counted."""

NO_PLAN_READ = "none (the last reply had no plan)"
"""The plan shown after a reply without ``New Planning`` (MapGPT: ``No plans currently.``)."""

_ACTION_LETTER = re.compile(r"Action:\s*([A-M])")
_PLANNING_KEY = "\nNew Planning:"
_ACTION_KEY = "\nAction:"


def prompt_step(step: int, *, paper: bool) -> int:
    """The step number the prompt shows for ``step`` moves taken (0-based under ``paper``)."""
    return step if paper else step + 1


def stop_offered(step: int, stop_after: int, *, paper: bool) -> bool:
    """Whether stop is an option after ``step`` moves: from the prompt's step ``stop_after``.

    Under ``paper`` the prompt counts from 0, so stop needs ``stop_after`` moves (MapGPT's
    rule); under ``flaneur`` it counts from 1, so stop needs ``stop_after - 1`` moves.
    """
    return prompt_step(step, paper=paper) >= stop_after


def move_phrase_paper(relative: float) -> str:
    """MapGPT's name of a move towards a street ``relative`` degrees from the heading.

    The angle is rounded to the nearest 30-degree sector (Matterport's views); the same
    sector is ``go forward``, up to 90 degrees ``turn left`` / ``turn right`` (negative =
    left), beyond ``turn around``.
    """
    sector = SECTOR_DEG * math.floor(relative / SECTOR_DEG + 0.5)
    sector = (sector + 180.0) % 360.0 - 180.0
    if sector == 0.0:
        return "go forward"
    if 0.0 < sector <= 90.0:
        return "turn right"
    if -90.0 <= sector < 0.0:
        return "turn left"
    return "turn around"


def read_action(text: str, options: Sequence[Option]) -> Option | None:
    """The option MapGPT's ``parse_action`` reads from a reply, or ``None`` (option 0).

    The reply is read from its last ``Action``; the letter is the first of ``A``-``M``
    right after ``Action:`` (spaces allowed), and must be offered.
    """
    out = text.strip()
    last = out.rfind("Action")
    if last < 0:
        return None
    found = _ACTION_LETTER.findall(out[last:])
    if not found:
        return None
    return next((o for o in options if o.letter == found[-1]), None)


def read_planning(text: str) -> str:
    """The plan MapGPT's ``parse_planning`` reads from a reply (``""`` when none)."""
    out = text.strip()
    first = out.find(_PLANNING_KEY)
    start = first + len(_PLANNING_KEY)
    end = out.find(_ACTION_KEY)
    if first < 0 or end < 0 or start >= end:
        return ""
    plan = out[start:end].strip()
    return plan.replace("new", "previous").replace("New", "Previous")


def parse_reply_paper(text: str | None, options: Sequence[Option]) -> ParsedReply:
    """A reply read by MapGPT's rules (``method`` is ``"mapgpt"``, or ``"none"`` when it
    names no offered letter). The thought is kept for the step record only."""
    raw = text or ""
    option = read_action(raw, options)
    thought = split_fields(raw.strip()).get("thought", "")
    return ParsedReply(thought, read_planning(raw), option, "none" if option is None else "mapgpt")


def fallback_paper(options: Sequence[Option]) -> Option | None:
    """MapGPT's choice for a reply it cannot read: option 0 (stop when offered, else the
    first move)."""
    return options[0] if options else None


__all__ = [
    "NO_PLAN_READ",
    "SECTOR_DEG",
    "fallback_paper",
    "move_phrase_paper",
    "parse_reply_paper",
    "prompt_step",
    "read_action",
    "read_planning",
    "stop_offered",
]

"""Diego, V-IRL's interactive concierge, on ``virl-diego`` scenarios: a day plan through the
places the person wishes to see, grounded in the city's travel times, and (option
``ablation``) the same day planned with guessed travel times to compare.

The planning itself is :class:`~flaneur.agents.virl.day_planner.DayPlanner`'s. The scenario
holds the persona (status values, budget), its ``wishes`` (a list of place names; one name
given as text is one wish; none: the places named in the intention) and its ``feedback``:
remarks the person makes, one before each planning round, or ``"-"``: asked between rounds on
stdin (``flaneur virl diego FILE --feedback -``: one scenario at a time), showing where the
day stands. The ungrounded plan hears the same remarks as the grounded one.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from flaneur.agents.base import SolveInfo
from flaneur.agents.virl.common import ScenarioPlanner
from flaneur.agents.virl.day_planner import MAX_ACTIVITIES, DayPlanner
from flaneur.agents.virl.day_rules import Asker
from flaneur.errors import DataError
from flaneur.options import Range, option
from flaneur.tasks.items import TaskItem

ASK = "-"
"""The ``feedback`` value that asks the person on stdin between rounds."""


def read_feedback(path: str | Path) -> list[str]:
    """The remarks of a feedback file: one a line, blank lines skipped.

    Raises
    ------
    DataError
        The file is missing or not UTF-8 text.
    """
    file = Path(path)
    if not file.is_file():
        raise DataError("feedback file not found (one remark a line)", path=file)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError("the feedback file is not UTF-8 text", path=file) from None
    return [x.strip() for x in text.splitlines() if x.strip()]


def wish_list(value: Any) -> list[str]:
    """A scenario's wishes as a list of names (one name given as text is one wish).

    Raises
    ------
    DataError
        Wishes that are neither text nor a list of texts.
    """
    if value in (None, ""):
        return []
    if isinstance(value, str):
        return [value.strip()]
    if isinstance(value, list | tuple) and all(isinstance(w, str) for w in value):
        return [w.strip() for w in value if w.strip()]
    raise DataError(f"field 'wishes' must be a list of place names, not {value!r}")


def ask_on_terminal(day: dict[str, Any]) -> str | None:
    """Interactive feedback: show where the day stands on stderr, read one line from stdin
    (``None`` at the end of input)."""
    status = ", ".join(f"{k} {v}" for k, v in day["status"].items())
    last = f" after {day['last_activity']!r}" if day["last_activity"] else ""
    print(
        f"[diego] {day['time']} at {day['place']}{last}; budget {day['budget']}; {status}\n"
        "[diego] your feedback (Enter: none; 'go home' ends the day): ",
        end="",
        file=sys.stderr,
        flush=True,
    )
    line = sys.stdin.readline()
    return None if line == "" else line.strip()


def scenario_feedback(value: Any) -> tuple[list[str], Asker | None]:
    """``(remarks, asker)`` of a scenario's ``feedback``: a list of remarks, ``"-"`` (ask on
    the terminal), a feedback file's path, or nothing.

    Raises
    ------
    DataError
        A missing feedback file, or a value of another kind.
    """
    if value in (None, ""):
        return [], None
    if value == ASK:
        return [], ask_on_terminal
    if isinstance(value, str):
        return read_feedback(value), None
    if isinstance(value, list | tuple) and all(isinstance(x, str) for x in value):
        return [x.strip() for x in value if x.strip()], None
    raise DataError(f"field 'feedback' must be remarks, a file or '-', not {value!r}")


@dataclass(frozen=True)
class DiegoOptions:
    """Diego's options (``flaneur virl diego FILE max_rounds=8 ablation=false``)."""

    max_rounds: Annotated[int, Range(1, 40)] = option(MAX_ACTIVITIES, "planning rounds at most")
    ablation: bool = option(True, "also plan with guessed travel times and compare")


class DiegoAgent(ScenarioPlanner):
    """The concierge on ``virl-diego`` scenarios (see the module docstring)."""

    name: ClassVar[str] = "diego"
    solves: ClassVar[tuple[str, ...]] = ("virl-diego",)
    Options: ClassVar[type] = DiegoOptions

    async def solve(self, item: TaskItem, info: SolveInfo) -> dict[str, Any]:
        """The grounded day plan and, with ``ablation``, the ungrounded one."""
        scene, rounds = self.begin(item, info), self.options.max_rounds
        wishes = wish_list(item.get("wishes"))
        remarks, ask = scenario_feedback(item.get("feedback"))
        day = (scene.persona, scene.start, scene.label, wishes)
        protocol = info.protocol
        grounded = await DayPlanner(
            info.city, scene.thinker, max_rounds=rounds, protocol=protocol
        ).plan_day(*day, list(remarks), ask=ask)
        if not self.options.ablation:
            return scene.result(grounded_plan=grounded)
        heard = remarks or list(grounded["feedback_heard"])  # the same remarks
        ungrounded = await DayPlanner(
            info.city, scene.thinker, grounded=False, max_rounds=rounds, protocol=protocol
        ).plan_day(*day, list(heard))
        mae = "travel_time_mae_min"
        errors = {"grounded": grounded[mae], "ungrounded": ungrounded[mae]}
        return scene.result(grounded_plan=grounded, ungrounded_plan=ungrounded, **{mae: errors})

"""Diego's day (:mod:`flaneur.agents.virl.day_planner`): its state, and the offline rules of
our own design that draft, estimate and read remarks where V-IRL asked an LLM.

Offline, Diego eats when hungry at meal times, else goes to the next wish and spends an hour
there, and ends the day in the evening or when every wish is done (:func:`draft_offline`);
an activity changes status values by :data:`EFFECTS` and costs :data:`MEAL_COST` or
:data:`ACTIVITY_COST` (:func:`estimate_offline`); words of a remark such as "hungry" or
"tired" move status values (:data:`FEEDBACK_WORDS`), and "go home" ends the day
(:func:`ends_the_day`, with or without a model).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_STATUS = {"stress": 50.0, "joy": 30.0, "sadness": 0.0, "hunger": 20.0}
DEFAULT_STATUS |= {"energy": 80.0, "pain": 0.0}
DEFAULT_BUDGET = 120.0
START_HOUR = 9.0
END_HOUR = 20.0
EFFECTS: dict[str, dict[str, float]] = {
    "normal": {"joy": 10, "stress": -5, "energy": -10, "hunger": 10},
    "eat": {"hunger": -50, "joy": 5, "energy": 10},
    "transport": {"energy": -3, "hunger": 3},
}
"""Offline estimator: status change per activity (transport: per 10 minutes)."""
MEAL_COST = {"restaurant": 18.0, "cafe": 9.0, "fast_food": 10.0}
LOOK_AROUND = {"type": "normal", "minutes": 30, "content": "look around"}
"""What a draft to a place the city does not have becomes."""
ACTIVITY_COST = 10.0
_END_WORDS = re.compile(
    r"\bgo(?:ing)? home\b|\bend (?:the|my|our) day\b|\bend (?:it )?here\b|\bcall it a day\b"
    r"|^\s*(?:end|stop)\s*[.!]?\s*$",
    re.IGNORECASE,
)

FEEDBACK_WORDS: dict[str, dict[str, float]] = {"hungry": {"hunger": 40}, "tired": {"energy": -30}}
FEEDBACK_WORDS |= {"exhausted": {"energy": -60}, "bored": {"joy": -15}, "stressed": {"stress": 20}}
FEEDBACK_WORDS |= {"happy": {"joy": 15}}
"""Offline reading of user feedback: words that move status values."""


def ends_the_day(text: str) -> bool:
    """Whether a remark asks to end the day ("go home", "end the day", "end here")."""
    return bool(_END_WORDS.search(text))


def feedback_offline(text: str, state: DayState) -> None:
    """Apply a remark's status words to the state (offline; the model reads it itself)."""
    words = text.lower()
    for word, changes in FEEDBACK_WORDS.items():
        if word in words:
            for key, delta in changes.items():
                state.status[key] = min(100.0, max(0.0, state.status.get(key, 50.0) + delta))


def clean_draft(data: dict[str, Any]) -> dict[str, Any]:
    """A model's activity draft with the fields the planner reads, of the kinds it reads:
    ``content`` a string (the draft's ``name`` or its type when missing), ``place`` a string
    when given, ``minutes`` a positive number (60 when missing or not a number)."""
    out: dict[str, Any] = {"type": data["type"]}
    content = data.get("content") or data.get("name") or data.get("activity") or data["type"]
    out["content"] = str(content)
    if data.get("place"):
        out["place"] = str(data["place"])
    try:
        minutes = float(data.get("minutes", 60))
    except (TypeError, ValueError):
        minutes = 60.0
    out["minutes"] = minutes if 0 < minutes <= 24 * 60 else 60.0
    for key in ("time", "reason"):
        if key in data:
            out[key] = str(data[key])
    return out


def clock(hours: float) -> str:
    """``9.5`` → ``"09:30"``."""
    minutes = round(hours * 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def status_text(status: dict[str, float]) -> str:
    """``"stress 50, joy 30, ..."``."""
    return ", ".join(f"{k} {v:.0f}" for k, v in status.items())


@dataclass
class DayState:
    """Where the person is, when, with what status and money."""

    node: int
    place: str
    hours: float
    budget: float
    status: dict[str, float]
    visited: list[str] = field(default_factory=list)


Asker = Callable[[dict[str, Any]], "str | None"]
"""Interactive feedback: where the day stands -> a remark (``""``: none), ``None``: stop."""


def draft_offline(state: DayState, todo: list[str]) -> dict[str, Any]:
    """The offline drafting rule: eat when hungry at meal times, else go to the next
    wish and spend an hour there, end in the evening or when all wishes are done."""
    meal_time = 11.0 <= state.hours <= 14.5 or 17.0 <= state.hours <= END_HOUR
    if state.status["hunger"] >= 50 and meal_time:
        return {"type": "eat", "minutes": 45, "content": "have a meal", "reason": "hungry"}
    if state.hours >= END_HOUR or not todo or state.status["energy"] < 15:
        return {"type": "end", "content": "go home", "reason": "day done"}
    if todo[0] != state.place:
        return {"type": "transport", "place": todo[0], "content": f"go to {todo[0]}"}
    return {"type": "normal", "place": todo[0], "minutes": 60, "content": f"visit {todo[0]}"}


def estimate_offline(activity: dict[str, Any]) -> tuple[dict[str, float], float]:
    """Status changes and cost of an activity by :data:`EFFECTS` and the costs."""
    kind = activity["type"]
    scale = activity.get("minutes", 0) / 10.0 if kind == "transport" else 1.0
    changes = {k: v * scale for k, v in EFFECTS.get(kind, {}).items()}
    cost = 0.0
    if kind == "eat":
        cost = MEAL_COST.get(activity.get("category", "restaurant"), 15.0)
    elif kind == "normal":
        cost = ACTIVITY_COST
    return changes, cost

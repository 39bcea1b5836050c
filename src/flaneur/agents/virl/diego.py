"""Diego, V-IRL's interactive concierge: an iterative day planner with a coordinator, an
estimator and a supervisor, budget and six status values, optional user feedback.

Each round drafts the next activity (``normal``, ``eat``, ``transport`` or ``end``). The
*coordinator* grounds it: a transport's duration comes from Directions (the model, if any,
picks the mode), a meal place from Aria within :data:`MEAL_RADIUS_M`. The *estimator* turns
the activity into status changes (``"+/- x"``) and a cost; the *supervisor* judges the last
three activities, status and budget and revises (ends the day when exhausted or broke; a
meal over budget becomes the cheapest option). In the *ungrounded* ablation the travel
times are guessed instead (by the model; offline a fixed :data:`NAIVE_GUESS_MIN` minutes,
the kind of allowance V-IRL's paper shows an LLM-only plan making), and the result reports
the mean absolute error of planned against graph travel time, in minutes.

Offline, the drafting, estimating and supervising are rules of our own design
(:func:`draft_offline`, :data:`EFFECTS`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flaneur.agents.virl.aria import Aria
from flaneur.agents.virl.common import Thinker, prompt_template
from flaneur.agents.virl.peng import places_in_sentence
from flaneur.models import extract_json
from flaneur.services.directions import SPEEDS_KMH, directions
from flaneur.services.geocode import geocode_one
from flaneur.world.city import City

DEFAULT_STATUS = {
    "stress": 50.0,
    "joy": 30.0,
    "sadness": 0.0,
    "hunger": 20.0,
    "energy": 80.0,
    "pain": 0.0,
}
DEFAULT_BUDGET = 120.0
MEAL_RADIUS_M = 1_000.0
NAIVE_GUESS_MIN = 15.0
MAX_ACTIVITIES = 16
END_HOUR = 20.0
EFFECTS: dict[str, dict[str, float]] = {
    "normal": {"joy": 10, "stress": -5, "energy": -10, "hunger": 10},
    "eat": {"hunger": -50, "joy": 5, "energy": 10},
    "transport": {"energy": -3, "hunger": 3},
}
"""Offline estimator: status change per activity (transport: per 10 minutes)."""
MEAL_COST = {"restaurant": 18.0, "cafe": 9.0, "fast_food": 10.0}
ACTIVITY_COST = 10.0
_SIGNED = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)\s*$")


FEEDBACK_WORDS: dict[str, dict[str, float]] = {
    "hungry": {"hunger": 40},
    "tired": {"energy": -30},
    "exhausted": {"energy": -60},
    "bored": {"joy": -15},
    "stressed": {"stress": 20},
    "happy": {"joy": 15},
}
"""Offline reading of user feedback: words that move status values (``"go home"`` or
``"end"`` end the day)."""


def feedback_offline(text: str, state: DayState) -> None:
    """Apply user feedback to the state offline (the model reads it itself online)."""
    words = text.lower()
    for word, changes in FEEDBACK_WORDS.items():
        if word in words:
            for key, delta in changes.items():
                state.status[key] = min(100.0, max(0.0, state.status[key] + delta))
    if "go home" in words or re.search(r"\b(end|stop)\b", words):
        state.hours = max(state.hours, END_HOUR)


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
    return f"{int(hours):02d}:{round((hours % 1) * 60):02d}"


@dataclass
class DayState:
    """Where the person is, when, with what status and money."""

    node: int
    place: str
    hours: float
    budget: float
    status: dict[str, float]
    visited: list[str] = field(default_factory=list)


class Diego:
    """The concierge.

    Parameters
    ----------
    city
        The city.
    thinker
        Language model wrapper (offline without a model).
    grounded
        Travel times from Directions (``True``) or guessed (the ablation).
    """

    def __init__(
        self,
        city: City,
        thinker: Thinker | None = None,
        *,
        grounded: bool = True,
        mode_default: str = "walking",
        max_rounds: int = MAX_ACTIVITIES,
    ) -> None:
        self.city = city
        self.thinker = thinker or Thinker()
        self.grounded = grounded
        self.max_rounds = max_rounds
        self.mode_default = mode_default
        self.aria = Aria(city, self.thinker, radius_m=MEAL_RADIUS_M)

    # ------------------------------------------------------------------ drafting
    def draft_offline(self, state: DayState, wishes: list[str]) -> dict[str, Any]:
        """The offline drafting rule: eat when hungry at meal times, else go to the next
        wish and spend an hour there, end in the evening or when all wishes are done."""
        meal_time = 11.0 <= state.hours <= 14.5 or 17.0 <= state.hours <= 20.0
        if state.status["hunger"] >= 50 and meal_time:
            return {
                "type": "eat",
                "minutes": 45,
                "content": "have a meal",
                "reason": "hungry at meal time",
            }
        todo = [w for w in wishes if w not in state.visited]
        if state.hours >= END_HOUR or not todo or state.status["energy"] < 15:
            return {"type": "end", "content": "go home", "reason": "day done"}
        if todo[0] != state.place:
            return {
                "type": "transport",
                "place": todo[0],
                "content": f"go to {todo[0]}",
                "reason": "next wish",
            }
        return {
            "type": "normal",
            "place": todo[0],
            "minutes": 60,
            "content": f"visit {todo[0]}",
            "reason": "a wish",
        }

    def draft(
        self, state: DayState, persona, wishes: list[str], history: list[dict], feedback: str
    ) -> dict[str, Any]:
        """The next activity (model, else the offline rule)."""
        reply = self.thinker.ask(
            prompt_template("diego_next").format(
                background=persona.background,
                intention=persona.intention,
                time=clock(state.hours),
                place=state.place,
                budget=round(state.budget, 2),
                status=", ".join(f"{k} {v:.0f}" for k, v in state.status.items()),
                history="\n".join(f"- {h['start']} {h['type']}: {h['content']}" for h in history)
                or "- none",
                feedback=f"The person says: {feedback}\n" if feedback else "",
            )
        )
        if reply is not None:
            data = extract_json(reply)
            if isinstance(data, dict) and data.get("type") in ("normal", "eat", "transport", "end"):
                return clean_draft(data)
            self.thinker.fell_back()
        return self.draft_offline(state, wishes)

    # ------------------------------------------------------------------ coordinator
    def _mode(self, origin: str, destination: str, metres: float) -> str:
        reply = self.thinker.ask(
            prompt_template("diego_mode").format(
                distance_m=round(metres), origin=origin, destination=destination
            )
        )
        if reply is not None:
            word = reply.strip().lower().split()[0].strip(".,") if reply.strip() else ""
            if word in SPEEDS_KMH:
                return word
            self.thinker.fell_back()
        return self.mode_default if metres <= 2_000 else "bicycling"

    def _guess(self, origin: str, destination: str, mode: str) -> float:
        reply = self.thinker.ask(
            prompt_template("diego_guess").format(
                origin=origin, destination=destination, city=self.city.name, mode=mode
            )
        )
        if reply is not None:
            match = re.search(r"\d+(?:\.\d+)?", reply)
            if match:
                return float(match.group())
            self.thinker.fell_back()
        return NAIVE_GUESS_MIN

    def travel(self, state: DayState, node: int, label: str) -> dict[str, Any]:
        """A grounded (or guessed) transport activity to ``node``."""
        route = directions(self.city, state.node, node)
        mode = self._mode(state.place, label, route.distance_m)
        graph_min = directions(self.city, state.node, node, mode=mode).duration_s / 60.0
        planned = graph_min if self.grounded else self._guess(state.place, label, mode)
        return {
            "type": "transport",
            "place": label,
            "node": node,
            "mode": mode,
            "distance_m": round(route.distance_m),
            "minutes": planned,
            "planned_min": round(planned, 1),
            "graph_min": round(graph_min, 1),
            "content": f"{mode} to {label}",
            "route_nodes": list(route.nodes),
        }

    # ------------------------------------------------------------------ estimator
    def estimate(self, activity: dict[str, Any], state: DayState) -> tuple[dict, float]:
        """Status changes and cost of an activity."""
        reply = self.thinker.ask(
            prompt_template("diego_estimate").format(
                activity=f"{activity['type']}: {activity.get('content', '')}",
                status=", ".join(f"{k} {v:.0f}" for k, v in state.status.items()),
            )
        )
        if reply is not None:
            data = extract_json(reply)
            if isinstance(data, dict):
                changes = {}
                for key, value in data.items():
                    match = _SIGNED.match(str(value))
                    if key in state.status and match:
                        changes[key] = float(match.group(1))
                cost = data.get("cost", 0)
                if isinstance(cost, int | float) and cost >= 0:
                    return changes, float(cost)
            self.thinker.fell_back()
        kind = activity["type"]
        scale = activity.get("minutes", 0) / 10.0 if kind == "transport" else 1.0
        changes = {k: v * scale for k, v in EFFECTS.get(kind, {}).items()}
        cost = 0.0
        if kind == "eat":
            cost = MEAL_COST.get(activity.get("category", "restaurant"), 15.0)
        elif kind == "normal":
            cost = ACTIVITY_COST
        return changes, cost

    # ------------------------------------------------------------------ supervisor
    def supervise(self, state: DayState, plan: list[dict]) -> str:
        """``"ok"``, ``"end"`` (exhausted or broke) or advice text from the model."""
        reply = self.thinker.ask(
            prompt_template("diego_supervise").format(
                budget=round(state.budget, 2),
                status=", ".join(f"{k} {v:.0f}" for k, v in state.status.items()),
                recent="\n".join(f"- {a['start']} {a['type']}: {a['content']}" for a in plan[-3:]),
            )
        )
        if reply is not None:
            data = extract_json(reply)
            if isinstance(data, dict) and isinstance(data.get("ok"), bool):
                return "ok" if data["ok"] else str(data.get("advice", "revise"))
            self.thinker.fell_back()
        if state.budget <= 0 or state.status["energy"] <= 5:
            return "end"
        return "ok"

    # ------------------------------------------------------------------ the day
    def plan_day(
        self,
        persona,
        start: int,
        start_label: str,
        feedback: list[str] | None = None,
        start_hour: float = 9.0,
        ask: Callable[[dict[str, Any]], str | None] | None = None,
    ) -> dict[str, Any]:
        """Plan a whole day; the plan and the travel-time error as a dict.

        Parameters
        ----------
        persona
            The :class:`~flaneur.services.persona.Persona`.
        start, start_label
            Start viewpoint and its name.
        feedback
            User remarks, one used before each round of planning (in order).
        start_hour
            When the day starts.
        ask
            Interactive feedback: called before each round once ``feedback`` is used up,
            with where the day stands (time, place, budget, status, the last activity); it
            returns the person's remark (``""``: none this round) or ``None`` to stop asking.

        Returns
        -------
        dict
            The plan, the remarks heard (``feedback_heard``) and the travel-time error.
        """
        status = {**DEFAULT_STATUS, **persona.status}
        budget = persona.budget if persona.budget is not None else DEFAULT_BUDGET
        state = DayState(start, start_label, start_hour, budget, status)
        wishes = [str(w) for w in persona.options.get("wishes", [])] or places_in_sentence(
            self.city, persona.intention
        )
        notes = list(feedback or [])
        plan: list[dict[str, Any]] = []
        advice = ""
        heard: list[str] = []
        for _ in range(self.max_rounds):
            if notes:
                said = notes.pop(0)
            elif ask is not None:
                last = plan[-1]["content"] if plan else ""
                reply = ask(
                    {
                        "time": clock(state.hours),
                        "place": state.place,
                        "budget": round(state.budget, 2),
                        "status": {k: round(v) for k, v in state.status.items()},
                        "last_activity": last,
                    }
                )
                if reply is None:
                    ask = None  # end of input: stop asking
                said = (reply or "").strip()
            else:
                said = ""
            if said:
                heard.append(said)
            if said and not self.thinker.online:
                feedback_offline(said, state)
            draft = self.draft(
                state, persona, wishes, plan, " ".join(x for x in (said, advice) if x)
            )
            kind = draft.get("type")
            if kind == "end":
                plan.append(
                    {
                        "type": "end",
                        "start": clock(state.hours),
                        "content": str(draft.get("content", "end of the day")),
                    }
                )
                break
            steps = self._ground(state, draft)
            for activity in steps:
                activity["start"] = clock(state.hours)
                changes, cost = self.estimate(activity, state)
                if cost > state.budget and activity["type"] == "eat":
                    activity["content"] += " (cheapest option: over budget)"
                    cost = min(MEAL_COST.values())
                state.hours += float(activity.get("minutes", 30)) / 60.0
                state.budget -= cost
                for key, delta in changes.items():
                    state.status[key] = min(100.0, max(0.0, state.status[key] + delta))
                if activity["type"] == "transport":
                    state.node, state.place = activity["node"], activity["place"]
                if activity["type"] == "normal" and activity.get("place"):
                    state.visited.append(activity["place"])
                activity.update(
                    end=clock(state.hours),
                    cost=round(cost, 2),
                    budget_left=round(state.budget, 2),
                    status={k: round(v) for k, v in state.status.items()},
                )
                plan.append(activity)
            verdict = self.supervise(state, plan)
            if verdict == "end":
                plan.append(
                    {
                        "type": "end",
                        "start": clock(state.hours),
                        "content": "the supervisor ends the day (budget or energy)",
                    }
                )
                break
            advice = "" if verdict == "ok" else verdict
        legs = [a for a in plan if a["type"] == "transport"]
        mae = sum(abs(a["planned_min"] - a["graph_min"]) for a in legs) / len(legs) if legs else 0.0
        return {
            "grounded": self.grounded,
            "wishes": wishes,
            "feedback_heard": heard,
            "plan": plan,
            "travel_legs": len(legs),
            "travel_time_mae_min": round(mae, 2),
            "budget_left": round(state.budget, 2),
        }

    def _ground(self, state: DayState, draft: dict[str, Any]) -> list[dict[str, Any]]:
        """The coordinator: turn a draft into grounded activities."""
        kind = draft.get("type")
        if kind == "eat":
            found = self.aria.recommend(
                self.city.graph.xy[state.node], "eat a meal at a restaurant or cafe"
            )
            best = next(iter(found["recommendations"]), None)
            if best is None:
                return [
                    {
                        "type": "eat",
                        "minutes": 45,
                        "content": "eat something brought along",
                        "category": "cafe",
                    }
                ]
            node = int(
                self.city.graph.nearest_node(
                    self.city.places.lat[best["row"]], self.city.places.lng[best["row"]]
                )
            )
            out = []
            if node != state.node:
                out.append(self.travel(state, node, best["name"]))
            category = next((c for c in best["categories"] if c in MEAL_COST), "restaurant")
            out.append(
                {
                    "type": "eat",
                    "place": best["name"],
                    "minutes": float(draft.get("minutes", 45)),
                    "category": category,
                    "content": f"eat at {best['name']}",
                }
            )
            return out
        if kind == "transport" or (
            kind == "normal" and draft.get("place") and draft["place"] != state.place
        ):
            try:
                target = geocode_one(self.city, str(draft.get("place", "")))
            except LookupError:
                return [
                    {
                        "type": "normal",
                        "minutes": 30,
                        "content": "look around",
                        "place": state.place,
                    }
                ]
            out = [self.travel(state, target.node, target.name)]
            if kind == "normal":
                out.append(
                    {**draft, "place": target.name, "minutes": float(draft.get("minutes", 60))}
                )
            return out
        return [
            {
                **draft,
                "minutes": float(draft.get("minutes", 60)),
                "place": draft.get("place", state.place),
            }
        ]


def travel_time_svg(grounded: dict, ungrounded: dict) -> str:
    """A bar figure: planned vs graph minutes per travel leg, for both plans (escaped)."""
    from html import escape

    rows = [("grounded", a) for a in grounded["plan"] if a["type"] == "transport"]
    rows += [("ungrounded", a) for a in ungrounded["plan"] if a["type"] == "transport"]
    top = max([1.0] + [max(a["planned_min"], a["graph_min"]) for _, a in rows])
    width, label_w, bar_h = 720, 260, 10
    height = 40 + 2 * bar_h * len(rows) + 8 * len(rows) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
        '<text x="4" y="16" font-size="13" font-weight="bold">Travel time per leg: '
        "planned (blue) vs street graph (orange), minutes</text>",
        f'<text x="4" y="32" font-size="11">MAE grounded {grounded["travel_time_mae_min"]}'
        f" min, ungrounded {ungrounded['travel_time_mae_min']} min</text>",
    ]
    y = 44
    scale = (width - label_w - 60) / top
    for which, a in rows:
        parts.append(
            f'<text x="4" y="{y + bar_h + 3}" font-size="10">'
            f"{escape(which)}: {escape(str(a['place']))[:40]}</text>"
        )
        for k, (value, colour) in enumerate(
            ((a["planned_min"], "#2b6cb0"), (a["graph_min"], "#dd6b20"))
        ):
            parts.append(
                f'<rect x="{label_w}" y="{y + k * bar_h}" width="{value * scale:.1f}" '
                f'height="{bar_h - 1}" fill="{colour}"/><text x="'
                f'{label_w + value * scale + 3:.1f}" y="{y + k * bar_h + 8}" '
                f'font-size="8">{value:.1f}</text>'
            )
        y += 2 * bar_h + 8
    parts.append("</svg>")
    return "".join(parts)


__all__ = ["Diego", "travel_time_svg"]

"""Diego's day planner: rounds of drafting, grounding, estimating and supervising.

Each round drafts the next activity (``normal``, ``eat``, ``transport`` or ``end``). The
*coordinator* grounds it: a transport's duration comes from Directions (the model, if any,
picks the mode), a meal place from Aria within :data:`MEAL_RADIUS_M`. The *estimator* turns
the activity into status changes (``"+/- x"``) and a cost; the *supervisor* judges the last
three activities, status and budget and revises (ends the day when exhausted or broke). An
activity the budget cannot pay becomes the cheapest meal, or a free option. Ungrounded
(V-IRL's ablation), travel times are guessed instead (by the model; offline a fixed
:data:`NAIVE_GUESS_MIN` minutes, the kind of allowance V-IRL's paper shows an LLM-only plan
making), and the plan reports the mean absolute error of planned against graph travel time.

A remark of the person is read by the model (offline by :mod:`flaneur.agents.virl.day_rules`,
which also drafts and estimates offline). Wishes the plan does not visit are listed with the
reason.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from flaneur.agents.virl.aria import Recommender
from flaneur.agents.virl.common import node_ids
from flaneur.agents.virl.day_rules import (
    DEFAULT_BUDGET,
    DEFAULT_STATUS,
    LOOK_AROUND,
    MEAL_COST,
    START_HOUR,
    Asker,
    DayState,
    clean_draft,
    clock,
    draft_offline,
    ends_the_day,
    estimate_offline,
    feedback_offline,
    status_text,
)
from flaneur.agents.virl.peng import places_in_sentence
from flaneur.agents.virl.thinking import Thinker
from flaneur.models import extract_json
from flaneur.services.directions import SPEEDS_KMH, directions
from flaneur.services.errors import CoordinateError, UnknownPlaceError
from flaneur.services.geocode import geocode_one
from flaneur.services.persona import Persona
from flaneur.world.city import City

MEAL_RADIUS_M = 1_000.0
NAIVE_GUESS_MIN = 15.0
MAX_ACTIVITIES = 16
_SIGNED = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)\s*$")


class DayPlanner:
    """Diego's planning of one day in ``city`` (one scenario; a new one per plan): the run's
    model through the ``diego`` prompts (``thinker``; offline without a model; meals are found
    through Aria's prompts, recorded in the same list), travel times from Directions or
    guessed (``grounded=False``: the ablation), at most ``max_rounds`` planning rounds.

    Under ``protocol="paper"`` a remark only goes to the drafting of the next activity, as
    V-IRL's code hands it to the revision of the current one, and the day ends only when a
    drafted activity is ``end``; under ``flaneur`` a remark such as "go home" ends it at once
    (:func:`~flaneur.agents.virl.day_rules.ends_the_day`)."""

    def __init__(
        self,
        city: City,
        thinker: Thinker,
        *,
        grounded: bool = True,
        max_rounds: int = MAX_ACTIVITIES,
        protocol: str = "flaneur",
    ) -> None:
        self.city = city
        self.thinker = thinker
        self.grounded = grounded
        self.max_rounds = max_rounds
        self.paper = protocol == "paper"
        meals = Thinker(thinker.model, "aria", records=thinker.records)
        self.aria = Recommender(city, meals, radius_m=MEAL_RADIUS_M)

    # ------------------------------------------------------------------ drafting
    async def draft(
        self, state: DayState, persona: Persona, todo: list[str], plan: list[dict], said: str
    ) -> dict[str, Any]:
        """The next activity (model, else the offline rule)."""
        history = "\n".join(f"- {h['start']} {h['type']}: {h['content']}" for h in plan)
        reply = await self.thinker.ask(
            "next",
            background=persona.background,
            intention=persona.intention,
            time=clock(state.hours),
            place=state.place,
            budget=round(state.budget, 2),
            status=status_text(state.status),
            history=history or "- none",
            feedback=f"The person says: {said}\n" if said else "",
        )
        if reply is not None:
            data = extract_json(reply)
            if isinstance(data, dict) and data.get("type") in ("normal", "eat", "transport", "end"):
                return clean_draft(data)
            self.thinker.fell_back()
        return draft_offline(state, todo)

    # ------------------------------------------------------------------ coordinator
    async def _mode(self, origin: str, destination: str, metres: float) -> str:
        reply = await self.thinker.ask(
            "mode", distance_m=round(metres), origin=origin, destination=destination
        )
        if reply is not None:
            word = reply.strip().lower().split()[0].strip(".,") if reply.strip() else ""
            if word in SPEEDS_KMH:
                return word
            self.thinker.fell_back()
        return "walking" if metres <= 2_000 else "bicycling"

    async def _guess(self, origin: str, destination: str, mode: str) -> float:
        reply = await self.thinker.ask(
            "guess", origin=origin, destination=destination, city=self.city.name, mode=mode
        )
        if reply is not None:
            match = re.search(r"\d+(?:\.\d+)?", reply)
            if match and 0 < float(match.group()) <= 24 * 60:
                return float(match.group())
            self.thinker.fell_back()
        return NAIVE_GUESS_MIN

    async def travel(self, state: DayState, node: int, label: str) -> dict[str, Any]:
        """A grounded (or guessed) transport activity to ``node``."""
        route = directions(self.city, state.node, node)
        mode = await self._mode(state.place, label, route.distance_m)
        graph_min = directions(self.city, state.node, node, mode=mode).duration_s / 60.0
        planned = graph_min if self.grounded else await self._guess(state.place, label, mode)
        return {
            "type": "transport",
            "place": label,
            "node": node,
            "from_node_id": node_ids(self.city, [state.node])[0],
            "node_id": node_ids(self.city, [node])[0],
            "mode": mode,
            "distance_m": round(route.distance_m),
            "minutes": planned,
            "planned_min": round(planned, 1),
            "graph_min": round(graph_min, 1),
            "content": f"{mode} to {label}",
            "route_node_ids": node_ids(self.city, list(route.nodes)),
        }

    # ------------------------------------------------------------------ estimator
    async def estimate(self, activity: dict[str, Any], state: DayState) -> tuple[dict, float]:
        """Status changes and cost of an activity."""
        reply = await self.thinker.ask(
            "estimate",
            activity=f"{activity['type']}: {activity.get('content', '')}",
            status=status_text(state.status),
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
                if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
                    return changes, float(cost)
            self.thinker.fell_back()
        return estimate_offline(activity)

    # ------------------------------------------------------------------ supervisor
    async def supervise(self, state: DayState, plan: list[dict]) -> str:
        """``"ok"``, ``"end"`` (exhausted or broke) or advice text from the model."""
        reply = await self.thinker.ask(
            "supervise",
            budget=round(state.budget, 2),
            status=status_text(state.status),
            recent="\n".join(f"- {a['start']} {a['type']}: {a['content']}" for a in plan[-3:]),
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
    async def plan_day(
        self,
        persona: Persona,
        start: int,
        start_label: str,
        wishes: list[str],
        feedback: list[str] | None = None,
        ask: Asker | None = None,
    ) -> dict[str, Any]:
        """Plan the ``persona``'s day (status values, budget) from :data:`START_HOUR` at
        viewpoint ``start`` named ``start_label``, visiting ``wishes`` (place names; empty:
        those the intention names), hearing the remarks of ``feedback`` one before each round
        and then those of ``ask`` (called in a thread with where the day stands, see
        :data:`Asker`). Returns the plan, the remarks heard (``feedback_heard``), the wishes
        not visited with the reason (``unvisited``) and the travel-time error."""
        status = {**DEFAULT_STATUS, **persona.status}
        budget = persona.budget if persona.budget is not None else DEFAULT_BUDGET
        state = DayState(start, start_label, START_HOUR, budget, status)
        wishes = wishes or places_in_sentence(self.city, persona.intention)
        targets, reasons = self._wish_places(wishes)
        notes, heard = list(feedback or []), []
        plan: list[dict[str, Any]] = []
        advice, ended = "", ""
        for _ in range(self.max_rounds):
            said, ask = await self._remark(notes, ask, state, plan)
            if said:
                heard.append(said)
                if not self.paper and ends_the_day(said):
                    ended = f"the person asked to end the day ({said!r})"
                    break
                if not self.thinker.online:
                    feedback_offline(said, state)
            todo = [t for t in targets.values() if t not in state.visited]
            draft = await self.draft(
                state, persona, todo, plan, " ".join(filter(None, (said, advice)))
            )
            if draft.get("type") == "end":
                ended = str(draft.get("content") or "end of the day")
                break
            for activity in await self._ground(state, draft):
                plan.append(await self._carry_out(state, activity))
            verdict = await self.supervise(state, plan)
            if verdict == "end":
                ended = "the supervisor ends the day (budget or energy)"
                break
            advice = "" if verdict == "ok" else verdict
        if ended:
            plan.append({"type": "end", "start": clock(state.hours), "content": ended})
        legs = [a for a in plan if a["type"] == "transport"]
        mae = sum(abs(a["planned_min"] - a["graph_min"]) for a in legs) / len(legs) if legs else 0.0
        why = ended or f"the {self.max_rounds} planning rounds ran out"
        return {
            "grounded": self.grounded,
            "wishes": wishes,
            "feedback_heard": heard,
            "plan": plan,
            "unvisited": self._unvisited(wishes, targets, reasons, state, why),
            "travel_legs": len(legs),
            "travel_time_mae_min": round(mae, 2),
            "budget_left": round(state.budget, 2),
        }

    @staticmethod
    def _unvisited(
        wishes: list[str],
        targets: dict[str, str],
        reasons: dict[str, str],
        state: DayState,
        why: str,
    ) -> list[dict[str, str]]:
        """The wishes the plan does not visit, each with the reason."""
        out = []
        for wish in wishes:
            if wish in reasons:
                out.append({"wish": wish, "reason": reasons[wish]})
            elif targets[wish] not in state.visited:
                out.append({"wish": wish, "reason": f"not reached: {why}"})
        return out

    def _wish_places(self, wishes: list[str]) -> tuple[dict[str, str], dict[str, str]]:
        """``({wish: the city's name for it}, {wish: why it cannot be visited})``."""
        targets, reasons = {}, {}
        for wish in wishes:
            try:
                targets[wish] = geocode_one(self.city, wish).name
            except (UnknownPlaceError, CoordinateError):  # a name of numbers is no place
                reasons[wish] = f"no place of {self.city.name} matches it"
        return targets, reasons

    async def _remark(
        self, notes: list[str], ask: Asker | None, state: DayState, plan: list[dict]
    ) -> tuple[str, Asker | None]:
        """This round's remark (a given one, else asked), and the asker for later rounds."""
        if notes:
            return notes.pop(0), ask
        if ask is None:
            return "", None
        day = {
            "time": clock(state.hours),
            "place": state.place,
            "budget": round(state.budget, 2),
            "status": {k: round(v) for k, v in state.status.items()},
            "last_activity": plan[-1]["content"] if plan else "",
        }
        reply = await asyncio.to_thread(ask, day)
        return (reply or "").strip(), None if reply is None else ask  # end of input: no more

    async def _carry_out(self, state: DayState, activity: dict[str, Any]) -> dict[str, Any]:
        """Estimate an activity, pay for it and move the clock, status and place."""
        activity["start"] = clock(state.hours)
        changes, cost = await self.estimate(activity, state)
        if cost > state.budget:
            cheapest = min(MEAL_COST.values())
            if activity["type"] == "eat" and cheapest <= state.budget:
                activity["content"] += " (cheapest option: over budget)"
                cost = cheapest
            else:
                activity["content"] += " (a free option: over budget)"
                cost = 0.0
        state.hours += float(activity.get("minutes", 30)) / 60.0
        state.budget -= cost
        for key, delta in changes.items():
            state.status[key] = min(100.0, max(0.0, state.status[key] + delta))
        if activity["type"] == "transport":
            state.node, state.place = activity.pop("node"), activity["place"]
        if activity["type"] == "normal" and activity.get("place"):
            state.visited.append(activity["place"])
        activity.update(
            end=clock(state.hours),
            cost=round(cost, 2),
            budget_left=round(state.budget, 2),
            status={k: round(v) for k, v in state.status.items()},
        )
        return activity

    async def _meal(self, state: DayState, draft: dict[str, Any]) -> list[dict[str, Any]]:
        found = await self.aria.recommend(
            self.city.graph.xy[state.node], "eat a meal at a restaurant or cafe"
        )
        best = next(iter(found["recommendations"]), None)
        if best is None:
            return [
                {"type": "eat", "minutes": 45, "content": "eat a packed lunch", "category": "cafe"}
            ]
        places = self.city.places
        node = int(self.city.graph.nearest_node(places.lat[best["row"]], places.lng[best["row"]]))
        out = [await self.travel(state, node, best["name"])] if node != state.node else []
        category = next((c for c in best["categories"] if c in MEAL_COST), "restaurant")
        meal = {"type": "eat", "place": best["name"], "category": category}
        minutes = float(draft.get("minutes", 45))
        return [*out, {**meal, "minutes": minutes, "content": f"eat at {best['name']}"}]

    async def _ground(self, state: DayState, draft: dict[str, Any]) -> list[dict[str, Any]]:
        """The coordinator: turn a draft into grounded activities."""
        kind, place = draft.get("type"), str(draft.get("place") or "")
        minutes = float(draft.get("minutes", 60))
        if kind == "eat":
            return await self._meal(state, draft)
        if kind == "transport" or (kind == "normal" and place and place != state.place):
            try:
                target = geocode_one(self.city, place)
            except (UnknownPlaceError, CoordinateError):  # a name of numbers is no place
                return [{**LOOK_AROUND, "place": state.place}]
            out = []
            if target.node != state.node or target.name != state.place:
                out.append(await self.travel(state, target.node, target.name))
            if kind == "normal":
                out.append({**draft, "place": target.name, "minutes": minutes})
            return out
        return [{**draft, "minutes": minutes, "place": place or state.place}]

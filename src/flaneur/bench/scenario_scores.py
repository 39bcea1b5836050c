"""Scorers of V-IRL's planner scenarios: ``score_<agent>(item, result, city) -> metrics``.

Each is a pure function of the scenario item, the planner's result and the city, and
recomputes what it judges from the city (distances, amenities, travel times) rather than
taking the planner's figures; :mod:`flaneur.evaluate.kinds.scenarios` calls them through
:mod:`flaneur.bench.scenarios`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from flaneur.agents.virl.day_rules import DEFAULT_BUDGET
from flaneur.agents.virl.diego import wish_list
from flaneur.agents.virl.peng import REACHED_M
from flaneur.agents.virl.vivek import AMENITY_RADIUS_M, amenities_near
from flaneur.services.directions import directions
from flaneur.services.errors import CoordinateError, UnknownPlaceError
from flaneur.services.geocode import geocode_one, normalize
from flaneur.services.optimize import brute_force_order, distance_matrix, tour_length
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City

BRUTE_FORCE_STOPS = 7
"""Peng's order is checked against every order up to this many places."""


def _place_row(city: City, rec: dict[str, Any]) -> int | None:
    """The row of a recommended place (by its id; its row when the id is missing)."""
    places = city.places
    row = rec.get("row")
    if (
        isinstance(row, int)
        and 0 <= row < len(places)
        and rec.get("place_id") in (None, str(places.ids[row]))
    ):
        return row
    found = np.flatnonzero(places.ids == str(rec.get("place_id")))
    return int(found[0]) if found.size else None


def score_aria(item: TaskItem, result: dict[str, Any], city: City) -> dict[str, Any]:
    """``top1_fits``: the best recommendation is of a type meeting the wish (one of the
    scenario's ``target_types``); ``first_fit_rank``: the rank (1 = best) of the first
    recommendation that does (``None``: none does); ``fit_in_top3``. A scenario without
    target types is not scored (``None``)."""
    recs = list(result.get("recommendations") or [])
    targets = set(item.get("target_types") or ())
    if not targets:
        unscored = dict.fromkeys(("top1_fits", "first_fit_rank", "fit_in_top3"))
        return {**unscored, "recommendations": len(recs)}
    rank = None
    for k, rec in enumerate(recs, start=1):
        row = _place_row(city, rec)
        if row is not None and targets & set(city.places.categories[row]):
            rank = k
            break
    return {
        "top1_fits": rank == 1,
        "first_fit_rank": rank,
        "fit_in_top3": rank is not None and rank <= 3,
        "recommendations": len(recs),
    }


def score_vivek(item: TaskItem, result: dict[str, Any], city: City) -> dict[str, Any]:
    """``top1_fits``: the top listing is one of the scenario's (when it lists them), within
    budget, and has a place of every wanted amenity type within 200 m (counted from the
    city, not from the agent's figures); also each part, and the share of wanted amenity
    types met."""
    ranked = list(result.get("ranked") or [])
    if not ranked:
        return {"top1_fits": False, "within_budget": None, "amenities_met": None, "ranked": 0}
    top, budget = ranked[0], item.get("budget")
    offered = item.get("listings")
    known = not isinstance(offered, list) or any(
        (x.get("formattedAddress"), x.get("price")) == (top["formattedAddress"], top["price"])
        for x in offered
    )
    within = budget is None or float(top["price"]) <= float(budget)
    wanted = list(item.get("amenities") or ())
    near = amenities_near(city, top["latitude"], top["longitude"], wanted, AMENITY_RADIUS_M)
    met = [t for t in wanted if near[t]["count"]]
    return {
        "top1_fits": bool(known and within and len(met) == len(wanted)),
        "within_budget": within,
        "amenities_met": len(met) == len(wanted),
        "amenities_met_frac": len(met) / len(wanted) if wanted else None,
        "ranked": len(ranked),
    }


def score_peng(item: TaskItem, result: dict[str, Any], city: City) -> dict[str, Any]:
    """``optimal``: the chosen order is as short as the best of every order (with at most
    :data:`BRUTE_FORCE_STOPS` places; ``None`` above); ``saving_pct``: how much shorter than
    the order given; ``last_stop_reached``: the greedy walk ends within 5 m of the last stop;
    ``places_found``: the share of the scenario's ``places`` among the stops."""
    graph = city.graph
    stops = [graph.index(i) for i in result["stops"]]
    order = [int(i) for i in result["order"]]
    matrix = distance_matrix(graph, stops)
    valid = sorted(order) == list(range(len(stops))) and order[:1] == [0]
    chosen = tour_length(matrix, order) if valid else math.inf
    given = tour_length(matrix, range(len(stops)))
    optimal = None
    if len(stops) - 1 <= BRUTE_FORCE_STOPS:
        optimal = chosen <= brute_force_order(matrix)[1] + 0.5  # half a metre of rounding
    end, last = graph.index(result["walk"]["node_ids"][-1]), stops[order[-1]] if valid else -1
    reached = valid and float(np.hypot(*(graph.xy[end] - graph.xy[last]))) <= REACHED_M
    wanted = [normalize(p) for p in item.get("places") or ()]
    found = {normalize(p["name"]) for p in result.get("places", [])}
    return {
        "optimal": optimal,
        "saving_pct": round(100.0 * (given - chosen) / given, 2) if valid and given > 0 else 0.0,
        "last_stop_reached": bool(reached),
        "places_found": sum(w in found for w in wanted) / len(wanted) if wanted else None,
        "stops": len(stops) - 1,
    }


def _travel_mae(city: City, plan: dict[str, Any] | None) -> float | None:
    """Mean absolute error (minutes) of a plan's travel times against the street graph's,
    recomputed here for every leg."""
    if not plan:
        return None
    errors = []
    for leg in (a for a in plan.get("plan", []) if a.get("type") == "transport"):
        origin, target = city.graph.index(leg["from_node_id"]), city.graph.index(leg["node_id"])
        graph_min = directions(city, origin, target, mode=leg["mode"]).duration_s / 60.0
        errors.append(abs(float(leg["minutes"]) - graph_min))
    return round(sum(errors) / len(errors), 2) if errors else 0.0


def score_diego(item: TaskItem, result: dict[str, Any], city: City) -> dict[str, Any]:
    """``feasible``: the grounded plan spends no more than the budget, ends the day (its
    last activity is the end, before midnight), and visits every wish or says why not;
    ``travel_time_mae_min`` of the grounded plan and of the ungrounded one."""
    plan = result.get("grounded_plan") or {}
    acts = list(plan.get("plan") or [])
    budget = item.get("budget")
    spent = sum(float(a.get("cost", 0.0)) for a in acts)
    within = spent <= (DEFAULT_BUDGET if budget is None else float(budget)) + 1e-6
    ends = bool(acts) and acts[-1].get("type") == "end" and acts[-1].get("start", "") <= "24:00"
    wishes = wish_list(item.get("wishes")) or list(plan.get("wishes") or [])
    seen = {normalize(str(a.get("place", ""))) for a in acts if a.get("type") == "normal"}
    said = {u.get("wish") for u in plan.get("unvisited", []) if u.get("reason")}
    visited = [w for w in wishes if _canonical(city, w) in seen]
    return {
        "feasible": within and ends and all(w in visited or w in said for w in wishes),
        "within_budget": within,
        "ends_the_day": ends,
        "wishes_visited": len(visited) / len(wishes) if wishes else None,
        "travel_time_mae_min": _travel_mae(city, plan),
        "travel_time_mae_ungrounded_min": _travel_mae(city, result.get("ungrounded_plan")),
    }


def _canonical(city: City, wish: str) -> str:
    try:
        return normalize(geocode_one(city, wish).name)
    except (UnknownPlaceError, CoordinateError):  # a name of numbers is no place
        return normalize(wish)

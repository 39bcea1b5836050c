"""Run one V-IRL agent from a persona/config file: the result JSON and an HTML map in an
output folder (``flaneur virl <agent> CONFIG [KEY=VALUE ...] -o DIR``).

Options read from the config file besides the persona fields:

``local``
    ``question`` (``"How do I get to Kiasma?"``).
``ling``
    ``question``, ``heading`` (start heading, default 0), ``step_limit`` (30),
    ``max_asks`` (3).
``peng``
    ``sentence`` naming the places (default: the intention), ``mode`` (walking).
``aria``
    ``radius_m`` (500), ``keep`` (15).
``vivek``
    ``listings`` (a RentCast JSON/CSV file, relative to the config file) or
    ``synthetic_listings`` (how many to make from OSM buildings, default 30), ``top`` (5).
``diego``
    ``wishes`` (place names), ``feedback`` (a text file of user remarks, one a line, or
    ``"-"``: asked between rounds on stdin, also the default when stdin is a terminal),
    ``ablation`` (also plan ungrounded and compare, default true), ``max_rounds``
    (planning rounds at most, default 16).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from flaneur.agents.virl.common import Thinker, resolve_point
from flaneur.errors import DataError, FlaneurError
from flaneur.report.virl_maps import add_marker, add_path, base_map, write_outputs
from flaneur.services.persona import Persona
from flaneur.world.city import City

AGENTS = ("local", "ling", "peng", "aria", "vivek", "diego", "robot", "planner")


def _option(persona: Persona, key: str, default: Any = None, *, required: bool = False) -> Any:
    value = persona.options.get(key, default)
    if required and (value is None or value == ""):
        raise DataError(f"field {key!r} is required for this agent", path=persona.source)
    return value


def run_local(city: City, persona: Persona, thinker: Thinker):
    """Local alone: the instruction for ``question`` from the persona's start."""
    from flaneur.agents.virl.local import Local

    start, label = resolve_point(city, persona.start)
    question = _option(persona, "question", required=True)
    answer = Local(city, thinker).answer(question, start)
    fmap = base_map(city, list(answer.route.nodes))
    add_path(fmap, city, list(answer.route.nodes), "#2b6cb0", "route")
    for m in answer.milestones:
        n = m["node"]
        add_marker(
            fmap,
            city.graph.lat[n],
            city.graph.lng[n],
            f"milestone {m['index']}",
            "orange",
            popup=str(m),
        )
    add_marker(fmap, answer.destination.lat, answer.destination.lng, answer.destination.name, "red")
    return {"start": label, **answer.to_dict(city)}, fmap


def run_ling(city: City, persona: Persona, thinker: Thinker):
    """Ling follows Local's instruction, asking again on failure."""
    from flaneur.agents.virl.ling import Ling
    from flaneur.agents.virl.local import Local

    start, label = resolve_point(city, persona.start)
    question = _option(persona, "question", required=True)
    ling = Ling(
        city,
        thinker,
        step_limit=int(_option(persona, "step_limit", 30)),
        max_asks=int(_option(persona, "max_asks", 3)),
    )
    out = ling.travel(
        Local(city, thinker), question, start, float(_option(persona, "heading", 0.0))
    )
    attempts = out.pop("attempts")
    nodes = [n for a in attempts for n in a.nodes]
    fmap = base_map(city, nodes + [n for a in attempts for n in a.direction.route.nodes])
    colours = ("#2f855a", "#6b46c1", "#c53030", "#b7791f")
    for k, a in enumerate(attempts):
        add_path(
            fmap,
            city,
            list(a.direction.route.nodes),
            "#2b6cb0",
            f"Local's route {k + 1}",
            dash="6,4",
        )
        add_path(fmap, city, a.nodes, colours[k % len(colours)], f"Ling's walk {k + 1}")
    goal = attempts[0].direction.destination
    add_marker(fmap, goal.lat, goal.lng, goal.name, "red")
    add_marker(fmap, city.graph.lat[start], city.graph.lng[start], f"start: {label}", "green")
    return {
        "start": label,
        "question": question,
        **out,
        "attempts": [a.to_dict(city) for a in attempts],
    }, fmap


def run_peng(city: City, persona: Persona, thinker: Thinker):
    """Peng: the places of a sentence in their best order, walked."""
    from flaneur.agents.virl.peng import Peng

    start, label = resolve_point(city, persona.start)
    sentence = _option(persona, "sentence", persona.intention)
    result = Peng(city, thinker).run(
        start, label, sentence, persona.background, mode=_option(persona, "mode", "walking")
    )
    given = result.pop("_given_nodes")
    fmap = base_map(city, given)
    add_path(fmap, city, given, "#999999", "given order", dash="4,6")
    add_path(fmap, city, result["route"]["nodes"], "#2b6cb0", "optimized order")
    add_path(fmap, city, result["walk"]["nodes"], "#2f855a", "greedy-bearing walk", dash="2,4")
    for k, name in enumerate(result["optimized_order"][1:], start=1):
        place = next(p for p in result["places"] if p["name"] == name)
        add_marker(fmap, place["lat"], place["lng"], f"{k}. {name}", "red")
    add_marker(fmap, city.graph.lat[start], city.graph.lng[start], f"start: {label}", "green")
    return {"start": label, "sentence": sentence, **result}, fmap


def run_aria(city: City, persona: Persona, thinker: Thinker):
    """Aria: places for the intention around the start, best first."""
    from flaneur.agents.virl.aria import Aria

    start, label = resolve_point(city, persona.start)
    aria = Aria(
        city,
        thinker,
        radius_m=float(_option(persona, "radius_m", 500.0)),
        keep=int(_option(persona, "keep", 15)),
    )
    result = aria.recommend(city.graph.xy[start], persona.intention, persona.background)
    fmap = base_map(city, [start])
    add_marker(fmap, city.graph.lat[start], city.graph.lng[start], f"start: {label}", "green")
    for k, r in enumerate(result["recommendations"], start=1):
        row = r["row"]
        add_marker(
            fmap,
            city.places.lat[row],
            city.places.lng[row],
            f"{k}. {r['name']} ({r['rating']})",
            "red" if k == 1 else "blue",
            popup=f"{r['overview']} {r['explanation']}",
        )
    return {"start": label, "intention": persona.intention, **result}, fmap


def run_vivek(city: City, persona: Persona, thinker: Thinker):
    """Vivek: listings within budget ranked by the amenities the person cares about."""
    from flaneur.agents.virl.listings import load_listings, synthetic_listings
    from flaneur.agents.virl.vivek import Vivek

    path = _option(persona, "listings")
    if path:
        file = Path(path)
        if not file.is_absolute() and persona.source is not None:
            file = persona.source.parent / file
        listings, source = load_listings(file, city), str(file)
    else:
        count = int(_option(persona, "synthetic_listings", 30))
        listings = synthetic_listings(city, count, seed=int(_option(persona, "seed", 0)))
        source = "synthetic (made from OpenStreetMap building footprints; not real listings)"
    result = Vivek(city, thinker).recommend(
        listings,
        persona.background,
        persona.intention,
        persona.budget,
        top=int(_option(persona, "top", 5)),
    )
    fmap = base_map(
        city, [int(city.graph.nearest_node(x["latitude"], x["longitude"])) for x in listings]
    )
    for k, x in enumerate(result["ranked"], start=1):
        add_marker(
            fmap,
            x["latitude"],
            x["longitude"],
            f"{k}. {x['formattedAddress']} ({x['price']:.0f}, rating {x['rating']})",
            "red" if k == 1 else "blue",
            popup=str(x["explanation"]),
        )
    return {"listings_source": source, **result}, fmap


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def ask_on_terminal(day: dict[str, Any]) -> str | None:
    """Diego's interactive feedback: show where the day stands on stderr, read one line
    from stdin (``None`` at the end of input)."""
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


def run_diego(city: City, persona: Persona, thinker: Thinker):
    """Diego: the day plan, grounded, and (by default) the ungrounded ablation."""
    from flaneur.agents.virl.diego import MAX_ACTIVITIES, Diego

    start, label = resolve_point(city, persona.start)
    feedback_opt = _option(persona, "feedback")
    feedback: list[str] = []
    ask = None
    if feedback_opt == "-" or (feedback_opt is None and _stdin_is_tty()):
        ask = ask_on_terminal  # one remark per round, read from stdin as the day unfolds
    elif feedback_opt:
        file = Path(feedback_opt)
        if not file.is_absolute() and persona.source is not None:
            file = persona.source.parent / file
        if not file.is_file():
            raise DataError("feedback file not found", path=file)
        feedback = [x.strip() for x in file.read_text(encoding="utf-8").splitlines() if x.strip()]
    rounds = int(_option(persona, "max_rounds", MAX_ACTIVITIES))
    grounded = Diego(city, thinker, max_rounds=rounds).plan_day(
        persona, start, label, list(feedback), ask=ask
    )
    feedback = feedback or list(grounded["feedback_heard"])  # the ablation hears the same
    result: dict[str, Any] = {"start": label, "grounded_plan": grounded}
    extra: dict[str, str] = {}
    if bool(_option(persona, "ablation", True)):
        from flaneur.agents.virl.diego import travel_time_svg

        ungrounded = Diego(city, thinker, grounded=False, max_rounds=rounds).plan_day(
            persona, start, label, list(feedback)
        )
        result["ungrounded_plan"] = ungrounded
        result["travel_time_mae_min"] = {
            "grounded": grounded["travel_time_mae_min"],
            "ungrounded": ungrounded["travel_time_mae_min"],
        }
        extra["travel_times.svg"] = travel_time_svg(grounded, ungrounded)
    nodes = [n for a in grounded["plan"] for n in a.get("route_nodes", [])]
    fmap = base_map(city, nodes or [start])
    for a in grounded["plan"]:
        if a["type"] == "transport":
            add_path(fmap, city, a["route_nodes"], "#2b6cb0", f"{a['start']} {a['content']}")
            add_marker(
                fmap,
                city.graph.lat[a["node"]],
                city.graph.lng[a["node"]],
                f"{a['end']} {a['place']}",
                "red",
            )
    return result, fmap, extra


RUNNERS = {
    "local": run_local,
    "ling": run_ling,
    "peng": run_peng,
    "aria": run_aria,
    "vivek": run_vivek,
    "diego": run_diego,
}
VISION_AGENTS = ("robot", "planner")  # flaneur.report.virl_vision_run; they also write into out


def run_agent(
    name: str, city: City, persona: Persona, out: str | Path, *, thinker: Thinker | None = None
) -> dict[str, Any]:
    """Run agent ``name`` and write ``result.json`` and ``map.html`` into ``out``."""
    if name not in RUNNERS and name not in VISION_AGENTS:
        raise FlaneurError(f"unknown V-IRL agent {name!r}; choose one of {', '.join(AGENTS)}")
    thinker = thinker or Thinker()
    started = time.perf_counter()
    if name in VISION_AGENTS:
        from flaneur.report import virl_vision_run as robot

        runner = robot.run_robot if name == "robot" else robot.run_planner
        produced = runner(city, persona, thinker, Path(out))
    else:
        produced = RUNNERS[name](city, persona, thinker)
    result, fmap = produced[0], produced[1]
    extra = produced[2] if len(produced) > 2 else {}
    result = {
        "agent": name,
        "persona": persona.to_dict(),
        "city": city.name,
        "offline": not thinker.online,
        **result,
        "llm_calls": thinker.calls,
        "llm_fallbacks": thinker.fallbacks,
        "transcript": thinker.transcript,
        "seconds": round(time.perf_counter() - started, 3),
    }
    folder = write_outputs(out, result, fmap)
    for file_name, text in extra.items():
        tmp = folder / f".{file_name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(folder / file_name)
    return result

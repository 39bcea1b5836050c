"""Local and Ling on generated trips, and Ling on held-out wordings of Local's directions.

    python benchmarks/virl_paraphrase.py --json [--routes N] [--seed S]

:func:`local_ling_figures` (also used by ``benchmarks/services.py``) runs everything
through the runner (``flaneur run --agent ling``) on the ``virl-ling`` scenarios of a city
(:class:`flaneur.bench.route_scenarios.LingScenarios`: V-IRL's VLN routes to places of a
unique name, a seeded random start heading):

* ``local_ling_success`` - Ling asks Local once and follows the template instruction
  offline (map landmarks, V-IRL's oracle row), step limit 40; V-IRL's Success (within
  25 m of the place);
* ``local_ling_success_with_reasks`` - the same, asking again (at most twice) after an
  early stop or where the directions end without the destination in sight;
* ``local_ling_success_paraphrased`` - the same routes with Local's milestones re-worded by
  four held-out generators (mean; per generator in ``local_ling_success_by_wording``), none
  of them Local's template (``Face <compass> and walk about N m. At the intersection with
  X on your <side>, turn to face <compass> ...``) that the parser was first built against:

  - ``numbered``: an LLM-style numbered list with relative turns ("2. At Stockmann, bear
    right and go on for roughly 40 metres."), compass words without hyphens;
  - ``landmarks``: legs that end where a landmark comes into sight ("Head east until you
    see Kiasma, then turn left and ...") whenever the milestone has a landmark, distances
    otherwise;
  - ``blocks``: "take the second left" (counting the junctions of the street graph the
    step passes) and distances in blocks where a whole number of 80 m blocks is within
    20 m of the leg, metres otherwise;
  - ``terse``: clipped notes ("120m northwest. Left at the corner, 40m. Kiasma on the
    right.").
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from flaneur.agents.virl.instructions import relative8
from flaneur.env.state import relative_angle
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

BLOCK_M = 80.0
_ORDINAL = {1: "first", 2: "second", 3: "third"}
_TURN_WORDS = {
    "front": ("keep going straight", "straight on"),
    "front-right": ("bear right", "slight right"),
    "right": ("turn right", "right"),
    "back-right": ("make a sharp right", "sharp right"),
    "back": ("turn around", "turn around"),
    "back-left": ("make a sharp left", "sharp left"),
    "left": ("turn left", "left"),
    "front-left": ("bear left", "slight left"),
}
Steps = list[list[int]]
"""The viewpoints of each step of the route (one list per milestone)."""


def _turn(item: dict[str, Any]) -> str:
    """The relative turn a reader works out from the milestone's heading and next heading."""
    if "next_heading" not in item:
        return "front"
    return relative8(float(relative_angle(float(item["next_heading"]), float(item["heading"]))))


def _plain(word: str) -> str:
    return word.replace("-", "")


def _side(item: dict[str, Any]) -> str:
    side = item.get("destination_direction", "")
    return {"front": "ahead of you", "back": "behind you"}.get(side, f"on your {side}")


def numbered(city: City, items: list[dict[str, Any]], steps: Steps) -> str:
    """An LLM-style numbered list with relative turns."""
    lines = [
        f"1. Start out facing {_plain(items[0]['heading_words'])} and walk roughly "
        f"{items[0]['distance_m']} meters."
    ]
    for n, (prev, item) in enumerate(itertools.pairwise(items), start=2):
        where = f"At {prev['landmark']}" if "landmark" in prev else "At the corner"
        lines.append(
            f"{n}. {where}, {_TURN_WORDS[_turn(prev)][0]} and go on for about "
            f"{item['distance_m']} metres."
        )
    last = items[-1]
    lines.append(f"{len(items) + 1}. {last['destination']} should be {_side(last)}.")
    return "\n".join(lines)


def landmarks(city: City, items: list[dict[str, Any]], steps: Steps) -> str:
    """Legs ending where the next turn's landmark comes into sight."""
    out = []
    for i, item in enumerate(items):
        start = (
            f"Head {item['heading_words']}"
            if i == 0
            else f"Then {_TURN_WORDS[_turn(items[i - 1])][0]}"
        )
        if "landmark" in item:
            out.append(f"{start} until you see {item['landmark']}.")
        else:
            out.append(f"{start} and walk about {item['distance_m']} m.")
    out.append(f"You'll find {items[-1]['destination']} {_side(items[-1])}.")
    return " ".join(out)


def _distance_words(metres: float) -> str:
    blocks = round(metres / BLOCK_M)
    if blocks >= 1 and abs(metres - blocks * BLOCK_M) <= 20:
        return "one block" if blocks == 1 else f"{blocks} blocks"
    return f"{round(metres)} metres"


def blocks(city: City, items: list[dict[str, Any]], steps: Steps) -> str:
    """Ordinal turns ("take the second left") and distances in blocks."""
    out, opener = [], f"Go {items[0]['heading_words']}"
    for i, item in enumerate(items):
        turn = _turn(item)
        count = sum(int(city.graph.degree[n] > 2) for n in steps[i][1:])
        if i + 1 < len(items) and turn in ("left", "right") and 1 <= count <= 3:
            out.append(f"{opener} and take the {_ORDINAL[count]} {turn}.")
            opener = "Walk"
        else:
            out.append(f"{opener} for {_distance_words(item['distance_m'])}.")
            opener = f"Then {_TURN_WORDS[turn][0]} and walk" if i + 1 < len(items) else ""
    out.append(f"{items[-1]['destination']} is right there {_side(items[-1])}.")
    return " ".join(out)


def terse(city: City, items: list[dict[str, Any]], steps: Steps) -> str:
    """Clipped notes."""
    out = [f"{items[0]['distance_m']}m {_plain(items[0]['heading_words'])}."]
    for prev, item in itertools.pairwise(items):
        where = prev.get("landmark", "the corner")
        word = _TURN_WORDS[_turn(prev)][1]
        out.append(f"{word[0].upper()}{word[1:]} at {where}, {item['distance_m']}m.")
    side = items[-1].get("destination_direction", "")
    out.append(f"{items[-1]['destination']} on the {side or 'way'}.")
    return " ".join(out)


GENERATORS: dict[str, Callable[[City, list[dict[str, Any]], Steps], str]] = {
    "numbered": numbered,
    "landmarks": landmarks,
    "blocks": blocks,
    "terse": terse,
}


def route_steps(city: City, episode: Episode) -> Steps:
    """The viewpoints of each step of an episode's route (its reference path cut at its key
    positions)."""
    graph = city.graph
    path = [graph.index(n) for n in episode.reference_path]
    keys = [graph.index(k) for k in episode.metadata["key_positions"]]
    steps, begin = [], 0
    for key in keys:
        end = path.index(key, begin)
        steps.append(path[begin : end + 1])
        begin = end
    return steps


def reworded(city: City, episodes: list[Episode], style: str) -> list[Episode]:
    """Direction episodes: the question episodes' routes told in ``style`` (no question)."""
    out = []
    for e in episodes:
        text = GENERATORS[style](city, e.metadata["milestones"], route_steps(city, e))
        metadata = {k: v for k, v in e.metadata.items() if k != "question"}
        out.append(
            dataclasses.replace(e, id=f"{e.id}-{style}", instruction=text, metadata=metadata)
        )
    return out


def ling_success(city: City, episodes: list[Episode], name: str, **options: Any) -> float:
    """V-IRL's Success of ``--agent ling`` (with ``options``) on ``episodes``, offline."""
    from flaneur.evaluate.runner import RunConfig, run_benchmark

    config = RunConfig(
        agents=("ling",), tasks=(name,), per_agent_options={"ling": options}, concurrency=4
    )
    with tempfile.TemporaryDirectory(prefix="flaneur-ling-") as out:
        summary = run_benchmark(config, out, progress="none", loaded={name: (city, episodes)})
    return float(summary["runs"][0]["task_metrics"]["success"]["value"])


def local_ling_figures(city: City, n_routes: int, seed: int = 0) -> dict[str, Any]:
    """Local + Ling success on ``n_routes`` generated trips (see the module docstring)."""
    from flaneur.tasks.generators import generate_set

    per_region = max(10, n_routes // 4)
    made = generate_set(
        "virl-ling",
        city,
        city_spec=city.name,
        seed=seed,
        size=n_routes,
        options={"per_region": per_region},
    )
    episodes: list[Episode] = made.items  # type: ignore[assignment]
    styles = {
        style: ling_success(city, reworded(city, episodes, style), f"ling-{style}", max_asks=0)
        for style in GENERATORS
    }
    return {
        "local_ling_success": round(ling_success(city, episodes, "ling-once", max_asks=0), 4),
        "local_ling_success_with_reasks": round(ling_success(city, episodes, "ling-reask"), 4),
        "local_ling_success_paraphrased": round(sum(styles.values()) / len(styles), 4),
        "local_ling_success_by_wording": {k: round(v, 4) for k, v in styles.items()},
        "local_ling_routes": len(episodes),
    }


def main() -> int:
    """Print the figures of :func:`local_ling_figures` on built-in Helsinki."""
    from flaneur.world.builtin import load_city

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--routes", type=int, default=100, help="trips to generate")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    out = local_ling_figures(load_city("helsinki"), args.routes, args.seed)
    out["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(out, indent=None if args.json else 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

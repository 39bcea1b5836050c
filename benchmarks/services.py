"""Benchmark of the V-IRL services and agents on Helsinki (offline, seeded).

    python benchmarks/services.py --json [--quick] [--check] [--seed S]

Prints one JSON object:

* ``tsp_bruteforce_agreement`` - over random 5- and 7-stop sets of named places (start
  first, free end), the fraction where OR-Tools' order is as short as brute force's.
* ``tsp_median_saving_pct`` - median saving of the optimised order against the given
  (random) order, over the 5- and 8-stop sets (also per size).
* ``tsp_solve_ms_8`` - median milliseconds to order an 8-stop set (distance matrix given).
* ``geocode_recall_at_1`` - names of all named places (4+ characters) with 1 and 2 random
  edits (substitution, deletion, insertion, transposition; seeded): the fraction whose top
  match has the same normalised name (also per edit count).
* ``geocode_address_recall_at_1`` - every ``addr:street`` + ``addr:housenumber`` address,
  lower case without diacritics and with one edit in the street name: the fraction whose
  top match is that address.
* ``geocode_ms_per_query`` - median milliseconds per geocode query.
* ``recommender_top1`` - Aria's offline recommender on the ``helsinki-needs-v1`` tasks of
  the basic, brand, latent and abstract categories: the fraction whose top recommendation
  has one of the task's goal categories (brand tasks: the task's brand in its name or brand
  tag); ``recommender_top1_random`` the same for a random
  named place within the search radius (the exact expectation, not a draw).
* ``local_ling_success`` - generated trips (the ``virl-ling`` generator, the one route
  generator of ``flaneur.bench.vln_routes``): Local writes the template instruction, Ling
  follows it offline (map landmarks, V-IRL's oracle row), one attempt;
  ``local_ling_success_with_reasks`` lets her ask again after an early stop;
  ``local_ling_success_paraphrased`` the same routes with the instruction re-worded by the
  four held-out generators of ``benchmarks/virl_paraphrase.py`` (mean; per generator in
  ``local_ling_success_by_wording``), one attempt.
* ``peng_last_stop_reached`` - over random 4-stop sets of named places in optimised order,
  the fraction where Peng's greedy-bearing walk ends within 5 m of the last stop (key
  positions on the route: step ends, bends >= 15 deg, every 40 m; reached by standing on
  them; ``peng_walk_end_reached`` is the same figure under its earlier name);
  ``peng_last_stop_reached_radius_5m`` the same key positions reached within 5 m;
  ``peng_walk_end_reached_virl_rule`` V-IRL's rule alone (step ends, 5 m radius).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time

import numpy as np

from flaneur.agents.virl.aria import Recommender
from flaneur.agents.virl.peng import REACHED_M, greedy_bearing_walk, key_positions
from flaneur.agents.virl.thinking import Thinker
from flaneur.services.directions import directions_via
from flaneur.services.geocode import gazetteer, normalize
from flaneur.services.optimize import (
    brute_force_order,
    distance_matrix,
    optimize_matrix,
    optimize_order,
)
from flaneur.world.builtin import load_city
from virl_paraphrase import local_ling_figures

LETTERS = "abcdefghijklmnopqrstuvwxyzäö"
RECOMMENDER_CATEGORIES = ("basic_poi", "brand", "latent_poi", "abstract_need")


def typo(text: str, edits: int, rng: np.random.Generator) -> str:
    """``text`` with ``edits`` random single-character edits."""
    chars = list(text)
    for _ in range(edits):
        kind = rng.integers(4) if len(chars) > 2 else 2
        i = int(rng.integers(len(chars)))
        if kind == 0:
            chars[i] = LETTERS[int(rng.integers(len(LETTERS)))]
        elif kind == 1:
            del chars[i]
        elif kind == 2:
            chars.insert(i, LETTERS[int(rng.integers(len(LETTERS)))])
        elif i + 1 < len(chars):
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        else:
            chars[i - 1], chars[i] = chars[i], chars[i - 1]
    return "".join(chars)


def bench_tsp(city, n_sets: int, rng: np.random.Generator) -> dict:
    named = np.flatnonzero(city.places.names != "")
    nodes = np.unique(
        np.atleast_1d(city.graph.nearest_node(city.places.lat[named], city.places.lng[named]))
    )
    agree, savings, times = [], {5: [], 8: []}, []
    for size in (5, 7, 8):
        for _ in range(n_sets if size != 7 else n_sets // 2):
            stops = rng.choice(nodes, size, replace=False)
            matrix = distance_matrix(city.graph, stops)
            start = time.perf_counter()
            result = optimize_matrix(matrix)
            elapsed = time.perf_counter() - start
            if size == 8:
                times.append(elapsed * 1e3)
            if size in savings:
                savings[size].append(result.saving_pct)
            if size <= 7:
                agree.append(result.length_m <= brute_force_order(matrix)[1] + 0.2)
    every = savings[5] + savings[8]
    return {
        "tsp_bruteforce_agreement": round(float(np.mean(agree)), 4),
        "tsp_bruteforce_sets": len(agree),
        "tsp_median_saving_pct": round(statistics.median(every), 2),
        "tsp_median_saving_pct_5": round(statistics.median(savings[5]), 2),
        "tsp_median_saving_pct_8": round(statistics.median(savings[8]), 2),
        "tsp_solve_ms_8": round(statistics.median(times), 2),
        "tsp_sets": {"5": len(savings[5]), "8": len(savings[8])},
    }


def bench_geocode(city, rng: np.random.Generator, limit: int | None) -> dict:
    gaz = gazetteer(city)
    names = sorted(
        {
            n
            for n, k in zip(gaz.names, gaz.kinds, strict=True)
            if k == "place" and len(normalize(n)) >= 4
        }
    )
    addresses = sorted({n for n, k in zip(gaz.names, gaz.kinds, strict=True) if k == "address"})
    if limit:
        names = [
            names[i] for i in sorted(rng.choice(len(names), min(limit, len(names)), replace=False))
        ]
        addresses = addresses[:limit]
    out, times = {}, []
    for edits in (1, 2):
        hits = 0
        for name in names:
            query = typo(name, edits, rng)
            start = time.perf_counter()
            found = gaz.search(query, limit=1)
            times.append((time.perf_counter() - start) * 1e3)
            hits += bool(found) and normalize(found[0].name) == normalize(name)
        out[f"geocode_recall_at_1_edit{edits}"] = round(hits / len(names), 4)
    out["geocode_recall_at_1"] = round(
        (out["geocode_recall_at_1_edit1"] + out["geocode_recall_at_1_edit2"]) / 2, 4
    )
    out["geocode_names"] = len(names)
    hits = 0
    for address in addresses:
        street, _, number = address.rpartition(" ")
        query = f"{typo(normalize(street), 1, rng)} {number}"
        start = time.perf_counter()
        found = gaz.search(query, limit=1)
        times.append((time.perf_counter() - start) * 1e3)
        hits += (
            bool(found)
            and found[0].kind == "address"
            and normalize(found[0].name) == normalize(address)
        )
    out["geocode_address_recall_at_1"] = round(hits / max(1, len(addresses)), 4)
    out["geocode_addresses"] = len(addresses)
    out["geocode_ms_per_query"] = round(statistics.median(times), 3)
    return out


def bench_recommender(quick: bool) -> dict:
    from flaneur.tasks.registry import get_task, load_spec

    city, episodes = load_spec(get_task("helsinki-needs-v1"))
    tasks = [e for e in episodes if e.category in RECOMMENDER_CATEGORIES]
    if quick:
        tasks = tasks[::4]
    aria = Recommender(city, Thinker(None, "aria"))
    places = city.places
    hits, chance = [], []
    per: dict[str, list[int]] = {}
    for ep in tasks:
        node = city.graph.index(ep.start_node)
        xy = city.graph.xy[node]
        goal = set(ep.goal_categories)
        brands = {normalize(g.get("brand", "")) for g in ep.metadata.get("goals", [])} - {""}

        def fits(row: int, goal=goal, brands=brands) -> bool:
            if brands:  # brand tasks have no goal category: the brand must match
                keys = {
                    normalize(str(places.names[row])),
                    normalize(places.tags[row].get("brand", "")),
                }
                return any(b in k for b in brands for k in keys if k)
            return bool(goal & set(places.categories[row]))

        result = asyncio.run(aria.recommend(xy, ep.instruction))
        top = result["recommendations"][0] if result["recommendations"] else None
        hit = int(top is not None and fits(top["row"]))
        hits.append(hit)
        per.setdefault(ep.category, []).append(hit)
        rows, _ = places.within(xy, aria.radius_m)
        named = [r for r in rows.tolist() if places.names[r]]
        chance.append(np.mean([fits(r) for r in named]) if named else 0.0)
    return {
        "recommender_top1": round(float(np.mean(hits)), 4),
        "recommender_top1_random": round(float(np.mean(chance)), 4),
        "recommender_top1_by_category": {k: round(float(np.mean(v)), 4) for k, v in per.items()},
        "recommender_tasks": len(tasks),
    }


def bench_peng_walk(city, n_sets: int, rng: np.random.Generator) -> dict:
    """How often the greedy-bearing walk ends at the last stop of an optimised 4-stop route."""
    named = np.flatnonzero(city.places.names != "")
    nodes = np.unique(
        np.atleast_1d(city.graph.nearest_node(city.places.lat[named], city.places.lng[named]))
    )
    variants = {
        "peng_last_stop_reached": {},
        "peng_last_stop_reached_radius_5m": {"reach_m": REACHED_M},
        "peng_walk_end_reached_virl_rule": {"virl": True},
    }
    hits: dict[str, list[bool]] = {k: [] for k in variants}
    skipped: list[int] = []
    for _ in range(n_sets):
        stops = [int(x) for x in rng.choice(nodes, 4, replace=False)]
        ordered, _ = optimize_order(city.graph, stops)
        route = directions_via(city, ordered)
        for name, how in variants.items():
            if how.get("virl"):
                keys = list(route.key_positions)
                walk = greedy_bearing_walk(
                    city, stops[0], keys, avoid_returns=False, reach_m=REACHED_M
                )
            else:
                keys = key_positions(city, route)
                walk = greedy_bearing_walk(city, stops[0], keys, reach_m=how.get("reach_m"))
            gap = np.hypot(*(city.graph.xy[walk.nodes[-1]] - city.graph.xy[route.nodes[-1]]))
            hits[name].append(float(gap) <= REACHED_M)
            if name == "peng_last_stop_reached":
                skipped.append(len(walk.skipped))
    out = {k: round(float(np.mean(v)), 4) for k, v in hits.items()}
    out["peng_walk_end_reached"] = out["peng_last_stop_reached"]  # the earlier name
    out["peng_key_positions_skipped_mean"] = round(float(np.mean(skipped)), 2)
    out["peng_walk_routes"] = n_sets
    return out


CHECKS = {
    "tsp_bruteforce_agreement": lambda v: v == 1.0,
    "tsp_median_saving_pct": lambda v: v > 0,
    "geocode_recall_at_1": lambda v: v >= 0.8,
    "geocode_address_recall_at_1": lambda v: v >= 0.8,
    "local_ling_success": lambda v: v >= 0.75,
    "local_ling_success_paraphrased": lambda v: v >= 0.5,
    "peng_last_stop_reached": lambda v: v >= 0.95,
}


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; print the figures (one JSON object with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer samples (CI)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless the correctness gates hold (and top-1 beats random)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    city = load_city("helsinki")
    started = time.perf_counter()
    out: dict = {"city": city.name, "quick": args.quick, "seed": args.seed}
    out.update(bench_tsp(city, 40 if args.quick else 200, rng))
    out.update(bench_geocode(city, rng, 300 if args.quick else None))
    out.update(local_ling_figures(city, 30 if args.quick else 100, args.seed))
    out.update(bench_peng_walk(city, 10 if args.quick else 50, rng))
    out.update(bench_recommender(args.quick))
    out["seconds"] = round(time.perf_counter() - started, 1)
    failed = [k for k, ok in CHECKS.items() if not ok(out[k])]
    if out["recommender_top1"] <= out["recommender_top1_random"]:
        failed.append("recommender_top1")
    out["checks_failed"] = failed
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:36s} {value}")
    if args.check and failed:
        print(f"checks failed: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)
    return out


if __name__ == "__main__":
    main()

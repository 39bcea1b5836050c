"""flaneur's metrics against the papers' released evaluation code, re-implemented here.

Usage::

    python benchmarks/fidelity.py --data-dir ../shared/data --json [--check] [--limit N]
        [--cityseeker-heading north|route]

Runs the ``random`` and ``forward`` baselines with flaneur's runner on the dev task sets
(map2seq-unseen-dev-v1, touchdown-unseen-dev-v1, cityseeker-shanghai2-v1), scores them with
:mod:`flaneur.metrics`, and scores the same agent paths again with an independent
implementation written here from the raw data files and the published formulas (it imports
none of flaneur's metric or graph code):

- VELMA (``vln/evaluate.py``, ``get_metrics``; graph as its ``GraphLoader`` builds it: each
  node's neighbours keyed by link heading, a directed graph of those links; for map2seq its
  map2seq graph, Touchdown's less two links, :data:`MAP2SEQ_MISSING_LINKS`):
  TC (stop on the goal or a neighbour of it in either direction), SPD (hops of the shortest
  path stop -> goal) and KPA (key points of the path as a set: the first two nodes, every
  move leaving a node with more than two neighbours; plus one for TC; over the gold key
  points + 1).
- CitySeeker (its repository has no metric script; the paper's definitions, with WGS84
  geodesics as its code measures them with ``pyproj.Geod``): TCE (stop on the final goal, as
  its ``round_success``), TCP (stop within 50 m of the final goal), SPD (shortest path in the
  graph's ``edge_distance`` weights, as its Neo4j store holds them: Web-Mercator metres),
  compared with flaneur's ``spd_mercator_m`` (agreement within :data:`SPD_TOL_M`). A node
  that no question route locates has coordinates only by flaneur's placement, so the lengths
  of its edges differ slightly from ``edge_distance``: a run that differs is explained when
  the reference with those lengths (:func:`placed_edge_weights`) gives flaneur's number.
- nDTW (Ilharco et al. 2019) on every task: ``exp(-DTW / (|R| * 25 m))`` with geodesic
  point distances. CitySeeker publishes coordinates only for route nodes; path nodes off
  every route get flaneur's placed coordinates (their count is reported).

Prints one JSON object: per task and agent both sets of means, and ``differences``: a list,
empty when every episode agrees; otherwise one entry per (task, agent, metric) with the number
of episodes, examples and an explanation. ``--check`` exits 1 when a difference has no known
explanation.

Per task and agent: ``episodes``; ``flaneur`` and ``reference``, the means of each metric
(VELMA's tasks: ``tc``, ``spd`` in hops, ``kpa``, ``ndtw``; CitySeeker's: ``tce``, ``tcp``,
``spd`` in Web-Mercator metres, flaneur's ``spd_mercator_m``, and ``ndtw``); VELMA's tasks
also ``kpa_prefix``; CitySeeker's also ``spd_largest_difference_m``, the largest
``|spd_mercator_m - reference|`` over the runs, ``spd_ground_m``, the mean of flaneur's ``spd_m``
(great-circle metres along its graph, not compared), ``spd_mercator_over_ground``, the mean
of ``spd_mercator_m / spd_m`` over the runs with both non-zero (about 1/cos(latitude)), and
``path_nodes_placed_by_flaneur``, the path nodes located by flaneur's placement (nDTW).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pyproj import Geod, Transformer
from scipy import sparse
from scipy.sparse import csgraph

from flaneur.env.registration import load_task_cached
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.cityseeker_questions import START_HEADINGS, with_start_heading

TASKS = {
    "map2seq-unseen-dev-v1": ("velma", "map2seq/unseen/dev.json", "id"),
    "touchdown-unseen-dev-v1": ("velma", "touchdown/unseen/dev.json", "route_id"),
    "cityseeker-shanghai2-v1": ("cityseeker", "cityseeker/shanghai2", None),
}
CITYSEEKER = "cityseeker-shanghai2-v1"
AGENTS = ("random", "forward")
D_TH_M = 25.0  # flaneur's default success radius, the nDTW threshold
TCP_M = 50.0
DTW_REL_TOL = 6e-3  # sphere (R = 6371 km) against the WGS84 ellipsoid: up to about 0.5 %
SPD_TOL_M = 1e-6
"""CitySeeker SPD agreement: flaneur's Mercator edge lengths equal ``edge_distance`` to 1e-9 m
per edge (``flaneur.metrics.cityseeker.mercator_edge_lengths``)."""
GEOD = Geod(ellps="WGS84")
MERCATOR = Transformer.from_crs("EPSG:4326", "EPSG:3857", always_xy=True)
MAP2SEQ_MISSING_LINKS = frozenset(
    {
        ("ARRlZyTkG-pDfJj_Iq-CqQ", "dkdD_nTxswtMHmL4CgLBQw"),
        ("dkdD_nTxswtMHmL4CgLBQw", "ARRlZyTkG-pDfJj_Iq-CqQ"),
    }
)
"""VELMA scores map2seq on its own graph (``datasets/map2seq_*/graph/links.txt``): Touchdown's
``links.txt`` (the one in the data folder) less these two links (checked 2026-11-24)."""

EXPLAINED = {
    "tcp_boundary": "stop within 0.5 m of the 50 m boundary: flaneur measures great-circle "
    "metres on a sphere (haversine), the reference WGS84 geodesics",
    "ordered_goals": "ordered two-goal question: flaneur's tcp/tce also require the first goal "
    "to be passed before (docs/metrics.md); CitySeeker's round_success looks at the final goal",
    "placed_nodes": "the shortest path to the goal crosses a node that no question route "
    "locates: flaneur placed it from its neighbours' edge_azimuth and edge_distance (several "
    "placements averaged), so its edges' Web-Mercator lengths differ slightly from their "
    "edge_distance; the reference with those edges' lengths taken from flaneur's placed "
    "coordinates gives flaneur's spd_mercator_m",
    "map2seq_graph": "VELMA scores map2seq on its map2seq graph, which lacks the two-way link "
    "ARRlZyTkG-pDfJj_Iq-CqQ <-> dkdD_nTxswtMHmL4CgLBQw of Touchdown's graph that flaneur's "
    "Manhattan city (built from touchdown/graph) has; on Touchdown's graph the numbers agree",
    "distance_model": "DTW within 0.6 % (nDTW = exp(-DTW / (|R| d_th)) follows): flaneur "
    "measures point distances on a sphere in a local equirectangular frame (docs/metrics.md), "
    "the reference WGS84 geodesics; the ellipsoid's radii differ from the sphere's by up to "
    "0.5 %",
}


# ----------------------------------------------------------------------------- reference: VELMA
class VelmaGraph:
    """The Touchdown graph as VELMA's GraphLoader reads it: ``neighbors[node][heading]``."""

    def __init__(self, graph_dir: Path, drop: frozenset[tuple[str, str]] = frozenset()) -> None:
        self.ids: list[str] = []
        self.index: dict[str, int] = {}
        self.latlng: list[tuple[float, float]] = []
        for line in (graph_dir / "nodes.txt").read_text().splitlines():
            panoid, _yaw, lat, lng = line.split(",")[:4]
            self.index[panoid] = len(self.ids)
            self.ids.append(panoid)
            self.latlng.append((float(lat), float(lng)))
        self.neighbors: list[dict[float, int]] = [{} for _ in self.ids]
        for line in (graph_dir / "links.txt").read_text().splitlines():
            start, heading, end = line.split(",")
            if (start, end) in drop:
                continue
            self.neighbors[self.index[start]][float(heading)] = self.index[end]
        rows = [a for a, nb in enumerate(self.neighbors) for _ in nb]
        cols = [b for nb in self.neighbors for b in nb.values()]
        n = len(self.ids)
        self.digraph = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
        self.succ = [set(nb.values()) for nb in self.neighbors]
        self.pred: list[set[int]] = [set() for _ in self.ids]
        for a, nb in enumerate(self.neighbors):
            for b in nb.values():
                self.pred[b].add(a)

    def num_neighbors(self, node: int) -> int:
        return len(self.neighbors[node])

    def hops_to(self, targets: Sequence[int]) -> dict[int, np.ndarray]:
        """Hop distances from every node to each target (BFS on the reversed graph)."""
        out: dict[int, np.ndarray] = {}
        unique = sorted(set(targets))
        reverse = self.digraph.T.tocsr()
        for k in range(0, len(unique), 200):
            chunk = unique[k : k + 200]
            dist = csgraph.shortest_path(reverse, indices=chunk, unweighted=True)
            out.update(zip(chunk, dist, strict=True))
        return out


def velma_key_points(path: list[int], graph: VelmaGraph) -> list:
    if len(path) <= 1:
        return []
    points: list = [path[0], path[1]]
    for i in range(len(path) - 1):
        if graph.num_neighbors(path[i]) > 2:
            points.append((path[i], path[i + 1]))
    return points


def velma_episode(gold: list[int], agent: list[int], graph: VelmaGraph, hops: np.ndarray) -> dict:
    target = gold[-1]
    stop = agent[-1]
    tc = stop == target or stop in graph.succ[target] or stop in graph.pred[target]
    gold_kp, agent_kp = velma_key_points(gold, graph), velma_key_points(agent, graph)
    kpa = (len(set(gold_kp) & set(agent_kp)) + int(tc)) / (len(gold_kp) + 1)
    spd = float(hops[stop])
    return {"tc": tc, "spd": None if math.isinf(spd) else spd, "kpa": kpa}


# ------------------------------------------------------------------------ reference: distances
def geodesic_m(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> np.ndarray:
    """WGS84 distances between every point of ``a`` and every point of ``b`` (len(a) x len(b))."""
    pa, pb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    lat1, lng1 = np.repeat(pa[:, 0], len(pb)), np.repeat(pa[:, 1], len(pb))
    lat2, lng2 = np.tile(pb[:, 0], len(pa)), np.tile(pb[:, 1], len(pa))
    _, _, dist = GEOD.inv(lng1, lat1, lng2, lat2)
    return np.asarray(dist).reshape(len(pa), len(pb))


def dtw(reference: Sequence[tuple[float, float]], query: Sequence[tuple[float, float]]) -> float:
    """DTW(R, Q) in metres by its recursion; nDTW is ``exp(-DTW / (|R| * d_th))``."""
    cost = geodesic_m(reference, query)
    n, m = cost.shape
    table = np.full((n + 1, m + 1), np.inf)
    table[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            best = min(table[i - 1, j], table[i, j - 1], table[i - 1, j - 1])
            table[i, j] = cost[i - 1, j - 1] + best
    return float(table[n, m])


def ndtw(dtw_m: float, reference_nodes: int) -> float:
    """Ilharco et al.'s nDTW with ``d_th`` = :data:`D_TH_M`."""
    return math.exp(-dtw_m / (reference_nodes * D_TH_M))


def dtw_difference(diffs, task, agent, episode, got_dtw, ref_dtw, got_ndtw, ref_ndtw) -> None:
    """Record an nDTW difference: none when DTW agrees to 1e-9, else by its size."""
    if got_dtw is not None and abs(got_dtw - ref_dtw) <= 1e-9 * max(1.0, ref_dtw):
        return
    close = got_dtw is not None and abs(got_dtw - ref_dtw) <= DTW_REL_TOL * ref_dtw
    diffs.add(
        task,
        agent,
        "ndtw",
        "distance_model" if close else "unexplained",
        {
            "episode": episode,
            "flaneur": got_ndtw,
            "reference": ref_ndtw,
            "dtw_m": [got_dtw, round(ref_dtw, 3)],
        },
    )


def dedupe(path: Sequence[str]) -> list[str]:
    out: list[str] = []
    for node in path:
        if not out or out[-1] != node:
            out.append(node)
    return out


# ------------------------------------------------------------------- reference: CitySeeker
def cityseeker_reference(folder: Path) -> tuple[dict, dict, sparse.csr_matrix, dict[str, int]]:
    """Questions by ``question_idx``, route coordinates, the edge_distance graph, node index."""
    questions_file = folder / "questions.json"
    if not questions_file.is_file():
        questions_file = folder / "question.json"
    questions = {str(q["question_idx"]): q for q in json.loads(questions_file.read_text())}
    coords = {
        s["filename"]: (float(s["latitude"]), float(s["longitude"]))
        for q in questions.values()
        for s in q["complete_route"]
    }
    edges = json.loads((folder / "connections.json").read_text())
    index: dict[str, int] = {}
    for e in edges:
        for key in ("start_filename", "end_filename"):
            index.setdefault(e[key], len(index))
    weight: dict[tuple[int, int], float] = {}
    for e in edges:
        key = (index[e["start_filename"]], index[e["end_filename"]])
        weight[key] = min(weight.get(key, math.inf), float(e["edge_distance"]))
    rows, cols = zip(*weight, strict=True)
    n = len(index)
    matrix = sparse.csr_matrix((list(weight.values()), (rows, cols)), shape=(n, n))
    return questions, coords, matrix, index


def placed_edge_weights(
    matrix: sparse.csr_matrix,
    index: dict[str, int],
    coords: dict[str, tuple[float, float]],
    city_coords: dict[str, tuple[float, float]],
) -> sparse.csr_matrix:
    """``matrix`` with every edge that touches a node no question route locates weighted by
    the Web-Mercator distance (EPSG:3857) between flaneur's coordinates of its ends (infinite
    where flaneur has none); the other edges keep their ``edge_distance``."""
    ids = sorted(index, key=index.__getitem__)
    located = np.array([node in coords for node in ids])
    nowhere = (math.nan, math.nan)
    lat, lng = np.array([city_coords.get(node, nowhere) for node in ids], dtype=float).T
    x, y = (np.asarray(v, dtype=float) for v in MERCATOR.transform(lng, lat))
    edges = matrix.tocoo()
    a, b = edges.row, edges.col
    placed = ~(located[a] & located[b])
    mercator = np.nan_to_num(np.hypot(x[b] - x[a], y[b] - y[a]), nan=math.inf)
    data = np.where(placed, mercator, edges.data)
    return sparse.csr_matrix((data, (a, b)), shape=matrix.shape)


def goal_distances(matrix: sparse.csr_matrix, goals: list[int]) -> dict[int, np.ndarray]:
    """Shortest-path length from every node to each goal (Dijkstra on the reversed graph)."""
    return dict(zip(goals, csgraph.dijkstra(matrix.T.tocsr(), indices=goals), strict=True))


# ----------------------------------------------------------------------------- comparison
class Diffs:
    """Per (task, agent, metric): differing episodes, split by explanation."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str, str, str], list] = {}

    def add(self, task: str, agent: str, metric: str, why: str, example: dict) -> None:
        self.items.setdefault((task, agent, metric, why), []).append(example)

    def as_list(self) -> list[dict]:
        out = []
        for (task, agent, metric, why), examples in sorted(self.items.items()):
            out.append(
                {
                    "task": task,
                    "agent": agent,
                    "metric": metric,
                    "episodes": len(examples),
                    "explained": why in EXPLAINED,
                    "why": EXPLAINED.get(why, why),
                    "examples": examples[:3],
                }
            )
        return out


def _mean(values: list) -> float | None:
    present = [float(v) for v in values if v is not None]
    return round(sum(present) / len(present), 6) if present else None


def compare_velma(task, agent, rows, data_dir, spec, graphs, diffs) -> dict:
    """Compare on VELMA's graph for the task (``graphs[0]``); a difference that vanishes on
    Touchdown's graph (``graphs[1]``, flaneur's) is explained by the graphs."""
    _, rel, id_field = spec
    gold = {
        str(r[id_field]): r["route_panoids"]
        for r in map(json.loads, (data_dir / rel).read_text().splitlines())
    }
    graph = graphs[0]
    targets = [graph.index[gold[r["episode_id"]][-1]] for r in rows]
    hops = [g.hops_to(targets) for g in graphs]
    ours: dict[str, list] = {"tc": [], "spd": [], "kpa": [], "ndtw": []}
    theirs: dict[str, list] = {"tc": [], "spd": [], "kpa": [], "ndtw": []}
    for row in rows:
        m = row["metrics"]
        g = [graph.index[p] for p in gold[row["episode_id"]]]
        a = [graph.index[p] for p in dedupe(row["path"])]
        refs = [velma_episode(g, a, gr, h[g[-1]]) for gr, h in zip(graphs, hops, strict=True)]
        ref = refs[0]
        ref_dtw = dtw([graph.latlng[k] for k in g], [graph.latlng[k] for k in a])
        ref["ndtw"] = ndtw(ref_dtw, len(g))
        got = {"tc": m["tc"], "spd": m["spd_hops"], "kpa": m["kpa"], "ndtw": m["ndtw"]}
        for key in ours:
            ours[key].append(got[key])
            theirs[key].append(ref[key])
        for key in ("tc", "spd", "kpa"):
            if not _same(got[key], ref[key]):
                why = "map2seq_graph" if _same(got[key], refs[-1][key]) else "unexplained"
                diffs.add(
                    task,
                    agent,
                    key,
                    why,
                    {"episode": row["episode_id"], "flaneur": got[key], "reference": ref[key]},
                )
        dtw_difference(
            diffs, task, agent, row["episode_id"], m["dtw_m"], ref_dtw, got["ndtw"], ref["ndtw"]
        )
    return {
        "flaneur": {k: _mean(v) for k, v in ours.items()},
        "reference": {k: _mean(v) for k, v in theirs.items()},
        "kpa_prefix": _mean([r["metrics"].get("kpa_prefix") for r in rows]),
    }


def _same(a, b, tol: float = 1e-12) -> bool:
    if a is None or b is None:
        return a is b
    return abs(float(a) - float(b)) <= tol


def compare_cityseeker(task, agent, rows, cs, city_coords, diffs) -> dict:
    """Compare TCE, TCP, SPD (flaneur's ``spd_mercator_m`` against the shortest path in
    ``edge_distance`` weights) and nDTW on CitySeeker's data."""
    questions, coords, matrix, index = cs
    names = ("tce", "tcp", "spd", "ndtw")
    ours: dict[str, list] = {k: [] for k in names}
    theirs: dict[str, list] = {k: [] for k in names}
    ground: list = []  # flaneur's spd_m, great-circle metres (reported, not compared)
    estimated = 0  # path nodes that no question route locates (flaneur's placement used)
    goals = sorted({index[q["to"]] for q in questions.values()})
    spd_to = goal_distances(matrix, goals)
    placed_to = goal_distances(placed_edge_weights(matrix, index, coords, city_coords), goals)
    for row in rows:
        q = questions[row["episode_id"].rsplit("-", 1)[1]]
        m, path = row["metrics"], dedupe(row["path"])
        estimated += sum(1 for p in path if p not in coords)
        where = [coords.get(p) or city_coords[p] for p in path]
        route = [(float(s["latitude"]), float(s["longitude"])) for s in q["complete_route"]]
        to_goal = float(geodesic_m([where[-1]], [route[-1]])[0, 0])
        spd, placed = (float(d[index[q["to"]]][index[path[-1]]]) for d in (spd_to, placed_to))
        ref = {
            "tce": path[-1] == q["to"],
            "tcp": to_goal <= TCP_M,
            "spd": None if math.isinf(spd) else spd,
        }
        ref_dtw = dtw(route, where)
        ref["ndtw"] = ndtw(ref_dtw, len(route))
        got = {"tce": m["tce"], "tcp": m["tcp"], "spd": m["spd_mercator_m"], "ndtw": m["ndtw"]}
        ground.append(m["spd_m"])
        for key in names:
            ours[key].append(got[key])
            theirs[key].append(ref[key])
        example = {"episode": row["episode_id"]}
        for key in ("tce", "tcp"):
            if got[key] != ref[key]:
                why = _completion_why(key, got[key], ref[key], "stage1_route" in q, to_goal)
                diffs.add(
                    task,
                    agent,
                    key,
                    why,
                    {
                        **example,
                        "flaneur": got[key],
                        "reference": ref[key],
                        "to_goal_m": round(to_goal, 2),
                    },
                )
        if not _same(got["spd"], ref["spd"], SPD_TOL_M):
            why = "placed_nodes" if _same(got["spd"], placed, SPD_TOL_M) else "unexplained"
            diffs.add(
                task,
                agent,
                "spd",
                why,
                {**example, "flaneur": got["spd"], "reference": ref["spd"], "placed": placed},
            )
        dtw_difference(
            diffs, task, agent, row["episode_id"], m["dtw_m"], ref_dtw, got["ndtw"], ref["ndtw"]
        )
    pairs = [(g, t) for g, t in zip(ground, ours["spd"], strict=True) if g and t]
    both = zip(ours["spd"], theirs["spd"], strict=True)
    gaps = [abs(o - t) for o, t in both if o is not None and t is not None]
    return {
        "flaneur": {k: _mean(v) for k, v in ours.items()},
        "reference": {k: _mean(v) for k, v in theirs.items()},
        "spd_largest_difference_m": max(gaps, default=None),
        "spd_ground_m": _mean(ground),
        "spd_mercator_over_ground": _mean([t / g for g, t in pairs]) if pairs else None,
        "path_nodes_placed_by_flaneur": estimated,
    }


def _completion_why(key: str, got: bool, ref: bool, ordered: bool, to_goal: float) -> str:
    """The explanation of a TCE or TCP difference (``"unexplained"`` when none fits)."""
    if ordered and ref and not got:  # flaneur's order rule is stricter
        return "ordered_goals"
    if key == "tcp" and abs(to_goal - TCP_M) < 0.5:
        return "tcp_boundary"
    return "unexplained"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        required=True,
        help="folder holding touchdown/, map2seq/ and cityseeker/",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when a difference has no known explanation"
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="only the first N episodes of each task set (default all)",
    )
    parser.add_argument(
        "--cityseeker-heading",
        choices=START_HEADINGS,
        default="north",
        help="start heading of the CitySeeker episodes (default north, as "
        "CitySeeker; route: along the first gold edge)",
    )
    args = parser.parse_args(argv)
    data_dir = args.data_dir.resolve()
    needed = [
        data_dir / "touchdown/graph/nodes.txt",
        data_dir / "touchdown/graph/links.txt",
        *(data_dir / spec[1] for spec in TASKS.values()),
    ]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        parser.exit(2, f"fidelity.py: missing data: {', '.join(missing)}\n")
    start = time.perf_counter()
    diffs = Diffs()
    result: dict = {
        "agents": list(AGENTS),
        "limit": args.limit,
        "cityseeker_heading": args.cityseeker_heading,
        "tasks": {},
    }
    touchdown = VelmaGraph(data_dir / "touchdown/graph")
    graphs = {
        "map2seq": (VelmaGraph(data_dir / "touchdown/graph", MAP2SEQ_MISSING_LINKS), touchdown),
        "touchdown": (touchdown,),
    }
    loaded = {}
    if args.cityseeker_heading != "north":
        city, episodes = load_task_cached(CITYSEEKER, data_dir)
        loaded[CITYSEEKER] = (city, with_start_heading(episodes, args.cityseeker_heading))
    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(
            agents=AGENTS, tasks=tuple(TASKS), data_dir=str(data_dir), limit=args.limit
        )
        run_benchmark(config, Path(tmp) / "run", progress="none", loaded=loaded)
        lines = Path(tmp, "run", "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    for task, spec in TASKS.items():
        result["tasks"][task] = {}
        for agent in AGENTS:
            mine = [
                r for r in rows if r["task"] == task and r["agent"] == agent and r.get("metrics")
            ]
            if spec[0] == "velma":
                dataset = "map2seq" if task.startswith("map2seq") else "touchdown"
                out = compare_velma(task, agent, mine, data_dir, spec, graphs[dataset], diffs)
            else:
                city, _ = load_task_cached(task, data_dir)
                ids = city.graph.ids
                city_coords = {
                    str(ids[k]): (float(city.graph.lat[k]), float(city.graph.lng[k]))
                    for k in range(len(ids))
                }
                cs = cityseeker_reference(data_dir / spec[1])
                out = compare_cityseeker(task, agent, mine, cs, city_coords, diffs)
            result["tasks"][task][agent] = {"episodes": len(mine), **out}
    result["differences"] = diffs.as_list()
    result["unexplained"] = sum(d["episodes"] for d in result["differences"] if not d["explained"])
    result["seconds"] = round(time.perf_counter() - start, 1)
    if args.json:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=2))
    return 1 if args.check and result["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""Route optimisation: the order of waypoints that makes the shortest walk on the graph.

V-IRL's Peng asks Google Directions with ``optimize:true`` (V-IRL's own TSP, on Euclidean
distance in raw degrees, orders Imani's region points); here the costs are walking distances
on the street graph (metres, Dijkstra) and the order comes from OR-Tools: the start is fixed,
the end is fixed or free (an *open* route, as V-IRL's route optimizer drops the last leg
back). Sets of up to :data:`EXACT_UP_TO` stops are solved exactly and deterministically with
OR-Tools' CP-SAT (one circuit constraint, one worker, fixed seed); larger sets (region
sampling) use the routing solver with guided local search for a time budget.
:func:`brute_force_order` gives the exact answer for small sets and is what the tests and
``benchmarks/services.py`` compare OR-Tools against.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.sparse import csgraph

from flaneur.services.errors import UnreachableError
from flaneur.world.graph import StreetGraph

SOLVER_TIME_LIMIT_MS = 200
"""Guided local search budget of the routing solver for sets above :data:`EXACT_UP_TO`."""
EXACT_UP_TO = 12
"""Sets of at most this many stops are solved exactly with CP-SAT."""
EXACT_TIME_LIMIT_S = 5.0
"""Safety limit of the exact solver (the best solution found so far is kept)."""

_MATRICES: weakref.WeakKeyDictionary[StreetGraph, sparse.csr_matrix]
_MATRICES = weakref.WeakKeyDictionary()


def distance_matrix(graph: StreetGraph, stops: Sequence[int]) -> NDArray[np.float64]:
    """Walking distance in metres between every pair of ``stops`` (inf if unreachable)."""
    matrix = _MATRICES.get(graph)
    if matrix is None:
        matrix = _MATRICES[graph] = graph.adjacency_matrix("length")
    stops_arr = np.asarray(stops, dtype=np.int64)
    dist = csgraph.dijkstra(matrix, indices=stops_arr)
    return dist[:, stops_arr]


def tour_length(matrix: NDArray[np.float64], order: Sequence[int]) -> float:
    """Length of visiting matrix indices in ``order`` (an open path)."""
    return float(sum(matrix[a, b] for a, b in itertools.pairwise(order)))


def check_reachable(matrix: NDArray[np.float64], labels: Sequence[str] | None = None) -> None:
    """Raise :class:`UnreachableError` naming the first waypoint cut off from the start."""
    bad = np.flatnonzero(~np.isfinite(matrix[0]) | ~np.isfinite(matrix[:, 0]))
    if bad.size:
        k = int(bad[0])
        name = labels[k] if labels else f"waypoint {k}"
        first = labels[0] if labels else "the start"
        raise UnreachableError(f"{name!r} cannot be reached on the street graph from {first!r}")


def brute_force_order(
    matrix: NDArray[np.float64], *, end: int | None = None
) -> tuple[list[int], float]:
    """The exact shortest open path from index 0 through all others (ending at ``end``)."""
    n = len(matrix)
    middle = [i for i in range(1, n) if i != end]
    best: tuple[list[int], float] = ([0, *middle] + ([end] if end is not None else []), np.inf)
    for perm in itertools.permutations(middle):
        order = [0, *perm] + ([end] if end is not None else [])
        length = tour_length(matrix, order)
        if length < best[1] - 1e-9:
            best = (order, length)
    return best


@dataclass(frozen=True)
class OptimizedOrder:
    """Result of :func:`optimize_order`."""

    order: tuple[int, ...]
    length_m: float
    given_length_m: float

    @property
    def saving_pct(self) -> float:
        """How much shorter than the given order, in percent."""
        if self.given_length_m <= 0:
            return 0.0
        return 100.0 * (self.given_length_m - self.length_m) / self.given_length_m


def _costs(matrix: NDArray[np.float64], end: int | None) -> tuple[NDArray[np.int64], int]:
    """Integer costs in decimetres; a free end becomes a zero-cost dummy node ``n``."""
    n = len(matrix)
    size = n if end is not None else n + 1
    costs = np.zeros((size, size), dtype=np.int64)
    costs[:n, :n] = np.rint(matrix * 10.0).astype(np.int64)
    return costs, (end if end is not None else n)


def _solve_exact(matrix: NDArray[np.float64], end: int | None) -> list[int]:
    """Shortest open path from 0 to ``end`` (or anywhere) through all nodes, with CP-SAT."""
    # lazy: OR-Tools takes 0.45 s to import
    from ortools.sat.python import cp_model

    costs, finish = _costs(matrix, end)
    size = len(costs)
    model = cp_model.CpModel()
    arcs: list[tuple[int, int, cp_model.IntVar]] = [(finish, 0, model.new_constant(1))]
    chosen: dict[tuple[int, int], cp_model.IntVar] = {}
    for i in range(size):
        for j in range(size):
            if i != j and i != finish and j != 0:
                chosen[i, j] = model.new_bool_var(f"x{i}_{j}")
                arcs.append((i, j, chosen[i, j]))
    model.add_circuit(arcs)
    model.minimize(sum(int(costs[i, j]) * var for (i, j), var in chosen.items()))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_time_in_seconds = EXACT_TIME_LIMIT_S
    if solver.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return list(range(len(matrix)))
    following = {i: j for (i, j), var in chosen.items() if solver.value(var)}
    order = [0]
    while order[-1] != finish:
        order.append(following[order[-1]])
    return order if end is not None else order[:-1]


def _solve_ortools(matrix: NDArray[np.float64], end: int | None, time_limit_ms: int) -> list[int]:
    # lazy: OR-Tools takes 0.45 s to import
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    n = len(matrix)
    costs, finish = _costs(matrix, end)
    size = len(costs)
    manager = pywrapcp.RoutingIndexManager(size, 1, [0], [finish])
    routing = pywrapcp.RoutingModel(manager)
    table = costs.tolist()

    def cost(i: int, j: int) -> int:
        return table[manager.IndexToNode(i)][manager.IndexToNode(j)]

    routing.SetArcCostEvaluatorOfAllVehicles(routing.RegisterTransitCallback(cost))
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = (
        routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    )
    params.time_limit.FromMilliseconds(time_limit_ms)
    solution = routing.SolveWithParameters(params)
    if solution is None:  # cannot happen on a complete matrix; keep the given order
        return list(range(n)) if end is None else [i for i in range(n) if i != end] + [end]
    order = []
    index = routing.Start(0)
    while not routing.IsEnd(index):
        order.append(manager.IndexToNode(index))
        index = solution.Value(routing.NextVar(index))
    if end is not None:
        order.append(end)
    return order


def optimize_matrix(
    matrix: NDArray[np.float64],
    *,
    end: int | None = None,
    time_limit_ms: int = SOLVER_TIME_LIMIT_MS,
) -> OptimizedOrder:
    """Best visiting order of the indices of a distance matrix, starting at index 0.

    Parameters
    ----------
    matrix
        ``(n, n)`` distances (finite).
    end
        Index that must come last, or ``None`` for a free end.
    time_limit_ms
        Search budget of the routing solver (sets above :data:`EXACT_UP_TO` stops).
    """
    n = len(matrix)
    given = list(range(n)) if end is None else [i for i in range(n) if i != end] + [end]
    if n <= 2:
        return OptimizedOrder(tuple(given), tour_length(matrix, given), tour_length(matrix, given))
    if n <= EXACT_UP_TO:
        order = _solve_exact(matrix, end)
    else:
        order = _solve_ortools(matrix, end, time_limit_ms)
    length = tour_length(matrix, order)
    given_length = tour_length(matrix, given)
    if given_length < length:  # never worse than what the user gave
        order, length = given, given_length
    return OptimizedOrder(tuple(order), length, given_length)


def optimize_order(
    graph: StreetGraph,
    stops: Sequence[int],
    *,
    fixed_end: bool = False,
    labels: Sequence[str] | None = None,
    time_limit_ms: int = SOLVER_TIME_LIMIT_MS,
) -> tuple[list[int], OptimizedOrder]:
    """Order viewpoints ``stops`` (the first is the start) for the shortest walk.

    Parameters
    ----------
    graph
        The street graph.
    stops
        Node indices; ``stops[0]`` is the start, and with ``fixed_end`` ``stops[-1]`` the end.
    fixed_end
        Keep the last stop last (else the end is free).
    labels
        Names of the stops, for error messages.

    Returns
    -------
    tuple
        ``(ordered node indices, OptimizedOrder over stop indices)``.

    Raises
    ------
    UnreachableError
        A stop cannot be reached from the start (or the start from it).
    """
    if not len(stops):
        raise ValueError("stops must not be empty")
    matrix = distance_matrix(graph, stops)
    check_reachable(matrix, labels)
    result = optimize_matrix(
        matrix,
        end=len(stops) - 1 if fixed_end and len(stops) > 1 else None,
        time_limit_ms=time_limit_ms,
    )
    return [int(stops[i]) for i in result.order], result

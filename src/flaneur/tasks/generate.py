"""Generate CitySeeker-style implicit-need tasks on any city pack.

For each need template (see :mod:`flaneur.tasks.needs`), the matching places are found and
every place is *linked* to the viewpoints within ``visible_radius_m`` (50 m, as CitySeeker
links places to viewpoints). A start node qualifies when the nearest matching place (in hops
to any of its linked viewpoints) is between ``min_hops`` and ``max_hops`` away and no other
matching place is as close. The reference path is a shortest path from the start to the
nearest linked viewpoint of that place. Ordered multi-goal tasks chain two such legs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Annotated, Any

import numpy as np
from numpy.typing import NDArray

from flaneur.errors import FlaneurError
from flaneur.options import Range, option
from flaneur.tasks.episode import Episode
from flaneur.tasks.generators import Generator
from flaneur.tasks.needs import TASK_CATEGORIES, NeedTemplate, PlaceMatcher, load_templates
from flaneur.world.city import City

GENERATOR_VERSION = 1
_FAR = np.iinfo(np.int32).max


@dataclass
class GoalField:
    """Hop distances from every node to each matching place of one matcher.

    Attributes
    ----------
    rows
        Place rows that match.
    hops
        ``(len(rows), n_nodes)`` hops from each node to the nearest viewpoint linked to the
        place (``_FAR`` when unreachable or the place has no linked viewpoint).
    linked
        For each place, the node indices within the visible radius.
    """

    rows: NDArray[np.int64]
    hops: NDArray[np.int64]
    linked: list[NDArray[np.int64]]
    _nearest: tuple | None = field(default=None, repr=False)

    @classmethod
    def build(cls, city: City, matcher: PlaceMatcher, radius_m: float) -> GoalField:
        """Compute the field for ``matcher`` on ``city``."""
        graph = city.graph
        rows = matcher.matches(city.places)
        linked = [graph.nodes_within_xy(city.places.xy[r], radius_m) for r in rows]
        hops = (
            graph.hop_distances_to_sets(linked).astype(np.int64).reshape(len(rows), graph.n_nodes)
        )
        hops[hops < 0] = _FAR
        return cls(rows, hops, linked)

    def nearest(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """Per node: index (into rows) of the nearest place, its hops, and the runner-up hops."""
        if self._nearest is None:
            self._nearest = self._compute_nearest()
        return self._nearest

    def _compute_nearest(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        if len(self.rows) == 0:
            n = self.hops.shape[1]
            return np.full(n, -1), np.full(n, _FAR), np.full(n, _FAR)
        best = self.hops.argmin(axis=0)
        best_hops = self.hops.min(axis=0)
        if len(self.rows) == 1:
            return best, best_hops, np.full_like(best_hops, _FAR)
        second = np.partition(self.hops, 1, axis=0)[1]
        return best, best_hops, second

    def target_viewpoint(self, city: City, j: int, start: int) -> int:
        """The linked viewpoint of place ``j`` nearest (in hops) to ``start``; ties by metres."""
        nodes = self.linked[j]
        dist = city.graph.hop_distances_to(nodes)[:, start].astype(np.int64)
        dist[dist < 0] = _FAR
        metres = np.hypot(*(city.graph.xy[nodes] - city.places.xy[self.rows[j]]).T)
        return int(nodes[np.lexsort((metres, dist))[0]])


@dataclass
class GenerationReport:
    """What :func:`generate_need_tasks` made and skipped."""

    episodes: list[Episode]
    counts: dict[str, int]
    skipped: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Counts per category and the skipped templates with reasons."""
        return {"episodes": len(self.episodes), "counts": self.counts, "skipped": self.skipped}


def _start_heading(city: City, node: int, rng: np.random.Generator) -> float:
    headings = city.graph.out_headings(node)
    return float(headings[rng.integers(len(headings))]) if len(headings) else 0.0


def _leg_candidates(field_: GoalField, min_hops: int, max_hops: int) -> NDArray[np.int64]:
    _, best_hops, second = field_.nearest()
    ok = (best_hops >= min_hops) & (best_hops <= max_hops) & (second > best_hops)
    return np.flatnonzero(ok)


def generate_need_tasks(
    city: City,
    *,
    seed: int = 0,
    per_template: int = 2,
    categories: tuple[str, ...] | None = None,
    min_hops: int = 5,
    max_hops: int = 25,
    visible_radius_m: float = 50.0,
    max_steps: int = 35,
    templates: list[NeedTemplate] | None = None,
    set_name: str | None = None,
) -> GenerationReport:
    """Generate implicit-need episodes on ``city``.

    Parameters
    ----------
    city
        Any city with places.
    seed
        Seed of the start-node sampling (same seed, same tasks).
    per_template
        Episodes per need template (fewer where fewer start nodes qualify).
    categories
        Restrict to these task categories (see :data:`TASK_CATEGORIES`).
    min_hops, max_hops
        Range of hops from the start to the nearest matching place.
    visible_radius_m
        A place is visible from (linked to) the viewpoints within this radius.
    max_steps
        Step limit of each episode (CitySeeker: 35).
    templates
        Need templates (default: the packaged table).
    set_name
        Prefix of episode ids (default ``"<city>-needs"``).

    Raises
    ------
    FlaneurError
        If a requested category is unknown, or no task of a requested category can be made
        (too few matching places), naming the category and the reasons.
    """
    _check_categories(categories)
    if len(city.places) == 0:
        raise FlaneurError(f"city {city.name!r} has no places: need tasks cannot be generated")
    templates = load_templates() if templates is None else templates
    wanted = [t for t in templates if categories is None or t.category in categories]
    search = _NeedSearch(
        city, np.random.default_rng(seed), min_hops, max_hops, visible_radius_m, max_steps, seed
    )
    prefix = set_name or f"{city.name}-needs"
    episodes: list[Episode] = []
    skipped: dict[str, str] = {}
    for template in wanted:
        first = search.field_for(template.goals[0])
        if len(first.rows) == 0:
            skipped[template.key] = f"no place matches {template.goals[0].describe()}"
            continue
        starts = _leg_candidates(first, min_hops, max_hops)
        if starts.size == 0:
            skipped[template.key] = (
                f"{len(first.rows)} matching place(s) but no start {min_hops}-{max_hops} hops "
                "from a unique nearest one"
            )
            continue
        made = 0
        for start in search.rng.permutation(starts).tolist():
            episode = search.episode(template, start, f"{prefix}-{len(episodes):04d}")
            if episode is None:
                continue
            episodes.append(episode)
            made += 1
            if made >= per_template:
                break
        if made == 0:
            skipped[template.key] = "no start gives a unique nearest place for every goal"
    return GenerationReport(
        episodes, _category_counts(city, episodes, categories, skipped), skipped
    )


def _check_categories(categories: tuple[str, ...] | None) -> None:
    """A :class:`FlaneurError` naming the requested categories that are unknown."""
    if categories is not None:
        unknown = [c for c in categories if c not in TASK_CATEGORIES]
        if unknown:
            raise FlaneurError(
                f"unknown task categor(y/ies) {unknown}; choose from {list(TASK_CATEGORIES)}"
            )


def _category_counts(
    city: City,
    episodes: list[Episode],
    categories: tuple[str, ...] | None,
    skipped: dict[str, str],
) -> dict[str, int]:
    """Episodes per category (every category when none was requested); a
    :class:`FlaneurError` with the reasons when a requested category got none."""
    counts = dict(Counter(e.category for e in episodes))
    counts = {c: counts.get(c, 0) for c in TASK_CATEGORIES if c in counts or categories is None}
    if categories is not None:
        empty = [c for c in categories if counts.get(c, 0) == 0]
        if empty:
            reasons = "; ".join(f"{k}: {v}" for k, v in skipped.items() if k.split(":")[0] in empty)
            raise FlaneurError(
                f"city {city.name!r} has too few places for task categor(y/ies) {empty} ({reasons})"
            )
    return counts


@dataclass(frozen=True)
class NeedOptions:
    """Options of the ``needs`` generator (``tasks generate CITY --kind needs -T KEY=VALUE``)."""

    per_template: Annotated[int, Range(1, 1000)] = option(2, "episodes per need template")
    categories: tuple[str, ...] = option((), "task categories to make (default: all eight)")
    min_hops: Annotated[int, Range(1, 10_000)] = option(5, "fewest hops from start to target")
    max_hops: Annotated[int, Range(1, 10_000)] = option(25, "most hops from start to target")

    def __post_init__(self) -> None:
        if self.max_hops < self.min_hops:
            raise FlaneurError(
                f"max_hops {self.max_hops} is below min_hops {self.min_hops} (a reversed range)"
            )


class NeedTasks(Generator):
    """CitySeeker-style implicit-need tasks (see :func:`generate_need_tasks`); ``size``
    caps the number of episodes (default: every template, ``per_template`` each)."""

    kind = "navigation"
    version = GENERATOR_VERSION
    success_metric = "tcp"
    scheme = "headings"
    description = "CitySeeker-style implicit-need tasks (I'm thirsty, ...)"
    default_size = 10_000
    Options = NeedOptions

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[Episode], dict[str, Any]]:
        report = generate_need_tasks(
            city,
            seed=seed,
            per_template=options.per_template,
            categories=options.categories or None,
            min_hops=options.min_hops,
            max_hops=options.max_hops,
            set_name=set_name,
        )
        return report.episodes[:size], {"counts": report.counts, "skipped": report.skipped}


@dataclass
class _NeedSearch:
    """One generation's city, hop limits and seeded sampler, and the goal fields made so far
    (one per place matcher, shared by the templates)."""

    city: City
    rng: np.random.Generator
    min_hops: int
    max_hops: int
    radius: float
    max_steps: int
    seed: int
    fields: dict[PlaceMatcher, GoalField] = field(default_factory=dict)

    def field_for(self, matcher: PlaceMatcher) -> GoalField:
        """The goal field of ``matcher`` (made on first use)."""
        if matcher not in self.fields:
            self.fields[matcher] = GoalField.build(self.city, matcher, self.radius)
        return self.fields[matcher]

    def episode(self, template: NeedTemplate, start: int, episode_id: str) -> Episode | None:
        """The episode of ``template`` from ``start``, or None unless every leg reaches a
        unique nearest place of its goal within the hop limits (and the places differ)."""
        city = self.city
        graph, places = city.graph, city.places
        path: list[int] = [start]
        goal_nodes: list[int] = []
        goal_places: list[int] = []
        leg_hops: list[int] = []
        here = start
        for k, matcher in enumerate(template.goals):
            field_ = self.field_for(matcher)
            best, best_hops, second = field_.nearest()
            low = self.min_hops if k == 0 else 2
            if not (low <= best_hops[here] <= self.max_hops and second[here] > best_hops[here]):
                return None
            j = int(best[here])
            target = field_.target_viewpoint(city, j, here)
            leg = graph.shortest_path(here, target)
            path += leg[1:]
            goal_nodes.append(target)
            goal_places.append(int(field_.rows[j]))
            leg_hops.append(int(best_hops[here]))
            here = target
        if len(set(goal_places)) < len(goal_places):
            return None
        last = template.goals[-1]
        names = [str(places.names[r]) or places[r].label for r in goal_places]
        return Episode(
            id=episode_id,
            city=city.name,
            instruction=template.text,
            start_node=str(graph.ids[start]),
            start_heading=_start_heading(city, start, self.rng),
            goal_nodes=tuple(str(graph.ids[v]) for v in goal_nodes),
            goal_place_ids=tuple(str(places.ids[r]) for r in goal_places),
            goal_categories=last.categories,
            reference_path=tuple(str(graph.ids[v]) for v in path),
            category=template.category,
            max_steps=max(self.max_steps, len(path) + 10),
            metadata={
                "need": template.text,
                "template": template.key,
                "goals": [m.to_json() for m in template.goals],
                "target_names": names,
                "hops": leg_hops,
                "ordered": len(template.goals) > 1,
                "visible_radius_m": self.radius,
                "generator": f"flaneur.tasks.generate v{GENERATOR_VERSION}",
                "seed": self.seed,
            },
        )

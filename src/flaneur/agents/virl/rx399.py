"""RX-399, V-IRL's urban assistance robot: walk a route and count street furniture.

The scenario (``virl-rx399``, :mod:`flaneur.bench.survey_scenarios`) holds the persona,
``start``, ``end``, the ``labels`` to count and the ``route`` its generator resolved (graph
node ids from ``start`` to ``end``). RX-399 walks it: at every viewpoint it takes
``views_per_point`` views (fov 60 around the travel heading; a full turn of ``360 / n``
degrees each for more than three), detects the labels, confirms each box by active detection
(re-aimed, zoomed views: up to ``looks`` per box; or one ``passive`` pass), and
de-duplicates the sightings in a visual memory (:mod:`flaneur.perception.survey`,
:mod:`flaneur.perception.memory`).

How it perceives is its options (:class:`RobotOptions`): the detector (the scene simulator
on synthetic views by default, seeded by ``seed`` or else the run's ``--seed``; or
``yolo-world``, ``yolo``, ``owlvit`` with ``weights``), the views, the thresholds, and a
``memory`` (``memory.json`` of an earlier run) to continue from. Views come from the run's
``--views`` provider (``flaneur run --views``, ``flaneur virl rx399 --views``: synthetic,
``panorama:DIR``, ``google``, ``mapillary`` or a plug-in), else from the city's synthetic
views, made as ``--views synthetic`` makes them. The scene simulator and the oracle report
what the offline renderer drew: with other views the run stops before it starts, one line.

The plan (JSON-ready; RX-399 writes no file) holds the count table per category of the
objects *along the way* (estimated within :data:`~flaneur.perception.survey.RANGE_M`, 20 m,
of a walked viewpoint; ``counted_beyond_route`` says how many more it saw farther off), one
row per counted object (category, position, best sighting: node, heading, box, label), the
walked nodes, the number of views, and the visual memory as data (``memory``: every object
seen), which :func:`flaneur.bench.survey_scenarios.score_robot` scores and ``flaneur virl
rx399`` saves as ``memory.json``.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from flaneur.agents.base import Planner, SolveInfo
from flaneur.errors import DataError, FlaneurError
from flaneur.options import Range, option
from flaneur.perception.detection import (
    DETECTORS,
    REAL_DETECTORS,
    Detector,
    check_detector_views,
    check_scene_provider,
    make_detector,
)
from flaneur.perception.detection.active import ACTIVE_THRESHOLD, PASSIVE_THRESHOLD
from flaneur.perception.memory import VisualMemory
from flaneur.perception.survey import (
    SurveyResult,
    SurveySettings,
    furniture_labels,
    object_rows,
    objects_along,
    survey_route,
)
from flaneur.tasks.items import TaskItem
from flaneur.views.registry import views_from_spec
from flaneur.world.city import City

PROPOSAL_THRESHOLD = 0.45
"""Proposal threshold of active detection (the calibrated setting, see docs/detection.md)."""


@dataclass(frozen=True)
class RobotOptions:
    """How RX-399 perceives (``flaneur virl rx399 FILE looks=2``, ``--option rx399.seed=3``)."""

    views_per_point: Annotated[int, Range(1, 12)] = option(
        3, "views at each viewpoint (3: fov 60 ahead; more: a full turn)"
    )
    view_size: Annotated[int, Range(64, 2048)] = option(640, "side of every view in pixels")
    looks: Annotated[int, Range(1, 5)] = option(
        1, "zoomed views at most per box (1: V-IRL's single check)"
    )
    active: bool = option(True, "confirm every box by active detection (false: one pass)")
    threshold: Annotated[float, Range(0.0, 1.0)] | None = option(
        None, "proposal threshold (default 0.45 active, 0.55 passive)"
    )
    min_fov: Annotated[float, Range(5.0, 120.0)] = option(
        30.0, "narrowest zoomed field of view in degrees"
    )
    detector: str = option(
        "scene", "scene (simulator), oracle, yolo-world, yolo, owlvit, a plug-in"
    )
    weights: str = option("", "model weights of a real detector (file or folder)")
    noise: Literal["default", "virl"] = option("default", "the scene simulator's error model")
    seed: Annotated[int, Range(0, 999_999)] | None = option(
        None, "the scene simulator's seed (default: the run's --seed)"
    )
    memory: str = option("", "a visual memory (memory.json of an earlier run) to continue from")

    def __post_init__(self) -> None:
        usable = [n for n in DETECTORS.names() if n != "ocr"]
        if self.detector not in usable:
            raise DataError(
                f"option 'detector': {self.detector!r} is not one of {', '.join(usable)}"
            )
        if self.detector in REAL_DETECTORS:
            if not self.weights.strip():
                raise DataError(
                    f"option 'weights' is required with detector {self.detector!r}: "
                    "the model file's path"
                )
            if not Path(self.weights).expanduser().exists():
                raise DataError(f"option 'weights': {self.weights} not found")


def scenario_labels(item: TaskItem) -> dict[str, str]:
    """``{label: category}`` of the scenario's ``labels`` (checked: street furniture)."""
    labels = item.get("labels")
    if not isinstance(labels, list | tuple) or not all(isinstance(x, str) for x in labels):
        raise DataError(f"scenario {item.id!r}: field 'labels' must be a list of names")
    try:
        return furniture_labels(labels)
    except FlaneurError as err:
        raise DataError(f"scenario {item.id!r}: field 'labels': {err}") from None


def scenario_nodes(city: City, item: TaskItem, field: str) -> list[int]:
    """Node indices of the scenario's list of node ids ``field`` (checked)."""
    ids = item.get(field)
    if not isinstance(ids, list) or not ids or not all(isinstance(n, str) for n in ids):
        raise DataError(f"scenario {item.id!r}: field {field!r} must be a list of node ids")
    missing = [n for n in ids if n not in city.graph]
    if missing:
        raise DataError(
            f"scenario {item.id!r}: node {missing[0]!r} of {field!r} is not in {city.name}"
        )
    return [city.graph.index(n) for n in ids]


class RobotAgent(Planner):
    """RX-399 on ``virl-rx399`` scenarios (see the module docstring)."""

    name: ClassVar[str] = "rx399"
    solves: ClassVar[tuple[str, ...]] = ("virl-rx399",)
    Options: ClassVar[type] = RobotOptions

    def __init__(self, **options: Any) -> None:
        self.options = self.Options(**options)
        self._memory = VisualMemory.load(self.options.memory) if self.options.memory else None
        self._detectors: dict[int, Detector] = {}
        self._views: dict[int, Any] = {}
        if self.options.seed is not None or self.options.detector != "scene":
            self.detector(0)  # a real detector fails here, before any scenario runs

    @classmethod
    def check_setup(cls, options: dict[str, Any], setup: Any) -> None:
        """The scene simulator and the oracle need synthetic views (``--views synthetic`` or
        none)."""
        check_detector_views(str(options.get("detector") or "scene"), setup.views)

    def settings(self) -> SurveySettings:
        """The survey settings of the options."""
        o = self.options
        n = o.views_per_point
        default = PROPOSAL_THRESHOLD if o.active else PASSIVE_THRESHOLD
        return SurveySettings(
            views_per_point=n,
            fov=360.0 / n if n > 3 else 60.0,
            size=(o.view_size, o.view_size),
            active=o.active,
            threshold=default if o.threshold is None else o.threshold,
            active_threshold=ACTIVE_THRESHOLD,
            min_fov=o.min_fov,
            looks=o.looks,
        )

    def detector(self, run_seed: int) -> Detector:
        """The detector (one per seed: the option's, else the run's)."""
        o = self.options
        seed = o.seed if o.seed is not None else run_seed
        key = seed if o.detector == "scene" else 0
        if key not in self._detectors:
            if o.detector == "scene":
                made = make_detector("scene", seed=seed, noise=o.noise)
            elif o.detector in REAL_DETECTORS:
                made = make_detector(o.detector, weights=o.weights)
            else:
                made = make_detector(o.detector)
            self._detectors[key] = made
        return self._detectors[key]

    def provider(self, info: SolveInfo) -> Any:
        """The run's view provider, else the city's offline renderer (made once, as
        ``--views synthetic`` makes it)."""
        if info.views is not None:
            return info.views
        key = id(info.city)
        if key not in self._views:
            self._views[key] = views_from_spec("synthetic", info.city)
        return self._views[key]

    def start_memory(self, city: City) -> VisualMemory:
        """A fresh visual memory, or a copy of the one to continue from (same city)."""
        if self._memory is None:
            return VisualMemory()
        for obj in self._memory.objects:
            for s in obj.sightings:
                if s.node not in city.graph:
                    raise DataError(
                        f"visual memory {self.options.memory} was made in another city "
                        f"(viewpoint {s.node!r} is not in {city.name})"
                    )
        return VisualMemory.from_dict(self._memory.to_dict())

    async def walk(
        self, item: TaskItem, info: SolveInfo, nodes: list[int]
    ) -> tuple[SurveyResult, dict[str, str]]:
        """Look around at ``nodes`` in order and count the scenario's labels."""
        labels = scenario_labels(item)
        memory = self.start_memory(info.city)
        provider = self.provider(info)
        detector = self.detector(info.seed)
        check_scene_provider(detector, provider, str(self.options.detector))
        walked = await asyncio.to_thread(
            survey_route,
            provider,
            info.city,
            nodes,
            detector,
            list(labels),
            self.settings(),
            memory=memory,
        )
        return walked, labels

    def plan(self, city: City, walked: SurveyResult, labels: dict[str, str]) -> dict[str, Any]:
        """What both vision agents report of a walk (see the module docstring)."""
        counts = walked.counts()
        return {
            "labels": list(labels),
            "viewpoints": len(walked.route),
            "views": walked.views,
            "sightings": walked.sightings,
            "counts": {c: counts.get(c, 0) for c in dict.fromkeys(labels.values())},
            "objects": object_rows(city, walked.memory),
            "settings": {**asdict(walked.settings), "detector": self.options.detector},
            "memory": walked.memory.to_dict(),
        }

    async def solve(self, item: TaskItem, info: SolveInfo) -> dict[str, Any]:
        """Walk the scenario's route and count its labels along it."""
        route = scenario_nodes(info.city, item, "route")
        walked, labels = await self.walk(item, info, route)
        plan = self.plan(info.city, walked, labels)
        along = objects_along(info.city, walked.memory, route)
        kept = [o for o in plan["objects"] if o["id"] in along]
        return self.counted(list(item["route"]), plan, kept, "counted_beyond_route")

    @staticmethod
    def counted(walked: list[str], plan: dict[str, Any], kept: list[dict], others: str) -> dict:
        """The plan of a walk counting only the ``kept`` objects (``others``: the key of how
        many more it counted)."""
        counts = {c: sum(o["category"] == c for o in kept) for c in plan["counts"]}
        more = len(plan["objects"]) - len(kept)
        return {"walked": walked, **plan, "counts": counts, "objects": kept, others: more}

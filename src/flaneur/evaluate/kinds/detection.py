"""V-IRL's place detection benchmark as a task kind of the one runner (``virl-detection``).

A detector (:data:`flaneur.perception.detection.DETECTORS`: ``scene``, ``oracle``, ``ocr``,
``yolo-world``, ``yolo``, ``owlvit`` or a plug-in) is prompted with the words of the set's
place types on every view of a viewpoint (``item["views"]``: ``[heading, fov]`` at the
item's pitch); the views come from the run's ``--views`` provider when given, else from the
city's :class:`~flaneur.views.synthetic.SyntheticViews` (made once per task set). Detectors
that report what the renderer drew (the scene simulator, the oracle) are set up for the
city's places first (:meth:`~flaneur.perception.detection.Detector.with_places`; the
simulator then draws with its ``seed`` option, else the run's ``--seed``); they need
synthetic views.

A row's result holds every box: its view, type, score, pixel box and the compass span of its
edges. Row metrics (:func:`detection_row_metrics`): ``places`` near the viewpoint,
``recalled`` and ``localised`` places, ``boxes``, ``matched_boxes``, ``correct_boxes``,
``recall`` (the success metric: the share of the viewpoint's (place, type) pairs a correct
box recalled; a row succeeds when it recalled any), ``localisation`` and ``box_accuracy``.
Task-set figures (:func:`flaneur.bench.detection_metrics.detection_figures`): ``ar``,
``ar10``, ``ar20``, ``ar_localisation`` and ``box_accuracy``, over the places of all scored
viewpoints, each with a 95% interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from flaneur.agents.base import SolveInfo
from flaneur.bench.detection import item_places, match_boxes
from flaneur.bench.detection_metrics import detection_figures
from flaneur.bench.types import VIRL_TO_FLANEUR, load_type_list, type_label
from flaneur.errors import DataError, FlaneurError
from flaneur.evaluate.kinds.base import Job, TaskContext
from flaneur.evaluate.kinds.items import ItemKind, viewing
from flaneur.perception.detection import (
    DETECTORS,
    Detector,
    check_detector_views,
    check_scene_provider,
)
from flaneur.registry import Registry
from flaneur.tasks.items import TaskItem
from flaneur.tasks.spec import TaskSpec
from flaneur.views.registry import views_from_spec
from flaneur.world.city import City


@dataclass
class DetectionState:
    """What the jobs of one detection task set share: the city, its offline renderer
    (``None`` when the run has ``--views``) and, per detector instance, prompt and run seed,
    the detector set up for the city's places."""

    city: City
    synthetic: Any = None
    set_up: dict[tuple[int, tuple[str, ...], int], Detector] = field(default_factory=dict)

    def detector(self, solver: Detector, labels: dict[str, tuple[str, ...]], seed: int) -> Detector:
        """``solver`` set up for the city's places, the prompt's ``{word: categories}`` and
        the run's ``seed`` (once per detector instance, prompt and seed)."""
        key = (id(solver), tuple(labels), seed)
        if key not in self.set_up:
            places = self.city.places
            categories = {str(places.ids[r]): places.categories[r] for r in range(len(places))}
            self.set_up[key] = solver.with_places(categories, labels, seed=seed)
        return self.set_up[key]


def item_types(item: TaskItem) -> tuple[str, ...]:
    """The item's type list (checked): the detector's prompt."""
    try:
        return load_type_list(item.get("types") or [])
    except FlaneurError as err:
        raise DataError(f"item {item.id!r}: field 'types': {err}") from None


def view_list(item: TaskItem) -> list[tuple[float, float]]:
    """The item's ``(heading, fov)`` views (checked)."""
    views = item.get("views")
    ok = isinstance(views, list) and all(
        isinstance(v, list | tuple)
        and len(v) == 2
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)
        for v in views
    )
    if not ok or not views:
        raise DataError(f"item {item.id!r}: field 'views' must be a list of [heading, fov]")
    return [(float(h), float(f)) for h, f in views]


def detection_row_metrics(item: TaskItem, result: dict[str, Any]) -> dict[str, Any]:
    """The metrics of one scored viewpoint (see the module docstring)."""
    places = item_places(item)
    boxes = match_boxes(item, result["boxes"])
    matched = [b for b in boxes if b["place"] is not None]
    recalled = {(b["place"], b["type"]) for b in matched if b["correct"]}
    pairs = [(p["id"], t) for p in places for t in p["types"]]
    localised = {b["place"] for b in matched}
    correct = sum(b["correct"] for b in matched)
    return {
        "places": len(places),
        "recalled": len({pid for pid, _ in recalled}),
        "localised": len(localised),
        "boxes": len(boxes),
        "matched_boxes": len(matched),
        "correct_boxes": correct,
        "recall": sum(p in recalled for p in pairs) / len(pairs) if pairs else None,
        "localisation": len(localised) / len(places) if places else None,
        "box_accuracy": correct / len(matched) if matched else None,
    }


class DetectionKind(ItemKind):
    """V-IRL's place detection (``virl-detection``; see the module docstring)."""

    name = "virl-detection"
    solver_what = "detector"

    def solvers(self) -> Registry[Any]:
        return DETECTORS

    def check_setup(
        self, name: str, cls: Any, *, options: dict[str, Any], config: Any, scheme: str
    ) -> None:
        super().check_setup(name, cls, options=options, config=config, scheme=scheme)
        check_detector_views(name, getattr(config, "views", None))

    def prepare(self, spec: TaskSpec, city: City, items: list[Any], config: Any) -> Any:
        """The city's offline renderer (unless the run has ``--views``; made as ``--views
        synthetic`` makes it, with the scene cache) and its places."""

        synthetic = None if getattr(config, "views", None) else views_from_spec("synthetic", city)
        return DetectionState(city, synthetic)

    async def solve(self, job: Job, solver: Any, info: SolveInfo) -> dict[str, Any]:
        item = job.item
        types = item_types(item)
        labels = {type_label(t): VIRL_TO_FLANEUR[t] for t in types}
        detector = job.context.state.detector(solver, labels, info.seed)
        provider = info.views if info.views is not None else job.context.state.synthetic
        check_scene_provider(detector, provider, job.agent)
        node, pitch = item.get("node"), item.get("pitch", 0.0)
        if not isinstance(node, str) or not isinstance(pitch, int | float):
            raise DataError(f"item {item.id!r}: fields 'node' and 'pitch' are malformed")
        with viewing(item):
            views = [
                provider.view(node, heading, pitch=float(pitch), fov=fov)
                for heading, fov in view_list(item)
            ]
        found = detector.detect_batch(views, list(labels))
        words = {type_label(t): t for t in types}
        boxes = []
        for k, (view, dets) in enumerate(zip(views, found, strict=True)):
            for det in dets:
                left, right = view.bearing_of_x(det.box[0]), view.bearing_of_x(det.box[2])
                boxes.append(
                    {
                        "view": k,
                        "type": words.get(det.label, det.label),
                        "score": round(float(det.score), 4),
                        "box": [round(float(v), 1) for v in det.box],
                        "span": [round(left, 2), round(right, 2)],
                    }
                )
        return {"node": node, "views": len(views), "boxes": boxes}

    def score_item(self, item: TaskItem, result: dict[str, Any], context: TaskContext) -> dict:
        return detection_row_metrics(item, result)

    def aggregate(
        self, rows: Sequence[dict[str, Any]], context: TaskContext
    ) -> dict[str, Any] | None:
        items = {str(it.id): it for it in context.items}
        done = sorted(
            (r for r in rows if r.get("metrics") and str(r["episode_id"]) in items),
            key=lambda r: str(r["episode_id"]),
        )
        if not done:
            return None
        viewpoints = []
        types: dict[str, None] = {}
        for row in done:
            item = items[str(row["episode_id"])]
            types.update(dict.fromkeys(item_types(item)))
            viewpoints.append((item_places(item), match_boxes(item, row["result"]["boxes"])))
        return detection_figures(viewpoints, list(types))


__all__ = ["DetectionKind", "DetectionState", "detection_row_metrics", "item_types"]

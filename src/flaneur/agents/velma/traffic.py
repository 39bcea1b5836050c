"""VELMA's traffic flow on Touchdown: ``You are aligned with the flow of the traffic.``

VELMA tells its Touchdown agents, with the first observation, whether they start facing the
way the traffic drives (``vln/dataset.py`` ``preprocess_touchdown_instance``, l.46-98;
``vln/env.py`` l.63-64; ``vln/prompt_builder.py`` l.53-55):

* the heading *ahead* is the start heading snapped to the closest street of the start
  panorama, the heading *behind* is that minus 180 degrees, snapped the same way;
* for each vehicle class (``car``, ``truck``, ``bus``, in that order) found in the view
  ahead and then in the view behind, a crop of the vehicle (VELMA's
  ``flow_of_traffic_images.pickle``, made by a detector it does not release) is scored by
  CLIP against ``the rear view of a {vehicle}``, ``the front view of a {vehicle}`` and ``a
  {vehicle} from the side`` (``get_score``: the cosine similarity of the unit embeddings
  times ``exp(2.6592)``, VELMA's fixed logit scale; the text embedded as it is);
* a vehicle counts when its side score is below the larger of the other two: ahead, its rear
  score adds to *with* the flow and its front score to *against*; behind, the other way
  round;
* the flow is ``with`` when the *with* sum is larger, else ``against``.

flaneur does the same with the run's views (the view ahead and the view behind: VELMA's
60-degree view, the size of the observer's views), a registered open-vocabulary detector
(:data:`flaneur.perception.detection.DETECTORS`: ``owlvit``, ``grounding-dino``,
``yolo-world``, ``yolo`` or a plug-in) whose highest-scoring box of each vehicle class is
cropped, and the CLIP model of ``--landmarks clip``. Where VELMA's code would still print
``against`` with no vehicle at all (its default), flaneur prints no traffic line and
records why (:meth:`TrafficFlow.predict`).
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from PIL import Image

from flaneur.env.schemes.turns import TurnsScheme
from flaneur.errors import FlaneurError
from flaneur.perception.detection import DETECTORS, Detection, Detector, make_detector
from flaneur.perception.landmarks.clip import CLIPLandmarks
from flaneur.views.base import DEFAULT_SIZE, NoImageryError, View

VEHICLES = ("car", "truck", "bus")
"""VELMA's vehicle classes, in its order."""
SIDES = ("ahead", "behind")
"""The two views VELMA looks at from the start."""
LOGIT_SCALE = math.exp(2.6592)
"""VELMA's CLIP logit scale (``PanoCLIP(logit_scale=2.6592)``, applied as ``exp``)."""
NOT_VEHICLE_DETECTORS = ("scene", "oracle", "ocr")
"""Registered detectors that cannot find vehicles (storefronts and street furniture)."""

Scores = Mapping[tuple[str, str], tuple[float, float, float]]
"""``{(side, vehicle): (rear, front, from the side)}`` of the vehicles found."""
ScoreFn = Callable[[Image.Image, Sequence[str]], Sequence[float]]
"""``score(crop, texts) -> one score per text`` (VELMA's ``get_score``)."""

_DETECTORS: dict[tuple[str, str, float | None], Detector] = {}
_LOCK = threading.Lock()


def orientation_texts(vehicle: str) -> tuple[str, str, str]:
    """VELMA's three texts of ``vehicle``: rear, front and side view."""
    return (
        f"the rear view of a {vehicle}",
        f"the front view of a {vehicle}",
        f"a {vehicle} from the side",
    )


def flow_of_traffic(scores: Scores) -> tuple[str, float, float]:
    """``(flow, with, against)``: VELMA's decision from the scores of the vehicles found.

    A vehicle counts when its side score is below the larger of its rear and front scores:
    ahead it adds its rear score to *with* and its front score to *against*, behind the
    reverse; ``flow`` is ``"with"`` when *with* is larger, else ``"against"`` (ties and no
    counted vehicle included, as VELMA's code decides).
    """
    with_flow = against_flow = 0.0
    for vehicle in VEHICLES:
        for side in SIDES:
            found = scores.get((side, vehicle))
            if found is None:
                continue
            rear, front, from_side = found
            if from_side < max(rear, front):
                if side == "ahead":
                    with_flow += rear
                    against_flow += front
                else:
                    against_flow += rear
                    with_flow += front
    return ("with" if with_flow > against_flow else "against"), with_flow, against_flow


def traffic_line(flow: str) -> str:
    """VELMA's observation: ``You are aligned with the flow of the traffic.``"""
    return f"You are aligned {flow} the flow of the traffic."


def start_headings(scheme: TurnsScheme, node: int, heading: float) -> tuple[float, float]:
    """``(ahead, behind)``: ``heading`` snapped to the closest street of ``node`` (VELMA's
    ``get_closest_heading``, as the ``turns`` scheme snaps the start), and that minus 180
    degrees snapped the same way."""
    ahead = scheme.start(node, heading).heading
    return ahead, scheme.start(node, (ahead - 180.0) % 360.0).heading


def best_boxes(detections: Sequence[Detection]) -> dict[str, Detection]:
    """The highest-scoring box of each vehicle class among ``detections``."""
    best: dict[str, Detection] = {}
    for det in detections:
        if det.label in VEHICLES and (det.label not in best or det.score > best[det.label].score):
            best[det.label] = det
    return best


def crop(image: Image.Image, box: Sequence[float]) -> Image.Image:
    """The pixels of ``box`` (``x0, y0, x1, y1``, widened to whole pixels, at least one)."""
    x0, y0 = max(0, math.floor(box[0])), max(0, math.floor(box[1]))
    x1 = min(image.width, max(x0 + 1, math.ceil(box[2])))
    y1 = min(image.height, max(y0 + 1, math.ceil(box[3])))
    return image.crop((x0, y0, x1, y1))


def clip_scores(backend: Any) -> ScoreFn:
    """VELMA's ``get_score`` on an embedding backend (``embed_images``/``embed_texts``,
    unit rows): cosine similarity times :data:`LOGIT_SCALE`; text embeddings are kept."""
    texts: dict[str, np.ndarray] = {}

    def score(image: Image.Image, queries: Sequence[str]) -> list[float]:
        todo = [q for q in queries if q not in texts]
        if todo:
            texts.update(zip(todo, backend.embed_texts(todo), strict=True))
        embedded = backend.embed_images([image])[0]
        return [float(embedded @ texts[q]) * LOGIT_SCALE for q in queries]

    return score


class TrafficFlow:
    """VELMA's traffic flow at a start node, from a detector's crops and a score function.

    Parameters
    ----------
    detector
        Finds ``car``, ``truck`` and ``bus`` boxes in a view (its own threshold applies).
    score
        ``score(crop, texts)`` (:func:`clip_scores` on the run's CLIP).
    provider
        The run's views.
    fov, size
        Camera of the views ahead and behind.
    key
        What the predictions depend on besides the views (for caches of verbalizations).
    """

    def __init__(
        self,
        detector: Detector,
        score: ScoreFn,
        provider: Any,
        *,
        fov: float = 60.0,
        size: tuple[int, int] = DEFAULT_SIZE,
        key: str = "",
    ) -> None:
        self.detector = detector
        self.score = score
        self.provider = provider
        self.fov = float(fov)
        self.size = (int(size[0]), int(size[1]))
        self.key = key or f"{detector.name}:{id(score)}"
        self._done: OrderedDict[tuple[int, float], dict[str, Any]] = OrderedDict()

    def _view(self, node: int, heading: float) -> View | None:
        try:
            return self.provider.view(node, heading, fov=self.fov, size=self.size)
        except NoImageryError:
            return None

    def _look(self, node: int, side: str, heading: float) -> list[dict[str, Any]]:
        """The best box of each vehicle class in the view towards ``heading`` and its
        scores (``[]`` without imagery there)."""
        view = self._view(node, heading)
        if view is None:
            return []
        found = best_boxes(self.detector.detect(view, list(VEHICLES)))
        rows = []
        for vehicle in VEHICLES:
            det = found.get(vehicle)
            if det is None:
                continue
            rear, front, from_side = self.score(
                crop(view.image, det.box), orientation_texts(vehicle)
            )
            rows.append(
                {
                    "view": side,
                    "vehicle": vehicle,
                    "box": [round(v, 1) for v in det.box],
                    "detection": round(det.score, 4),
                    "rear": float(rear),
                    "front": float(front),
                    "side": float(from_side),
                    "counted": bool(from_side < max(rear, front)),
                }
            )
        return rows

    def predict(self, scheme: TurnsScheme, node: int, heading: float) -> dict[str, Any]:
        """The record of the traffic flow at ``node`` facing ``heading``: ``flow``
        (``"with"`` or ``"against"``; with no vehicle found VELMA's default ``"against"``,
        as its code predicts from empty sums, and ``reason`` says so), the ``with`` and
        ``against`` sums, the headings and each vehicle's box and scores."""
        ahead, behind = start_headings(scheme, node, heading)
        key = (int(node), round(ahead, 6))
        if key in self._done:
            self._done.move_to_end(key)
            return self._done[key]
        vehicles = [*self._look(node, "ahead", ahead), *self._look(node, "behind", behind)]
        record: dict[str, Any] = {
            "flow": None,
            "headings": {"ahead": round(ahead, 2), "behind": round(behind, 2)},
            "detector": self.detector.name,
            "vehicles": vehicles,
        }
        if not vehicles:
            record["reason"] = (
                f"detector {self.detector.name!r} finds no car, truck or bus in the views "
                "ahead and behind: VELMA's default 'against'"
            )
        scores = {(v["view"], v["vehicle"]): (v["rear"], v["front"], v["side"]) for v in vehicles}
        flow, with_flow, against_flow = flow_of_traffic(scores)
        record.update(flow=flow, with_flow=with_flow, against_flow=against_flow)
        self._done[key] = record
        while len(self._done) > 1024:
            self._done.popitem(last=False)
        return record

    async def apredict(self, scheme: TurnsScheme, node: int, heading: float) -> dict[str, Any]:
        """:meth:`predict` in a worker thread (the detector and CLIP run there)."""
        return await asyncio.to_thread(self.predict, scheme, node, heading)

    async def aline(self, scheme: TurnsScheme, node: int, heading: float) -> str | None:
        """The traffic line at ``node`` facing ``heading``."""
        return traffic_line((await self.apredict(scheme, node, heading))["flow"])


# ---------------------------------------------------------------------- set-up
def check_traffic_detector(name: str) -> None:
    """Refuse, in one line, a detector name that is unknown or finds no vehicles."""
    DETECTORS.get(name)
    if name in NOT_VEHICLE_DETECTORS:
        raise FlaneurError(
            f"velma detector {name!r} finds no vehicles: give owlvit, grounding-dino, "
            "yolo-world or yolo (with --option velma.detector_weights=PATH) or a plug-in"
        )


def traffic_detector(name: str, weights: str = "", threshold: float | None = None) -> Detector:
    """The detector ``name`` (with ``weights`` and ``threshold`` when given), one per
    setting in a process (its model loads on first detection).

    Raises
    ------
    FlaneurError
        One line: an unknown name, one that finds no vehicles, missing weights.
    """
    check_traffic_detector(name)
    key = (name, weights, threshold)
    with _LOCK:
        if key not in _DETECTORS:
            options: dict[str, Any] = {"weights": weights} if weights else {}
            if threshold is not None:
                options["threshold"] = threshold
            try:
                _DETECTORS[key] = make_detector(name, **options)
            except FlaneurError as err:
                raise FlaneurError(
                    f"velma detector: {err} (as --option velma.detector_weights=PATH)"
                ) from None
        return _DETECTORS[key]


def traffic_setup(
    dataset: str | None,
    observer: Any,
    detector: str | Detector | None,
    *,
    weights: str = "",
    threshold: float | None = None,
) -> tuple[TrafficFlow | None, str | None]:
    """``(traffic flow, why none)`` of a ``--protocol paper`` episode of ``dataset``.

    Only Touchdown episodes seen through views (``observer`` a
    :class:`~flaneur.agents.velma.verbalize.ViewLandmarkObserver`) have one, as only VELMA's
    Touchdown runs with images do (``(None, None)`` otherwise); it needs the CLIP scorer of
    ``--landmarks clip`` and a ``detector`` (a name, built by :func:`traffic_detector`, or
    an instance), else the reason is the second item.
    """
    sensor = getattr(observer, "sensor", None)
    if dataset != "touchdown" or sensor is None:
        return None, None
    scorer = observer.scorer
    if not isinstance(scorer, CLIPLandmarks):
        name = getattr(scorer, "name", type(scorer).__name__)
        return None, f"VELMA scores the vehicles with CLIP, not with the {name!r} scorer"
    if not detector:
        return None, (
            "no detector finds its vehicles (--option velma.detector=owlvit|grounding-dino|"
            "yolo-world|yolo and --option velma.detector_weights=PATH)"
        )
    named = isinstance(detector, str)
    made = traffic_detector(detector, weights, threshold) if isinstance(detector, str) else detector
    settings = json.dumps(made.settings(), sort_keys=True, default=str)
    key = f"{made.name}:{settings}:{made.threshold}:{getattr(scorer.backend, 'name', '')}"
    if not named:  # an instance given in Python: its settings may not say what it finds
        key += f":{id(made)}"
    flow = TrafficFlow(
        made,
        clip_scores(scorer.backend),
        sensor.provider,
        fov=sensor.fov,
        size=sensor.size,
        key=key,
    )
    return flow, None


__all__ = [
    "LOGIT_SCALE",
    "VEHICLES",
    "TrafficFlow",
    "best_boxes",
    "check_traffic_detector",
    "clip_scores",
    "crop",
    "flow_of_traffic",
    "orientation_texts",
    "start_headings",
    "traffic_detector",
    "traffic_line",
    "traffic_setup",
]

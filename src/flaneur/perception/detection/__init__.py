"""Object detection on views: the detector interface, the registry of detectors, active
detection.

Detectors are found by name in :data:`DETECTORS` (``flaneur run --agent NAME`` on a place
detection task, ``detector = NAME`` of RX-399 and Imani); each class declares its typed
``Options`` (``--option scene.seed=3``), which :func:`make_detector` checks:

* ``scene`` — :class:`SceneDetector`, a *simulator* for synthetic views (reports what the
  renderer drew, with seeded misses, false positives, label confusion and box jitter);
* ``oracle`` — :class:`OracleDetector`, the simulator without errors (the exact boxes the
  renderer drew): the place detection benchmark's oracle;
* ``ocr`` — :class:`StorefrontDetector`, PP-OCR text boxes labelled with a place type;
* ``yolo-world``, ``yolo``, ``owlvit``, ``grounding-dino`` — real models from user weights
  (:class:`YOLOWorldDetector`, :class:`YOLODetector`, :class:`OwlViTDetector` for OWL-ViT
  and OWLv2, :class:`GroundingDinoDetector`).

Outside packages add detectors under the entry-point group ``flaneur.detectors``.
:func:`active_detect` is V-IRL's re-aim-and-zoom check.
"""

from __future__ import annotations

from typing import Any

from flaneur.errors import FlaneurError
from flaneur.options import check_options, options_schema
from flaneur.perception.detection.active import (
    ACTIVE_THRESHOLD,
    PASSIVE_THRESHOLD,
    Sighting,
    active_detect,
    passive_detect,
    zoom_request,
)
from flaneur.perception.detection.adapters import (
    GroundingDinoDetector,
    OwlViTDetector,
    YOLODetector,
    YOLOWorldDetector,
)
from flaneur.perception.detection.base import Detection, DetectionError, Detector
from flaneur.perception.detection.scene import OracleDetector, SceneDetector, SceneNoise
from flaneur.perception.detection.storefront import StorefrontDetector
from flaneur.registry import Registry


def _check_detector(name: str, entry: Any) -> None:
    if not (isinstance(entry, type) and issubclass(entry, Detector)):
        raise FlaneurError(
            f"detector {name!r} is {entry!r}, not a subclass of "
            "flaneur.perception.detection.Detector"
        )


DETECTORS: Registry[type[Detector]] = Registry(
    "detector", group="flaneur.detectors", check=_check_detector
)
"""Detector classes by name (the real models' libraries load on first detection)."""
for _name, _entry in {
    "scene": SceneDetector,
    "oracle": OracleDetector,
    "ocr": StorefrontDetector,
    "yolo-world": YOLOWorldDetector,
    "yolo": YOLODetector,
    "owlvit": OwlViTDetector,
    "grounding-dino": GroundingDinoDetector,
}.items():
    DETECTORS.register(_name, _entry)

REAL_DETECTORS = ("yolo-world", "yolo", "owlvit", "grounding-dino")
"""Built-in detectors that run a model from ``weights`` on any imagery."""


def make_detector(name: str, **options: Any) -> Detector:
    """A detector by name with ``options`` checked against its typed ``Options`` first.

    Raises
    ------
    FlaneurError
        One line: an unknown name (listing the known ones), an option the detector does not
        have, a value of the wrong type or out of range, or a missing weights file.
    """
    cls = DETECTORS.get(name)
    values = check_options(name, options_schema(cls), options, what="detector")
    return cls(**values)


def check_detector_views(name: str, views: str | None) -> None:
    """Raise one line when detector ``name`` reports what the offline renderer drew (the
    scene simulator, the oracle: :class:`SceneDetector` and its subclasses) and the run's
    ``views`` (a ``--views`` value; ``None``: synthetic) are not the synthetic ones.

    Raises
    ------
    FlaneurError
        ``detector 'scene' reports what the offline renderer drew: it needs synthetic
        views, not --views panorama:DIR``; also for an unknown name.
    """
    spec = str(views or "synthetic")
    cls = DETECTORS.get(name)
    if issubclass(cls, SceneDetector) and spec.partition(":")[0] != "synthetic":
        raise FlaneurError(
            f"detector {name!r} reports what the offline renderer drew: it needs synthetic "
            f"views, not --views {spec}"
        )


__all__ = [
    "ACTIVE_THRESHOLD",
    "DETECTORS",
    "PASSIVE_THRESHOLD",
    "REAL_DETECTORS",
    "Detection",
    "DetectionError",
    "Detector",
    "GroundingDinoDetector",
    "OracleDetector",
    "OwlViTDetector",
    "SceneDetector",
    "SceneNoise",
    "Sighting",
    "StorefrontDetector",
    "YOLODetector",
    "YOLOWorldDetector",
    "active_detect",
    "check_detector_views",
    "make_detector",
    "passive_detect",
    "zoom_request",
]

"""Object detection on views: the detector interface, offline and real detectors, active
detection.

* :class:`SceneDetector` — a *simulator* for synthetic views (reports what the renderer
  drew, with seeded misses, false positives, label confusion and box jitter);
* :class:`StorefrontDetector` — PP-OCR text boxes labelled with a place type;
* :class:`YOLOWorldDetector`, :class:`OwlViTDetector` — real models from user weights;
* :func:`active_detect` — V-IRL's re-aim-and-zoom check.
"""

from __future__ import annotations

from typing import Any

from flaneur.perception.detection.active import (
    ACTIVE_THRESHOLD,
    PASSIVE_THRESHOLD,
    Sighting,
    active_detect,
    passive_detect,
    zoom_request,
)
from flaneur.perception.detection.adapters import OwlViTDetector, YOLOWorldDetector
from flaneur.perception.detection.base import Detection, DetectionError, Detector
from flaneur.perception.detection.scene import SceneDetector, SceneNoise
from flaneur.perception.detection.storefront import StorefrontDetector

DETECTORS = ("scene", "ocr", "yolo-world", "yolo", "owlvit")


def make_detector(name: str, *, weights: str | None = None, **kwargs: Any) -> Detector:
    """A detector by name: ``scene`` (simulator), ``ocr``, ``yolo-world``, ``yolo``, ``owlvit``."""
    if name == "scene":
        return SceneDetector(**kwargs)
    if name == "ocr":
        return StorefrontDetector(**kwargs)
    if name in ("yolo-world", "yolo"):
        return YOLOWorldDetector(weights, open_vocabulary=name == "yolo-world", **kwargs)
    if name == "owlvit":
        return OwlViTDetector(weights, **kwargs)
    raise DetectionError(f"unknown detector {name!r}; choose one of {', '.join(DETECTORS)}")


__all__ = [
    "ACTIVE_THRESHOLD",
    "DETECTORS",
    "PASSIVE_THRESHOLD",
    "Detection",
    "DetectionError",
    "Detector",
    "OwlViTDetector",
    "SceneDetector",
    "SceneNoise",
    "Sighting",
    "StorefrontDetector",
    "YOLOWorldDetector",
    "active_detect",
    "make_detector",
    "passive_detect",
    "zoom_request",
]

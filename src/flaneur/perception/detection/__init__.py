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
from flaneur.views.registry import VIEWS
from flaneur.views.synthetic import SyntheticViews


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


IMAGERY_PROVIDERS = ("panorama", "google", "mapillary")
"""``--views`` providers of real imagery: what the scene simulator reports is not in them."""


def check_detector_views(name: str, views: str | None) -> None:
    """Raise one line, before anything runs, when detector ``name`` reports what the offline
    renderer drew (the scene simulator, the oracle: :class:`SceneDetector` and its
    subclasses) and ``views`` (a ``--views`` value; ``None``: synthetic) names real imagery
    (:data:`IMAGERY_PROVIDERS`) or a provider class other than the offline renderer; a
    provider made by a function is checked when it is made (:func:`check_scene_provider`).

    Raises
    ------
    FlaneurError
        ``detector 'scene' reports what the offline renderer drew: it needs synthetic
        views, not --views panorama:DIR``; also for an unknown name.
    """
    spec = str(views or "synthetic")
    cls = DETECTORS.get(name)
    if issubclass(cls, SceneDetector) and not _may_render_synthetic(spec):
        raise FlaneurError(
            f"detector {name!r} reports what the offline renderer drew: it needs synthetic "
            f"views, not --views {spec}"
        )


def _may_render_synthetic(spec: str) -> bool:
    """Whether the provider ``spec`` names may be the offline renderer: not real imagery, and
    not a provider class other than :class:`SyntheticViews` (a factory function may return
    one; what it returns is checked by :func:`check_scene_provider`)."""
    kind = spec.partition(":")[0]
    if kind in IMAGERY_PROVIDERS:
        return False
    entry = VIEWS.get(kind) if kind in VIEWS.names() else None
    return not (isinstance(entry, type) and not issubclass(entry, SyntheticViews))


def check_scene_provider(detector: Detector, provider: Any, name: str) -> None:
    """Raise one line when ``detector`` reports what the offline renderer drew and
    ``provider`` (the run's view provider, made) is not the offline renderer.

    Raises
    ------
    FlaneurError
        Naming the detector and the provider's class.
    """
    if isinstance(detector, SceneDetector) and not isinstance(provider, SyntheticViews):
        raise FlaneurError(
            f"detector {name!r} reports what the offline renderer drew: it needs synthetic "
            f"views, not {type(provider).__name__}"
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
    "check_scene_provider",
    "make_detector",
    "passive_detect",
    "zoom_request",
]

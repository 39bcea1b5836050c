"""Landmark scorers by name: ``--landmarks NAME`` (built-ins, entry points, ``module:Class``).

An entry is a :class:`~flaneur.perception.landmarks.base.LandmarkScorer` class or a factory
``(model=...) -> scorer``. ``map`` and ``clip`` need more than a name (the map scorer is made
by the agents from the city; CLIP needs a fitted scorer given in Python), so agents build
those themselves; :func:`make_landmark_scorer` builds the others. Outside packages add
scorers under the entry-point group ``flaneur.landmarks``.
"""

from __future__ import annotations

import inspect
from typing import Any

from flaneur.errors import FlaneurError
from flaneur.registry import Registry

LANDMARKS: Registry[Any] = Registry("landmark scorer", group="flaneur.landmarks")
"""Landmark scorers by name (``map``, ``ocr``, ``clip``, ``vlm``)."""
for _name, _entry in (
    ("map", "flaneur.perception.landmarks.map:MapLandmarks"),
    ("ocr", "flaneur.perception.landmarks.ocr:OCRLandmarks"),
    ("clip", "flaneur.perception.landmarks.clip:CLIPLandmarks"),
    ("vlm", "flaneur.perception.landmarks.vlm:VLMLandmarks"),
):
    LANDMARKS.register(_name, _entry)

_SHARED: dict[str, Any] = {}


def make_landmark_scorer(name: str, *, model: Any = None) -> Any:
    """A landmark scorer for views from its ``--landmarks`` name.

    ``ocr`` is shared by the whole process (the OCR engine loads once); ``vlm`` asks the
    run's ``model``; a plug-in entry is built with ``model=`` when it takes one, else with
    no argument.

    Raises
    ------
    FlaneurError
        For ``map`` and ``clip`` (built by the agents, see the module docstring) and for
        ``vlm`` without a model.
    """
    if name in ("map", "clip"):
        raise FlaneurError(f"the {name!r} landmark scorer is not built from its name alone")
    if name == "ocr":
        if "ocr" not in _SHARED:
            _SHARED["ocr"] = LANDMARKS.get("ocr")()
        return _SHARED["ocr"]
    if name == "vlm" and model is None:
        raise FlaneurError("--landmarks vlm needs a model: add --llm")
    factory = LANDMARKS.get(name)
    try:
        takes_model = "model" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        takes_model = False
    if name == "vlm":
        return factory(model)
    return factory(model=model) if takes_model else factory()


__all__ = ["LANDMARKS", "make_landmark_scorer"]

"""The CLIP and VLM landmark recognisers of V-IRL's VLN benchmark, and a factory for all four.

Both look at the same views as the OCR row (:class:`~flaneur.bench.vln_eval.ViewRecogniser`:
one view towards the side the instruction names, else four of fov 90 around) and reuse the
perception layer's scorers:

* **CLIP** — :class:`~flaneur.perception.landmarks.clip.CLIPLandmarks`: a landmark is seen
  when its caption's image-text similarity, standardised against a reference set of
  ``reference`` random views of the city (seeded), reaches ``tau`` (3.5, VELMA's rule).
  V-IRL instead takes a softmax of the landmark against nonsense negatives with threshold
  0.995; the z-score needs no negative list and is what flaneur's agents use (documented in
  ``docs/bench.md``). The backend is open_clip with user-supplied weights (imported on
  first use) or any :class:`~flaneur.perception.landmarks.clip.EmbeddingBackend`.
* **VLM** — :class:`~flaneur.perception.landmarks.vlm.VLMLandmarks`: the model (through
  :mod:`flaneur.models`) is shown the view and asked a multiple-choice question over the
  landmarks with "None of the above", as in V-IRL.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flaneur.bench.vln_eval import OCR_FOV, OCRRecogniser, OracleRecogniser, ViewRecogniser
from flaneur.errors import FlaneurError
from flaneur.world.city import City

__all__ = ["RECOGNISERS", "clip_recogniser", "make_vln_recogniser", "vlm_recogniser"]

RECOGNISERS = ("oracle", "ocr", "clip", "vlm")
REFERENCE_VIEWS = 64


def reference_views(views: Any, city: City, n: int = REFERENCE_VIEWS, seed: int = 0) -> list:
    """``n`` views from random located viewpoints and headings (seeded), fov 90."""
    located = np.flatnonzero(city.graph.located)
    if len(located) == 0:
        raise FlaneurError(f"city {city.name!r} has no located viewpoint to calibrate CLIP on")
    rng = np.random.default_rng(seed)
    nodes = rng.choice(located, size=n, replace=len(located) < n)
    headings = rng.uniform(0.0, 360.0, size=n)
    return [
        views.view(int(node), float(h), fov=OCR_FOV)
        for node, h in zip(nodes, headings, strict=True)
    ]


def clip_recogniser(
    city: City,
    backend: Any,
    *,
    views: Any = None,
    reference: int = REFERENCE_VIEWS,
    tau: float = 3.5,
    seed: int = 0,
) -> ViewRecogniser:
    """The CLIP row: :class:`CLIPLandmarks` on ``backend``, calibrated on random city views."""
    from flaneur.perception.landmarks.clip import CLIPLandmarks

    rec = ViewRecogniser(city, None, views, name="clip")
    rec.scorer = CLIPLandmarks(backend, reference_views(rec.views, city, reference, seed), tau=tau)
    return rec


def vlm_recogniser(city: City, model: Any, *, views: Any = None) -> ViewRecogniser:
    """The VLM row: :class:`VLMLandmarks` asking ``model`` (a :mod:`flaneur.models` model)."""
    from flaneur.perception.landmarks.vlm import VLMLandmarks

    return ViewRecogniser(city, VLMLandmarks(model), views, name="vlm")


def make_vln_recogniser(
    name: str,
    city: City,
    *,
    clip_model: str = "ViT-B-32",
    clip_weights: str | None = None,
    clip_backend: Any = None,
    model: Any = None,
    seed: int = 0,
) -> Any:
    """A landmark recogniser by name: ``oracle``, ``ocr``, ``clip`` or ``vlm``.

    Raises
    ------
    FlaneurError
        An unknown name, CLIP without weights (or a backend), or VLM without a model.
    """
    if name == "oracle":
        return OracleRecogniser(city)
    if name == "ocr":
        return OCRRecogniser(city)
    if name == "clip":
        if clip_backend is None:
            if not clip_weights:
                raise FlaneurError(
                    "the clip recogniser needs --clip-weights (a weights file or open_clip tag)"
                )
            from flaneur.perception.landmarks.clip import OpenCLIPBackend

            clip_backend = OpenCLIPBackend(clip_model, clip_weights)
        return clip_recogniser(city, clip_backend, seed=seed)
    if name == "vlm":
        if model is None:
            raise FlaneurError("the vlm recogniser needs --vlm (a model, e.g. openai/gpt-4o-mini)")
        return vlm_recogniser(city, model)
    raise FlaneurError(f"--recogniser: unknown {name!r} (expected {', '.join(RECOGNISERS)})")

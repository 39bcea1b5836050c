"""Recognisers of the place-recognition benchmark, by name in :data:`RECOGNISERS`.

A recogniser scores a storefront view against the candidate place types (higher is more
likely); the ``virl-recognition`` task kind ranks the types by the scores. Built in:

==========  ==========================================================================
``offline`` read the signs (PP-OCR) and compare their text with the type names (MiniLM)
``clip``    CLIP zero-shot (V-IRL's Table 4), open_clip weights given with ``weights``
``vlm``     the run's vision-language model (``--llm``) ranks the types
``oracle``  the item's true types first (the benchmark's upper bound)
==========  ==========================================================================

Outside packages add recognisers under the entry-point group ``flaneur.recognisers``; each
is a :class:`Recogniser` subclass with a typed ``Options`` dataclass (``--option key=value``).
"""

from __future__ import annotations

import abc
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from flaneur.agents.base import SolveInfo
from flaneur.bench.solvers import SignReader, ViewImage, ViewSolver, ask_model, solver_registry
from flaneur.bench.types import type_label
from flaneur.options import option
from flaneur.perception.landmarks.clip import OpenCLIPBackend
from flaneur.registry import Registry
from flaneur.tasks.items import TaskItem

__all__ = [
    "RECOGNISERS",
    "VLM_PROMPT_ID",
    "CLIPRecogniser",
    "OfflineRecogniser",
    "OracleRecogniser",
    "Ranking",
    "Recogniser",
    "VLMRecogniser",
    "rank_from_reply",
]


@dataclass(frozen=True)
class Ranking:
    """A recogniser's answer: one score per candidate type, and its model exchanges."""

    scores: Sequence[float]
    records: list[dict[str, Any]] = field(default_factory=list)


class Recogniser(ViewSolver, abc.ABC):
    """Base class of recognisers: subclasses set :attr:`name`, their declared needs and
    :attr:`Options` (:class:`~flaneur.bench.solvers.ViewSolver`), and write :meth:`rank`."""

    interface_base: ClassVar[bool] = True
    name: ClassVar[str] = "recogniser"

    @abc.abstractmethod
    async def rank(
        self, image: ViewImage, types: Sequence[str], item: TaskItem, info: SolveInfo
    ) -> Ranking:
        """Scores of the candidate ``types`` (V-IRL type names) for the item's view."""


class OfflineRecogniser(SignReader, Recogniser):
    """Read the signs (PP-OCR) and compare their text with the type names (MiniLM).

    A view whose signs say nothing scores every type 0 (ties rank in list order).
    """

    name = "offline"

    async def rank(
        self, image: ViewImage, types: Sequence[str], item: TaskItem, info: SolveInfo
    ) -> Ranking:
        text = self.signs(image)
        if not text:
            return Ranking([0.0] * len(types))
        sims = self.embedder.similarity([text], [type_label(t) for t in types])[0]
        return Ranking(np.asarray(sims, dtype=float).tolist())


def _weights_checked(weights: str) -> None:
    if not weights:
        raise ValueError(
            "needs weights=FILE|TAG (an open_clip weights file or pretrained tag, "
            "e.g. --option weights=laion2b_s34b_b79k)"
        )
    looks_like_file = os.sep in weights or Path(weights).suffix in (".pt", ".bin", ".safetensors")
    if looks_like_file and not Path(weights).expanduser().is_file():
        raise ValueError(f"weights file {weights} not found")


@dataclass(frozen=True)
class CLIPOptions:
    """Options of the CLIP recogniser."""

    model: str = option("ViT-B-32", "open_clip architecture")
    weights: str = option("", "open_clip weights: a file or a pretrained tag (required)")

    def __post_init__(self) -> None:
        _weights_checked(self.weights)


class CLIPRecogniser(Recogniser):
    """CLIP zero-shot recognition (V-IRL's Table 4): softmax over ``"a photo of a <type>"``.

    Parameters
    ----------
    backend
        Any object with ``embed_images`` / ``embed_texts`` (tests use a fake); default
        :class:`flaneur.perception.landmarks.clip.OpenCLIPBackend` of the options' model and
        weights (imports open_clip).
    """

    name = "clip"
    Options = CLIPOptions

    def __init__(self, *, backend: Any = None, **options: Any) -> None:
        super().__init__(**options)
        if backend is None:
            backend = OpenCLIPBackend(self.options.model, self.options.weights)
        self.backend = backend
        self._texts: dict[tuple[str, ...], NDArray[np.float32]] = {}

    async def rank(
        self, image: ViewImage, types: Sequence[str], item: TaskItem, info: SolveInfo
    ) -> Ranking:
        key = tuple(types)
        if key not in self._texts:
            captions = [f"a photo of a {type_label(t)}" for t in key]
            self._texts[key] = self.backend.embed_texts(captions)
        img = self.backend.embed_images([image])[0]
        logits = 100.0 * (self._texts[key] @ img).astype(np.float64)
        e = np.exp(logits - logits.max())
        return Ranking((e / e.sum()).tolist())


def rank_from_reply(reply: str, labels: Sequence[str]) -> NDArray[np.float64]:
    """Scores from a model's ranked answer: earlier mention scores higher, unmentioned 0.

    Labels are matched as whole words, case-insensitive, underscores as spaces; a longer
    label wins over one it contains ("convenience store" over "store").
    """
    text = reply.lower().replace("_", " ")
    taken = [False] * len(text)
    found: dict[int, int] = {}
    for i in sorted(range(len(labels)), key=lambda j: -len(labels[j])):
        pattern = r"(?<![a-z])" + re.escape(labels[i].lower()) + r"(?![a-z])"
        for m in re.finditer(pattern, text):
            if not any(taken[m.start() : m.end()]):
                taken[m.start() : m.end()] = [True] * (m.end() - m.start())
                found[i] = m.start()
                break
    scores = np.zeros(len(labels))
    for rank, i in enumerate(sorted(found, key=found.__getitem__)):
        scores[i] = len(labels) - rank
    return scores


VLM_PROMPT = (
    "This is a street view of a storefront. Which type of place is it? Candidate types: "
    "{types}. Answer with the five most likely types from the list, best first, one per "
    "line, and nothing else."
)
VLM_PROMPT_ID = "virl-recognition-vlm-1"
"""Version of :data:`VLM_PROMPT` (recorded with every exchange)."""


class VLMRecogniser(Recogniser):
    """Ask the run's vision-language model to rank the types.

    The prompt lists the types and asks for the five most likely, best first, one a line;
    :func:`rank_from_reply` turns the reply into scores. A reply naming no type scores all 0
    (its record counts a parse failure); a model error ends the row ``model_error``.
    """

    name = "vlm"
    needs_model = True

    async def rank(
        self, image: ViewImage, types: Sequence[str], item: TaskItem, info: SolveInfo
    ) -> Ranking:
        labels = [type_label(t) for t in types]
        prompt = VLM_PROMPT.format(types=", ".join(labels))
        text, record = await ask_model(info, "recogniser 'vlm'", [prompt, image], VLM_PROMPT_ID)
        scores = rank_from_reply(text, labels)
        record["parse_failures"] = int(not scores.any())
        return Ranking(scores.tolist(), [record])


class OracleRecogniser(Recogniser):
    """The benchmark's oracle: the item's true types first (top-1 is always right)."""

    name = "oracle"
    sees_view = False

    async def rank(
        self, image: ViewImage, types: Sequence[str], item: TaskItem, info: SolveInfo
    ) -> Ranking:
        true = set(item.get("types") or ())
        return Ranking([1.0 if t in true else 0.0 for t in types])


RECOGNISERS: Registry[type[Recogniser]] = solver_registry(
    "recogniser",
    Recogniser,
    "flaneur.recognisers",
    {
        "offline": OfflineRecogniser,
        "clip": CLIPRecogniser,
        "vlm": VLMRecogniser,
        "oracle": OracleRecogniser,
    },
)
"""Recognisers by the name ``--recogniser`` / ``--agent`` takes."""

"""Answerers of the place-VQA benchmark, by name in :data:`ANSWERERS`.

An answerer gets the question, the four options in the order of the pass, and the item's
view, and picks an option; the ``virl-vqa`` task kind asks it once per rotation. Built in:

============  ========================================================================
``embedder``  offline: read the signs (PP-OCR), pick the option closest to them (MiniLM)
``model``     the run's (vision-)language model (``--llm``); a reply that is not a letter
              is read by a matcher (``matcher``: the model again, or the embedder)
``oracle``    the true option (the benchmark's upper bound)
============  ========================================================================

Outside packages add answerers under the entry-point group ``flaneur.answerers``; each is an
:class:`Answerer` subclass with a typed ``Options`` dataclass (``--option key=value``).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from flaneur.agents.base import SolveInfo
from flaneur.bench.metrics import LETTERS
from flaneur.bench.parse import EmbedderMatcher, Matcher, ModelMatcher, read_reply
from flaneur.bench.solvers import SignReader, ViewImage, ViewSolver, ask_model, solver_registry
from flaneur.bench.vqa import format_question
from flaneur.options import option
from flaneur.registry import Registry
from flaneur.tasks.items import TaskItem

__all__ = [
    "ANSWERERS",
    "ANSWER_PROMPT_ID",
    "Answer",
    "Answerer",
    "EmbedderAnswerer",
    "ModelAnswerer",
    "OracleAnswerer",
]

ANSWER_PROMPT_ID = "virl-vqa-answer-1"
"""Version of the question prompt (:func:`flaneur.bench.vqa.format_question`)."""


@dataclass(frozen=True)
class Answer:
    """An answerer's pick for one pass: the ``letter`` (``"A"`` .. ``"D"``, or ``"none"``: a
    reply no option could be read from), the raw ``reply`` (the letter itself for answerers
    that write no text), how the letter was ``read_by`` (``exact``, ``matcher``, ``none`` or
    ``direct``) and the model exchanges (``records``: answer and matcher prompts)."""

    letter: str
    reply: str
    read_by: str = "direct"
    records: list[dict[str, Any]] = field(default_factory=list)


class Answerer(ViewSolver, abc.ABC):
    """Base class of answerers: subclasses set :attr:`name`, their declared needs and
    :attr:`Options` (:class:`~flaneur.bench.solvers.ViewSolver`), and write :meth:`answer`."""

    interface_base: ClassVar[bool] = True
    name: ClassVar[str] = "answerer"

    @abc.abstractmethod
    async def answer(
        self,
        question: str,
        options: Sequence[str],
        image: ViewImage,
        item: TaskItem,
        info: SolveInfo,
    ) -> Answer:
        """The pick among ``options`` (in this pass's order)."""


class EmbedderAnswerer(SignReader, Answerer):
    """Offline answerer: read the signs (OCR), pick the option closest to their text
    (MiniLM). It sees only the image; with no text it answers the first option."""

    name = "embedder"

    async def answer(
        self,
        question: str,
        options: Sequence[str],
        image: ViewImage,
        item: TaskItem,
        info: SolveInfo,
    ) -> Answer:
        text = self.signs(image)
        if not text:
            return Answer("A", "A")
        sims = np.asarray(self.embedder.similarity([text], list(options))[0], dtype=float)
        letter = LETTERS[int(np.argmax(sims))]
        return Answer(letter, letter)


@dataclass(frozen=True)
class ModelAnswererOptions:
    """Options of the model answerer."""

    with_image: bool = option(True, "send the view with the question (a VLM); false: text only")
    matcher: Literal["auto", "model", "embedder", "none"] = option(
        "auto", "reads replies that are not a letter (auto: the run's model)"
    )


class ModelAnswerer(Answerer):
    """Send the view and the question to the run's model; read its reply (an exact letter
    form, else the matcher's reading, else ``none``). A model error ends the row
    ``model_error`` (``--resume`` asks again)."""

    name = "model"
    needs_model = True
    Options = ModelAnswererOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.sees_view = bool(self.options.with_image)
        self._embedder_matcher = EmbedderMatcher()

    def _matcher(self, model: Any) -> Matcher | None:
        chosen = self.options.matcher
        if chosen == "auto":
            chosen = "model" if model is not None else "embedder"
        if chosen == "model":
            return ModelMatcher(model)
        return self._embedder_matcher if chosen == "embedder" else None

    async def answer(
        self,
        question: str,
        options: Sequence[str],
        image: ViewImage,
        item: TaskItem,
        info: SolveInfo,
    ) -> Answer:
        parts: list[Any] = [format_question(question, options)]
        if self.options.with_image and image is not None:
            parts.append(image)
        text, record = await ask_model(info, "answerer 'model'", parts, ANSWER_PROMPT_ID)
        reading = await read_reply(text, question, options, self._matcher(info.model))
        record["parse_failures"] = int(reading.letter == "none")
        return Answer(reading.letter, text, reading.read_by, [record, *reading.records])


class OracleAnswerer(Answerer):
    """The benchmark's oracle: the item's true option, wherever the pass put it."""

    name = "oracle"
    sees_view = False

    async def answer(
        self,
        question: str,
        options: Sequence[str],
        image: ViewImage,
        item: TaskItem,
        info: SolveInfo,
    ) -> Answer:
        true = item["options"][int(item["answer"])]
        letter = LETTERS[list(options).index(true)]
        return Answer(letter, letter)


ANSWERERS: Registry[type[Answerer]] = solver_registry(
    "answerer",
    Answerer,
    "flaneur.answerers",
    {"embedder": EmbedderAnswerer, "model": ModelAnswerer, "oracle": OracleAnswerer},
)
"""Answerers by the name ``--answerer`` / ``--agent`` takes."""

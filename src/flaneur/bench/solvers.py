"""What recognisers (:mod:`flaneur.bench.recognisers`) and answerers
(:mod:`flaneur.bench.answerers`) share: typed options and declared needs, the offline reading
of a view's signs, the call of the run's model, and a registry per kind.
"""

from __future__ import annotations

from typing import Any, ClassVar

from PIL import Image

from flaneur.agents.base import SolveInfo
from flaneur.errors import FlaneurError
from flaneur.models import user
from flaneur.options import NoOptions
from flaneur.perception.ocr import OCR
from flaneur.registry import Registry
from flaneur.text import shared_embedder

ViewImage = Image.Image | None
"""The item's view (``None`` for a solver that does not look at it)."""


class ViewSolver:
    """A solver of an item's view. One instance answers every item of a run (concurrently:
    keep no per-item state on it)."""

    interface_base: ClassVar[bool] = True
    name: ClassVar[str] = "solver"
    needs_model: ClassVar[bool] = False
    """It asks the run's model (``--llm``, ``info.model``)."""
    needs_views: ClassVar[bool] = False
    sees_view: bool = True
    """It looks at the item's view (the kind renders it only then)."""
    Options: ClassVar[type] = NoOptions

    def __init__(self, **options: Any) -> None:
        self.options = self.Options(**options)


class SignReader:
    """Reads a view's signs (PP-OCR) for comparing with texts (MiniLM, :attr:`embedder`)."""

    ocr: Any = None
    embedder: Any = None

    def signs(self, image: ViewImage) -> str:
        """The text of the view's signs (``""``: none); OCR and embedder load on first use."""
        if self.ocr is None:
            self.ocr = OCR()
        if self.embedder is None:
            self.embedder = shared_embedder()
        return " ".join(box.text for box in self.ocr.read(image)).strip()


async def ask_model(
    info: SolveInfo, who: str, parts: list[Any], prompt_id: str
) -> tuple[str, dict]:
    """The run's model's reply to ``parts`` (texts, images) and the exchange's record; one
    line when the run has no model (``who`` needs one)."""

    if info.model is None:
        raise FlaneurError(f"{who} needs a language model: add --llm")
    reply = await info.model.complete([user(*parts)], temperature=0.0)
    text = reply.text or ""
    return text, {"prompt_id": prompt_id, "raw_output": text}


def solver_registry(what: str, base: type, group: str, builtins: dict[str, type]) -> Registry:
    """The ``what`` registry: the built-ins and entry-point ``group``, each a ``base``."""
    article = "an" if base.__name__[0] in "AEIOU" else "a"

    def check(name: str, entry: Any) -> None:
        if not (isinstance(entry, type) and issubclass(entry, base)):
            raise FlaneurError(
                f"{what} {name!r} is {entry!r}, not {article} {base.__name__} subclass"
            )

    registry: Registry[Any] = Registry(what, group=group, check=check)
    for name, cls in builtins.items():
        registry.register(name, cls)
    return registry

"""Descriptions of places for MapGPT's two-stage mode, and the views of its one-stage mode.

Two-stage MapGPT turns what the agent perceives into text before the navigation prompt.
Here a place's description always starts with its street topology (``4-way intersection``,
``street``, ``dead end``: the map a real system has), followed by one of:

* ``map`` (no views, or ``--landmarks map``): named places within ``radius_m`` of the node
  (``near Cafe Aalto, Kirja Bookshop``);
* ``ocr`` (``--views ... --landmarks ocr``): the sign text read in the view from the current
  node towards the place (``signs: "CAFE AALTO"``), via :class:`OCRLandmarks`;
* ``vlm`` (``--views ... --landmarks vlm``): a one-sentence caption of that view written by
  the run's model (``prompts/mapgpt/caption.txt``), cached per view.

One-stage MapGPT sends the views themselves (:meth:`PlaceDescriber.view_image`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from flaneur.agents.prompts import load_prompt
from flaneur.errors import FlaneurError
from flaneur.models import messages as msg
from flaneur.perception import OCRLandmarks
from flaneur.world.city import City

DESCRIPTION_SOURCES = ("map", "ocr", "vlm")

CAPTION_MAX_TOKENS = 80
"""Reply length of a one-sentence caption call."""


_SHARED: dict[str, Any] = {}


def shared_ocr() -> Any:
    """One :class:`~flaneur.perception.OCRLandmarks` for every agent of the process (the OCR
    engine loads its models once and serialises its calls)."""
    if "ocr" not in _SHARED:
        _SHARED["ocr"] = OCRLandmarks()
    return _SHARED["ocr"]


def intersection_kind(degree: int) -> str:
    """``"4-way intersection"``, ``"street"`` or ``"dead end"`` from a node's out-degree."""
    if degree >= 3:
        return f"{degree}-way intersection"
    return "dead end" if degree <= 1 else "street"


class PlaceDescriber:
    """Text (and images) about the places of one city.

    Parameters
    ----------
    city
        The city.
    source
        ``"map"``, ``"ocr"`` or ``"vlm"`` (see the module docstring).
    views
        A :class:`~flaneur.views.ViewProvider` (needed by ``ocr``, ``vlm`` and images).
    model
        The chat model (``vlm`` captions).
    radius_m
        Radius of ``map`` descriptions.
    max_names
        Names (or sign lines) listed at most.
    image_size
        Size of the views sent to the model and read by OCR.
    """

    def __init__(
        self,
        city: City,
        *,
        source: str = "map",
        views: Any = None,
        model: Any = None,
        radius_m: float = 30.0,
        max_names: int = 3,
        image_size: tuple[int, int] = (640, 368),
    ) -> None:
        if source not in DESCRIPTION_SOURCES:
            raise FlaneurError(
                f"agent mapgpt describes places with landmarks {', '.join(DESCRIPTION_SOURCES)}"
                f" (not {source!r})"
            )
        if source in ("ocr", "vlm") and views is None:
            raise FlaneurError(f"agent mapgpt with --landmarks {source} needs --views")
        if source == "vlm" and model is None:
            raise FlaneurError("agent mapgpt with --landmarks vlm needs --llm")
        self.city = city
        self.source = source
        self.views = views
        self.model = model
        self.radius_m = radius_m
        self.max_names = max_names
        self.image_size = image_size
        self._degree = city.graph.degree
        self._ocr: Any = None
        self._captions: dict[tuple[int, int], str] = {}
        self.caption_calls = 0
        self.caption_log: list[dict[str, Any]] = []

    def topology(self, node: int) -> str:
        """The street topology of ``node``."""
        return intersection_kind(int(self._degree[node]))

    def names_near(self, node: int) -> list[str]:
        """Named places within ``radius_m`` of ``node``, nearest first."""
        places = self.city.places
        if len(places) == 0:
            return []
        rows, _ = places.within(self.city.graph.xy[node], self.radius_m)
        names: list[str] = []
        for r in rows.tolist():
            name = str(places.names[r])
            if name and name not in names:
                names.append(name)
            if len(names) >= self.max_names:
                break
        return names

    def map_description(self, node: int) -> str:
        """``"3-way intersection; near Cafe Aalto"``."""
        names = self.names_near(node)
        text = self.topology(node)
        return f"{text}; near {', '.join(names)}" if names else text

    async def view(self, node: int, heading: float) -> Any:
        """The view from ``node`` towards ``heading`` (rendered off the event loop)."""
        return await asyncio.to_thread(
            self.views.view, int(node), float(heading) % 360.0, size=self.image_size
        )

    async def view_image(self, node: int, heading: float) -> Any:
        """The view's image as a message part (JPEG)."""
        view = await self.view(node, heading)
        return msg.image(view.image, format="JPEG", quality=85)

    async def signs(self, node: int, heading: float) -> list[str]:
        """Sign text read by OCR in the view from ``node`` towards ``heading``."""
        if self._ocr is None:
            self._ocr = shared_ocr()
        view = await self.view(node, heading)
        boxes = await asyncio.to_thread(self._ocr.read, view)
        out: list[str] = []
        for box in sorted(boxes, key=lambda b: -b.score):
            text = " ".join(box.text.split())
            if len(text) >= 2 and text not in out:
                out.append(text)
            if len(out) >= self.max_names:
                break
        return out

    async def caption(self, node: int, heading: float) -> str:
        """A one-sentence caption of the view (one model call per new view)."""
        key = (int(node), round(float(heading)) % 360)
        if key in self._captions:
            return self._captions[key]
        prompt = load_prompt("mapgpt", "caption")
        image = await self.view_image(node, heading)
        question = prompt.text.strip()
        reply = await self.model.complete(
            [msg.user(question, image)], temperature=0.0, max_tokens=CAPTION_MAX_TOKENS
        )
        self.caption_calls += 1
        text = " ".join((reply.text or "").split())[:300]
        self._captions[key] = text
        self.caption_log.append(
            {
                "prompt_id": prompt.id,
                "prompt": question,
                "image": f"view from node {self.city.graph.ids[key[0]]} towards {key[1]} degrees",
                "raw_output": reply.text,
            }
        )
        return text

    def drain_captions(self) -> list[dict[str, Any]]:
        """The caption calls made since the last drain (prompt, image, reply)."""
        out, self.caption_log = self.caption_log, []
        return out

    async def describe(self, current: int, target: int, heading: float | None) -> str:
        """Description of ``target`` seen from ``current`` looking along ``heading``.

        ``heading`` is ``None`` for places that are not in view from ``current`` (jump
        targets, supplementary places): they get the map description in every mode.
        """
        if self.source == "map" or heading is None:
            return self.map_description(target)
        topo = self.topology(target)
        if self.source == "ocr":
            signs = await self.signs(current, heading)
            quoted = ", ".join(f'"{s}"' for s in signs)
            return f"{topo}; signs: {quoted}" if signs else f"{topo}; no readable signs"
        caption = await self.caption(current, heading)
        return f"{topo}; {caption}" if caption else topo

    async def describe_many(
        self, current: int, items: Sequence[tuple[int, float | None]]
    ) -> list[str]:
        """:meth:`describe` for several ``(target, heading)`` pairs, concurrently."""
        return list(await asyncio.gather(*(self.describe(current, t, h) for t, h in items)))


__all__ = ["DESCRIPTION_SOURCES", "PlaceDescriber", "intersection_kind"]

"""Flat views: a single-colour image per request (a view provider in a few lines)."""

from __future__ import annotations

from typing import Any

from PIL import Image

from flaneur.views.base import DEFAULT_SIZE, View, check_request


class FlatViews:
    """Grey images from every located node (``--views flat`` or ``--views flat:RRGGBB``)."""

    name = "flat"

    def __init__(self, city: Any, colour: str = "808080") -> None:
        self.graph = city.graph
        self.colour = "#" + colour

    @classmethod
    def from_spec(cls, city: Any, arg: str) -> FlatViews:
        """The provider of ``--views flat[:RRGGBB]``."""
        return cls(city, arg or "808080")

    def view(
        self,
        node: str | int,
        heading: float,
        *,
        pitch: float = 0.0,
        fov: float = 60.0,
        size: tuple[int, int] = DEFAULT_SIZE,
    ) -> View:
        index, heading, pitch, fov, size = check_request(
            self.graph, node, heading, pitch, fov, size
        )
        image = Image.new("RGB", size, self.colour)
        return View(image, str(self.graph.ids[index]), heading, pitch, fov, self.name)

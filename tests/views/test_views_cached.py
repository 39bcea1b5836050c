"""The cached base of view providers: validate → cache key → fetch → store."""

from __future__ import annotations

import pytest
from PIL import Image

from flaneur.errors import UnknownNodeError
from flaneur.views import GoogleStreetView, Mapillary, PanoramaFolder, SyntheticViews, ViewCache
from flaneur.views.base import ViewError
from flaneur.views.cached import CachedViewProvider, Fetched, Plan, ViewRequest


class Counting(CachedViewProvider):
    """Solid images whose shade depends on the heading; counts fetches."""

    name = "counting"

    def __init__(self, graph, cache=None) -> None:
        self.graph = graph
        self.cache = cache or ViewCache.in_memory(8)
        self.fetches: list[ViewRequest] = []

    def validate(self, request: ViewRequest) -> None:
        if request.pitch != 0.0:
            raise ViewError("counting views are level")

    def plan(self, request: ViewRequest) -> Plan:
        return Plan(
            {"provider": self.name, "node": request.node_id, "h": request.heading},
            {"shade": int(request.heading) % 256},
            "2024-05",
        )

    def fetch(self, request: ViewRequest, plan: Plan) -> Fetched:
        self.fetches.append(request)
        shade = plan.metadata["shade"]
        return Fetched(Image.new("RGB", (40, 20), (shade, shade, shade)), plan.metadata)


def test_a_miss_fetches_and_stores_a_hit_does_not(toy):
    provider = Counting(toy.graph)
    node = str(toy.graph.ids[3])
    first = provider.view(node, 370.0, size=(80, 40))
    again = provider.view(3, 10.0, size=(80, 40))  # same node by index, same heading mod 360
    assert len(provider.fetches) == 1 and provider.fetches[0].heading == 10.0
    assert (first.cached, again.cached) == (False, True)
    assert first.size == again.size == (80, 40)  # finish resized the stored 40 x 20 image
    assert again.metadata == {"shade": 10} and again.capture_date == "2024-05"
    assert again.node == node and again.source == "counting"
    provider.view(node, 20.0)
    assert len(provider.fetches) == 2


def test_requests_are_validated_before_any_lookup(toy):
    provider = Counting(toy.graph)
    with pytest.raises(UnknownNodeError):
        provider.view("nowhere", 0.0)
    with pytest.raises(ViewError, match="fov"):
        provider.view(0, 0.0, fov=0.0)
    with pytest.raises(ViewError, match="level"):
        provider.view(0, 0.0, pitch=10.0)
    assert provider.fetches == []


def test_every_built_in_provider_uses_the_base():
    for cls in (SyntheticViews, PanoramaFolder, GoogleStreetView, Mapillary):
        assert issubclass(cls, CachedViewProvider)
        assert "view" not in vars(cls)  # only their own plan / fetch (/ finish)

"""The city model: street graph, places, taxonomy, city packs and source loaders."""

from flaneur.world.city import City
from flaneur.world.graph import UNREACHABLE, StreetGraph
from flaneur.world.places import Place, Places

__all__ = ["UNREACHABLE", "City", "Place", "Places", "StreetGraph"]

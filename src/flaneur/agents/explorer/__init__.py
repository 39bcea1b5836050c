"""The explorer: an offline need-finding agent that needs no language model (``--agent explorer``).

See :mod:`flaneur.agents.explorer.agent` for the policy, :mod:`.perception` for what it sees
and :mod:`.scoring` for how texts are matched to the need.
"""

from flaneur.agents.explorer.agent import ExplorerAgent, ExplorerParams
from flaneur.agents.explorer.perception import (
    MapPerception,
    OCRPerception,
    Sighting,
    map_perception,
)
from flaneur.agents.explorer.scoring import NeedScorer, SubNeed, Thresholds, split_need

__all__ = [
    "ExplorerAgent",
    "ExplorerParams",
    "MapPerception",
    "NeedScorer",
    "OCRPerception",
    "Sighting",
    "SubNeed",
    "Thresholds",
    "map_perception",
    "split_need",
]

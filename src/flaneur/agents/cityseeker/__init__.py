"""The CitySeeker agent (``--agent cityseeker``) and its BCR strategies.

See :mod:`flaneur.agents.cityseeker.agent` for the step loop,
:mod:`flaneur.agents.cityseeker.strategies` for the strategies and
:mod:`flaneur.agents.cityseeker.memory` for the graph memory that persists across rounds.
"""

from flaneur.agents.cityseeker.agent import CitySeekerAgent
from flaneur.agents.cityseeker.memory import GraphMemory, Visit, resolve_memory_path
from flaneur.agents.cityseeker.options import Option, build_options, coarse_label
from flaneur.agents.cityseeker.parse import ChoiceReply, StopReply, parse_choice, parse_stop
from flaneur.agents.cityseeker.strategies import STRATEGY_CODES, parse_strategies

__all__ = [
    "STRATEGY_CODES",
    "ChoiceReply",
    "CitySeekerAgent",
    "GraphMemory",
    "Option",
    "StopReply",
    "Visit",
    "build_options",
    "coarse_label",
    "parse_choice",
    "parse_stop",
    "parse_strategies",
    "resolve_memory_path",
]

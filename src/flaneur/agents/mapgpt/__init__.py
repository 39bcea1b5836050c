"""MapGPT: map-guided prompting with adaptive planning (Chen et al., ACL 2024).

``flaneur run --agent mapgpt --scheme nodes --llm MODEL`` runs it; see ``docs/agents.md``.
"""

from flaneur.agents.mapgpt.agent import MODES, MapGPTAgent
from flaneur.agents.mapgpt.describe import PlaceDescriber, intersection_kind
from flaneur.agents.mapgpt.parse import ParsedReply, match_action, parse_reply, split_fields
from flaneur.agents.mapgpt.prompt_builder import Option, move_phrase, option_letters

__all__ = [
    "MODES",
    "MapGPTAgent",
    "Option",
    "ParsedReply",
    "PlaceDescriber",
    "intersection_kind",
    "match_action",
    "move_phrase",
    "option_letters",
    "parse_reply",
    "split_fields",
]

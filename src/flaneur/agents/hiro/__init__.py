"""Hiro, V-IRL's intentional explorer, as a flaneur agent (``--agent hiro``).

See :mod:`flaneur.agents.hiro.agent` for the policy, :mod:`.rules` for the matching,
junction and enter rules, :mod:`.perception` for what he sees and :mod:`.thinking` for the
language-model path.
"""

from flaneur.agents.hiro.agent import HiroAgent, HiroOptions
from flaneur.agents.hiro.perception import HiroEyes

__all__ = ["HiroAgent", "HiroEyes", "HiroOptions"]

"""The wanderer: walks ``steps`` moves, looking ahead at every step, then stops."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from flaneur.agents import Action, Agent, EnvInfo, step_record
from flaneur.env.schemes.base import STOP


@dataclass(frozen=True)
class WandererOptions:
    """Options of the wanderer."""

    steps: int = 2
    look: bool = True


class WandererAgent(Agent):
    """Take the first valid move ``steps`` times (looking ahead if views exist), then stop."""

    name: ClassVar[str] = "wanderer"
    schemes: ClassVar[tuple[str, ...]] = ("turns", "headings")
    Options: ClassVar[type] = WandererOptions

    def __init__(self, *, steps: int = 2, look: bool = True) -> None:
        self.steps = steps
        self.look = look

    def reset(self, episode: Any, env_info: EnvInfo) -> None:
        super().reset(episode, env_info)
        self.moved = 0

    async def act(self, observation: Mapping[str, Any]) -> Action:
        seen = ""
        views = self.env_info.views
        if self.look and views is not None:
            heading = float(observation["heading"][0])
            view = views.view(int(observation["node"]), heading, size=(32, 24))
            seen = f"saw {view.source} {view.size[0]}x{view.size[1]}"
        mask = observation["action_mask"]
        moves = [slot for slot in range(1, len(mask)) if mask[slot]]
        if self.moved >= self.steps or not moves:
            return Action(STOP, "stop", step_record(parsed_action="stop", thoughts=seen))
        self.moved += 1
        return Action(moves[0], str(moves[0]), step_record(parsed_action=moves[0], thoughts=seen))

"""VELMA: a verbalization-embodied language-model agent (``flaneur run --agent velma``).

* :mod:`~flaneur.agents.velma.agent` - :class:`VelmaAgent`;
* :mod:`~flaneur.agents.velma.verbalize` - observations and the numbered action sequence;
* :mod:`~flaneur.agents.velma.examples` - k-shot examples from gold-path verbalizations;
* :mod:`~flaneur.agents.velma.finetune` - the gold-path chat JSONL export.
"""

from flaneur.agents.velma.agent import VelmaAgent
from flaneur.agents.velma.examples import examples_text, gold_trajectory, select_examples
from flaneur.agents.velma.finetune import episode_records, export_finetune, gold_prompts
from flaneur.agents.velma.verbalize import (
    ACTION_WORDS,
    MapLandmarkObserver,
    ObservationTracker,
    Trajectory,
    ViewLandmarkObserver,
)

__all__ = [
    "ACTION_WORDS",
    "MapLandmarkObserver",
    "ObservationTracker",
    "Trajectory",
    "VelmaAgent",
    "ViewLandmarkObserver",
    "episode_records",
    "examples_text",
    "export_finetune",
    "gold_prompts",
    "gold_trajectory",
    "select_examples",
]

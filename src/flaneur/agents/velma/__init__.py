"""VELMA: a verbalization-embodied language-model agent (``flaneur run --agent velma``).

* :mod:`~flaneur.agents.velma.agent` - :class:`VelmaAgent`;
* :mod:`~flaneur.agents.velma.verbalize` - observations and the numbered action sequence;
* :mod:`~flaneur.agents.velma.examples` - k-shot examples from gold-path verbalizations;
* :mod:`~flaneur.agents.velma.finetune` - the gold-path chat JSONL export;
* :mod:`~flaneur.agents.velma.paper` - VELMA's prompt layout (its texts read from the user's
  copy of its repository), numbering, reply reading, examples and landmarks, used under
  ``--protocol paper``;
* :mod:`~flaneur.agents.velma.baselines` - VELMA's released forward and random baselines
  (``run_baselines.py``), used by those agents under ``--protocol paper``;
* :mod:`~flaneur.agents.velma.traffic` - VELMA's traffic flow on Touchdown (a detector's
  vehicle crops scored by CLIP), used under ``--protocol paper``.
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

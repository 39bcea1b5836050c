"""Episodes, dataset loaders, task generators and the task registry."""

from flaneur.tasks.episode import Episode, read_episodes, write_episodes
from flaneur.tasks.loaders import (
    check_episodes,
    load_cityseeker_questions,
    load_vln_jsonl,
)
from flaneur.tasks.registry import (
    TaskSpec,
    get_task,
    list_tasks,
    load_task,
    register_task,
    resolve_data_dir,
)

__all__ = [
    "Episode",
    "TaskSpec",
    "check_episodes",
    "get_task",
    "list_tasks",
    "load_cityseeker_questions",
    "load_task",
    "load_vln_jsonl",
    "read_episodes",
    "register_task",
    "resolve_data_dir",
    "write_episodes",
]

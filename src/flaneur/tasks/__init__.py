"""Episodes, dataset loaders, task generators and the task registry."""

from flaneur.tasks.cityseeker_questions import load_cityseeker_questions
from flaneur.tasks.episode import Episode, read_episodes, write_episodes
from flaneur.tasks.formats import FORMATS, detect_format
from flaneur.tasks.loaders import check_episodes, load_vln_jsonl
from flaneur.tasks.registry import (
    TaskSpec,
    get_task,
    list_tasks,
    load_spec,
    load_task,
    register_task,
    resolve_data_dir,
)
from flaneur.tasks.resolve import resolve_task, resolve_tasks
from flaneur.tasks.user_registry import register_registry_file

__all__ = [
    "FORMATS",
    "Episode",
    "TaskSpec",
    "check_episodes",
    "detect_format",
    "get_task",
    "list_tasks",
    "load_cityseeker_questions",
    "load_spec",
    "load_task",
    "load_vln_jsonl",
    "read_episodes",
    "register_registry_file",
    "register_task",
    "resolve_data_dir",
    "resolve_task",
    "resolve_tasks",
    "write_episodes",
]

"""Episodes, dataset loaders, task generators and the task registry."""

from flaneur.tasks.episode import Episode, read_episodes, write_episodes

__all__ = ["Episode", "read_episodes", "write_episodes"]

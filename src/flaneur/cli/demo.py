"""``flaneur demo``: the main job on the built-in offline city."""

from __future__ import annotations


def demo_command() -> None:
    """Build the built-in Helsinki city and describe it."""

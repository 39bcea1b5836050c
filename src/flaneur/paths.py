"""Where flaneur keeps caches (city packs, generated tasks, model responses, views)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """The cache folder ``$FLANEUR_CACHE_DIR`` (default ``~/.cache/flaneur``) joined with
    ``parts``, created if missing."""
    root = os.environ.get("FLANEUR_CACHE_DIR")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "flaneur"
    folder = base.joinpath(*parts)
    folder.mkdir(parents=True, exist_ok=True)
    return folder

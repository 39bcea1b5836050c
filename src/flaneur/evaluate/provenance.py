"""What a run summary records about the code that produced it: git commit and versions."""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("flaneur", "numpy", "scipy", "gymnasium", "httpx", "pyrosm", "shapely", "pyproj")


def git_commit() -> str | None:
    """The commit of the flaneur source tree, if it is a git checkout (else ``None``)."""
    folder = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        timeout=5,
    ).stdout.strip()
    return commit + ("-dirty" if dirty else "")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed versions of the packages that shape results."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions

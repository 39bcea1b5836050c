"""Prompt templates shipped as package data, shared by the language-model agents.

Each template lives in ``src/flaneur/agents/prompts/<agent>/<name>.txt``; its first line is
``# version: <version>`` (for instance ``# version: velma-nav-1``) and the rest is the
template text, with ``{placeholder}`` fields filled by :meth:`Prompt.fill` (``str.format``
syntax; write literal braces as ``{{`` and ``}}``). The file's final newline is not part of
the template, so a template can end exactly where the model should continue.

Example
-------
>>> prompt = load_prompt("velma", "navigate")          # doctest: +SKIP
>>> text, prompt_id = prompt.fill(instructions="...")  # doctest: +SKIP
>>> prompt_id                                          # doctest: +SKIP
'velma-nav-1:3f2a9c01be'
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from flaneur.errors import FlaneurError

_VERSION_LINE = re.compile(r"^#\s*version:\s*(\S.*?)\s*$")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class PromptError(FlaneurError):
    """A prompt template is missing, malformed, or cannot be filled."""


def prompt_hash(text: str, length: int = 10) -> str:
    """First ``length`` hex digits of the SHA-256 of ``text`` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


@dataclass(frozen=True, slots=True)
class Prompt:
    """A versioned prompt template.

    Attributes
    ----------
    text
        The template body (without the version line).
    version
        The version string from the first line (e.g. ``"velma-nav-1"``).
    id
        ``"<version>:<hash of the template>"``: identifies the unfilled template.
    """

    text: str
    version: str
    id: str

    @classmethod
    def from_text(cls, raw: str, *, source: str = "<string>") -> Prompt:
        """Parse a template whose first line is ``# version: ...``."""
        first, _, body = raw.partition("\n")
        match = _VERSION_LINE.match(first.strip())
        if match is None:
            raise PromptError(
                f"prompt {source}: first line must be '# version: ...', got {first!r}"
            )
        version = match.group(1)
        if body.endswith("\n"):
            body = body[:-1]
        return cls(text=body, version=version, id=f"{version}:{prompt_hash(body)}")

    def fill(self, **values: Any) -> tuple[str, str]:
        """The filled text and its id.

        Returns
        -------
        tuple[str, str]
            ``(text, prompt_id)`` with ``prompt_id = f"{version}:{sha256(text)[:10]}"``.

        Raises
        ------
        PromptError
            If a placeholder has no value.
        """
        try:
            text = self.text.format(**values)
        except KeyError as exc:
            raise PromptError(f"prompt {self.version}: no value for placeholder {exc}") from None
        except (IndexError, ValueError) as exc:
            raise PromptError(f"prompt {self.version}: cannot fill template: {exc}") from None
        return text, f"{self.version}:{prompt_hash(text)}"

    @property
    def fields(self) -> tuple[str, ...]:
        """Names of the placeholders in the template, in order of first use."""

        names: list[str] = []
        for _, name, _, _ in string.Formatter().parse(self.text):
            if name and name not in names:
                names.append(name)
        return tuple(names)


@cache
def load_prompt(agent: str, name: str) -> Prompt:
    """The template ``prompts/<agent>/<name>.txt`` shipped with flaneur.

    Parameters
    ----------
    agent
        Agent folder (``"velma"``, ``"mapgpt"``, ...).
    name
        File name without ``.txt``.

    Raises
    ------
    PromptError
        If the file does not exist or has no version line.
    """
    if not _NAME.match(agent) or not _NAME.match(name):
        raise PromptError(f"invalid prompt name {agent!r}/{name!r}")
    resource = resources.files(__name__).joinpath(agent, f"{name}.txt")
    if not resource.is_file():
        raise PromptError(f"no prompt {agent}/{name}.txt in flaneur.agents.prompts")
    return Prompt.from_text(resource.read_text(encoding="utf-8"), source=f"{agent}/{name}.txt")


def list_prompts(agent: str) -> list[str]:
    """Names of the templates of ``agent`` (sorted; empty if none)."""
    folder = resources.files(__name__).joinpath(agent)
    if not folder.is_dir():
        return []
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


__all__ = ["Prompt", "PromptError", "list_prompts", "load_prompt", "prompt_hash"]

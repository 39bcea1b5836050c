"""Shared parts of the V-IRL agents: the optional language model, places from text, output
folders and maps.

Every agent runs offline by default (rule-based or embedder-based steps of our own design
where V-IRL used an LLM). With a model (``--llm``) the same steps send the prompts in
``flaneur/agents/virl/prompts/`` through :mod:`flaneur.models`; a failed call or an
unparseable reply never stops a run: the offline step answers instead and the fallback is
counted in the result (``llm_fallbacks``).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from flaneur.services.geocode import geocode_one
from flaneur.world.city import City

_LATLNG = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")


def esc(value: Any) -> str:
    """HTML-escape a data string (for SVG text and other markup written here)."""
    return html.escape(str(value), quote=True)


def prompt_template(name: str) -> str:
    """The text of prompt ``name`` (package data ``prompts/<name>.txt``)."""
    return (resources.files("flaneur.agents.virl") / "prompts" / f"{name}.txt").read_text(
        encoding="utf-8"
    )


def resolve_point(city: City, text: str) -> tuple[int, str]:
    """A viewpoint from ``"lat,lng"`` or a place name / address / street (fuzzy).

    Returns
    -------
    tuple
        ``(node index, label)``.

    Raises
    ------
    UnknownPlaceError
        Nothing matches; the message names the three closest names.
    """
    match = _LATLNG.match(text)
    if match:
        lat, lng = float(match.group(1)), float(match.group(2))
        return int(city.graph.nearest_node(lat, lng)), f"{lat:.5f},{lng:.5f}"
    found = geocode_one(city, text)
    return found.node, found.name


@dataclass
class Thinker:
    """The optional language model of an agent, with a transcript of every exchange.

    Parameters
    ----------
    model
        A :class:`~flaneur.models.ChatModel`, or ``None`` to run offline.
    max_tokens
        Reply length of every call (short answers: a choice, a name, a sentence or two).
    """

    model: Any = None
    max_tokens: int = 256
    transcript: list[dict[str, str]] = field(default_factory=list)
    fallbacks: int = 0
    calls: int = 0

    @property
    def online(self) -> bool:
        """Whether a model is attached."""
        return self.model is not None

    def ask(self, prompt: str, *, system_text: str = "") -> str | None:
        """Send ``prompt``; the reply text, or ``None`` offline or when the call failed."""
        if self.model is None:
            return None
        from flaneur.models import ModelError, system, user

        messages = ([system(system_text)] if system_text else []) + [user(prompt)]
        self.calls += 1
        try:
            reply = self.model.complete_sync(messages, temperature=0, max_tokens=self.max_tokens)
        except ModelError as err:
            self.fallbacks += 1
            self.transcript.append({"prompt": prompt, "error": str(err)[:200]})
            return None
        text = reply.text or ""
        self.transcript.append({"prompt": prompt, "reply": text})
        return text

    def fell_back(self) -> None:
        """Count a reply that could not be used."""
        self.fallbacks += 1

    def close(self) -> None:
        """Close the model's connections."""
        if self.model is not None and hasattr(self.model, "close_sync"):
            self.model.close_sync()


def make_thinker(llm: str | None, base_url: str | None = None) -> Thinker:
    """A :class:`Thinker` for a model string (``None``: offline).

    The model gets the transport defaults of where it is served (a server on this machine
    or the local network: 300 s time-out, its own slot count in flight; see
    :func:`flaneur.models.registry.transport_defaults`).
    """
    if not llm:
        return Thinker()
    from flaneur.models.registry import ModelConfig

    return Thinker(ModelConfig(llm, base_url=base_url, cache_mode="off").build())

"""Filling the CitySeeker prompts (``prompts/cityseeker/*.txt``) and attaching views.

The stop prompt shows the current view (or, without views, a map description of the
surroundings); the choice prompt lists one lettered option per navigable heading, each with
its perspective view (or a map description). Every prompt is logged as text: the system
message, the user text and one ``[image k: ...]`` line per attached image.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flaneur.agents.cityseeker.options import (
    Option,
    compass,
    describe_here,
    describe_option,
    node_kind,
    render_views,
)
from flaneur.agents.cityseeker.state import EpisodeRun
from flaneur.agents.prompts import load_prompt
from flaneur.models.messages import Message, system, user


@dataclass
class BuiltPrompt:
    """A filled prompt and its images.

    Attributes
    ----------
    kind
        ``"stop"``, ``"choice"`` or ``"cognition"``.
    text
        The user message text.
    prompt_id
        ``<version>:<hash of the filled text>``.
    images
        PIL images sent after the text.
    image_notes
        What each image shows (``{"node", "heading"}``), for the log.
    """

    kind: str
    text: str
    prompt_id: str
    images: list[Any] = field(default_factory=list)
    image_notes: list[dict[str, Any]] = field(default_factory=list)

    def messages(self, system_text: str) -> list[Message]:
        """The chat messages: the system prompt, then the text and images."""
        return [system(system_text), user(self.text, *self.images)]

    def log_text(self, system_text: str) -> str:
        """Everything that was sent, as text (images as ``[image k: ...]`` lines)."""
        lines = [f"[system]\n{system_text}", f"[user]\n{self.text}"]
        lines += [
            f"[image {i + 1}: view from node {n['node']} toward {n['heading']:.0f}°]"
            for i, n in enumerate(self.image_notes)
        ]
        return "\n".join(lines)


def _section(text: str) -> str:
    return f"\n{text.strip()}\n" if text.strip() else ""


class PromptBuilder:
    """Fills the templates for one city and view provider.

    Parameters
    ----------
    views
        A view provider (``env_info.views``) or ``None`` for text descriptions.
    fov, size
        Field of view (degrees) and ``(width, height)`` of the views.
    radius_m
        Radius of the map descriptions.
    """

    def __init__(
        self,
        views: Any,
        *,
        fov: float = 60.0,
        size: tuple[int, int] = (800, 460),
        radius_m: float = 50.0,
    ) -> None:
        self.views = views
        self.fov = float(fov)
        self.size = (int(size[0]), int(size[1]))
        self.radius_m = float(radius_m)
        self.system = load_prompt("cityseeker", "system")
        self.stop = load_prompt("cityseeker", "stop")
        self.choice = load_prompt("cityseeker", "choice")
        self.cognition = load_prompt("cityseeker", "cognition")

    @property
    def system_text(self) -> str:
        """The system message."""
        return self.system.text.strip()

    def _views(self, run: EpisodeRun, headings: list[float]) -> tuple[list[Any], list[dict]]:
        """The views toward ``headings``; none (text instead) if the provider has no
        imagery here (:class:`~flaneur.views.ViewError`, recorded as a strategy event)."""
        from flaneur.views.base import ViewError  # the view stack loads only when views are on

        try:
            images = render_views(self.views, run.node, headings, fov=self.fov, size=self.size)
        except ViewError as err:
            run.events.append(f"views: unavailable here ({err}); map text instead")
            return [], []
        notes = [{"node": run.node_id(), "heading": round(float(h), 1)} for h in headings]
        return images, notes

    def stop_prompt(self, run: EpisodeRun, limit: int, context: str) -> BuiltPrompt:
        """The stop prompt of the current step."""
        images: list[Any] = []
        notes: list[dict] = []
        if self.views is not None:
            images, notes = self._views(run, [run.heading])
        if images:
            observation = (
                f"Image 1 shows your current view, facing the {compass(run.heading)} "
                f"({run.heading:.0f}°). You stand at {node_kind(run.city, run.node)}."
            )
        else:
            observation = describe_here(run.city, run.node, run.heading, radius_m=self.radius_m)
        text, pid = self.stop.fill(
            instruction=run.episode.instruction,
            step=run.step + 1,
            limit=limit,
            observation=observation,
            context=_section(context),
        )
        return BuiltPrompt("stop", text, pid, images, notes)

    def choice_prompt(
        self, run: EpisodeRun, limit: int, context: str, options: list[Option], hint: str
    ) -> BuiltPrompt:
        """The choice prompt of the current step."""
        images: list[Any] = []
        notes: list[dict] = []
        if self.views is not None:
            images, notes = self._views(run, [o.heading for o in options])
        lines = []
        for i, o in enumerate(options):
            head = f"{o.letter}. {o.coarse} ({o.fine}, toward the {compass(o.heading)}"
            head += f", {o.heading:.0f}°)"
            if images:
                lines.append(f"{head}: see image {i + 1}")
            else:
                what = describe_option(run.city, run.node, o, radius_m=self.radius_m)
                lines.append(f"{head}: {what}")
        text, pid = self.choice.fill(
            instruction=run.episode.instruction,
            step=run.step + 1,
            limit=limit,
            where=node_kind(run.city, run.node),
            facing=compass(run.heading),
            context=_section(context),
            options="\n".join(lines),
            hint=_section(hint),
        )
        return BuiltPrompt("choice", text, pid, images, notes)

    def cognition_prompt(self, kind: str, summary: str) -> BuiltPrompt:
        """The prompt that asks the model to build a cognitive map (C1, C2)."""
        text, pid = self.cognition.fill(kind=kind, summary=summary)
        return BuiltPrompt("cognition", text, pid)


__all__ = ["BuiltPrompt", "PromptBuilder"]

"""Filling the CitySeeker prompts (``prompts/cityseeker/*.txt``) and attaching views.

The stop prompt shows the current view (or, without views, a map description of the
surroundings); the choice prompt lists one lettered option per navigable heading, each with
its perspective view (or a map description). Every prompt is logged as text: the system
message, the user text and one ``[image k: ...]`` line per attached image.

Under ``--protocol paper`` (``PromptBuilder(paper=True)``) the prompts are CitySeeker's in
what they show: no step count and no step budget (CitySeeker's prompts have neither), the
stop prompt's image is the 360-degree panorama of the node (:func:`render_panorama`), the
option views are 120 degrees wide, 1024 x 512 (CitySeeker's ``PanoParams``), and each option
line names CitySeeker's direction of eight alone (``B. FRONT_LEFT (toward the east, 95°)``:
flaneur's finer label is left out, as the released code's bins name left and right the other
way round; :func:`~flaneur.agents.cityseeker.options.paper_direction`).
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
    render_panorama,
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
            f"[image {i + 1}: 360° panorama at node {n['node']} centred on {n['heading']:.0f}°]"
            if n.get("panorama")
            else f"[image {i + 1}: view from node {n['node']} toward {n['heading']:.0f}°]"
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
    paper
        CitySeeker's prompts (``--protocol paper``): no step count or budget, a panorama in
        the stop prompt.
    """

    def __init__(
        self,
        views: Any,
        *,
        fov: float = 60.0,
        size: tuple[int, int] = (800, 460),
        radius_m: float = 50.0,
        paper: bool = False,
    ) -> None:
        self.views = views
        self.fov = float(fov)
        self.size = (int(size[0]), int(size[1]))
        self.radius_m = float(radius_m)
        self.paper = paper
        self.system = load_prompt("cityseeker", "system")
        self.stop = load_prompt("cityseeker", "stop")
        self.choice = load_prompt("cityseeker", "choice")
        self.cognition = load_prompt("cityseeker", "cognition")

    @property
    def system_text(self) -> str:
        """The system message."""
        return self.system.text.strip()

    def _views(
        self, run: EpisodeRun, headings: list[float], *, panorama: bool = False
    ) -> tuple[list[Any], list[dict]]:
        """The views toward ``headings`` (or the panorama centred on ``headings[0]``); none
        (text instead) if the provider has no imagery here (:class:`~flaneur.views.ViewError`,
        recorded as a strategy event)."""
        from flaneur.views.base import ViewError  # lazy: the view stack loads only with views

        try:
            if panorama:
                images = [render_panorama(self.views, run.node, run.node_id(), headings[0])]
            else:
                images = render_views(self.views, run.node, headings, fov=self.fov, size=self.size)
        except ViewError as err:
            run.events.append(f"views: unavailable here ({err}); map text instead")
            return [], []
        notes = [{"node": run.node_id(), "heading": round(float(h), 1)} for h in headings]
        if panorama:
            notes[0]["panorama"] = True
        return images, notes

    def _progress(self, run: EpisodeRun, limit: int, end: str) -> str:
        """``Step n of at most N.`` (flaneur), or nothing: CitySeeker's prompts name neither
        the step nor the budget."""
        return "" if self.paper else f"Step {run.step + 1} of at most {limit}.{end}"

    def stop_prompt(self, run: EpisodeRun, limit: int, context: str) -> BuiltPrompt:
        """The stop prompt of the current step."""
        images: list[Any] = []
        notes: list[dict] = []
        if self.views is not None:
            images, notes = self._views(run, [run.heading], panorama=self.paper)
        where = node_kind(run.city, run.node)
        if images and self.paper:
            observation = (
                "Image 1 is the 360° panorama of where you stand, centred on the direction you "
                f"face ({compass(run.heading)}, {run.heading:.0f}°). You stand at {where}."
            )
        elif images:
            observation = (
                f"Image 1 shows your current view, facing the {compass(run.heading)} "
                f"({run.heading:.0f}°). You stand at {where}."
            )
        else:
            observation = describe_here(run.city, run.node, run.heading, radius_m=self.radius_m)
        text, pid = self.stop.fill(
            instruction=run.episode.instruction,
            progress=self._progress(run, limit, "\n"),
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
            fine = "" if self.paper else f"{o.fine}, "  # paper: CitySeeker's label alone
            head = f"{o.letter}. {o.coarse} ({fine}toward the {compass(o.heading)}"
            head += f", {o.heading:.0f}°)"
            if images:
                lines.append(f"{head}: see image {i + 1}")
            else:
                what = describe_option(run.city, run.node, o, radius_m=self.radius_m)
                lines.append(f"{head}: {what}")
        text, pid = self.choice.fill(
            instruction=run.episode.instruction,
            progress=self._progress(run, limit, " "),
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

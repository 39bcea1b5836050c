"""What a run provides agents, and the check of an agent's declared needs against it.

Options themselves are typed and checked by :mod:`flaneur.options` (every plug-in kind shares
that check); this module adds what is particular to agents: the action scheme a task set
runs in, and whether the run has a model (``--llm``) or views (``--views``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flaneur.errors import FlaneurError


@dataclass(frozen=True)
class RunSetup:
    """What a run provides agents, as far as their needs are concerned.

    Attributes
    ----------
    scheme
        The action scheme of the task set (empty for tasks that are not navigation).
    llm, views, landmarks
        The ``--llm``, ``--views`` and ``--landmarks`` values (``None`` when not given).
    """

    scheme: str
    llm: str | None = None
    views: str | None = None
    landmarks: str | None = None


def check_requirements(
    agent: str,
    cls: Any,
    *,
    scheme: str,
    has_model: bool,
    has_views: bool,
    options: dict[str, Any] | None = None,
    landmarks: str | None = None,
    views: str | None = None,
) -> None:
    """Raise one line when an agent's declared needs do not fit the run's set-up.

    Parameters
    ----------
    agent
        The agent's name.
    cls
        Its class (``schemes``, ``needs_model``, ``needs_views`` and the ``check_setup``
        class method for needs that depend on its options).
    scheme
        The scheme a task set runs in (empty: the task is not navigation).
    has_model, has_views
        Whether the run has ``--llm`` / ``--views``.
    options
        The agent's options in this run.
    landmarks
        The run's ``--landmarks`` value.
    views
        The run's ``--views`` value, when known (``check_setup`` sees it as
        ``setup.views``; else ``"views"`` stands for any views when ``has_views``).
    """
    schemes = tuple(getattr(cls, "schemes", ()))
    if scheme and schemes and scheme not in schemes:
        raise FlaneurError(
            f"agent {agent!r} acts in the {' or '.join(schemes)} scheme, not {scheme!r}: "
            f"add --scheme {schemes[0]}"
        )
    if getattr(cls, "needs_model", False) and not has_model:
        raise FlaneurError(f"agent {agent!r} needs a language model: add --llm")
    if getattr(cls, "needs_views", False) and not has_views:
        raise FlaneurError(f"agent {agent!r} needs street-level views: add --views")
    check_setup = getattr(cls, "check_setup", None)
    if check_setup is not None:
        llm = "llm" if has_model else None
        shown = (views or "views") if has_views else None
        setup = RunSetup(scheme, llm, shown, landmarks)
        try:
            check_setup(dict(options or {}), setup)
        except FlaneurError as err:
            raise FlaneurError(f"agent {agent!r}: {err}") from None


__all__ = ["RunSetup", "check_requirements"]

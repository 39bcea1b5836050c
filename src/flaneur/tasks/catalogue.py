"""The catalogue of task sets: the built-in ones and :func:`register_task` (the store and the
check of every set's declared facts).

:mod:`flaneur.tasks.registry` is the module to use: it adds discovery (registry files,
``$FLANEUR_TASKS``, entry points) and loading. This module sits below it so that the
discovery (:mod:`flaneur.tasks.user_registry`) and the resolver (:mod:`flaneur.tasks.resolve`)
can register and look up sets without importing the registry back.
"""

from __future__ import annotations

import sys
from typing import NotRequired, TypedDict, cast

from flaneur.errors import FlaneurError
from flaneur.registry import Registry
from flaneur.tasks.cities import CITY_SOURCES, CitySource
from flaneur.tasks.episode import Episode
from flaneur.tasks.formats import FORMATS
from flaneur.tasks.items import TaskItem
from flaneur.tasks.spec import (
    ID_PATTERN,
    KIND_PATTERN,
    NAVIGATION,
    SCHEME_NAMES,
    SUCCESS_METRICS,
    TaskSpec,
)

TaskItems = list[Episode] | list[TaskItem]
"""What a task set holds: navigation episodes, or items of another kind."""


def navigation_episodes(items: TaskItems, *, task: str = "") -> list[Episode]:
    """``items`` as the episodes of a navigation set, for code that serves only those
    (environments, gold walks, maps, human play, fine-tuning exports).

    Raises
    ------
    FlaneurError
        One line when the set holds items of another kind (a V-IRL benchmark or scenario
        set), naming the task.
    """
    if any(not isinstance(item, Episode) for item in items):
        named = f"task {task!r}" if task else "the task set"
        raise FlaneurError(
            f"{named} holds items of a V-IRL benchmark or scenario kind, not navigation "
            "episodes: this works on navigation task sets only"
        )
    return cast(list[Episode], items)


DATA_ENV = "FLANEUR_DATA"
"""Environment variable naming the data directory."""


class _Facts(TypedDict):
    """The facts several built-in sets share."""

    scheme: str
    success_metric: str
    paper_max_steps: NotRequired[int | None]


VELMA_FACTS: _Facts = {
    "scheme": "turns",
    "success_metric": "tc",
    "paper_max_steps": FORMATS["map2seq"].paper_max_steps,
}
"""VELMA's route-following sets: the corrected Touchdown turn rules, task completion (TC);
under ``--protocol paper`` the actions VELMA's loop allows (56 with ``--max_steps 55``) for
every episode."""
NEED_FACTS: _Facts = {"scheme": "headings", "success_metric": "tcp"}
"""CitySeeker-style place-finding sets: walkable headings, stopping within 50 m (TCP)."""

BUILTIN_TASKS: list[TaskSpec] = [
    TaskSpec(
        id="map2seq-unseen-dev-v1",
        description="map2seq route instructions, unseen Manhattan area, dev split (VELMA)",
        city="touchdown-manhattan",
        files=("map2seq/unseen/dev.json",),
        split="dev",
        loader="map2seq",
        category="map2seq-unseen",
        origin="built-in",
        **VELMA_FACTS,
    ),
    TaskSpec(
        id="map2seq-seen-dev-v1",
        description="map2seq route instructions, seen Manhattan area, dev split (VELMA)",
        city="touchdown-manhattan",
        files=("map2seq/seen/dev.json",),
        split="dev",
        loader="map2seq",
        category="map2seq-seen",
        origin="built-in",
        **VELMA_FACTS,
    ),
    TaskSpec(
        id="touchdown-unseen-dev-v1",
        description="Touchdown navigation instructions, unseen Manhattan area, dev split (VELMA)",
        city="touchdown-manhattan",
        files=("touchdown/unseen/dev.json",),
        split="dev",
        loader="touchdown",
        category="touchdown-unseen",
        origin="built-in",
        **VELMA_FACTS,
    ),
    TaskSpec(
        id="cityseeker-shanghai2-v1",
        description="CitySeeker implicit-need tasks in Shanghai (shanghai2), all 127 questions",
        city="cityseeker-shanghai2",
        files=("cityseeker/shanghai2/questions.json",),
        split="all",
        loader="cityseeker",
        origin="built-in",
        **NEED_FACTS,
    ),
    TaskSpec(
        id="helsinki-needs-v1",
        description="CitySeeker-style need tasks generated on built-in Helsinki (offline, seed 0)",
        city="helsinki",
        split="all",
        loader="generated",
        generator="needs",
        origin="built-in",
        **NEED_FACTS,
    ),
    *(
        TaskSpec(
            id=f"helsinki-{name}-v1",
            description=f"{text} on built-in Helsinki (generated offline, seed 0)",
            kind=kind,
            city="helsinki",
            split="all",
            loader="generated",
            generator=name,
            origin="built-in",
            scheme=scheme,
            success_metric=success,
        )
        for name, kind, scheme, success, text in (
            ("virl-vln", "navigation", "headings", "virl_success", "V-IRL's VLN routes"),
            ("virl-recognition", "virl-recognition", "", "top1", "V-IRL's place recognition"),
            ("virl-vqa", "virl-vqa", "", "correct", "V-IRL's place VQA (circular)"),
            ("virl-local", "virl-local", "", "followed", "Local's direction questions"),
            ("virl-ling", "navigation", "headings", "virl_success", "Ling's trips by asking"),
            ("virl-peng", "virl-peng", "", "optimal", "Peng's errands to order"),
            ("virl-aria", "virl-aria", "", "top1_fits", "Aria's recommendation wishes"),
            ("virl-vivek", "virl-vivek", "", "top1_fits", "Vivek's home searches"),
            ("virl-diego", "virl-diego", "", "feasible", "Diego's day plans"),
            ("virl-hiro", "navigation", "headings", "tcp", "Hiro's intentional searches"),
            ("virl-detection", "virl-detection", "", "recall", "V-IRL's place detection"),
            ("virl-rx399", "virl-rx399", "", "count_exact", "RX-399's object counts"),
            ("virl-imani", "virl-imani", "", "count_within", "Imani's region surveys"),
        )
    ),
]
"""The built-in task sets (all v1)."""

TASKS: Registry[TaskSpec] = Registry("task set", importable=False)
"""Task sets by id: the built-ins, :func:`register_task`, registry files (``--registry``,
``$FLANEUR_TASKS``) and the entry-point group ``flaneur.tasks`` (read by
:func:`flaneur.tasks.user_registry.discover_task_sets`, whose entry points may load to several
sets at once)."""
for _spec in BUILTIN_TASKS:
    TASKS.register(_spec.id, _spec)


def register_task(spec: TaskSpec, *, replace: bool = False) -> TaskSpec:
    """Add a task set to the registry (``replace=True`` to overwrite an id).

    Raises
    ------
    FlaneurError
        A taken or malformed id, a set with neither a ``build`` hook nor a city and files, or an
        undeclared scheme or success metric.
    """
    if spec.id in TASKS.names() and not replace:
        raise FlaneurError(f"task {spec.id!r} is already registered")
    if not ID_PATTERN.match(spec.id):
        raise FlaneurError(
            f"task id {spec.id!r} may hold only letters, digits and _ . : - "
            "(and starts with a letter or digit)"
        )
    made = spec.build is not None or bool(spec.generator)
    if not made and (not spec.city or not spec.files):
        raise FlaneurError(
            f"task {spec.id!r} needs a generator or a build callable, or a city (one of "
            f"{sorted(CITY_SOURCES)} or a city spec) and episode files"
        )
    if spec.generator and not spec.city:
        raise FlaneurError(f"task {spec.id!r}: a generated set needs a city")
    if not made and spec.loader not in FORMATS:
        raise FlaneurError(
            f"task {spec.id!r}: loader {spec.loader!r} is not one of {', '.join(FORMATS)}"
        )
    if not KIND_PATTERN.match(spec.kind):
        raise FlaneurError(f"task {spec.id!r}: kind {spec.kind!r} must be like virl-aria")
    if spec.kind == NAVIGATION and spec.scheme not in SCHEME_NAMES:
        raise FlaneurError(
            f"task {spec.id!r}: scheme {spec.scheme!r} is not one of {', '.join(SCHEME_NAMES)}"
        )
    _check_success_metric(spec)
    TASKS.register(spec.id, spec, replace=True)
    _gymnasium_hook(spec)
    return spec


def _check_success_metric(spec: TaskSpec) -> None:
    if spec.kind == NAVIGATION and spec.success_metric not in SUCCESS_METRICS:
        raise FlaneurError(
            f"task {spec.id!r}: success metric {spec.success_metric!r} is not one of "
            + ", ".join(SUCCESS_METRICS)
        )
    if not ID_PATTERN.match(spec.success_metric or ""):
        raise FlaneurError(f"task {spec.id!r}: success metric {spec.success_metric!r} is no name")


def _gymnasium_hook(spec: TaskSpec) -> None:
    """Give a set registered after :mod:`flaneur.env` was imported its Gymnasium id too."""

    registration = sys.modules.get("flaneur.env.registration")
    if registration is not None and spec.kind == "navigation":
        registration.register_task_env(spec.id)


def register_city_source(source: CitySource, *, replace: bool = False) -> CitySource:
    """Add a way to build a task city from the data directory (for file-based task sets)."""
    if source.key in CITY_SOURCES and not replace:
        raise FlaneurError(f"city source {source.key!r} is already registered")
    CITY_SOURCES[source.key] = source
    return source


__all__ = [
    "BUILTIN_TASKS",
    "DATA_ENV",
    "TASKS",
    "TaskItems",
    "navigation_episodes",
    "register_city_source",
    "register_task",
]

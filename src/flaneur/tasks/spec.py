"""``TaskSpec``: the declared facts of one task set (files, format, city, scheme, success).

A task set declares everything that the rest of flaneur needs to know about it, so that no
command has to guess from an id's or a category's spelling: where its episodes come from (a
*loader*, i.e. a task-file format, and files, or a ``build`` callable), in which city they are
(a data-directory city source such as ``touchdown-manhattan``, or a city spec: a pack folder,
a built-in city, ``touchdown:DIR``, ``cityseeker:DIR``, an ``.osm.pbf``), the action scheme
agents use by default, and the metric that says whether an episode succeeded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from flaneur.registry import import_object
from flaneur.tasks.cities import CITY_SOURCES

if TYPE_CHECKING:
    from flaneur.tasks.episode import Episode
    from flaneur.tasks.items import TaskItem
    from flaneur.world.city import City

TaskBuilder = Callable[[Path | None], "tuple[City, list[Episode] | list[TaskItem]]"]
"""``build(data_dir) -> (city, episodes or items)``: how a generated task set is made."""

SUCCESS_METRICS = ("tc", "tcp", "tce", "tcc", "sr", "osr", "virl_success")
"""Row metrics (true/false per episode) a task set may declare as its success metric."""

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
"""Registered task-set ids: usable as Gymnasium ids (``flaneur/<id>``) and as folder names."""

SCHEME_NAMES = ("turns", "headings", "nodes")
"""Action schemes a task set may declare as its default (see :mod:`flaneur.env.schemes`)."""

NAVIGATION = "navigation"
"""The kind of task sets whose items are navigation episodes run in ``NavigationEnv``."""

KIND_PATTERN = re.compile(r"^[a-z][a-z0-9-]*$")
"""Task kinds: ``navigation``, ``virl-recognition``, ``virl-aria``, ..."""


@dataclass(frozen=True)
class TaskSpec:
    """One task set and its declared facts.

    Attributes
    ----------
    id
        Versioned id, e.g. ``map2seq-unseen-dev-v1`` (for a task file: the path as given).
    kind
        What its items are and what solves them: ``navigation`` (episodes, solved by agents
        in ``NavigationEnv``) or another kind of :data:`flaneur.evaluate.kinds.KINDS`
        (``virl-recognition``, ``virl-aria``, ...: items of an item file, see
        :mod:`flaneur.tasks.items`).
    description
        One line for ``flaneur tasks ls``.
    city
        Either the key of a data-directory city source in
        :data:`flaneur.tasks.cities.CITY_SOURCES` (built from ``--data-dir``), or a city
        spec (pack folder, built-in name, ``touchdown:DIR``, ``cityseeker:DIR``, ``.osm.pbf``).
        For sets with a ``build`` hook it only names the city.
    files
        Episode files: relative paths are read from the data directory, absolute ones as is.
    split
        Dataset split (``dev``, ``test``, ``all``).
    loader
        Task-file format of ``files``: ``episodes`` (flaneur JSONL), ``map2seq``,
        ``touchdown`` or ``cityseeker`` (see :mod:`flaneur.tasks.formats`); ``generated``
        for sets with a ``build`` hook.
    category
        Category written into the episodes by the Touchdown / map2seq loaders (default: the
        loader's name).
    scheme
        Default action scheme of the set (``turns``, ``headings`` or ``nodes``; empty for
        kinds other than navigation).
    success_metric
        The row metric that says whether an episode succeeded (``tc`` for route following,
        ``tcp`` for finding a place; one of :data:`SUCCESS_METRICS` for navigation), or an
        item succeeded (the kind's own metric, e.g. ``top1`` for place recognition).
    generator
        For generated sets: the generator (:data:`flaneur.tasks.generators.GENERATORS`) that
        makes them on :attr:`city` with :attr:`seed`, :attr:`size` and :attr:`options`, on
        first use (then cached).
    seed, size, options
        The generator's seed, number of items (``None``: its default) and typed options.
    paper_max_steps
        The step limit of every episode under ``--protocol paper`` (the seed paper's; e.g.
        VELMA's loop: 56 actions), or ``None`` where the episodes' own limits are the paper's
        (:mod:`flaneur.evaluate.protocol`).
    build
        Optional hook for sets made by code of their own:
        ``build(data_dir) -> (city, episodes or items)``, or its ``"package.module:function"``
        name (imported when the set is loaded, so the
        registry imports nothing of the layers that build sets).
    origin
        Where the set was registered: ``built-in``, a registry file, ``$FLANEUR_TASKS``, an
        entry point, ``file`` (a task file given directly) or ``python``.
    """

    id: str
    description: str
    kind: str = NAVIGATION
    city: str = ""
    files: tuple[str, ...] = ()
    split: str = "dev"
    loader: str = ""
    category: str = ""
    scheme: str = "turns"
    success_metric: str = "tc"
    generator: str = ""
    seed: int = 0
    size: int | None = None
    options: tuple[tuple[str, object], ...] = ()
    paper_max_steps: int | None = None
    build: TaskBuilder | str | None = field(default=None, compare=False)
    origin: str = field(default="python", compare=False)

    @property
    def needs_data_dir(self) -> bool:
        """Whether loading the set reads the data directory (``--data-dir`` / ``$FLANEUR_DATA``).

        Generated sets and sets whose files and city are given by absolute path or city spec
        do not.
        """

        if self.build is not None or self.generator:
            return False
        return self.city in CITY_SOURCES or any(not Path(f).is_absolute() for f in self.files)

    def facts(self) -> dict[str, object]:
        """The declared facts as a JSON-ready dict (recorded in run summaries)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "loader": self.loader or ("generated" if self.build or self.generator else ""),
            "generator": self.generator,
            "files": list(self.files),
            "city": self.city,
            "split": self.split,
            "category": self.category,
            "scheme": self.scheme,
            "success_metric": self.success_metric,
            "paper_max_steps": self.paper_max_steps,
            "origin": self.origin,
        }

    def builder(self) -> TaskBuilder | None:
        """The ``build`` hook, imported when given by name."""
        if isinstance(self.build, str):
            return import_object(self.build, what=f"task {self.id!r} builder")
        return self.build

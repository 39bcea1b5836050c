"""Task-set generators: every generated kind of task made on any city, by name.

``flaneur tasks generate CITY --kind K -o FILE`` and the built-in generated sets
(``helsinki-needs-v1``, ``helsinki-virl-recognition-v1``, ...) go through
:data:`GENERATORS`. A generator turns a city (and a seed, a size and typed options) into a
:class:`GeneratedSet`: navigation episodes (need tasks, V-IRL's VLN routes, Ling's and Hiro's
scenarios) or the items of another kind (V-IRL's benchmarks, the planners' scenarios). Where
a part of the city cannot serve (a region without viewpoints, a type without places), the
generator skips it and says so in the set's ``report``; it fails only when nothing at all
can be made.

The built-in generators are registered by ``module:Class`` name (their code lives with what
they generate, in :mod:`flaneur.tasks` and :mod:`flaneur.bench`) and imported on first use;
outside packages add generators under the entry-point group ``flaneur.generators``.
"""

from __future__ import annotations

import abc
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from flaneur.errors import FlaneurError
from flaneur.options import NoOptions, check_options
from flaneur.paths import cache_dir
from flaneur.registry import Registry
from flaneur.tasks.episode import Episode, read_episodes, write_episodes
from flaneur.tasks.items import TaskItem, read_items, write_items

if TYPE_CHECKING:
    from flaneur.world.city import City


@dataclass
class GeneratedSet:
    """What a generator made.

    Attributes
    ----------
    items
        Navigation episodes, or the items of another kind.
    header
        The facts written into an item file's header (kind, version, success metric,
        generator, city, seed, options); navigation episodes carry theirs in metadata.
    report
        Counts and what was skipped, with reasons (printed by ``tasks generate``).
    """

    items: list[Episode] | list[TaskItem]
    header: dict[str, Any]
    report: dict[str, Any] = field(default_factory=dict)

    def write(self, path: str | Path) -> Path:
        """Write the set: an episode JSONL file, or an item file with its header."""
        path = Path(path)
        if self.items and isinstance(self.items[0], Episode):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            write_episodes(self.items, tmp)
            tmp.replace(path)
            return path
        # task items here, or no item at all
        return write_items(path, self.header, cast(list[TaskItem], self.items))


class Generator(abc.ABC):
    """A task-set generator (see the module docstring).

    Subclasses set the class attributes and implement :meth:`make`.
    """

    interface_base: ClassVar[bool] = True
    kind: ClassVar[str] = "navigation"
    """The task kind of the sets it makes."""
    version: ClassVar[int] = 1
    """Bumped when the same inputs would give other items (cached sets are then remade)."""
    success_metric: ClassVar[str] = "tc"
    scheme: ClassVar[str] = ""
    """The action scheme of navigation sets (empty for other kinds)."""
    description: ClassVar[str] = ""
    default_size: ClassVar[int] = 20
    """Items made when no size is asked for."""
    Options: ClassVar[type] = NoOptions
    Scenario: ClassVar[type | None] = None
    """For kinds made of scenarios (V-IRL's agents): the typed fields of one scenario, which
    are the keys a persona file may hold (``flaneur virl NAME FILE``)."""

    @classmethod
    def paper_options(cls, city: City, options: dict[str, Any]) -> dict[str, Any]:
        """The options of a set made on ``city`` under ``--protocol paper`` (the seed paper's
        where they differ). Default: ``options`` as given."""
        return options

    def from_fields(
        self, fields: dict[str, Any], city: City, *, item_id: str, source: Path | None = None
    ) -> Episode | TaskItem:
        """One scenario from checked :attr:`Scenario` fields (a persona file's; ``source``
        is the file, against which relative paths resolve). Default: an item of the fields.

        Raises
        ------
        FlaneurError
            One line when the city cannot serve the scenario (its start is outside it).
        """
        del city, source
        return TaskItem(item_id, self.kind, dict(fields))

    @abc.abstractmethod
    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[Episode] | list[TaskItem], dict[str, Any]]:
        """``(items, report)`` for ``city``; ``options`` is an instance of :attr:`Options`.

        Raises
        ------
        FlaneurError
            One line when the city cannot serve a single item (saying why).
        """


def _check_generator(name: str, entry: Any) -> None:
    if not (isinstance(entry, type) and issubclass(entry, Generator)):
        raise FlaneurError(f"generator {name!r} is {entry!r}, not a Generator subclass")


GENERATORS: Registry[type[Generator]] = Registry(
    "task generator", group="flaneur.generators", check=_check_generator
)
"""Generators by the kind name ``tasks generate --kind`` takes."""
for _name, _entry in {
    "needs": "flaneur.tasks.generate:NeedTasks",
    "virl-vln": "flaneur.bench.vln_routes:VlnRoutes",
    "virl-recognition": "flaneur.bench.recognition:RecognitionSet",
    "virl-vqa": "flaneur.bench.vqa:VqaSet",
    "virl-detection": "flaneur.bench.detection:DetectionSet",
    "virl-local": "flaneur.bench.route_scenarios:LocalScenarios",
    "virl-ling": "flaneur.bench.route_scenarios:LingScenarios",
    "virl-peng": "flaneur.bench.scenarios:PengScenarios",
    "virl-aria": "flaneur.bench.scenarios:AriaScenarios",
    "virl-vivek": "flaneur.bench.scenarios:VivekScenarios",
    "virl-diego": "flaneur.bench.scenarios:DiegoScenarios",
    "virl-rx399": "flaneur.bench.survey_scenarios:RobotScenarios",
    "virl-imani": "flaneur.bench.survey_scenarios:PlannerScenarios",
    "virl-hiro": "flaneur.bench.hiro_scenarios:HiroScenarios",
}.items():
    GENERATORS.register(_name, _entry)


def generate_set(
    name: str,
    city: City,
    *,
    city_spec: str,
    seed: int = 0,
    size: int | None = None,
    options: dict[str, Any] | None = None,
    set_name: str | None = None,
) -> GeneratedSet:
    """Make a task set of generator ``name`` on ``city``.

    Parameters
    ----------
    name
        A generator of :data:`GENERATORS` (``needs``, ``virl-recognition``, ...).
    city
        The city.
    city_spec
        How to load the city again (a built-in name or a pack folder), written into the set.
    seed
        Same seed, same set.
    size
        Items to make (default: the generator's); fewer where the city has too few.
    options
        The generator's typed options (checked; unknown keys are one-line errors).
    set_name
        Prefix of the ids (default ``"<city>-<name>"``).
    """
    cls = GENERATORS.get(name)
    values = check_options(name, cls.Options, dict(options or {}), what="generator")
    if size is not None and size < 1:
        raise FlaneurError(f"generator {name!r}: size must be at least 1, not {size}")
    items, report = cls().make(
        city,
        seed=seed,
        size=size or cls.default_size,
        set_name=set_name or f"{city.name}-{name}",
        options=cls.Options(**values),
    )
    header = {
        "kind": cls.kind,
        "version": cls.version,
        "generator": name,
        "success_metric": cls.success_metric,
        "city": city_spec,
        "city_name": city.name,
        "seed": seed,
        "size": size or cls.default_size,
        "options": values,
    }
    return GeneratedSet(items, header, {"items": len(items), **report})


def cached_generated_set(
    name: str,
    city: City,
    *,
    city_spec: str,
    set_id: str,
    seed: int = 0,
    size: int | None = None,
    options: dict[str, Any] | None = None,
) -> list[Episode] | list[TaskItem]:
    """The items of a generated task set, made on first use and read from the cache after
    (keyed by the generator and its version, the city's size, seed, size and options)."""

    cls = GENERATORS.get(name)
    params = json.dumps([seed, size, options or {}], sort_keys=True, default=str)
    digest = hashlib.sha256(params.encode()).hexdigest()[:10]
    fingerprint = f"{city.graph.n_nodes}-{len(city.places)}"
    path = cache_dir("tasks") / f"{set_id}-{name}-g{cls.version}-{fingerprint}-{digest}.jsonl"
    if path.is_file():
        if cls.kind == "navigation":
            return read_episodes(path)
        return read_items(path)[1]
    made = generate_set(
        name, city, city_spec=city_spec, seed=seed, size=size, options=options, set_name=set_id
    )
    made.write(path)
    return made.items


__all__ = ["GENERATORS", "GeneratedSet", "Generator", "cached_generated_set", "generate_set"]

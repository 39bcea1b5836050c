"""``flaneur virl NAME PERSONA [KEY=VALUE ...]``: one scenario of a V-IRL agent, run by the
one runner, with the agent's result and an offline map.

The persona file (TOML or YAML) and the ``KEY=VALUE`` overrides after it hold two sets of
keys, both typed: the scenario's fields (the persona, and what it asks for: ``question``,
``sentence``, ``wishes``, ``end``, ``polygon``, ...; the ``Scenario`` of the kind's generator
in :data:`flaneur.tasks.generators.GENERATORS`) and the agent's options (``radius_m``,
``keep``, ``step_limit``, ...; the agent's ``Options``). A key of neither, or a value of the
wrong type, is a one-line error naming the file and listing the valid keys.

The scenario becomes a one-item task file (``DIR/scenario.jsonl``) that
:func:`flaneur.evaluate.runner.run_benchmark` runs into ``DIR`` like any task set
(``episodes.jsonl``, ``summary.json``; ``flaneur run --tasks DIR/scenario.jsonl`` runs it
again). From its row this module writes ``result.json`` (the plan, its metrics, every model
exchange) and ``map.html`` (:mod:`flaneur.report.virl_maps`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from flaneur.agents import AGENTS
from flaneur.errors import DataError, FlaneurError
from flaneur.evaluate.runlog import FINISHED, read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.options import check_options, options_schema
from flaneur.report.virl_maps import scenario_map, write_outputs
from flaneur.services.errors import RegionError, UnknownPlaceError, UnreachableError
from flaneur.services.geocode import resolve_point
from flaneur.services.persona import apply_overrides, read_config
from flaneur.tasks.cities import absolute_city_spec
from flaneur.tasks.episode import Episode, write_episodes
from flaneur.tasks.generators import GENERATORS
from flaneur.tasks.items import write_items
from flaneur.world.builtin import load_city

ALIASES = {"robot": "rx399", "planner": "imani"}
"""Earlier command names of two agents."""

SCENARIO_FILE = "scenario.jsonl"
"""The one-item task file a scenario run writes into its folder."""

RUN_FILES = ("episodes.jsonl", "summary.json", "run.json", SCENARIO_FILE)
"""Files of an earlier scenario run in the same folder (replaced by a new run)."""


def split_keys(
    name: str, data: dict[str, Any], scenario_cls: type, agent_cls: type, source: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(scenario fields, agent options)`` of a persona file's keys, both checked."""

    scenario_keys = {f.name for f in dataclasses.fields(scenario_cls)}
    option_keys = {f.name for f in dataclasses.fields(options_schema(agent_cls))}
    unknown = sorted(set(data) - scenario_keys - option_keys)
    if unknown:
        raise DataError(
            f"unknown key(s) {', '.join(unknown)}: the {name} scenario takes "
            f"{', '.join(sorted(scenario_keys))}; agent {name!r} takes "
            f"{', '.join(sorted(option_keys)) or 'no options'}",
            path=source,
        )
    fields = {k: v for k, v in data.items() if k in scenario_keys}
    options = {k: v for k, v in data.items() if k in option_keys and k not in scenario_keys}
    try:
        fields = check_options(name, scenario_cls, fields, what="scenario of")
        options = check_options(name, options_schema(agent_cls), options)
    except FlaneurError as err:
        raise DataError(str(err), path=source) from None
    return fields, options


def _scenario_item(
    name: str, generator: Any, fields: dict[str, Any], city: Any, source: Path
) -> Any:
    """The scenario's item, checked against the city before anything is written (a start
    the city does not have, or a point outside it, is one line naming the file)."""

    try:
        values = dataclasses.asdict(generator.Scenario(**fields))
        resolve_point(city, str(values["start"]))
        return generator().from_fields(values, city, item_id=f"{name}-scenario", source=source)
    except (UnknownPlaceError, RegionError, UnreachableError, DataError) as err:
        shown = err.reason if isinstance(err, DataError) and err.path == source else str(err)
        raise DataError(shown, path=source) from None


def write_scenario_file(folder: Path, generator: Any, item: Any, city_spec: str) -> Path:
    """The one-item task file of a scenario (an item file, or an episode file for Ling)."""

    path = folder / SCENARIO_FILE
    if isinstance(item, Episode):
        item.metadata.update(scheme=generator.scheme, success_metric=generator.success_metric)
        write_episodes([item], path)
        return path
    header = {
        "kind": generator.kind,
        "version": generator.version,
        "success_metric": generator.success_metric,
        "city": city_spec,
    }
    return write_items(path, header, [item])


def run_scenario(
    name: str,
    persona_file: str | Path,
    overrides: list[str],
    out: str | Path,
    *,
    city: str | None = None,
    llm: str | None = None,
    llm_base_url: str | None = None,
    views: str | None = None,
    protocol: str = "flaneur",
) -> dict[str, Any]:
    """Run agent ``name`` on the scenario of ``persona_file`` (under ``protocol``); write the run, ``result.json``
    and ``map.html`` into ``out``; return the result.

    Raises
    ------
    FlaneurError
        One line: an unknown agent, key or value (naming the file), a city the scenario's
        start is not in, or the agent's own failure on it.
    """

    name = ALIASES.get(name, name)
    source = Path(persona_file)
    generator = GENERATORS.get(f"virl-{name}")
    data = read_config(source)
    apply_overrides(data, list(overrides))
    assert generator.Scenario is not None, "the generator of an agent's scenarios has one"
    fields, options = split_keys(name, data, generator.Scenario, AGENTS.get(name), source)
    spec = city or str(fields.get("city") or "")
    if not spec:
        raise DataError("no city: give the persona file a 'city' or pass --city", path=source)
    city_spec = absolute_city_spec(spec, Path.cwd() if city else source.parent)
    town = load_city(city_spec)
    item = _scenario_item(name, generator, fields, town, source)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in RUN_FILES:
        (folder / stale).unlink(missing_ok=True)
    task_file = write_scenario_file(folder, generator, item, city_spec)
    config = RunConfig(
        agents=(name,),
        tasks=(str(task_file),),
        city=city_spec,
        llm=llm,
        llm_base_url=llm_base_url,
        views=views,
        concurrency=1,
        per_agent_options={name: options},
        protocol=protocol,
    )
    summary = run_benchmark(config, folder, progress="none")
    row = _the_row(folder)
    result = scenario_result(name, item, town, row, summary, options)
    fmap, extra = scenario_map(name, town, item, row)
    write_outputs(folder, result, fmap, extra)
    return result


def _the_row(folder: Path) -> dict[str, Any]:

    rows, _ = read_rows(folder / "episodes.jsonl")
    if not rows:
        raise FlaneurError(f"{folder}: the scenario run wrote no row")
    row = rows[-1]
    if row.get("termination") not in FINISHED:
        raise FlaneurError(str(row.get("error") or row.get("termination")))
    return row


def scenario_result(
    name: str,
    item: Any,
    city: Any,
    row: dict[str, Any],
    summary: dict[str, Any],
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``result.json`` of a scenario run: the scenario, the agent's options, the plan, its
    metrics, the model's exchanges and the time taken."""

    records = list(row.get("records") or [])
    usage = row.get("usage") or {}
    scenario = item.metadata.get("scenario", {}) if isinstance(item, Episode) else dict(item.data)
    plan = row.get("result")
    if plan is None:  # a navigation row: the walk itself
        keys = ("termination", "steps", "path", "actions", "error")
        plan = {k: row[k] for k in keys if k in row}
    return {
        "agent": name,
        "scenario": scenario,
        "options": dict(options or {}),
        "city": city.name,
        "offline": summary.get("model") is None,
        **plan,
        "metrics": row.get("metrics"),
        "success": row.get("success"),
        "llm_calls": int(usage.get("calls", 0)),
        "llm_fallbacks": sum(int(r.get("parse_failures") or 0) for r in records),
        "transcript": records,
        "seconds": row.get("duration_s"),
    }


__all__ = ["ALIASES", "run_scenario", "scenario_result", "split_keys", "write_scenario_file"]

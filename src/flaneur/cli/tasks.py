"""``flaneur tasks``: list the registered task sets and check episode files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from flaneur.cli.failures import check_output_path
from flaneur.cli.output import console, print_json
from flaneur.cli.task_options import (
    CITY_HELP,
    FORMAT_OPTION,
    REGISTRY_OPTION,
    TASKS_HELP,
    resolve_cli_tasks,
)
from flaneur.errors import ArgumentError, FlaneurError
from flaneur.options import describe_options

tasks_app = typer.Typer(
    rich_markup_mode=None, help="List task sets and check episode files.", no_args_is_help=True
)

DATA_DIR_HELP = (
    "Folder holding the datasets (touchdown/, map2seq/, cityseeker/); default $FLANEUR_DATA."
)


@tasks_app.command("ls")
def ls(
    data_dir: Path | None = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    registry: list[Path] | None = REGISTRY_OPTION,
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List the registered task sets: episodes, city, scheme, success metric and origin."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.tasks.registry import (
        DATA_ENV,
        count_episodes,
        list_tasks,
        missing_files,
        resolve_data_dir,
    )
    from flaneur.tasks.resolve import register_registries

    register_registries(registry)
    folder = None
    if data_dir is not None or os.environ.get(DATA_ENV):
        folder = resolve_data_dir(data_dir)
    tasks = []
    for spec in list_tasks():
        where = folder if spec.needs_data_dir else None
        if spec.build is not None or spec.generator:
            status, count = "generated", None
        elif spec.needs_data_dir and folder is None:
            status, count = "no data dir", None
        else:
            count = count_episodes(spec, where)
            status = "ok" if count is not None else "missing"
        entry: dict[str, Any] = {
            "id": spec.id,
            "episodes": count,
            "status": status,
            "kind": spec.kind,
            "city": spec.city,
            "split": spec.split,
            "format": spec.loader,
            "scheme": spec.scheme,
            "success_metric": spec.success_metric,
            "origin": spec.origin,
            "description": spec.description,
        }
        if status == "missing":
            entry["missing"] = [str(p) for p in missing_files(spec, where)]
        tasks.append(entry)
    if json_out:
        print_json({"data_dir": str(folder) if folder else None, "tasks": tasks})
        return

    table = Table(title=f"task sets (data: {folder or 'not set'})")
    table.add_column("id", no_wrap=True)
    table.add_column("episodes", justify="right", no_wrap=True)
    table.add_column("city")
    table.add_column("scheme / success", no_wrap=True)
    table.add_column("origin")
    table.add_column("description")
    for t in tasks:
        shown = f"{t['episodes']:,}" if t["episodes"] is not None else t["status"]
        facts = f"{t['scheme']} / {t['success_metric']}"
        table.add_row(t["id"], shown, t["city"], facts, t["origin"], t["description"])
    console.print(table)


@tasks_app.command("check")
def check(
    file: str | None = typer.Argument(
        None, metavar="FILE|ID", help="A task file or registered id (the same as --tasks)."
    ),
    tasks: str | None = typer.Option(None, "--tasks", help=TASKS_HELP),
    city: str | None = typer.Option(None, "--city", metavar="PACK|SOURCE", help=CITY_HELP),
    task_format: str | None = FORMAT_OPTION,
    data_dir: Path | None = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    registry: list[Path] | None = REGISTRY_OPTION,
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Check task sets (files or ids): schema, every node id against the city, gold walks."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.tasks.loaders import reference_walk_problems
    from flaneur.tasks.registry import load_spec, navigation_episodes

    refs = ",".join(r for r in (file, tasks) if r)
    if not refs:
        raise FlaneurError("tasks check: give a task file or id (FILE or --tasks ID|FILE)")
    specs = resolve_cli_tasks(refs, fmt=task_format, city=city, registries=registry)
    infos: list[dict[str, Any]] = []
    for spec in specs:
        the_city, episodes = load_spec(spec, data_dir)
        not_walks: list[str] = []
        if spec.kind == "navigation":  # items of other kinds have no reference walk
            walks = navigation_episodes(episodes, task=spec.id)
            not_walks = reference_walk_problems(walks, the_city.graph)
        categories: dict[str, int] = {}
        for episode in episodes:
            categories[episode.category] = categories.get(episode.category, 0) + 1
        infos.append(
            {
                "file": spec.id,
                "kind": spec.kind,
                "format": spec.loader,
                "city": the_city.name,
                "scheme": spec.scheme,
                "success_metric": spec.success_metric,
                "episodes": len(episodes),
                "unknown_nodes": 0,
                "reference_not_walk": not_walks,
                "categories": dict(sorted(categories.items())),
                "ok": not not_walks,
            }
        )
    if json_out:
        many = {"ok": all(i["ok"] for i in infos), "tasks": infos}
        print_json(infos[0] if len(infos) == 1 else many)
        return
    for info in infos:
        if info["kind"] != "navigation":
            console.print(
                f"{info['file']} ({info['kind']}): {info['episodes']:,} items in "
                f"[bold]{info['city']}[/]; success {info['success_metric']}"
            )
            continue
        console.print(
            f"{info['file']} ({info['format']}): {info['episodes']:,} episodes, every node id is "
            f"in [bold]{info['city']}[/]; scheme {info['scheme']}, success {info['success_metric']}"
        )
        if info["reference_not_walk"]:
            not_walks = info["reference_not_walk"]
            console.print(
                f"[yellow]{len(not_walks)} reference path(s) are not walks along edges:[/] "
                + ", ".join(not_walks[:10])
            )


GENERATE_HELP = (
    "Generate a task set of one kind on any city pack (or built-in city) and write it to a "
    "file that `flaneur run --tasks FILE --city PACK` runs: need tasks, V-IRL's benchmarks "
    "(virl-vln, virl-recognition, virl-vqa, virl-detection) and the scenarios of V-IRL's agents "
    "(virl-local, virl-ling, virl-peng, virl-aria, virl-vivek, virl-diego, virl-rx399, "
    "virl-imani, virl-hiro). Parts of the city that cannot serve (a region without viewpoints, "
    "a type without places) are skipped and reported; see `flaneur tasks kinds` for each "
    "kind's -T options."
)


@tasks_app.command("generate", help=GENERATE_HELP)
def generate(
    city: str = typer.Argument(..., help="A city pack folder or built-in city (e.g. helsinki)."),
    out: Path = typer.Option(..., "-o", "--out", help="Task file to write (.jsonl)."),
    kind: str = typer.Option("needs", "--kind", help="What to generate (flaneur tasks kinds)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed (same seed, same set)."),
    size: int | None = typer.Option(
        None, "--size", min=1, help="Items to make at most (default: the kind's)."
    ),
    task_option: list[str] | None = typer.Option(
        None, "-T", "--task-option", metavar="KEY=VALUE", help="A typed option of the kind."
    ),
    per_template: int | None = typer.Option(None, "--per-template", min=1, hidden=True),
    categories: str | None = typer.Option(None, "--categories", hidden=True),
    min_hops: int | None = typer.Option(None, "--min-hops", min=1, hidden=True),
    max_hops: int | None = typer.Option(None, "--max-hops", min=1, hidden=True),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.tasks.cities import absolute_city_spec
    from flaneur.tasks.generators import GENERATORS, generate_set
    from flaneur.world.builtin import load_city

    check_output_path(out, "--out", folder=False)
    GENERATORS.get(kind)  # an unknown kind fails before the city loads
    options = _task_options(task_option or [])
    legacy = {"per_template": per_template, "categories": categories}
    legacy |= {"min_hops": min_hops, "max_hops": max_hops}
    for key, value in legacy.items():  # the need generator's old flags: -T KEY=VALUE now
        if value is not None:
            options.setdefault(key, value)
    model = load_city(city)
    made = generate_set(
        kind,
        model,
        city_spec=absolute_city_spec(city, Path.cwd()),
        seed=seed,
        size=size,
        options=options,
    )
    made.write(out)
    result = {"out": str(out), "kind": kind, "city": model.name, "seed": seed, **made.report}
    if json_out:
        print_json(result)
        return
    _print_generated(result, made.report)


def _task_options(items: list[str]) -> dict[str, object]:
    """``-T KEY=VALUE`` strings as a dict (VALUE read as JSON when it parses)."""

    out: dict[str, object] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ArgumentError(f"-T takes KEY=VALUE, not {item!r}")
        try:
            out[key.strip()] = json.loads(text)
        except json.JSONDecodeError:
            out[key.strip()] = text
    return out


def _print_generated(result: dict[str, Any], report: dict[str, Any]) -> None:

    counts = report.get("counts") or {}
    table = Table(
        title=f"{result['items']} {result['kind']} items on {result['city']} -> {result['out']}"
    )
    table.add_column("category")
    table.add_column("items", justify="right")
    for category, count in dict(counts).items():
        table.add_row(str(category), str(count))
    console.print(table)
    skipped = report.get("skipped") or {}
    if skipped:
        console.print(f"skipped {len(skipped)} part(s) of the city (see --json for reasons)")


@tasks_app.command("kinds")
def kinds_command(
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List what `tasks generate --kind` makes: each kind, its task kind, success metric,
    typed -T options with their defaults and, for V-IRL agents' scenarios, the fields a
    scenario (a persona file of `flaneur virl NAME FILE`) holds."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.tasks.generators import GENERATORS

    rows: list[dict[str, Any]] = []
    for name in GENERATORS.names():
        cls = GENERATORS.get(name)
        rows.append(
            {
                "kind": name,
                "task_kind": cls.kind,
                "success_metric": cls.success_metric,
                "default_size": cls.default_size,
                "description": cls.description,
                "options": describe_options(cls.Options),
                "scenario_fields": describe_options(cls.Scenario) if cls.Scenario else {},
            }
        )
    if json_out:
        print_json({"kinds": rows})
        return

    table = Table(title="flaneur tasks generate CITY --kind KIND -T KEY=VALUE")
    for col in ("kind", "task kind / success", "description", "-T options"):
        table.add_column(col, overflow="fold")
    for r in rows:
        opts = ", ".join(f"{k}={v['default']!r}" for k, v in r["options"].items())
        facts = f"{r['task_kind']} / {r['success_metric']}"
        table.add_row(r["kind"], facts, r["description"], opts or "-")
    console.print(table)


@tasks_app.command("validate")
def validate(
    episodes_file: Path = typer.Argument(..., help="A generated need-task file (.jsonl)."),
    city: str = typer.Option("helsinki", "--city", help="City pack or built-in city of the tasks."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Check generated need tasks: valid paths, target visible at the end, no closer match."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.tasks.episode import read_episodes
    from flaneur.tasks.validate import check_need_tasks
    from flaneur.world.builtin import load_city

    report = check_need_tasks(load_city(city), read_episodes(episodes_file))
    if json_out:
        print_json({"file": str(episodes_file), **report.to_json()})
    else:
        console.print(f"{report.valid}/{report.episodes} tasks valid")
        for episode_id, problems in report.problems.items():
            console.print(f"  {episode_id}: {'; '.join(problems)}")
    if report.valid != report.episodes:
        raise typer.Exit(1)

"""``flaneur agents``: every solver a run can name with ``--agent``, what it needs, its options.

Solvers come from the registry of each task kind (:data:`flaneur.evaluate.kinds.KINDS`):
navigation agents and V-IRL's planner agents (:data:`flaneur.agents.AGENTS`), and the place
recognisers, VQA answerers and detectors of V-IRL's benchmarks. A name may stand in several
registries (``oracle`` solves every benchmark); each entry is shown.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from flaneur.cli.output import console, print_json
from flaneur.errors import FlaneurError
from flaneur.options import describe_options


def solver_registries() -> list[tuple[Any, list[str]]]:
    """``[(registry, task kinds whose solvers it holds)]``, each registry once."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.evaluate.kinds import KINDS

    found: dict[int, tuple[Any, list[str]]] = {}
    for kind_name in KINDS.names():
        try:
            registry = KINDS.get(kind_name)().solvers()
        except FlaneurError:
            continue  # a plug-in kind that fails to load is reported where it is used
        found.setdefault(id(registry), (registry, []))[1].append(kind_name)
    return list(found.values())


def _solves(cls: Any, kinds: list[str]) -> list[str]:
    declared = getattr(cls, "solves", None)
    if declared:
        return list(declared)
    if kinds == ["navigation"] or "navigation" in kinds:
        return ["navigation"]
    return kinds


def describe_solver(name: str, registry: Any, kinds: list[str]) -> dict[str, Any]:
    """What ``flaneur agents`` shows of one solver: class, task kinds, schemes, needs and
    typed options (type, default, help)."""

    cls = registry.get(name)
    return {
        "name": name,
        "registry": registry.kind,
        "class": f"{cls.__module__}:{cls.__qualname__}",
        "solves": _solves(cls, kinds),
        "schemes": list(getattr(cls, "schemes", ()) or ()) or ["any"],
        "needs_model": bool(getattr(cls, "needs_model", False)),
        "needs_views": bool(getattr(cls, "needs_views", False)),
        "options": describe_options(cls),
    }


def describe_agent(name: str) -> dict[str, Any]:
    """The navigation or planner agent ``name`` (see :func:`describe_solver`)."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.agents import AGENTS

    kinds = next((k for r, k in solver_registries() if r is AGENTS), ["navigation"])
    return describe_solver(name, AGENTS, kinds)


def _all(name: str | None) -> list[dict[str, Any]]:

    described = []
    for registry, kinds in solver_registries():
        names = registry.names() if name is None else [name]
        for n in names:
            if name is not None and n not in registry:
                continue
            described.append(describe_solver(n, registry, kinds))
    if name is not None and not described:
        known = sorted({n for r, _ in solver_registries() for n in r.names()})
        raise FlaneurError(f"unknown agent {name!r}; choose from {', '.join(known)}")
    return described


def agents_command(
    name: str | None = typer.Argument(
        None, help="Show only this solver, with each option's type, default and help."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List what `flaneur run --agent NAME` can run: navigation agents, V-IRL's planner
    agents, and the recognisers, answerers and detectors of V-IRL's benchmarks (built-in and
    from installed plug-ins): the task kinds each solves, the schemes it acts in, whether it
    needs --llm or --views, and the options `--option NAME.KEY=VALUE` sets (also the keys of a
    persona file for `flaneur virl NAME`)."""
    described = _all(name)
    if json_out:
        print_json({"agents": described})
        return
    if name is not None:
        for solver in described:
            console.print(_options_table(solver))
        return
    table = Table(title="solvers (flaneur run --agent NAME --option NAME.OPTION=VALUE)")
    for col in ("name", "solves", "needs", "options (type = default)"):
        table.add_column(col, overflow="fold")
    for a in described:
        needs = [k for k, v in (("llm", a["needs_model"]), ("views", a["needs_views"])) if v]
        options = ", ".join(
            f"{key}: {spec['type']} = {spec['default']!r}" for key, spec in a["options"].items()
        )
        solves = ", ".join(a["solves"])
        if a["schemes"] != ["any"]:
            solves += f" ({', '.join(a['schemes'])})"
        table.add_row(a["name"], solves, ", ".join(needs) or "-", options or "-")
    console.print(table)


def _options_table(solver: dict[str, Any]) -> Table:
    flags = (("--llm", solver["needs_model"]), ("--views", solver["needs_views"]))
    needs = [flag for flag, needed in flags if needed]
    title = (
        f"{solver['name']} ({solver['registry']}; solves {', '.join(solver['solves'])}; "
        f"needs {', '.join(needs) or 'nothing more'}) {solver['class']}"
    )
    table = Table(title=title)
    for col in ("option", "type", "default", "help"):
        table.add_column(col, overflow="fold")
    for key, spec in solver["options"].items():
        table.add_row(key, spec["type"], repr(spec["default"]), spec["help"] or "-")
    if not solver["options"]:
        table.add_row("-", "-", "-", "takes no options")
    return table


__all__ = ["agents_command", "describe_agent", "describe_solver", "solver_registries"]

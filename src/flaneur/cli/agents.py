"""``flaneur agents``: the registered agents, what they need and the options they accept."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from flaneur.cli.output import console, print_json


def describe_agent(name: str) -> dict[str, Any]:
    """What ``flaneur agents`` shows of one agent: class, schemes, needs and typed options."""
    from flaneur.agents import AGENTS
    from flaneur.options import describe_options

    cls = AGENTS.get(name)
    options = describe_options(cls)
    return {
        "name": name,
        "class": f"{cls.__module__}:{cls.__qualname__}",
        "schemes": list(cls.schemes) or ["any"],
        "needs_model": bool(cls.needs_model),
        "needs_views": bool(cls.needs_views),
        "options": options,
    }


def agents_command(
    name: str | None = typer.Argument(None, help="Show only this agent (name or module:Class)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List the agents (built-in and from installed plug-ins): the schemes they act in, whether
    they need --llm or --views, and the options that `flaneur run -o AGENT.KEY=VALUE` sets."""
    from flaneur.agents import AGENTS

    described = [describe_agent(n) for n in ([name] if name else AGENTS.names())]
    if json_out:
        print_json({"agents": described})
        return
    table = Table(title="agents (flaneur run --agent NAME -o NAME.OPTION=VALUE)")
    for col in ("agent", "schemes", "needs", "options (type = default)"):
        table.add_column(col, overflow="fold")
    for a in described:
        needs = [k for k, v in (("llm", a["needs_model"]), ("views", a["needs_views"])) if v]
        options = ", ".join(
            f"{key}: {spec['type']} = {spec['default']!r}" for key, spec in a["options"].items()
        )
        table.add_row(a["name"], ", ".join(a["schemes"]), ", ".join(needs) or "-", options or "-")
    console.print(table)


__all__ = ["agents_command", "describe_agent"]

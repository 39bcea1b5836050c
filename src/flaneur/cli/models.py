"""``flaneur cache stats|clear`` and ``flaneur fake-llm``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from flaneur.cli.output import console, err_console, print_json
from flaneur.errors import FlaneurError

cache_app = typer.Typer(
    rich_markup_mode=None, help="Inspect or clear the LLM response cache.", no_args_is_help=True
)

PATH_HELP = "Cache database (default $FLANEUR_CACHE_DIR/llm.sqlite or ~/.cache/flaneur/llm.sqlite)."


@cache_app.command("stats")
def cache_stats(
    path: Path | None = typer.Option(None, "--path", help=PATH_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Show entries, size and entries per model of the response cache."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.models.cache import ResponseCache

    cache = ResponseCache(path)
    try:
        stats = cache.stats()
    finally:
        cache.close()
    if json_out:
        print_json(stats)
        return
    if not stats["exists"]:
        console.print(f"no cache at {stats['path']}")
        return
    console.print(f"{stats['path']}: {stats['entries']:,} replies, {stats['bytes'] / 1e6:.2f} MB")
    for model, n in stats["models"].items():
        console.print(f"  {model}: {n:,}")


@cache_app.command("clear")
def cache_clear(
    path: Path | None = typer.Option(None, "--path", help=PATH_HELP),
    model: str | None = typer.Option(None, "--model", help="Remove only this model's replies."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Delete cached replies (all, or one model's)."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.models.cache import ResponseCache

    cache = ResponseCache(path)
    try:
        removed = cache.clear(model)
    finally:
        cache.close()
    if json_out:
        print_json({"path": str(cache.path), "removed": removed, "model": model})
    else:
        console.print(f"removed {removed:,} cached replies from {cache.path}")


def fake_llm_command(
    port: int = typer.Option(
        8000, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0 picks a free one)."
    ),
    policy: str = typer.Option(
        "echo",
        "--policy",
        help="echo, constant:<TEXT>, script, script:<A>|<B>, random-action, or module:function.",
    ),
    script: Path | None = typer.Option(
        None, "--script", help="JSON list of replies for --policy script."
    ),
    latency: float = typer.Option(0.0, "--latency", min=0.0, help="Seconds every reply waits."),
    fault: list[str] = typer.Option(
        [], "--fault", help="INDEX=KIND or FIRST-LAST=KIND, e.g. 0=429 or 3-5=500 (repeatable)."
    ),
    fault_rate: list[str] = typer.Option(
        [], "--fault-rate", help="KIND=PROBABILITY, e.g. 500=0.1 (repeatable)."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of random faults and random-action."),
    json_out: bool = typer.Option(False, "--json", help="Announce the server as one JSON object."),
) -> None:
    """Serve a fake OpenAI-compatible API on 127.0.0.1 until interrupted."""
    # lazy: CLI start-up (docs/DESIGN.md, Imports)
    from flaneur.testing.fake_openai import FakeOpenAIServer, parse_fault_args, parse_rate_args
    from flaneur.testing.fake_policies import policy_from_name

    try:
        replies = None
        if script is not None:
            replies = _read_script(script)
        chosen = policy_from_name(policy, script=replies, seed=seed)
        server = FakeOpenAIServer(
            chosen,
            port=port,
            latency=latency,
            faults=parse_fault_args(fault),
            fault_rates=parse_rate_args(fault_rate),
            seed=seed,
        )
    except (ValueError, OSError, ImportError) as err:
        raise FlaneurError(f"fake-llm: {err}") from None

    if not math.isfinite(latency):
        raise FlaneurError(f"--latency must be a finite number of seconds, not {latency}")

    def announce(base_url: str) -> None:
        if json_out:
            print_json({"base_url": base_url, "port": server.port, "policy": policy})
        else:
            console.print(f"fake LLM serving {policy!r} at {base_url}")
            err_console.print("press Ctrl-C to stop")

    try:
        server.serve_until_interrupted(announce)
    except OSError as err:
        raise FlaneurError(f"fake-llm cannot listen on 127.0.0.1:{port}: {err}") from None


def _read_script(script: Path) -> list[str]:
    """The replies of ``--script``: a JSON list of strings (errors name the file)."""
    try:
        replies = json.loads(script.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise FlaneurError(f"{script}: not UTF-8 text (expected a JSON list of strings)") from None
    except json.JSONDecodeError as err:
        raise FlaneurError(f"{script}, line {err.lineno}: invalid JSON ({err.msg})") from None
    if not isinstance(replies, list) or not all(isinstance(r, str) for r in replies):
        raise FlaneurError(f"{script}: expected a JSON list of strings")
    return replies

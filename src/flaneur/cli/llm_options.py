"""The model-layer options shared by ``flaneur run`` and ``flaneur demo``.

Each is a Typer option declared once here and used as a default in both commands;
:func:`llm_options` turns the values into :class:`~flaneur.models.ModelConfig` fields.
"""

from __future__ import annotations

from typing import Any

import typer

from flaneur.errors import FlaneurError

API_KEY_ENV = typer.Option(
    None,
    "--api-key-env",
    metavar="VAR",
    help="Environment variable holding the API key (default OPENAI_API_KEY; local servers "
    "need none). The key itself is never printed or stored.",
)
LLM_TIMEOUT = typer.Option(
    None,
    "--llm-timeout",
    min=0.1,
    metavar="SECONDS",
    help="Seconds one model request may take (default 60, or 300 for a server on this "
    "machine or the local network).",
)
LLM_RETRIES = typer.Option(
    None,
    "--llm-retries",
    min=0,
    help="Retries of a failed model request (default 4, or 2 for a local server).",
)
LLM_MAX_IN_FLIGHT = typer.Option(
    None,
    "--llm-max-in-flight",
    min=1,
    help="Most model requests at once (default 16; a local server: its slot count from "
    "llama.cpp's /props, else 1; vLLM and SGLang 16). Time-outs lower it for a while.",
)
LLM_MAX_TOKENS = typer.Option(
    None,
    "--llm-max-tokens",
    min=1,
    help="Cap on the reply length of every model call (each agent sends its own "
    "per-call limit; this lowers it, and is part of the run's config hash).",
)
LLM_FAILURES = typer.Option(
    3,
    "--llm-failures",
    min=0,
    help="Stop the run after this many model calls in a row failed for good (after "
    "retries); 0 never stops. Finished rows are kept; --resume re-runs the rest.",
)
LLM_N_CTX = typer.Option(
    None,
    "--llm-n-ctx",
    min=0,
    help="llamacpp/ models: context length in tokens (default 8192; 0 = the model's own).",
)
LLM_THREADS = typer.Option(
    None, "--llm-threads", min=1, help="llamacpp/ models: CPU threads (default llama.cpp's)."
)


def llm_options(
    llm: str | None,
    *,
    api_key_env: str | None,
    timeout: float | None,
    retries: int | None,
    max_in_flight: int | None,
    max_tokens: int | None,
    failures: int,
    n_ctx: int | None,
    threads: int | None,
) -> dict[str, Any]:
    """:class:`~flaneur.models.ModelConfig` fields from the command-line values.

    Raises
    ------
    FlaneurError
        When a model option is given without ``--llm``, or a llamacpp-only option for a
        model served over HTTP.
    """
    backend = {k: v for k, v in (("n_ctx", n_ctx), ("n_threads", threads)) if v is not None}
    values = {
        "api_key_env": api_key_env,
        "timeout_s": timeout,
        "max_retries": retries,
        "max_in_flight": max_in_flight,
        "max_tokens": max_tokens,
    }
    given: dict[str, Any] = {k: v for k, v in values.items() if v is not None}
    if not llm:
        if given or backend:
            raise FlaneurError("model options (--llm-*, --api-key-env) need --llm")
        return {}
    if backend:
        # lazy: CLI start-up (docs/DESIGN.md, Imports)
        from flaneur.models.registry import LOCAL_PROVIDER, parse_model_string

        if parse_model_string(llm).provider != LOCAL_PROVIDER:
            raise FlaneurError("--llm-n-ctx and --llm-threads apply to llamacpp/ models only")
        given["backend_options"] = backend
    given["failure_threshold"] = failures
    return given


__all__ = ["llm_options"]

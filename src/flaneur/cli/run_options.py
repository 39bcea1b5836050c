"""The options of ``flaneur run``, each declared once, and :class:`RunFlags`, their values.

The model options shared with ``flaneur demo`` are in :mod:`flaneur.cli.llm_options`, the
task-set options shared with other commands in :mod:`flaneur.cli.task_options`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer

from flaneur.cli.task_options import TASKS_HELP

DATA_DIR_HELP = (
    "Folder holding the datasets (touchdown/, map2seq/, cityseeker/); default $FLANEUR_DATA. "
    "Needed only by task sets that read it (not by task files, nor helsinki-needs-v1)."
)
OPTION_HELP = (
    "Agent option AGENT.KEY=VALUE, or KEY=VALUE for every agent of the run; repeatable, "
    "e.g. --option velma.k_shot=0 --option cityseeker.strategies=b1,r3 "
    "--option mapgpt.mode=one-stage --option explorer.tau=0.6. "
    "VALUE is read as JSON when it parses (numbers, true/false, null, "
    "lists, quoted strings), else kept as text, then checked against the agent's typed "
    "options before anything runs. Recorded in the run's config (summary.json, config hash)."
)

AGENT = typer.Option(
    ...,
    "--agent",
    help="Agent name(s), comma-separated (e.g. random,forward,oracle), or an agent class "
    "as package.module:Class; agents of installed plug-ins (entry points) too.",
)
TASKS = typer.Option(..., "--tasks", help=TASKS_HELP)
DATA_DIR = typer.Option(None, "--data-dir", help=DATA_DIR_HELP)
OUT = typer.Option(..., "-o", "--out", help="Run folder (episodes.jsonl, summary.json).")
LLM = typer.Option(
    None, "--llm", help="Model for LLM agents, e.g. openai/gpt-4o-mini, vllm/NAME, ollama/NAME."
)
LLM_BASE_URL = typer.Option(None, "--llm-base-url", help="Base URL of an OpenAI-compatible server.")
VIEWS = typer.Option(
    None,
    "--views",
    help="Views for agents that look: synthetic, panorama:DIR, google, mapillary, a plug-in "
    "(entry point flaneur.views) or package.module:Class.",
)
LANDMARKS = typer.Option(
    None,
    "--landmarks",
    help="Landmark scorer for agents that use one: map, ocr, clip, vlm or a plug-in. "
    "OCR runs on the fastest installed backend that reads as ONNX Runtime reads, measured "
    "once per machine (FLANEUR_OCR_BACKEND=auto, the default; pip install 'flaneur[openvino]' "
    "adds OpenVINO); FLANEUR_OCR_BACKEND=onnxruntime, openvino or openvino-bf16 forces one.",
)
SCHEME = typer.Option(
    None,
    "--scheme",
    help="turns, headings or nodes (default: the scheme each task set declares).",
)
LIMIT = typer.Option(
    None, "--limit", min=1, help="Only the first N episodes of each task set (not reportable)."
)
IDS = typer.Option(None, "--ids", help="Only these episode ids, comma-separated (not reportable).")
CONCURRENCY = typer.Option(
    8,
    "--concurrency",
    min=1,
    help="Episodes in flight (with --executor ray: per worker; use 1 for CPU-bound agents).",
)
EXECUTOR = typer.Option(
    "local",
    "--executor",
    help="Where episodes run: local (asyncio, this process) or ray (Ray actors on this "
    "machine or a cluster; needs pip install 'flaneur[ray]'; see docs/scale.md).",
)
RAY_ADDRESS = typer.Option(
    None,
    "--ray-address",
    help="Ray cluster to join (auto, ray://HOST:PORT); default: start a local Ray instance.",
)
WORKERS = typer.Option(
    None,
    "--workers",
    min=1,
    help="Ray workers (actors; each loads the city packs once); default: the cluster's CPUs.",
)
ALLOW_JUMPS = typer.Option(
    False,
    "--allow-jumps",
    help="nodes scheme: let agents move to any observed node (backtracking).",
)
STRATEGY = typer.Option(
    None, "--strategy", hidden=True, help="Deprecated: --option cityseeker.strategies=..."
)
ROUND = typer.Option(
    None, "--round", min=0, hidden=True, help="Deprecated: --option cityseeker.round=N."
)
MAPGPT_MODE = typer.Option(
    None, "--mapgpt-mode", hidden=True, help="Deprecated: --option mapgpt.mode=..."
)
AGENT_OPTION = typer.Option(None, "--option", metavar="AGENT.KEY=VALUE", help=OPTION_HELP)
TOKEN_BUDGET = typer.Option(
    None, "--token-budget", min=1, help="Stop the run cleanly after this many model tokens."
)
CACHE = typer.Option("use", "--cache", help="Model response cache: use, refresh or off.")
SEED = typer.Option(0, "--seed", min=0, help="Run seed.")
PROTOCOL = typer.Option(
    "flaneur",
    "--protocol",
    help="flaneur (our defaults) or paper (each seed paper's own settings as its released "
    "code has them, e.g. VELMA's first forward on map2seq; docs/fidelity.md). Recorded in "
    "every row and the summary; runs of different protocols are never paired.",
)
RESUME = typer.Option(
    False, "--resume", help="Continue the run in --out: skip finished, re-run errored."
)
PROGRESS = typer.Option("rich", "--progress", help="rich, plain or none.")
JSON = typer.Option(False, "--json", help="Print one JSON object (the summary).")


@dataclass(frozen=True)
class RunFlags:
    """The values of ``flaneur run``'s options, by the command's parameter names."""

    agent: str
    tasks: str
    data_dir: Path | None
    task_format: str | None
    city: str | None
    registry: list[Path] | None
    out: Path
    llm: str | None
    llm_base_url: str | None
    api_key_env: str | None
    llm_timeout: float | None
    llm_retries: int | None
    llm_max_in_flight: int | None
    llm_max_tokens: int | None
    llm_failures: int
    llm_n_ctx: int | None
    llm_threads: int | None
    views: str | None
    landmarks: str | None
    scheme: str | None
    limit: int | None
    ids: str | None
    concurrency: int
    executor_name: str
    ray_address: str | None
    workers: int | None
    allow_jumps: bool
    strategy: str | None
    round_: int | None
    mapgpt_mode: str | None
    option: list[str] | None
    token_budget: int | None
    cache_mode: str
    seed: int
    protocol: str
    resume: bool
    progress: str
    json_out: bool

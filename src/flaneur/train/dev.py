"""A checkpoint on the dev task sets, through the one runner (``flaneur run``'s engine)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.train.examples import AGENT_OPTIONS
from flaneur.world.city import City


def evaluate_dev(
    model_dir: Path,
    tasks: Sequence[str],
    out: Path,
    *,
    data_dir: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    loaded: dict[str, tuple[City, list[Any]]] | None = None,
) -> dict[str, Any]:
    """Run ``--agent velma --llm hf:MODEL_DIR`` (options of training) on ``tasks``.

    Returns
    -------
    dict
        ``tc`` (task completion over the episodes that ran), ``spd_hops`` (mean),
        ``episodes`` and ``errors`` (rows that ended in an error).
    """
    config = RunConfig(
        agents=("velma",),
        tasks=tuple(tasks),
        data_dir=data_dir,
        scheme="turns",
        llm=f"hf:{model_dir}",
        seed=seed,
        limit=limit,
        concurrency=1,
        cache_mode="off",
        per_agent_options={"velma": dict(AGENT_OPTIONS)},
    )
    run_benchmark(config, out, progress="none", loaded=loaded)
    rows, _ = read_rows(out / "episodes.jsonl")
    scored = [r for r in rows if isinstance(r.get("metrics"), dict)]
    tcs = [bool(r["metrics"].get("tc")) for r in scored]
    spds = [r["metrics"]["spd_hops"] for r in scored if r["metrics"].get("spd_hops") is not None]
    return {
        "tc": round(sum(tcs) / len(tcs), 4) if tcs else None,
        "spd_hops": round(sum(spds) / len(spds), 3) if spds else None,
        "episodes": len(rows),
        "errors": sum(1 for r in rows if r.get("error")),
    }


__all__ = ["evaluate_dev"]

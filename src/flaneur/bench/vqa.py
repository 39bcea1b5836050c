"""Place VQA (V-IRL §5, ``generate_place_vqa_data.py`` / ``place_centric_vqa.py``).

Each place gets the question "which human intention can be accomplished here" with four
options, one true. Offline, options come from :file:`intentions.json` (one or more per V-IRL
type) and the ``latent_poi`` / ``abstract_need`` needs of :file:`flaneur/tasks/needs.json`:
the true option is an intention whose categories meet the place's, the three distractors
are intentions whose categories are disjoint from the place's (and from each other's).
Evaluation is circular (:func:`flaneur.bench.metrics.circular_correct`); the plain
(non-circular) score is the first pass, which is V-IRL's single-pass prompt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from flaneur.bench.metrics import LETTERS, circular_correct, mean_accuracy, rotate_options
from flaneur.bench.parse import AnswerParser
from flaneur.bench.sets import score_items
from flaneur.bench.types import VIRL_TO_FLANEUR

__all__ = [
    "QUESTION",
    "VQA_VERSION",
    "Intention",
    "build_vqa_set",
    "evaluate_vqa",
    "format_question",
    "intention_pool",
]

VQA_VERSION = 1
QUESTION = "Which human intention can be accomplished at this place?"


@dataclass(frozen=True)
class Intention:
    """A thing to do and the flaneur categories where it can be done."""

    text: str
    categories: frozenset[str]


def intention_pool() -> list[Intention]:
    """All offline intentions: per V-IRL type, then the needs table's latent needs."""
    table = json.loads(
        resources.files("flaneur.bench").joinpath("intentions.json").read_text(encoding="utf-8")
    )
    pool = [
        Intention(text, frozenset(VIRL_TO_FLANEUR[t]))
        for t, texts in table.items()
        if not t.startswith("_")
        for text in texts
    ]
    needs = json.loads(
        resources.files("flaneur.tasks").joinpath("needs.json").read_text(encoding="utf-8")
    )
    for tpl in needs["templates"]:
        if tpl.get("category") in ("latent_poi", "abstract_need") and "{" not in tpl["text"]:
            pool.append(Intention(tpl["text"], frozenset(tpl.get("categories", ()))))
    return pool


def _offline_options(
    categories: Iterable[str], pool: Sequence[Intention], rng: np.random.Generator
) -> tuple[list[str], int] | None:
    cats = set(categories)
    true = [x for x in pool if x.categories & cats]
    false = [x for x in pool if x.categories and not x.categories & cats]
    if not true or len(false) < 3:
        return None
    answer = true[int(rng.integers(len(true)))]
    picked: list[Intention] = []
    for i in rng.permutation(len(false)):
        cand = false[int(i)]
        if all(not cand.categories & p.categories for p in picked):
            picked.append(cand)
        if len(picked) == 3:
            break
    if len(picked) < 3:
        return None
    slot = int(rng.integers(4))
    options = [p.text for p in picked]
    options.insert(slot, answer.text)
    return options, slot


def build_vqa_set(
    items: Sequence[dict[str, Any]],
    place_categories: Callable[[str], Sequence[str]],
    *,
    seed: int = 0,
    writer: Callable[[dict[str, Any]], tuple[list[str], int] | None] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Questions for the places of a recognition set (same views).

    Parameters
    ----------
    items
        Items of :func:`flaneur.bench.recognition.build_recognition_set`.
    place_categories
        flaneur categories of a place id.
    seed
        Seed of option choice and order.
    writer
        Optional ``item -> (options, answer index)`` (an LLM writer, ``--llm``); when it
        returns None the offline options are used and the fallback is counted.

    Returns
    -------
    (list of dict, int)
        VQA items (the recognition item plus ``question``, ``options``, ``answer``,
        ``written_by``) and the number of places whose LLM options fell back to offline.
    """
    pool = intention_pool()
    rng = np.random.default_rng(seed)
    out, fallbacks = [], 0
    for item in items:
        made = writer(item) if writer is not None else None
        by = "llm"
        if made is None:
            fallbacks += writer is not None
            made = _offline_options(place_categories(item["place_id"]), pool, rng)
            by = "offline"
        if made is None:
            continue
        options, answer = made
        out.append(
            {
                **item,
                "question": QUESTION,
                "options": options,
                "answer": LETTERS[answer],
                "written_by": by,
            }
        )
    return out, fallbacks


def format_question(question: str, options: Sequence[str]) -> str:
    """The multiple-choice prompt: question, lettered options, and how to answer."""
    lines = [f"Q: {question} Choices:"]
    lines += [f"{letter}. {text}" for letter, text in zip(LETTERS, options, strict=False)]
    lines.append("Answer with the option's letter (A, B, C or D).")
    return "\n".join(lines)


def evaluate_vqa(
    items: Iterable[dict[str, Any]],
    answer: Callable[[dict[str, Any], str], str],
    parser: AnswerParser,
    *,
    circular: bool = True,
    done: dict[str, dict[str, Any]] | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Ask every question (4 rotations when ``circular``) and score it.

    Parameters
    ----------
    items
        VQA items.
    answer
        ``(item, prompt) -> raw reply`` (the answerer sees the item's view and the prompt).
    parser
        Turns a reply into a letter or ``"none"``.
    circular
        Circular evaluation (default) or a single pass.
    done, on_result
        Resume: earlier per-place results by place id; callback for each new result.

    Returns
    -------
    dict
        ``places``, ``acc_circular``, ``macc_circular``, ``acc_plain``, ``macc_plain``
        (first pass), ``none_replies``, ``matcher_used``, ``asked``, ``per_type``,
        ``results``.
    """

    def score(item: dict[str, Any]) -> dict[str, Any]:
        truth = LETTERS.index(item["answer"])
        letters: list[str] = []
        raws: list[str] = []

        def ask(options: list[str], idx: int) -> bool:
            prompt = format_question(item["question"], options)
            raw = answer(item, prompt)
            got = parser.parse(raw, item["question"], options)
            raws.append(raw)
            letters.append(got)
            return got == LETTERS[idx]

        if circular:
            ok, _ = circular_correct(ask, item["options"], truth)
        else:
            opts, idx = rotate_options(item["options"], truth, 0)
            ok = ask(opts, idx)
        return {
            "place_id": item["place_id"],
            "types": item["types"],
            "region": item.get("region"),
            "correct": ok,
            "first_pass": letters[0] == item["answer"],
            "answers": letters,
            "replies": raws,
        }

    results = score_items(items, "place_id", score, done, on_result)
    return summarize_vqa(results, parser, circular=circular)


def summarize_vqa(
    results: Sequence[dict[str, Any]],
    parser: AnswerParser | None = None,
    *,
    circular: bool = True,
) -> dict:
    """Circular (None after a single-pass run) and plain accuracy / mAcc, parse counts and
    the per-type table (of the circular score, else of the plain one)."""
    circ = mean_accuracy((r["types"], r["correct"]) for r in results)
    plain = mean_accuracy((r["types"], r["first_pass"]) for r in results)
    regions: dict[str, list[bool]] = {}
    for r in results:
        regions.setdefault(str(r.get("region")), []).append(bool(r["correct"]))
    return {
        "places": len(results),
        "mode": "circular" if circular else "plain",
        "acc_circular": circ.acc if circular else None,
        "macc_circular": circ.macc if circular else None,
        "acc_plain": plain.acc,
        "macc_plain": plain.macc,
        "asked": sum(len(r["answers"]) for r in results),
        "none_replies": sum(a == "none" for r in results for a in r["answers"]),
        "matcher_used": parser.matcher_used if parser is not None else None,
        "per_type": {t: [a, w] for t, (a, w) in (circ if circular else plain).per_type.items()},
        "per_region": {k: [sum(v) / len(v), len(v)] for k, v in sorted(regions.items())},
        "results": list(results),
    }

"""Hostile command lines of V-IRL's commands: ``flaneur virl <agent>``, ``flaneur bench``,
``tasks generate --kind`` and ``run`` with V-IRL's solvers (one :class:`HostileCase` each).

They run in the workspace of :func:`harness.runner.build_workspace` on its toy city
pack (``pack``, places Cafe Aalto, Kirja Bookshop, Harbour Bank, Sea Museum), with a persona
file per agent (``<agent>.toml``) and broken persona, listing and polygon files beside them:
wrong types, negative, NaN, infinite and huge values, binary and empty files, lists where one
value is expected, misspelt keys, starts outside the city. Every one must end in one error
line naming the key, file or value, exit 2, nothing written.
"""

from __future__ import annotations

from harness.cases import HostileCase, _c

PERSONAS = {
    "aria": "status = { hunger = 60 }\n",
    "vivek": "synthetic_listings = 3\nbudget = 2000\n",
    "peng": 'sentence = "Kirja Bookshop, then Harbour Bank"\n',
    "diego": 'wishes = ["Sea Museum"]\nfeedback = ""\nbudget = 50\n',
    "local": 'question = "How do I get to Sea Museum?"\n',
    "ling": 'question = "How do I get to Sea Museum?"\n',
    "rx399": 'end = "Sea Museum"\nlabels = ["bench"]\n',
    "imani": 'polygon = "square.json"\nlabels = ["bench"]\n',
}
"""The agent-specific part of each agent's persona file in the workspace."""

PERSONA_HEAD = (
    'name = "Tester"\ncity = "pack"\nstart = "Cafe Aalto"\nbackground = "a visitor"\n'
    'intention = "see the town"\n'
)
"""The persona fields every workspace persona file starts with."""


def _v(id: str, kind: str, agent: str, tail: str, expect: str, **kw: object) -> HostileCase:
    """A ``flaneur virl AGENT AGENT.toml -o vout TAIL`` case."""
    return _c(id, kind, f"virl {agent} {agent}.toml -o vout {tail}".strip(), expect, **kw)


VIRL_CASES: list[HostileCase] = [
    # ---------------------------------------------------------------- misspelt and silent
    _v("virl-aria-typo-kep", "silent", "aria", "radius_m=100 kep=3", "kep"),
    _v("virl-aria-typo-radius", "silent", "aria", "radius=100", "radius"),
    _c("virl-robot-alias-typo", "silent", "virl robot rx399.toml -o vout lable=bench", "lable"),
    _v("virl-diego-ablation-maybe", "silent", "diego", "ablation=maybe", "ablation"),
    _v("virl-aria-start-nan", "silent", "aria", "start=nan,nan", "nan,nan"),
    _v("virl-aria-start-new-york", "silent", "aria", "start=40.7128,-74.0060", "outside"),
    _v("virl-aria-start-pole", "silent", "aria", "start=95,10", "latitude"),
    _v("virl-diego-wishes-number", "silent", "diego", "wishes=5", "wishes"),
    _v("virl-ling-feedback-not-diego", "silent", "ling", "--feedback -", "diego"),
    _v("virl-local-question-empty", "silent", "local", 'question=""', "question"),
    _v("virl-rx399-labels-empty", "silent", "rx399", "labels=[]", "labels"),
    # ---------------------------------------------------------------- values
    _v("virl-aria-radius-text", "value", "aria", "radius_m=abc", "radius_m"),
    _v("virl-aria-radius-negative", "value", "aria", "radius_m=-5", "radius_m"),
    _v("virl-aria-radius-nan", "value", "aria", "radius_m=NaN", "radius_m"),
    _v("virl-aria-radius-inf", "value", "aria", "radius_m=Infinity", "radius_m"),
    _v("virl-aria-keep-huge", "value", "aria", "keep=1000000000", "keep"),
    _v("virl-aria-keep-list", "value", "aria", "keep=[1,2]", "keep"),
    _v("virl-aria-keep-fraction", "value", "aria", "keep=2.5", "keep"),
    _v("virl-aria-status-high", "value", "aria", "status.hunger=150", "status"),
    _v("virl-aria-status-list", "value", "aria", "status=[1,2]", "status"),
    _v("virl-aria-budget-negative", "value", "aria", "budget=-1", "budget"),
    _v("virl-aria-name-empty", "value", "aria", 'name=""', "name"),
    _v("virl-aria-name-list", "value", "aria", 'name=["a","b"]', "name"),
    _v("virl-aria-override-no-equals", "value", "aria", "radius_m", "KEY=VALUE"),
    _v("virl-aria-override-empty-key", "value", "aria", "=3", "KEY=VALUE"),
    _v("virl-diego-max-rounds-huge", "value", "diego", "max_rounds=1000000000", "max_rounds"),
    _v("virl-diego-max-rounds-zero", "value", "diego", "max_rounds=0", "max_rounds"),
    _v("virl-ling-asks-huge", "value", "ling", "max_asks=1000000000 step_limit=3", "max_asks"),
    _v("virl-ling-step-limit-text", "value", "ling", "step_limit=abc", "step_limit"),
    _v("virl-ling-step-limit-negative", "value", "ling", "step_limit=-3", "step_limit"),
    _v("virl-ling-heading-nan", "value", "ling", "heading=NaN", "heading"),
    _v("virl-peng-mode-teleport", "value", "peng", "mode=teleport", "mode"),
    _v("virl-vivek-listings-negative", "value", "vivek", "synthetic_listings=-3", "listings"),
    _v("virl-vivek-listings-huge", "value", "vivek", "synthetic_listings=99999999", "listings"),
    _v("virl-vivek-top-zero", "value", "vivek", "top=0", "top"),
    _v("virl-imani-views-zero", "value", "imani", "views_per_point=0", "views_per_point"),
    _v("virl-imani-views-huge", "value", "imani", "views_per_point=1000", "views_per_point"),
    _v("virl-imani-looks-zero", "value", "imani", "looks=0", "looks"),
    _v("virl-imani-detector-unknown", "value", "imani", "detector=teleport", "teleport"),
    _v("virl-imani-polygon-short", "value", "imani", "polygon=[[60,25],[60.1,25]]", "polygon"),
    _v("virl-imani-spacing-negative", "value", "imani", "spacing=-50", "spacing"),
    _v("virl-rx399-end-unknown", "value", "rx399", "end=Qqxzv", "Qqxzv"),
    _v("virl-rx399-seed-negative", "value", "rx399", "seed=-1", "seed"),
    _c("virl-aria-city-unknown", "value", "virl aria aria.toml -o vout --city nowhere", "nowhere"),
    # ---------------------------------------------------------------- corrupt files
    _c("virl-aria-binary-toml", "corrupt", "virl aria binary.toml -o vout", "binary.toml"),
    _c("virl-aria-binary-yaml", "corrupt", "virl aria binary.yaml -o vout", "binary.yaml"),
    _c("virl-aria-empty-toml", "corrupt", "virl aria empty.toml -o vout", "empty.toml"),
    _c("virl-aria-list-yaml", "corrupt", "virl aria list.yaml -o vout", "list.yaml"),
    _c("virl-aria-bad-toml", "corrupt", "virl aria bad.toml -o vout", "bad.toml"),
    _c("virl-aria-missing-file", "corrupt", "virl aria nofile.toml -o vout", "nofile.toml"),
    _c("virl-aria-json-file", "corrupt", "virl aria tasks.jsonl -o vout", "tasks.jsonl"),
    _v("virl-vivek-listings-binary", "corrupt", "vivek", "listings=binary.jsonl", "binary.jsonl"),
    _v("virl-vivek-listings-missing", "corrupt", "vivek", "listings=nofile.csv", "nofile.csv"),
    _v("virl-imani-polygon-nan", "corrupt", "imani", "polygon=nanpoly.json", "nanpoly.json"),
    _v("virl-imani-polygon-missing", "corrupt", "imani", "polygon=nofile.json", "nofile.json"),
    _v("virl-imani-polygon-binary", "corrupt", "imani", "polygon=binary.jsonl", "binary.jsonl"),
    _v("virl-diego-feedback-missing", "corrupt", "diego", "--feedback nofile.txt", "nofile.txt"),
    _v("virl-diego-feedback-binary", "corrupt", "diego", "--feedback binary.jsonl", "binary"),
    # ---------------------------------------------------------------- output
    _c("virl-aria-out-is-file", "output", "virl aria aria.toml -o afile", "afile"),
    _c("virl-aria-out-under-file", "output", "virl aria aria.toml -o afile/out", "afile"),
]
"""Cases of ``flaneur virl <agent>``."""

BENCH_CASES: list[HostileCase] = [
    _c("bench-recognition-unknown", "value", "bench recognition --recogniser nope --out b", "nope"),
    _c("bench-vqa-unknown", "value", "bench vqa --answerer nope --out b", "nope"),
    _c("bench-detection-unknown", "value", "bench detection --detector nope --out b", "nope"),
    _c("bench-vln-unknown", "value", "bench vln --recogniser nope --out b", "nope"),
    _c("bench-recognition-limit-zero", "usage", "bench recognition --limit 0 --out b", "--limit"),
    _c(
        "bench-recognition-task-binary",
        "corrupt",
        "bench recognition --task binary.jsonl --out b",
        "binary.jsonl",
    ),
    _c(
        "bench-recognition-task-navigation",
        "value",
        "bench recognition --task tasks.jsonl --out b",
        "tasks.jsonl",
    ),
    _c(
        "bench-vqa-task-missing", "corrupt", "bench vqa --task nofile.jsonl --out b", "nofile.jsonl"
    ),
    _c("bench-types-unknown", "value", "bench types nope_type", "nope_type"),
    _c("bench-report-empty", "corrupt", "bench report emptydir", "emptydir"),
    _c("bench-report-missing", "corrupt", "bench report nofolder", "nofolder"),
    _c("bench-recognition-out-is-file", "output", "bench recognition --out afile", "afile"),
    _c("gen-kind-unknown", "value", "tasks generate pack -o g.jsonl --kind nope", "nope"),
    _c(
        "gen-per-region-negative",
        "value",
        "tasks generate pack -o g.jsonl --kind virl-recognition -T per_region=-1",
        "per_region",
    ),
    _c(
        "gen-cell-nan",
        "value",
        "tasks generate pack -o g.jsonl --kind virl-vln -T cell_m=NaN",
        "cell_m",
    ),
    _c(
        "gen-option-unknown",
        "silent",
        "tasks generate pack -o g.jsonl --kind virl-aria -T colour=red",
        "colour",
    ),
    _c(
        "gen-option-no-equals",
        "value",
        "tasks generate pack -o g.jsonl --kind virl-aria -T colour",
        "-T",
    ),
    _c(
        "gen-regions-binary",
        "corrupt",
        "tasks generate pack -o g.jsonl --kind virl-detection -T regions=binary.jsonl",
        "binary.jsonl",
    ),
    _c(
        "gen-types-unknown",
        "value",
        "tasks generate pack -o g.jsonl --kind virl-recognition -T types=spaceport",
        "spaceport",
    ),
    _c(
        "gen-size-zero",
        "usage",
        "tasks generate pack -o g.jsonl --kind virl-aria --size 0",
        "--size",
    ),
    _c(
        "run-planner-on-navigation",
        "value",
        "run --agent aria --tasks helsinki-needs-v1 --out r",
        "aria",
    ),
    _c(
        "run-agent-on-recognition",
        "value",
        "run --agent velma --tasks helsinki-virl-recognition-v1 --out r",
        "velma",
    ),
    _c(
        "run-planner-typo",
        "silent",
        "run --agent aria --tasks helsinki-virl-aria-v1 --out r --option aria.kep=3",
        "kep",
    ),
    _c(
        "run-detector-option-nan",
        "value",
        "run --agent scene --tasks helsinki-virl-detection-v1 --out r --option scene.seed=NaN",
        "seed",
    ),
]
"""Cases of ``flaneur bench``, ``tasks generate --kind`` and ``run`` with V-IRL's solvers."""

__all__ = ["BENCH_CASES", "PERSONAS", "PERSONA_HEAD", "VIRL_CASES"]

"""The hostile command lines of :mod:`harness.runner` (one :class:`HostileCase`
each, grouped by :data:`KINDS`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = ("usage", "output", "corrupt", "value", "silent")
"""Classes of command-line cases: usage errors, output that cannot be written, corrupt
inputs, unchecked values, and nonsense that used to be accepted silently."""


@dataclass(frozen=True)
class HostileCase:
    """One hostile command line.

    Parameters
    ----------
    id
        Short unique name (the test id).
    kind
        One of :data:`KINDS`.
    argv
        Arguments after ``flaneur``; relative paths are inside the workspace (the cwd).
    expect
        Text the error line must contain (case-insensitive): what is wrong, or where.
    code
        Expected exit code.
    env
        Extra environment; ``{ws}`` in a value is replaced by the workspace path.
    in_process
        ``False`` for commands that would serve or block if the check failed (fake-llm):
        they only run as a subprocess, with a timeout.
    """

    id: str
    kind: str
    argv: tuple[str, ...]
    expect: str
    code: int = 2
    env: dict[str, str] = field(default_factory=dict)
    in_process: bool = True


def _c(id: str, kind: str, args: str | list[str], expect: str, **kw: Any) -> HostileCase:
    argv = tuple(args.split()) if isinstance(args, str) else tuple(args)
    return HostileCase(id, kind, argv, expect, **kw)


RUN = "run --agent random --tasks helsinki-needs-v1 --out r"
"""A valid run command (each case breaks one thing); it never gets to load the tasks."""
GEN = "tasks generate pack -o gen.jsonl"
RENDER = "render pack --node X4 -o v.png"
FAKE = "fake-llm --port 0"
BADVAL = "Invalid value"

CLI_CASES: list[HostileCase] = [
    # ---------------------------------------------------------------- usage errors
    _c("no-such-command", "usage", "teleport", "No such command"),
    _c("no-such-group-command", "usage", "city paint pack", "No such command"),
    _c("no-such-tasks-command", "usage", "tasks burn", "No such command"),
    _c("no-such-cache-command", "usage", "cache drop", "No such command"),
    _c("no-such-export-command", "usage", "export weights", "No such command"),
    _c("no-such-validate-command", "usage", "validate silver", "No such command"),
    _c("no-such-virl-command", "usage", "virl teleport", "No such command"),
    _c("virl-geocode-missing-query", "usage", "virl geocode", "query"),
    _c("root-unknown-option", "usage", "--colour", "No such option"),
    _c("run-unknown-option", "usage", RUN + " --bogus", "No such option"),
    _c("run-missing-agent", "usage", "run --tasks helsinki-needs-v1 --out r", "--agent"),
    _c("run-missing-tasks", "usage", "run --agent random --out r", "--tasks"),
    _c("run-missing-out", "usage", "run --agent random --tasks helsinki-needs-v1", "--out"),
    _c("run-option-without-value", "usage", RUN + " --limit", "--limit"),
    _c("run-limit-zero", "usage", RUN + " --limit 0", "--limit"),
    _c("run-limit-negative", "usage", RUN + " --limit -3", "--limit"),
    _c("run-limit-text", "usage", RUN + " --limit many", "--limit"),
    _c("run-limit-float", "usage", RUN + " --limit 2.5", "--limit"),
    _c("run-concurrency-zero", "usage", RUN + " --concurrency 0", "--concurrency"),
    _c("run-concurrency-negative", "usage", RUN + " --concurrency -1", "--concurrency"),
    _c("run-concurrency-text", "usage", RUN + " --concurrency lots", "--concurrency"),
    _c("run-round-negative", "usage", RUN + " --round -1", "--round"),
    _c("run-token-budget-zero", "usage", RUN + " --token-budget 0", "--token-budget"),
    _c("run-seed-text", "usage", RUN + " --seed abc", "--seed"),
    _c("run-views-unknown", "usage", RUN + " --views holograms", "--views"),
    _c("run-landmarks-unknown", "usage", RUN + " --landmarks smell", "--landmarks"),
    _c("run-mapgpt-mode-unknown", "usage", RUN + " --mapgpt-mode three-stage", "--mapgpt-mode"),
    _c("run-cache-unknown", "usage", RUN + " --cache maybe", "--cache"),
    _c("run-extra-argument", "usage", RUN + " extra", "unexpected extra argument"),
    _c("demo-limit-zero", "usage", "demo --limit 0", "--limit"),
    _c("demo-concurrency-zero", "usage", "demo --concurrency 0", "--concurrency"),
    _c("demo-unknown-option", "usage", "demo --fast", "No such option"),
    _c("render-around-37", "usage", RENDER + " --around 37", "--around"),
    _c("render-around-zero", "usage", RENDER + " --around 0", "--around"),
    _c("render-heading-text", "usage", RENDER + " --heading north", "--heading"),
    _c("render-missing-node", "usage", "render pack -o v.png", "--node"),
    _c("render-missing-pack", "usage", "render --node X4 -o v.png", "pack"),
    _c("city-build-missing-out", "usage", "city build helsinki", "--out"),
    _c("city-build-missing-source", "usage", "city build -o newpack", "source"),
    _c(
        "city-build-spacing-text",
        "usage",
        "city build helsinki -o newpack --spacing wide",
        "--spacing",
    ),
    _c("city-info-missing-pack", "usage", "city info", "pack"),
    _c("city-map-extra", "usage", "city map pack other -o m.html", "unexpected extra argument"),
    _c("tasks-check-missing-city", "usage", "tasks check tasks.jsonl", "--city"),
    _c("tasks-check-missing-file", "usage", "tasks check --city pack", "file"),
    _c("tasks-generate-missing-out", "usage", "tasks generate pack", "--out"),
    _c("tasks-generate-hops-text", "usage", GEN + " --min-hops few", "--min-hops"),
    _c("tasks-validate-missing-file", "usage", "tasks validate", "episodes_file"),
    _c("tasks-ls-extra", "usage", "tasks ls extra", "unexpected extra argument"),
    _c("export-missing-tasks", "usage", "export finetune -o ft.jsonl", "--tasks"),
    _c(
        "export-k-shot-negative",
        "usage",
        "export finetune --tasks helsinki-needs-v1 -o ft.jsonl --k-shot -1",
        "--k-shot",
    ),
    _c(
        "export-limit-zero",
        "usage",
        "export finetune --tasks helsinki-needs-v1 -o ft.jsonl --limit 0",
        "--limit",
    ),
    _c("report-missing-run", "usage", "report", "runs"),
    _c(
        "report-max-episodes-negative", "usage", "report badrun --max-episodes -1", "--max-episodes"
    ),
    _c("validate-gold-missing-tasks", "usage", "validate gold", "--tasks"),
    _c(
        "validate-gold-limit-zero",
        "usage",
        "validate gold --tasks helsinki-needs-v1 --limit 0",
        "--limit",
    ),
    _c("cache-stats-unknown-option", "usage", "cache stats --all", "No such option"),
    _c("fake-llm-port-text", "usage", FAKE + "x", "--port", in_process=False),
    _c("fake-llm-latency-text", "usage", FAKE + " --latency slow", "--latency", in_process=False),
    # ---------------------------------------------------------------- output that cannot be written
    _c(
        "run-out-is-file",
        "output",
        "run --agent random --tasks helsinki-needs-v1 --out afile",
        "afile",
    ),
    _c(
        "run-out-under-file",
        "output",
        "run --agent random --tasks helsinki-needs-v1 --out afile/run",
        "afile",
    ),
    _c("demo-out-is-file", "output", "demo --out afile", "afile"),
    _c("demo-out-under-file", "output", "demo --out afile/demo", "afile"),
    _c("city-build-out-is-file", "output", "city build helsinki -o afile", "afile"),
    _c("city-build-out-under-file", "output", "city build helsinki -o afile/pack", "afile"),
    _c("city-map-out-is-folder", "output", "city map pack -o emptydir", "emptydir"),
    _c("city-map-out-under-file", "output", "city map pack -o afile/map.html", "afile"),
    _c("tasks-generate-out-is-folder", "output", "tasks generate pack -o emptydir", "emptydir"),
    _c("tasks-generate-out-under-file", "output", "tasks generate pack -o afile/t.jsonl", "afile"),
    _c(
        "export-out-is-folder",
        "output",
        "export finetune --tasks helsinki-needs-v1 -o emptydir",
        "emptydir",
    ),
    _c(
        "export-out-under-file",
        "output",
        "export finetune --tasks helsinki-needs-v1 -o afile/ft.jsonl",
        "afile",
    ),
    _c("render-out-is-folder", "output", "render pack --node X4 -o emptydir", "emptydir"),
    _c("render-out-under-file", "output", "render pack --node X4 -o afile/v.png", "afile"),
    _c("report-out-is-folder", "output", "report goodrun -o emptydir", "emptydir"),
    _c("report-out-under-file", "output", "report goodrun -o afile/r.html", "afile"),
    _c(
        "cache-under-file",
        "output",
        "city info helsinki",
        "FLANEUR_CACHE_DIR",
        env={"FLANEUR_CACHE_DIR": "{ws}/afile"},
    ),
    _c(
        "cache-tasks-under-file",
        "output",
        "tasks generate helsinki -o gen.jsonl",
        "FLANEUR_CACHE_DIR",
        env={"FLANEUR_CACHE_DIR": "{ws}/afile/cache"},
    ),
    _c("cache-stats-path-is-folder", "output", "cache stats --path emptydir", "emptydir"),
    _c("cache-clear-path-is-folder", "output", "cache clear --path emptydir", "emptydir"),
    _c("cache-stats-path-text-file", "output", "cache stats --path afile", "afile"),
    _c("cache-stats-path-not-sqlite", "output", "cache stats --path binary.jsonl", "binary.jsonl"),
    # ---------------------------------------------------------------- corrupt inputs
    _c("pbf-truncated", "corrupt", "city build trunc.osm.pbf -o newpack", "trunc.osm.pbf"),
    _c("pbf-empty", "corrupt", "city build empty.osm.pbf -o newpack", "empty.osm.pbf"),
    _c("pbf-text", "corrupt", "city build text.osm.pbf -o newpack", "text.osm.pbf"),
    _c("pack-graph-truncated", "corrupt", "city info pack-graph", "graph.npz"),
    _c("pack-graph-empty", "corrupt", "city info pack-graph-empty", "graph.npz"),
    _c("pack-graph-missing", "corrupt", "city info pack-nograph", "graph.npz"),
    _c("pack-nodesets-empty", "corrupt", "city info pack-nodesets", "nodesets.npz"),
    _c("pack-places-binary", "corrupt", "city info pack-places-bin", "places.json"),
    _c("pack-places-truncated", "corrupt", "city info pack-places-cut", "places.json"),
    _c("pack-places-wrong-shape", "corrupt", "city info pack-places-shape", "places.json"),
    _c("pack-city-json-binary", "corrupt", "city info pack-meta-bin", "city.json"),
    _c("pack-city-json-list", "corrupt", "city info pack-meta-list", "city.json"),
    _c("pack-city-json-version", "corrupt", "city info pack-meta-version", "version"),
    _c("pack-corrupt-map", "corrupt", "city map pack-graph -o m.html", "graph.npz"),
    _c(
        "pack-corrupt-render", "corrupt", "render pack-places-bin --node X4 -o v.png", "places.json"
    ),
    _c(
        "pack-corrupt-generate",
        "corrupt",
        "tasks generate pack-nodesets -o gen.jsonl",
        "nodesets.npz",
    ),
    _c("pack-corrupt-check", "corrupt", "tasks check tasks.jsonl --city pack-graph", "graph.npz"),
    _c("tasks-binary", "corrupt", "tasks check binary.jsonl --city pack", "binary.jsonl"),
    _c("tasks-latin1", "corrupt", "tasks check latin1.jsonl --city pack", "UTF-8"),
    _c("tasks-not-json", "corrupt", "tasks check notjson.jsonl --city pack", "line 2"),
    _c("tasks-json-array", "corrupt", "tasks check array.jsonl --city pack", "array.jsonl"),
    _c(
        "tasks-unknown-field",
        "corrupt",
        "tasks check unknownfield.jsonl --city pack",
        "unknown episode field",
    ),
    _c("tasks-missing-field", "corrupt", "tasks check nostart.jsonl --city pack", "start_node"),
    _c(
        "tasks-bad-heading-type",
        "corrupt",
        "tasks check headingtext.jsonl --city pack",
        "bad field value",
    ),
    _c("tasks-unknown-node", "corrupt", "tasks check unknownnode.jsonl --city pack", "nowhere"),
    _c("tasks-missing-file", "corrupt", "tasks check missing.jsonl --city pack", "not found"),
    _c("tasks-folder", "corrupt", "tasks check emptydir --city pack", "emptydir"),
    _c(
        "tasks-validate-binary",
        "corrupt",
        "tasks validate binary.jsonl --city pack",
        "binary.jsonl",
    ),
    _c("tasks-validate-latin1", "corrupt", "tasks validate latin1.jsonl --city pack", "UTF-8"),
    _c("summary-binary", "corrupt", "report badrun", "summary.json"),
    _c("summary-not-json", "corrupt", "report textrun", "summary.json"),
    _c("summary-list", "corrupt", "report listrun", "summary.json"),
    _c("report-not-a-run", "corrupt", "report emptydir", "not a run folder"),
    _c("report-run-folder-missing", "corrupt", "report nosuchrun", "not a run folder"),
    _c("city-info-folder-not-pack", "corrupt", "city info emptydir", "not a city pack"),
    _c("city-info-unknown-source", "corrupt", "city info atlantis", "unknown city source"),
    _c(
        "city-build-touchdown-empty",
        "corrupt",
        "city build touchdown:emptydir -o newpack",
        "emptydir",
    ),
    _c(
        "city-build-cityseeker-empty",
        "corrupt",
        "city build cityseeker:emptydir -o newpack",
        "emptydir",
    ),
    _c(
        "fake-llm-script-binary",
        "corrupt",
        FAKE + " --policy script --script binary.jsonl",
        "binary.jsonl",
        in_process=False,
    ),
    _c(
        "fake-llm-script-not-list",
        "corrupt",
        FAKE + " --policy script --script array2.json",
        "array2.json",
        in_process=False,
    ),
    _c(
        "run-task-file-binary",
        "corrupt",
        "run --agent random --tasks binary.jsonl --out r",
        "binary.jsonl",
    ),
    _c(
        "run-task-file-latin1",
        "corrupt",
        "run --agent random --tasks latin1.jsonl --out r --city pack",
        "UTF-8",
    ),
    _c(
        "run-task-file-duplicates",
        "silent",
        "run --agent random --tasks dup.jsonl --out r --city pack",
        "duplicate",
    ),
    _c(
        "run-task-file-no-goal",
        "silent",
        "run --agent random --tasks nogoal.jsonl --out r --city pack",
        "no goal",
    ),
    _c(
        "run-task-file-empty",
        "silent",
        "run --agent random --tasks empty.jsonl --out r --city pack",
        "empty",
    ),
    _c("run-registry-not-toml", "corrupt", RUN + " --registry afile", "TOML"),
    _c("run-registry-binary", "corrupt", RUN + " --registry binary.jsonl", "binary.jsonl"),
    _c(
        "run-format-unknown",
        "value",
        "run --agent random --tasks tasks.jsonl --out r --format csv",
        "csv",
    ),
    _c("check-format-unknown", "value", "tasks check tasks.jsonl --city pack --format csv", "csv"),
    _c(
        "validate-gold-task-file-no-goal",
        "silent",
        "validate gold --tasks nogoal.jsonl --city pack",
        "no goal",
    ),
    _c("data-dir-missing", "corrupt", "tasks ls --data-dir nodir", "nodir"),
    _c(
        "data-dir-is-file",
        "corrupt",
        "validate gold --tasks map2seq-unseen-dev-v1 --data-dir afile",
        "afile",
    ),
    _c(
        "export-data-dir-missing",
        "corrupt",
        "export finetune --tasks map2seq-unseen-dev-v1 -o ft.jsonl --data-dir nodir",
        "nodir",
    ),
    # ---------------------------------------------------------------- unchecked values
    _c("run-seed-negative", "value", RUN + " --seed -1", "--seed"),
    _c(
        "run-ocr-backend-unknown",
        "value",
        RUN,
        "FLANEUR_OCR_BACKEND",
        env={"FLANEUR_OCR_BACKEND": "tensorrt"},
    ),
    _c(
        "run-ocr-threads-not-a-number",
        "value",
        RUN,
        "FLANEUR_OCR_THREADS",
        env={"FLANEUR_OCR_THREADS": "two"},
    ),
    _c("run-progress-unknown", "value", RUN + " --progress fancy", "--progress"),
    _c(
        "run-unknown-agent",
        "value",
        "run --agent walker --tasks helsinki-needs-v1 --out r",
        "walker",
    ),
    _c(
        "run-unknown-task", "value", "run --agent random --tasks atlantis-v1 --out r", "atlantis-v1"
    ),
    _c("run-option-no-equals", "value", RUN + " -o tau", "tau"),
    _c("run-option-bad-name", "value", RUN + " --option random.=1", "option name"),
    _c("run-option-other-agent", "value", RUN + " --option velma.k_shot=0", "velma"),
    _c("run-option-unknown", "value", RUN + " --option random.wings=2", "wings"),
    _c("demo-progress-unknown", "value", "demo --progress loud", "--progress"),
    _c("demo-out-file-progress", "value", "demo --progress loud --out afile", "--progress"),
    _c("render-size-zero", "value", RENDER + " --size 0x0", "size"),
    _c("render-size-text", "value", RENDER + " --size big", "size"),
    _c("render-size-huge", "value", RENDER + " --size 100000x10", "size"),
    _c("render-fov-zero", "value", RENDER + " --fov 0", "--fov"),
    _c("render-fov-180", "value", RENDER + " --fov 180", "--fov"),
    _c("render-fov-negative", "value", RENDER + " --fov -30", "--fov"),
    _c("render-fov-inf", "value", RENDER + " --fov inf", "--fov"),
    _c("render-heading-nan", "value", RENDER + " --heading nan", "heading"),
    _c("render-heading-inf", "value", RENDER + " --heading inf", "heading"),
    _c("render-pitch-90", "value", RENDER + " --pitch 90", "pitch"),
    _c("render-pitch-nan", "value", RENDER + " --pitch nan", "pitch"),
    _c("render-unknown-node", "value", "render pack --node Z9 -o v.png", "Z9"),
    _c("render-gif", "value", "render pack --node X4 -o v.gif", "v.gif"),
    _c(
        "city-build-spacing-negative",
        "value",
        "city build helsinki -o newpack --spacing -5",
        "--spacing",
    ),
    _c(
        "city-build-spacing-zero",
        "value",
        "city build helsinki -o newpack --spacing 0",
        "--spacing",
    ),
    _c(
        "city-build-spacing-nan",
        "value",
        "city build helsinki -o newpack --spacing nan",
        "--spacing",
    ),
    _c(
        "city-build-unknown-source",
        "value",
        "city build atlantis -o newpack",
        "unknown city source",
    ),
    _c("generate-seed-negative", "value", GEN + " --seed -1", "--seed"),
    _c("generate-min-hops-zero", "value", GEN + " --min-hops 0", "--min-hops"),
    _c("generate-max-hops-negative", "value", GEN + " --max-hops -4", "--max-hops"),
    _c("generate-reversed-hops", "value", GEN + " --min-hops 10 --max-hops 2", "reversed"),
    _c("generate-unknown-category", "value", GEN + " --categories teleport", "teleport"),
    _c(
        "export-seed-negative",
        "value",
        "export finetune --tasks helsinki-needs-v1 -o ft.jsonl --seed -2",
        "--seed",
    ),
    _c(
        "export-format-unknown",
        "value",
        "export finetune --tasks helsinki-needs-v1 -o ft.jsonl --format csv",
        "--format",
    ),
    _c(
        "export-unknown-task",
        "value",
        "export finetune --tasks atlantis-v1 -o ft.jsonl",
        "atlantis-v1",
    ),
    _c(
        "validate-gold-unknown-scheme",
        "value",
        "validate gold --tasks helsinki-needs-v1 --schemes teleport",
        "teleport",
    ),
    _c("validate-gold-unknown-task", "value", "validate gold --tasks atlantis-v1", "atlantis-v1"),
    _c("fake-llm-port-high", "value", "fake-llm --port 70000", "--port", in_process=False),
    _c("fake-llm-port-negative", "value", "fake-llm --port -1", "--port", in_process=False),
    _c("fake-llm-latency-negative", "value", FAKE + " --latency -1", "--latency", in_process=False),
    _c("fake-llm-latency-nan", "value", FAKE + " --latency nan", "--latency", in_process=False),
    _c("fake-llm-seed-negative", "value", FAKE + " --seed -1", "--seed", in_process=False),
    _c("fake-llm-fault-status-high", "value", FAKE + " --fault 0=999", "999", in_process=False),
    _c("fake-llm-fault-status-low", "value", FAKE + " --fault 0=200", "200", in_process=False),
    _c("fake-llm-fault-reversed", "value", FAKE + " --fault 5-2=500", "reversed", in_process=False),
    _c(
        "fake-llm-fault-negative-index",
        "value",
        FAKE + " --fault=-1=500",
        "-1=500",
        in_process=False,
    ),
    _c(
        "fake-llm-fault-unknown",
        "value",
        FAKE + " --fault 0=gremlins",
        "gremlins",
        in_process=False,
    ),
    _c("fake-llm-fault-no-kind", "value", FAKE + " --fault 3", "INDEX=KIND", in_process=False),
    _c(
        "fake-llm-fault-slow-negative",
        "value",
        FAKE + " --fault 0=slow:-1",
        "slow:-1",
        in_process=False,
    ),
    _c("fake-llm-rate-high", "value", FAKE + " --fault-rate 500=1.5", "500=1.5", in_process=False),
    _c(
        "fake-llm-rate-negative",
        "value",
        FAKE + " --fault-rate 500=-0.1",
        "500=-0.1",
        in_process=False,
    ),
    _c(
        "fake-llm-rate-sum",
        "value",
        FAKE + " --fault-rate 500=0.6 --fault-rate 429=0.6",
        "add up",
        in_process=False,
    ),
    _c("fake-llm-policy-unknown", "value", FAKE + " --policy wise", "wise", in_process=False),
    _c(
        "fake-llm-script-missing",
        "value",
        FAKE + " --policy script --script nofile.json",
        "nofile.json",
        in_process=False,
    ),
    # ---------------------------------------------------------------- silent acceptance
    _c(
        "agent-empty",
        "silent",
        ["run", "--agent", "", "--tasks", "helsinki-needs-v1", "--out", "r"],
        "--agent",
    ),
    _c("agent-commas", "silent", "run --agent ,, --tasks helsinki-needs-v1 --out r", "--agent"),
    _c(
        "agent-twice",
        "silent",
        "run --agent random,random --tasks helsinki-needs-v1 --out r",
        "random",
    ),
    _c(
        "agent-twice-spaced",
        "silent",
        ["run", "--agent", "random, forward,random", "--tasks", "helsinki-needs-v1", "--out", "r"],
        "random",
    ),
    _c(
        "tasks-empty-option",
        "silent",
        ["run", "--agent", "random", "--tasks", "", "--out", "r"],
        "--tasks",
    ),
    _c(
        "tasks-twice",
        "silent",
        "run --agent random --tasks helsinki-needs-v1,helsinki-needs-v1 --out r",
        "more than once",
    ),
    _c("demo-agents-empty", "silent", ["demo", "--agents", ""], "--agents"),
    _c("demo-agents-twice", "silent", "demo --agents forward,forward", "forward"),
    _c(
        "export-tasks-empty",
        "silent",
        ["export", "finetune", "--tasks", " ", "-o", "ft.jsonl"],
        "no task set",
    ),
    _c(
        "validate-schemes-empty",
        "silent",
        ["validate", "gold", "--tasks", "helsinki-needs-v1", "--schemes", ","],
        "--schemes",
    ),
    _c("per-template-zero", "silent", GEN + " --per-template 0", "--per-template"),
    _c("per-template-negative", "silent", GEN + " --per-template -2", "--per-template"),
    _c("tasks-file-empty", "silent", "tasks check empty.jsonl --city pack", "empty"),
    _c("tasks-file-blank-lines", "silent", "tasks check blank.jsonl --city pack", "empty"),
    _c("tasks-validate-empty", "silent", "tasks validate empty.jsonl --city pack", "no episodes"),
    _c("tasks-duplicate-ids", "silent", "tasks check dup.jsonl --city pack", "duplicate"),
    _c(
        "tasks-validate-duplicate-ids",
        "silent",
        "tasks validate dup.jsonl --city pack",
        "duplicate",
    ),
    _c("tasks-no-goal", "silent", "tasks check nogoal.jsonl --city pack", "no goal"),
    _c("tasks-validate-no-goal", "silent", "tasks validate nogoal.jsonl --city pack", "no goal"),
    _c("tasks-max-steps-zero", "silent", "tasks check steps0.jsonl --city pack", "max_steps"),
    _c("tasks-max-steps-negative", "silent", "tasks check stepsneg.jsonl --city pack", "max_steps"),
    _c(
        "tasks-max-steps-fraction", "silent", "tasks check stepsfrac.jsonl --city pack", "max_steps"
    ),
    _c("tasks-heading-nan", "silent", "tasks check nan.jsonl --city pack", "start_heading"),
    _c("tasks-heading-inf", "silent", "tasks check inf.jsonl --city pack", "start_heading"),
    _c(
        "tasks-validate-heading-nan",
        "silent",
        "tasks validate nan.jsonl --city pack",
        "start_heading",
    ),
    _c("tasks-empty-id", "silent", "tasks check emptyid.jsonl --city pack", "id"),
]
"""The command-line cases (see :class:`HostileCase`)."""

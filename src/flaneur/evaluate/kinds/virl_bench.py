"""V-IRL's place recognition and place VQA benchmarks as task kinds of the one runner.

- ``virl-recognition``: a recogniser (:data:`flaneur.bench.recognisers.RECOGNISERS`:
  offline, clip, vlm, oracle) ranks the candidate types of a storefront view. Row metrics
  ``top1``, ``top3``, ``top5``; task-set figures ``macc`` and ``acc`` (of top-1).
- ``virl-vqa``: an answerer (:data:`flaneur.bench.answerers.ANSWERERS`: embedder, model,
  oracle) picks one of four options, in four rotations (stopping at the first wrong pass).
  Row metrics ``correct`` (all four right: circular evaluation) and ``first_pass`` (V-IRL's
  single pass); figures ``macc_circular``, ``acc_circular``, ``macc_plain``, ``acc_plain``.

Items are made by the ``virl-recognition`` / ``virl-vqa`` generators
(:mod:`flaneur.bench.recognition`, :mod:`flaneur.bench.vqa`). A solver that looks sees the
item's view: the run's ``--views`` provider when given, else the city's
:class:`~flaneur.views.synthetic.SyntheticViews` (made once per task set); an item with an
``image`` path (relative to its item file) shows that file instead. mAcc (V-IRL's mean
per-type accuracy, each place counting ``1/k`` for each of its ``k`` types) is a figure of
the whole task set, with a seeded bootstrap interval
(:func:`flaneur.bench.metrics.accuracy_figures`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from flaneur.agents.base import SolveInfo
from flaneur.bench.answerers import ANSWERERS
from flaneur.bench.metrics import (
    LETTERS,
    accuracy_figures,
    circular_correct,
    expected_letter,
    rank_labels,
    rotate_options,
    topk_hits,
)
from flaneur.bench.recognisers import RECOGNISERS
from flaneur.bench.types import load_type_list
from flaneur.errors import DataError, FlaneurError
from flaneur.evaluate.kinds.base import Job, TaskContext
from flaneur.evaluate.kinds.items import ItemError, ItemKind, viewing
from flaneur.registry import Registry
from flaneur.tasks.items import TaskItem
from flaneur.tasks.spec import TaskSpec
from flaneur.views.registry import views_from_spec
from flaneur.world.city import City


def _field(item: TaskItem, key: str, kind: type | tuple[type, ...]) -> Any:
    value = item.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise DataError(f"item {item.id!r}: field {key!r} is missing or malformed ({value!r})")
    return value


def item_types(item: TaskItem) -> list[str]:
    """The item's true V-IRL types (checked)."""
    types = _field(item, "types", list)
    if not types or not all(isinstance(t, str) for t in types):
        raise DataError(f"item {item.id!r}: field 'types' must be a non-empty list of types")
    return list(types)


class _ViewKind(ItemKind):
    """What both benchmarks share: the view of an item, and the item's types and region."""

    def prepare(self, spec: TaskSpec, city: City, items: list[Any], config: Any) -> Any:
        """The city's offline renderer, unless the run has ``--views`` (made as ``--views
        synthetic`` makes it, with the scene cache)."""
        if getattr(config, "views", None):
            return None
        return views_from_spec("synthetic", city)

    def view_of(self, job: Job, info: SolveInfo) -> Image.Image:
        """The item's view (see the module docstring); :class:`ItemError` when there is none."""
        item = job.item
        if item.get("image"):
            path = Path(str(item["image"])).expanduser()
            if not path.is_absolute() and job.context.spec.files:
                path = Path(job.context.spec.files[0]).parent / path
            try:
                with Image.open(path) as image:
                    return image.convert("RGB")
            except OSError as err:
                raise ItemError(f"item {item.id!r}: cannot read image {path} ({err})") from None
        provider = info.views if info.views is not None else info.state
        node = _field(item, "node", (str, int))
        camera = {k: float(_field(item, k, (int, float))) for k in ("heading", "pitch", "fov")}
        with viewing(item):
            view = provider.view(node, camera["heading"], pitch=camera["pitch"], fov=camera["fov"])
        return view.image

    def image_for(self, solver: Any, job: Job, info: SolveInfo) -> Image.Image | None:
        """The view when the solver looks at it, else ``None`` (nothing rendered)."""
        return self.view_of(job, info) if getattr(solver, "sees_view", True) else None

    @staticmethod
    def facts(item: TaskItem) -> dict[str, Any]:
        """The item's true types and region, kept in the row's result (for breakdowns)."""
        return {"types": item_types(item), "region": str(item.get("region") or "")}


def _scored(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Completed rows with metrics, in item order (so that order of finishing is moot)."""
    done = [r for r in rows if r.get("metrics") and r.get("result")]
    return sorted(done, key=lambda r: str(r["episode_id"]))


class RecognitionKind(_ViewKind):
    """V-IRL's place recognition (``virl-recognition``): rank the candidate types of a
    storefront view; top-1/3/5 per item, mAcc and accuracy of top-1 over the set."""

    name = "virl-recognition"
    solver_what = "recogniser"

    def solvers(self) -> Registry[Any]:
        return RECOGNISERS

    async def solve(self, job: Job, solver: Any, info: SolveInfo) -> dict[str, Any]:
        item = job.item
        facts = self.facts(item)
        try:
            candidates = load_type_list(item.get("candidates", "96"))
        except FlaneurError as err:
            raise DataError(f"item {item.id!r}: candidates: {err}") from None
        image = self.image_for(solver, job, info)
        ranking = await solver.rank(image, candidates, item, info)
        if len(ranking.scores) != len(candidates):
            raise FlaneurError(
                f"recogniser {job.agent!r} gave {len(ranking.scores)} scores for "
                f"{len(candidates)} types"
            )
        predicted = rank_labels(ranking.scores, candidates)[:5]
        return {"predicted": predicted, **facts, "records": list(ranking.records)}

    def score_item(self, item: TaskItem, result: dict[str, Any], context: TaskContext) -> dict:
        hits = topk_hits(result["predicted"], item_types(item))
        return {f"top{k}": hit for k, hit in hits.items()}

    def aggregate(
        self, rows: Sequence[dict[str, Any]], context: TaskContext
    ) -> dict[str, Any] | None:
        done = _scored(rows)
        return accuracy_figures([(r["result"]["types"], r["metrics"]["top1"]) for r in done])


class VqaKind(_ViewKind):
    """V-IRL's place VQA (``virl-vqa``): four rotations of a four-option question, stopping
    at the first wrong pass; ``correct`` when all four are right (circular evaluation),
    ``first_pass`` for V-IRL's single pass."""

    name = "virl-vqa"
    solver_what = "answerer"

    def solvers(self) -> Registry[Any]:
        return ANSWERERS

    @staticmethod
    def question(item: TaskItem) -> tuple[str, list[str], int]:
        """The item's question, options and true index (checked)."""
        options = _field(item, "options", list)
        answer = _field(item, "answer", int)
        if len(options) != len(LETTERS) or not all(isinstance(o, str) for o in options):
            raise DataError(f"item {item.id!r}: field 'options' must hold 4 texts")
        if not 0 <= answer < len(options):
            raise DataError(f"item {item.id!r}: field 'answer' must be 0 to 3, not {answer}")
        return str(item.get("question") or ""), list(options), answer

    async def solve(self, job: Job, solver: Any, info: SolveInfo) -> dict[str, Any]:
        item = job.item
        facts = self.facts(item)
        question, options, truth = self.question(item)
        image = self.image_for(solver, job, info)
        result: dict[str, Any] = {"answers": [], "replies": [], "read_by": [], **facts}
        records: list[dict[str, Any]] = []
        for shift in range(len(options)):
            shown, _ = rotate_options(options, truth, shift)
            got = await solver.answer(question, shown, image, item, info)
            result["answers"].append(got.letter)
            result["replies"].append(got.reply)
            result["read_by"].append(got.read_by)
            records += got.records
            if got.letter != expected_letter(truth, shift):
                break  # V-IRL stops at the first wrong pass
        return {**result, "records": records}

    def score_item(self, item: TaskItem, result: dict[str, Any], context: TaskContext) -> dict:
        _, _, truth = self.question(item)
        answers = result["answers"]
        return {
            "correct": circular_correct(answers, truth),
            "first_pass": bool(answers) and answers[0] == LETTERS[truth],
        }

    def aggregate(
        self, rows: Sequence[dict[str, Any]], context: TaskContext
    ) -> dict[str, Any] | None:
        done = _scored(rows)
        figures: dict[str, Any] = {}
        for suffix, metric in (("circular", "correct"), ("plain", "first_pass")):
            made = accuracy_figures([(r["result"]["types"], r["metrics"][metric]) for r in done])
            figures.update({f"{name}_{suffix}": value for name, value in made.items()})
        return figures

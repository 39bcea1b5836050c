"""OWL-ViT, OWLv2 and Grounding DINO through transformers for real: tiny randomly
initialised models saved with ``save_pretrained`` (model and processor) are loaded by the
detectors of the registry, and what they return is checked against the models' raw outputs
computed here (scores, labels, boxes in the view's pixels, thresholds, batches)."""

from __future__ import annotations

import numpy as np
import pytest

from flaneur.perception.detection import make_detector

EXTRA = "torch or transformers is not installed (the vision extra: pip install -e '.[vision]')"
torch = pytest.importorskip("torch", reason=EXTRA)
pytest.importorskip("transformers", reason=EXTRA)

LABELS = ["bench", "waste_basket"]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _rows(dets) -> list[tuple[tuple[float, ...], str, float]]:
    return [(d.box, d.label, d.score) for d in dets]


def _frame(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """Corner boxes clipped to the view; rows left without area dropped."""
    b = boxes.copy()
    b[:, 0::2] = b[:, 0::2].clip(0, width)
    b[:, 1::2] = b[:, 1::2].clip(0, height)
    return b


def _expected(boxes, scores, ks, width, height, min_score):
    """Rows ``(box, label, score)`` best first, as a detector must return them."""
    keep = (scores >= min_score) & (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
    rows = [
        (tuple(float(v) for v in b), LABELS[int(k)], float(s))
        for b, s, k in zip(boxes[keep], scores[keep], ks[keep], strict=True)
    ]
    return sorted(rows, key=lambda r: -r[2])


def _same(got, expected, atol=1e-4) -> None:
    """The same rows, matched by box (scores of 1.0 tie, so the order among them is free)."""
    assert len(got) == len(expected)
    assert [r[2] for r in got] == sorted((r[2] for r in got), reverse=True)  # best first

    def by_box(rows):
        return sorted(rows, key=lambda r: tuple(np.round(r[0], 2)))

    for (box, label, score), (ebox, elabel, escore) in zip(
        by_box(got), by_box(expected), strict=True
    ):
        assert label == elabel
        assert score == pytest.approx(escore, abs=1e-5)
        assert np.allclose(box, ebox, atol=atol)


# ------------------------------------------------------------------------ OWL-ViT, OWLv2
def _owl_expected(tiny, views, *, square: bool, min_score: float = 0.0):
    """From the model's raw outputs: score = sigmoid of the best label's logit; boxes
    (centre, size) relative to the model's square input, which is the view stretched
    (OWL-ViT) or the view padded below and right to a square (OWLv2)."""
    images = [v.image for v in views]
    prompts = [[f"a photo of a {lab.replace('_', ' ')}" for lab in LABELS]] * len(images)
    inputs = tiny.processor(text=prompts, images=images, return_tensors="pt")
    with torch.no_grad():
        out = tiny.model(**inputs)
    logits, boxes = out.logits.numpy().astype(float), out.pred_boxes.numpy().astype(float)
    rows = []
    for k, im in enumerate(images):
        w, h = im.size
        sx, sy = (max(w, h), max(w, h)) if square else (w, h)
        cx, cy, bw, bh = boxes[k].T
        corners = np.stack(
            [(cx - bw / 2) * sx, (cy - bh / 2) * sy, (cx + bw / 2) * sx, (cy + bh / 2) * sy], axis=1
        )
        scores = _sigmoid(logits[k].max(axis=1))
        rows.append(
            _expected(_frame(corners, w, h), scores, logits[k].argmax(axis=1), w, h, min_score)
        )
    return rows


def _grid(width: int, height: int, side_x: float, side_y: float, g: int = 4) -> np.ndarray:
    """The boxes of a zeroed OWL box head: patch ``(i, j)``'s box is centred on the patch's
    lower right corner ``((j + 1) / g, (i + 1) / g)`` of the model's input and one patch
    wide, in pixels of a view whose input side spans ``side_x`` x ``side_y`` pixels."""
    out = []
    for i in range(g):
        for j in range(g):
            box = [
                (j + 0.5) * side_x / g,
                (i + 0.5) * side_y / g,
                (j + 1.5) * side_x / g,
                (i + 1.5) * side_y / g,
            ]
            out.append(box)
    b = _frame(np.array(out), width, height)
    b = b[(b[:, 2] > b[:, 0]) & (b[:, 3] > b[:, 1])]
    return b[np.lexsort((b[:, 0], b[:, 1]))]


@pytest.mark.parametrize("kind", ["owlvit", "owlv2"])
def test_owl_boxes_land_on_the_patch_grid_in_the_views_pixels(kind, request, noise):
    tiny = request.getfixturevalue(f"tiny_{kind}")
    det = make_detector("owlvit", weights=str(tiny.folder), threshold=0.0, min_score=0.0)
    for w, h in ((64, 48), (40, 56)):
        boxes = np.array([d.box for d in det.detect(noise(w, h, 7), LABELS)])
        boxes = boxes[np.lexsort((boxes[:, 0], boxes[:, 1]))]
        # OWL-ViT stretches the view to its square input; OWLv2 pads it below and right,
        # so its last rows of patches lie outside a landscape view and are dropped
        side = (max(w, h), max(w, h)) if kind == "owlv2" else (w, h)
        expected = _grid(w, h, *side)
        assert boxes.shape == expected.shape
        assert np.allclose(boxes, expected, atol=0.05)


@pytest.mark.parametrize("kind", ["owlvit", "owlv2"])
def test_owl_scores_labels_thresholds_and_batches(kind, request, noise):
    tiny = request.getfixturevalue(f"tiny_{kind}")
    views = [noise(64, 48, 1), noise(40, 56, 2)]
    det = make_detector("owlvit", weights=str(tiny.folder), threshold=0.0, min_score=0.0)
    got = det.detect_batch(views, LABELS)
    expected = _owl_expected(tiny, views, square=kind == "owlv2")
    for g, e in zip(got, expected, strict=True):
        _same(_rows(g), e)
    assert {d.label for r in got for d in r} <= set(LABELS)
    # a threshold keeps exactly the boxes that reach it; the cache answers the second pass
    cut = float(np.median([d.score for d in got[0]]))
    kept = det.detect(views[0], LABELS, threshold=cut)
    assert _rows(kept) == [r for r in _rows(got[0]) if r[2] >= cut] and det.hits >= 1
    # min_score also bounds what the model's post-processing keeps
    strict = make_detector("owlvit", weights=str(tiny.folder), threshold=0.0, min_score=cut)
    _same(_rows(strict.detect(views[0], LABELS)), [r for r in expected[0] if r[2] > cut])


@pytest.mark.parametrize("kind", ["owlvit", "owlv2"])
def test_owl_is_deterministic_and_follows_the_image(kind, request, noise):
    tiny = request.getfixturevalue(f"tiny_{kind}")
    one = make_detector("owlvit", weights=str(tiny.folder), threshold=0.0, min_score=0.0)
    two = make_detector("owlvit", weights=str(tiny.folder), threshold=0.0, min_score=0.0)
    view, other = noise(64, 48, 3), noise(64, 48, 4)
    first = _rows(one.detect(view, LABELS))
    assert first == _rows(two.detect(view, LABELS))  # same input, same output
    scores = sorted(r[2] for r in first)
    assert not np.allclose(scores, sorted(d.score for d in one.detect(other, LABELS)))
    # a batch gives each view what it gets alone
    batch = two.detect_batch([other, view], LABELS)
    _same(_rows(batch[1]), first, atol=1e-3)


# ------------------------------------------------------------------------ Grounding DINO
def _gdino_expected(tiny, views, min_score: float = 0.0):
    """From the raw outputs: the prompt ``"bench. waste basket."`` has the tokens [CLS]
    bench . waste basket . [SEP]; a label's score is the mean sigmoid of its tokens'
    logits; boxes as transformers' own post-processing scales them to each view."""
    images = [v.image for v in views]
    inputs = tiny.processor(
        images=images, text=["bench. waste basket."] * len(images), return_tensors="pt"
    )
    tokens = tiny.processor.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
    assert tokens == ["[CLS]", "bench", ".", "waste", "basket", ".", "[SEP]"]
    with torch.no_grad():
        out = tiny.model(**inputs)
    probs = _sigmoid(out.logits.numpy().astype(float))
    per_label = np.stack([probs[..., 1], probs[..., 3:5].mean(axis=-1)], axis=-1)
    sizes = [(im.size[1], im.size[0]) for im in images]
    library = tiny.processor.post_process_grounded_object_detection(
        out, inputs["input_ids"], threshold=-1.0, text_threshold=1.0, target_sizes=sizes
    )
    rows = []
    for k, im in enumerate(images):
        w, h = im.size
        boxes = _frame(library[k]["boxes"].numpy().astype(float), w, h)
        rows.append(
            _expected(boxes, per_label[k].max(axis=1), per_label[k].argmax(axis=1), w, h, min_score)
        )
    return rows


def test_grounding_dino_scores_boxes_and_thresholds(tiny_grounding_dino, noise):
    tiny = tiny_grounding_dino
    views = [noise(64, 48, 1), noise(40, 56, 2)]  # different sizes: padded in one batch
    det = make_detector("grounding-dino", weights=str(tiny.folder), threshold=0.0, min_score=0.0)
    got = det.detect_batch(views, LABELS)
    expected = _gdino_expected(tiny, views)
    assert all(0 < len(r) <= 12 for r in got)  # 12 queries, some cut off by the frame
    for g, e, v in zip(got, expected, views, strict=True):
        _same(_rows(g), e)
        w, h = v.image.size
        assert all(0 <= d.box[0] < d.box[2] <= w and 0 <= d.box[1] < d.box[3] <= h for d in g)
    cut = float(np.median([d.score for d in got[0]]))
    strict = make_detector("grounding-dino", weights=str(tiny.folder), threshold=cut, min_score=cut)
    _same(_rows(strict.detect_batch(views, LABELS)[0]), [r for r in expected[0] if r[2] >= cut])


def test_grounding_dino_is_deterministic_and_follows_the_image(tiny_grounding_dino, noise):
    folder = str(tiny_grounding_dino.folder)
    one = make_detector("grounding-dino", weights=folder, threshold=0.0, min_score=0.0)
    two = make_detector("grounding-dino", weights=folder, threshold=0.0, min_score=0.0)
    view, other = noise(64, 48, 5), noise(64, 48, 6)
    first = _rows(one.detect(view, LABELS))
    assert first == _rows(two.detect(view, LABELS))
    assert not np.allclose(
        sorted(r[2] for r in first), sorted(d.score for d in one.detect(other, LABELS))
    )
    batch = two.detect_batch([other, view], LABELS)  # same size: no padding between them
    _same(_rows(batch[1]), first, atol=1e-3)

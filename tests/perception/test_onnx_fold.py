"""Graph rewrites of the PP-OCR models: same function, fewer nodes."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from flaneur.perception.ocr_engine import PPOCR, model_paths
from flaneur.perception.onnx_fold import fold_model, folded_model_bytes


def _const(name: str, value) -> onnx.NodeProto:
    array = np.asarray(value, dtype=np.float32)
    return helper.make_node(
        "Constant", [], [name], value=numpy_helper.from_array(array, name + "_value")
    )


def _lcnet_block() -> onnx.ModelProto:
    """A PP-LCNetV3-style block as Paddle exports it, with hand-picked numbers.

    x -> Conv 3x3 (pad 1) -> Mul 0.5 -> Add 0.25 -> hard-swish (4 nodes) -> Mul 2 -> Add -1
      -> Conv 1x1 (no pad) -> Mul 3 -> Add 0.5 -> y
    """
    rng = np.random.default_rng(0)
    w1 = rng.normal(size=(4, 2, 3, 3)).astype(np.float32)
    b1 = rng.normal(size=4).astype(np.float32)
    w2 = rng.normal(size=(3, 4, 1, 1)).astype(np.float32)
    b2 = rng.normal(size=3).astype(np.float32)
    nodes = [
        _const("w1", w1),
        _const("b1", b1),
        _const("w2", w2),
        _const("b2", b2),
        _const("half", [0.5]),
        _const("quarter", [0.25]),
        _const("three", 3.0),
        _const("zero", 0.0),
        _const("six", 6.0),
        _const("two", [2.0]),
        _const("minus_one", [-1.0]),
        _const("thrice", [3.0]),
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["half", "c1"], ["m1"]),
        helper.make_node("Add", ["m1", "quarter"], ["a1"]),
        helper.make_node("Add", ["a1", "three"], ["hs_add"]),
        helper.make_node("Clip", ["hs_add", "zero", "six"], ["hs_clip"]),
        helper.make_node("Mul", ["a1", "hs_clip"], ["hs_mul"]),
        helper.make_node("Div", ["hs_mul", "six"], ["hs"]),
        helper.make_node("Mul", ["two", "hs"], ["m2"]),
        helper.make_node("Add", ["m2", "minus_one"], ["a2"]),
        helper.make_node("Conv", ["a2", "w2", "b2"], ["c2"]),
        helper.make_node("Mul", ["thrice", "c2"], ["m3"]),
        helper.make_node("Add", ["m3", "half"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 6, 5])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 8
    return model


def _numpy_block(x: np.ndarray) -> np.ndarray:
    """The block of :func:`_lcnet_block` computed by hand in numpy (float64)."""
    rng = np.random.default_rng(0)
    w1, b1 = rng.normal(size=(4, 2, 3, 3)), rng.normal(size=4)
    w2, b2 = rng.normal(size=(3, 4, 1, 1)), rng.normal(size=3)
    padded = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    c1 = np.zeros((4, 6, 5))
    for o in range(4):
        for i in range(6):
            for j in range(5):
                c1[o, i, j] = (padded[:, i : i + 3, j : j + 3] * w1[o]).sum() + b1[o]
    a1 = 0.5 * c1 + 0.25
    hs = a1 * np.clip(a1 + 3.0, 0.0, 6.0) / 6.0
    a2 = 2.0 * hs - 1.0
    c2 = np.einsum("oc,chw->ohw", w2[:, :, 0, 0], a2) + b2[:, None, None]
    return (3.0 * c2 + 0.5)[None]


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def test_every_rewrite_applies_and_the_function_is_unchanged():
    model = _lcnet_block()
    folded, report = fold_model(model)
    onnx.checker.check_model(folded)
    # Conv1's Mul and Add, Conv2's Mul and Add; one hard-swish; Mul 2 / Add -1 into Conv2
    assert (report.conv_affine, report.hard_swish, report.affine_into_next_conv) == (4, 1, 1)
    assert [n.op_type for n in folded.graph.node] == ["Conv", "HardSigmoid", "Mul", "Conv"]
    x = np.random.default_rng(1).normal(size=(1, 2, 6, 5)).astype(np.float32) * 3
    want = _numpy_block(x)
    assert _run(model, x) == pytest.approx(want, abs=1e-4)
    assert _run(folded, x) == pytest.approx(want, abs=1e-4)
    assert len(model.graph.node) == 24  # the input model is left as it was


def test_an_affine_before_a_padded_conv_is_left_alone():
    model = _lcnet_block()
    for node in model.graph.node:
        if node.op_type == "Conv" and node.input[0] == "a2":
            node.attribute.append(helper.make_attribute("pads", [1, 1, 1, 1]))
    model.graph.output[0].type.tensor_type.shape.dim[2].dim_value = 8
    model.graph.output[0].type.tensor_type.shape.dim[3].dim_value = 7
    folded, report = fold_model(model)
    assert report.affine_into_next_conv == 0  # the zero border would change
    x = np.random.default_rng(2).normal(size=(1, 2, 6, 5)).astype(np.float32)
    assert _run(folded, x) == pytest.approx(_run(model, x), abs=1e-4)


def test_a_tensor_read_twice_is_not_folded():
    model = _lcnet_block()
    model.graph.node.append(helper.make_node("Identity", ["c1"], ["c1_copy"]))
    model.graph.output.append(helper.make_tensor_value_info("c1_copy", TensorProto.FLOAT, None))
    folded, report = fold_model(model)
    assert report.conv_affine == 2  # only the second convolution's affine
    x = np.random.default_rng(3).normal(size=(1, 2, 6, 5)).astype(np.float32)
    session = ort.InferenceSession(folded.SerializeToString(), providers=["CPUExecutionProvider"])
    y, copy = session.run(None, {"x": x})
    assert y == pytest.approx(_numpy_block(x), abs=1e-4)
    assert copy.shape == (1, 4, 6, 5)


def test_the_shipped_models_fold_and_read_the_same(views):
    det_bytes, det = folded_model_bytes(model_paths()["Det"])
    _, rec = folded_model_bytes(model_paths()["Rec"])
    for report in (det, rec):
        assert report.conv_affine > 40 and report.hard_swish > 20
        assert report.nodes_after < report.nodes_before / 2
    plain, folded = PPOCR(threads=1, fold_graphs=False), PPOCR(threads=1)
    images = [views.view("n100_060", h).array() for h in (90.0, 270.0)]
    x = folded.det_input(images[0][:, :, ::-1].copy())
    want = plain.rapid.text_det.infer(x)[0]
    got = folded.rapid.text_det.infer(x)[0]
    assert np.abs(got - want).max() < 1e-3
    for a, b in zip(plain.read_many(images, 0.5), folded.read_many(images, 0.5), strict=True):
        assert [t for _, t, _ in a] == [t for _, t, _ in b]
        assert [s for *_, s in a] == pytest.approx([s for *_, s in b], abs=1e-3)
    assert any(plain.read_many(images, 0.5))  # the Stockmann front is in view
    assert det_bytes

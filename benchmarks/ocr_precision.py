"""The PP-OCR text detector at lower precisions and static shapes: time per view and agreement.

    python benchmarks/ocr_precision.py --json [--quick] [--calibration N] [--views N]
        [--det-side N] [--repeats R] [--check]

The detector is two thirds of a perception step's CPU time (``benchmarks/views.py``), so
this measures the ways left to run it faster on one core, against the default (ONNX
Runtime, folded graphs, float32). Inputs are detector inputs of ``SyntheticViews`` images
of the built-in Helsinki city (800x460 views, longer side limited to ``--det-side``):
``--calibration`` views for the int8 calibration and ``--views`` other views for the
figures (different random viewpoints).

Variants (each on one thread, through flaneur's own sessions, ``ocr_engine.make_session``):

* ``onnxruntime-f32`` - the default: folded graph, float32 (the reference);
* ``onnxruntime-f32-shipped`` - the graph as shipped;
* ``onnxruntime-int8`` - static int8 quantisation (ONNX Runtime's ``quantize_static``,
  QDQ format, per-channel int8 weights, uint8 activations calibrated by min-max on the
  calibration views; the model first converted to opset 13, which per-channel QDQ needs);
* ``openvino-f32`` / ``openvino-bf16`` - OpenVINO's CPU plugin on the shipped graph
  (``flaneur[openvino]``) compiled for any input shape, and ``-static`` compiled for the
  views' input shape (as flaneur's OpenVINO backends run the detector);
* ``openvino-int8`` - OpenVINO on the int8 QDQ model.

Per variant: ``ms_per_view`` (median over the views, of the median of ``--repeats``
runs), ``speedup`` (the reference's time over it), ``mean_abs_diff`` (mean absolute
difference of the text probability map from the reference's) and ``mask_agreement`` (the
fraction of pixels on the same side of rapidocr's 0.3 binarisation threshold as in the
reference's map). The OpenVINO variants are skipped without ``openvino``. ``--check`` exits
1 unless every float32 variant computes the reference's map (mean absolute difference at
most ``F32_TOLERANCE``): the per-shape compilation and the shipped graph must not change
what the detector sees.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from flaneur.perception.ocr_engine import PPOCR, make_session, model_paths
from flaneur.views.synthetic import SyntheticViews
from flaneur.world.builtin import load_city

MASK_THRESHOLD = 0.3  # rapidocr's DB binarisation threshold
F32_TOLERANCE = 1e-4  # float32 variants: mean absolute difference from the reference's map
Runner = Callable[[np.ndarray], np.ndarray]


def detector_inputs(n: int, seed: int, det_side: int) -> list[np.ndarray]:
    """Detector inputs (1x3xHxW float32) of ``n`` views at random viewpoints and headings."""
    import cv2

    city = load_city("helsinki")
    provider = SyntheticViews(city, memory_items=0)
    provider.prepare()
    engine = PPOCR(threads=1, det_limit_side_len=det_side)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        node, heading = int(rng.integers(city.graph.n_nodes)), float(rng.uniform(0, 360))
        bgr = cv2.cvtColor(provider.view(node, heading).array(), cv2.COLOR_RGB2BGR)
        out.append(engine.det_input(engine.rapid.preprocess(bgr)[0]))
    return out


def int8_model(shipped: str, calibration: list[np.ndarray], workdir: Path) -> str:
    """The detector quantised to int8 (QDQ), calibrated on ``calibration``; its path."""
    import onnx
    from onnx import version_converter
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    opset13 = workdir / "det_opset13.onnx"
    onnx.save(version_converter.convert_version(onnx.load(shipped), 13), opset13)
    prepared = workdir / "det_prepared.onnx"
    quant_pre_process(str(opset13), str(prepared), skip_symbolic_shape=True)
    name = onnx.load(str(prepared)).graph.input[0].name

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.items = iter(calibration)

        def get_next(self) -> dict[str, np.ndarray] | None:
            item = next(self.items, None)
            return None if item is None else {name: item}

    quantised = workdir / "det_int8.onnx"
    quantize_static(
        str(prepared),
        str(quantised),
        Reader(),
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )
    return str(quantised)


def session_runner(path: str, backend: str, *, fold: bool = False, static: bool = False) -> Runner:
    """flaneur's own one-thread session of the model at ``path`` under ``backend`` (see
    :func:`~flaneur.perception.ocr_engine.make_session`), as a function of the input."""
    session = make_session(path, backend, 1, fold=fold, static_shapes=static)
    name = session.get_inputs()[0].name
    return lambda x: session.run(None, {name: x})[0]


def measure(run: Runner, inputs: list[np.ndarray], reference: list[np.ndarray], repeats: int):
    """Median ms per input, mean absolute difference and mask agreement with ``reference``."""
    run(inputs[0])  # first call: allocations, kernels chosen
    times, diffs, agree = [], [], []
    for x, ref in zip(inputs, reference, strict=True):
        runs = []
        for _ in range(repeats):
            t = time.perf_counter()
            out = run(x)
            runs.append(time.perf_counter() - t)
        times.append(statistics.median(runs))
        diffs.append(float(np.abs(out - ref).mean()))
        agree.append(float(((out > MASK_THRESHOLD) == (ref > MASK_THRESHOLD)).mean()))
    return {
        "ms_per_view": round(1000 * statistics.median(times), 2),
        "mean_abs_diff": round(statistics.mean(diffs), 5),
        "mask_agreement": round(statistics.mean(agree), 5),
    }


def main(argv: list[str] | None = None) -> dict:
    """Run the comparison; print and return the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer views (CI)")
    parser.add_argument("--calibration", type=int, default=None, help="int8 calibration views")
    parser.add_argument("--views", type=int, default=None, help="views timed and compared")
    parser.add_argument("--det-side", type=int, default=960, help="detector input side limit")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per view")
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless every f32 variant computes the default's probability map",
    )
    args = parser.parse_args(argv)
    n_cal = args.calibration if args.calibration is not None else (8 if args.quick else 60)
    n_views = args.views if args.views is not None else (6 if args.quick else 30)
    if min(n_cal, n_views, args.repeats, args.det_side) < 1:
        parser.error("--calibration, --views, --repeats and --det-side must be positive")

    shipped = model_paths()["Det"]
    calibration = detector_inputs(n_cal, 123, args.det_side)
    inputs = detector_inputs(n_views, 456, args.det_side)
    variants: dict[str, Callable[[], Runner]] = {
        "onnxruntime-f32": lambda: session_runner(shipped, "onnxruntime", fold=True),
        "onnxruntime-f32-shipped": lambda: session_runner(shipped, "onnxruntime"),
    }
    has_openvino = importlib.util.find_spec("openvino") is not None
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        int8 = int8_model(shipped, calibration, Path(tmp))
        quantise_s = time.perf_counter() - t
        variants["onnxruntime-int8"] = lambda: session_runner(int8, "onnxruntime")
        if has_openvino:
            labels = {"openvino-f32": "openvino", "openvino-bf16": "openvino-bf16"}
            for label, backend in labels.items():
                variants[label] = lambda b=backend: session_runner(shipped, b)
                variants[f"{label}-static"] = lambda b=backend: session_runner(
                    shipped, b, static=True
                )
            variants["openvino-int8"] = lambda: session_runner(int8, "openvino")
        reference_run = variants["onnxruntime-f32"]()
        reference = [reference_run(x) for x in inputs]
        figures = {}
        for name, make in variants.items():
            figures[name] = measure(make(), inputs, reference, args.repeats)
    base = figures["onnxruntime-f32"]["ms_per_view"]
    for row in figures.values():
        row["speedup"] = round(base / row["ms_per_view"], 3)
    out = {
        "detector_input_shape": list(inputs[0].shape),
        "calibration_views": n_cal,
        "views": n_views,
        "int8_quantise_s": round(quantise_s, 1),
        "openvino": has_openvino,
        "variants": figures,
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for name, row in figures.items():
            print(f"{name:26s} {row}")
    failures = [
        f"{name}: mean absolute difference {row['mean_abs_diff']} > {F32_TOLERANCE}"
        for name, row in figures.items()
        if "f32" in name and row["mean_abs_diff"] > F32_TOLERANCE
    ]
    if args.check and failures:
        for failure in failures:
            print(f"check failed: {failure}", file=sys.stderr)
        sys.exit(1)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])

"""OpenVINO sessions for the PP-OCR models: an optional, faster CPU backend of :mod:`.ocr_engine`.

``pip install 'flaneur[openvino]'`` and choose it with ``OCR(backend="openvino")`` or
``FLANEUR_OCR_BACKEND=openvino``. The models are the ONNX files rapidocr ships, compiled by
OpenVINO's CPU plugin (which fuses the Paddle export's element-wise blocks itself, so the
graphs are not folded first: folded, they ran slower there). :class:`OpenVINOSession` has
the three methods of an ONNX Runtime ``InferenceSession`` that rapidocr's wrappers call, so
it slots in under rapidocr's pre- and post-processing unchanged.

Precision ``"f32"`` computes in single precision (readings equal ONNX Runtime's up to float
rounding); ``"bf16"`` lets the plugin compute in bfloat16 where the CPU has it (AMX or
AVX-512 BF16; elsewhere it runs in f32): about twice as fast for the detector on such a
CPU, but approximate: box borders move and some readings change (measured in
``docs/views.md``).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

PRECISIONS = ("f32", "bf16")


class OpenVINOMissing(ImportError):
    """The ``openvino`` package is not installed."""


def _core() -> Any:
    try:
        import openvino as ov
    except ImportError as err:
        raise OpenVINOMissing(
            "the OpenVINO OCR backend needs the openvino package: pip install 'flaneur[openvino]'"
        ) from err
    return ov.Core()


class OpenVINOSession:
    """One ONNX model compiled for OpenVINO's CPU plugin, called like an ONNX Runtime session.

    Parameters
    ----------
    path
        The ONNX file.
    threads
        Inference threads (None: the plugin's default, every core).
    precision
        ``"f32"`` or ``"bf16"`` (the plugin's inference precision hint).

    Notes
    -----
    Threads are not pinned to cores: several processes (Ray workers) share a machine.
    One request object is reused; calls must not overlap (the OCR engine holds a lock).
    """

    def __init__(self, path: str, *, threads: int | None = None, precision: str = "f32") -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
        core = _core()
        model = core.read_model(path)
        config: dict[str, Any] = {
            "INFERENCE_PRECISION_HINT": precision,
            "PERFORMANCE_HINT": "LATENCY",
            "NUM_STREAMS": 1,
            "ENABLE_CPU_PINNING": False,
        }
        if threads:
            config["INFERENCE_NUM_THREADS"] = int(threads)
        self._inputs = [SimpleNamespace(name=port.get_any_name()) for port in model.inputs]
        self._outputs = [SimpleNamespace(name=port.get_any_name()) for port in model.outputs]
        self._request = core.compile_model(model, "CPU", config).create_infer_request()
        self.precision = precision

    def get_inputs(self) -> list[SimpleNamespace]:
        """The model's inputs (objects with a ``name``)."""
        return self._inputs

    def get_outputs(self) -> list[SimpleNamespace]:
        """The model's outputs (objects with a ``name``)."""
        return self._outputs

    def run(self, output_names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """Outputs for ``feed`` (``{input name: array}``), all of them, in the model's order.

        ``output_names`` is accepted for the ONNX Runtime signature; every output is
        returned (rapidocr asks for all of them).
        """
        del output_names
        results = self._request.infer(feed)
        return [np.array(results[port]) for port in self._request.model_outputs]


def openvino_version() -> str:
    """The installed OpenVINO's version, or ``"missing"``."""
    try:
        import openvino as ov
    except ImportError:
        return "missing"
    return str(ov.get_version())

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

The models take inputs of any size, and the plugin's kernels for such dynamic shapes are
slower than those it compiles for one fixed shape (the detector on 800x448 inputs, one
thread: 1.2x slower in f32, 1.5x in bf16; ``benchmarks/ocr_precision.py``). With
``static_shapes=True`` a session compiles the model once per input shape it meets (a few
tenths of a second each) and keeps the last :data:`STATIC_SHAPES_KEPT` of them: right for
the detector, whose input size is the view size; the recogniser's input width changes with
every batch of crops, so it stays dynamic. The outputs are the same up to float rounding.
"""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace
from typing import Any

import numpy as np

PRECISIONS = ("f32", "bf16")
STATIC_SHAPES_KEPT = 4
"""How many input shapes a ``static_shapes`` session keeps compiled (least recently used out)."""


class OpenVINOMissing(ImportError):
    """The ``openvino`` package is not installed."""


def _core() -> Any:
    try:
        # optional extra flaneur[openvino]
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
    static_shapes
        Compile the model for each input shape it is run on (see the module's docstring)
        instead of once for any shape.

    Notes
    -----
    Threads are not pinned to cores: several processes (Ray workers) share a machine.
    One request object per compiled shape is reused; calls must not overlap (the OCR
    engine holds a lock).
    """

    def __init__(
        self,
        path: str,
        *,
        threads: int | None = None,
        precision: str = "f32",
        static_shapes: bool = False,
    ) -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
        self._core = _core()
        self._model = self._core.read_model(path)
        self._config: dict[str, Any] = {
            "INFERENCE_PRECISION_HINT": precision,
            "PERFORMANCE_HINT": "LATENCY",
            "NUM_STREAMS": 1,
            "ENABLE_CPU_PINNING": False,
        }
        if threads:
            self._config["INFERENCE_NUM_THREADS"] = int(threads)
        self._inputs = [SimpleNamespace(name=port.get_any_name()) for port in self._model.inputs]
        self._outputs = [SimpleNamespace(name=port.get_any_name()) for port in self._model.outputs]
        self._dynamic = None if static_shapes else self._compile(None)
        self._static: OrderedDict[tuple[tuple[int, ...], ...], Any] = OrderedDict()
        self.precision = precision
        self.static_shapes = static_shapes

    def _compile(self, shapes: dict[str, tuple[int, ...]] | None) -> Any:
        """An infer request of the model, fixed to ``shapes`` (``{input: shape}``) if given."""
        model = self._model
        if shapes is not None:
            model = model.clone()
            model.reshape({name: list(shape) for name, shape in shapes.items()})
        return self._core.compile_model(model, "CPU", self._config).create_infer_request()

    def _request(self, feed: dict[str, np.ndarray]) -> Any:
        """The infer request for ``feed``'s shapes (compiled on first use if static)."""
        if self._dynamic is not None:
            return self._dynamic
        shapes = {name: tuple(np.shape(value)) for name, value in feed.items()}
        key = tuple(shapes[i.name] for i in self._inputs)
        request = self._static.pop(key, None)
        if request is None:
            request = self._compile(shapes)
            while len(self._static) >= STATIC_SHAPES_KEPT:
                self._static.popitem(last=False)
        self._static[key] = request  # most recently used last
        return request

    def compiled_shapes(self) -> list[tuple[tuple[int, ...], ...]]:
        """The input shapes compiled so far and kept, least recently used first."""
        return list(self._static)

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
        request = self._request(feed)
        results = request.infer(feed)
        return [np.array(results[port]) for port in request.model_outputs]


def openvino_version() -> str:
    """The installed OpenVINO's version, or ``"missing"``."""
    try:
        # optional extra flaneur[openvino]
        import openvino as ov
    except ImportError:
        return "missing"
    return str(ov.get_version())

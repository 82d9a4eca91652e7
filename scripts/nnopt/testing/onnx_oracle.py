"""onnxruntime as the oracle for ONNX models, and the accuracy measures of issue 15.

- float32: every output within ``1e-4 * max(1, max|reference|)`` (:func:`float_error`);
- int8 QDQ: errors in output quantisation steps (:func:`qdq_steps`): at least 90 %
  within half a step and all within 2.

onnxruntime runs with graph optimisations OFF (``ORT_DISABLE_ALL``): its default session
fuses QDQ pairs into integer kernels whose rounding is up to 6 steps from the ONNX
semantics (onnxruntime 1.32), so only the unoptimised session is an oracle.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import NnoptError


def run_onnxruntime(model: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The model's outputs for ``inputs`` (in the order of its inputs), by onnxruntime
    with graph optimisations off: the ONNX semantics."""
    try:
        import onnxruntime as ort
    except ImportError as err:
        raise NnoptError("the ONNX oracle needs onnxruntime",
                         hint="pip install 'nnopt[dev]' (or onnxruntime)") from err
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(sess.get_inputs(), inputs, strict=True)}
    return [np.asarray(y) for y in sess.run(None, feeds)]


def float_error(got: np.ndarray, ref: np.ndarray) -> float:
    """max |got - ref| relative to the tolerance unit max(1, max|ref|) (pass: <= 1e-4)."""
    unit = max(1.0, float(np.abs(ref).max()) if ref.size else 1.0)
    return float(np.abs(got.astype(np.float64) - ref).max()) / unit if ref.size else 0.0


def output_steps(model: bytes) -> list[float | None]:
    """Per output of a QDQ model, the scale of the DequantizeLinear that produces it."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load_model_from_string(model)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    prod = {o: n for n in m.graph.node for o in n.output}
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in m.graph.node
              if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value"}
    out: list[float | None] = []
    for o in m.graph.output:
        n = prod.get(o.name)
        if n is None or n.op_type != "DequantizeLinear":
            out.append(None)
            continue
        s = inits.get(n.input[1], consts.get(n.input[1]))
        out.append(float(np.asarray(s).reshape(-1)[0]) if s is not None else None)
    return out


def qdq_steps(got: np.ndarray, ref: np.ndarray, step: float) -> np.ndarray:
    """|got - ref| in output quantisation steps, element-wise."""
    return np.abs(got.astype(np.float64) - ref.astype(np.float64)).reshape(-1) / step

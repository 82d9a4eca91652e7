"""nnopt's IR -> a TFLite flatbuffer (``nnopt convert``), with :mod:`nnopt.tflite_builder`.

Every tensor (shape, dtype, per-tensor or per-channel quantisation, constant data) and
every op (builtin and options; the TFLite_Detection_PostProcess custom op with its
flexbuffer options) of the graph is written as it is, so the file runs in the
tflite-micro interpreter with the same inputs and outputs, and nnopt plans it exactly as
the graph it came from. Options that only nnopt's passes set (fused max-pools, folded
padding, scratch-free kernels) cannot be expressed: the graph must be an imported one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .errors import UnsupportedError
from .frontend.tflite import load_model
from .ir import NUMPY_DTYPE as _NP
from .ir import (
    ActivationOptions,
    ConvOptions,
    Graph,
    NoOptions,
    PoolOptions,
)
from .ops import definition
from .tflite_builder import ModelBuilder


def convert_file(model: Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None,
                 input_values: Mapping[str, tuple[float, ...]] | None = None
                 ) -> tuple[Graph, bytes]:
    """``nnopt convert MODEL``: the graph nnopt imports from ``model`` (``--input-shape``
    and ``--input-value`` applied) and its .tflite bytes (deterministic: the same file,
    shapes and values give the same bytes)."""
    graph = load_model(model, input_shapes or None, input_values=input_values or None)
    return graph, graph_to_tflite(graph, f"nnopt convert {model.name}")


def graph_to_tflite(graph: Graph, description: str = "nnopt convert") -> bytes:
    b = ModelBuilder(description)
    for t in graph.tensors:
        q = t.quant
        kw = {}
        if q is not None:
            kw = {"scale": list(q.scale), "zero_point": list(q.zero_point), "axis": q.axis}
        data = t.array() if t.data is not None else None
        b.tensor(t.shape, _NP[t.dtype], name=t.name, data=data, variable=t.is_state,
                 **kw)  # type: ignore[arg-type]
    for op in graph.ops:
        o = op.options
        if isinstance(o, ConvOptions | PoolOptions) and (
                o.explicit_padding is not None
                or (isinstance(o, ConvOptions) and o.fused_max_pool is not None)):
            raise UnsupportedError(f"op {op.index} ({op.opcode}) carries an nnopt-only "
                                   "option (fused pool or folded padding)",
                                   hint="convert the imported graph, before planning")
        spec = definition(op).options
        if spec is not None and spec.encode is not None:  # a custom op: flexbuffer options
            b.custom_op(op.opcode, op.inputs, op.outputs, spec.encode(o))
            continue
        if isinstance(o, ActivationOptions) and o.activation == "NONE":
            o = NoOptions()  # MAXIMUM/MINIMUM take none; ADD/SUB/MUL/DIV default to it
        try:
            b.op(op.opcode, op.inputs, op.outputs,
                 o if spec is not None else NoOptions())
        except (ValueError, TypeError) as err:
            raise UnsupportedError(f"op {op.index} ({op.opcode}) cannot be written as "
                                   f"TFLite: {err}", hint="report it with the model") from err
    return b.build(graph.inputs, graph.outputs, pad_for_interpreter=False)

"""BATCH_MATMUL: options, traits, MACs. The lowering is :mod:`nnopt.lowering.matmul`."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import BatchMatMulOptions, Graph, Op, OpOptions
from ..lowering import matmul as matmul_lowering
from . import shapes
from .base import OpDef, Options, audited, table, tflm, write_fields


def _read(op: Any) -> OpOptions:
    o = table(tflite.BatchMatMulOptions, op)
    if o is None:
        return BatchMatMulOptions()
    return BatchMatMulOptions(bool(o.AdjX()), bool(o.AdjY()))


def macs(graph: Graph, op: Op) -> int:
    """Output elements times the accumulation depth."""
    if len(op.inputs) != 2 or min(op.inputs) < 0:
        return 0
    x = graph.tensors[op.inputs[0]]
    o = op.options
    if len(x.shape) < 2:
        return 0
    depth = x.shape[-2] if isinstance(o, BatchMatMulOptions) and o.adj_x else x.shape[-1]
    return graph.tensors[op.outputs[0]].num_elements * depth


_write = write_fields(BatchMatMulOptions)


DEFINITIONS = (
    OpDef("BATCH_MATMUL", "BMM", matmul_lowering.BATCH_MAT_MUL,
          Options("BatchMatMulOptions", _read, _write), cost="fc", macs=macs, blob=False,
          infer_shape=shapes.batch_matmul),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "BATCH_MATMUL": tflm("batch_matmul.cc", "float32", "int8", "int16"),
})

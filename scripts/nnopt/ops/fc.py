"""FULLY_CONNECTED: options, traits, MACs, weight slicing. The lowering is
:mod:`nnopt.lowering.fc`."""

from __future__ import annotations

from typing import Any

import tflite

from ..errors import UnsupportedError
from ..ir import FullyConnectedOptions, Graph, Op, OpOptions
from ..lowering import fc as fc_lowering
from . import shapes
from .base import (
    WEIGHTED_ARGS,
    Kernel,
    OpDef,
    Options,
    Weights,
    activation,
    audited,
    table,
    tflm,
    writer,
)


def _read(op: Any) -> OpOptions:
    o = table(tflite.FullyConnectedOptions, op)
    if o is None:
        return FullyConnectedOptions()
    if o.WeightsFormat() != 0:
        raise UnsupportedError("FULLY_CONNECTED with shuffled weights is not supported",
                               hint="convert the model with the default weights format")
    return FullyConnectedOptions(activation(o), bool(o.KeepNumDims()))


def macs(graph: Graph, op: Op) -> int:
    """Batches times output units times input depth."""
    w = graph.tensors[op.inputs[1]]
    y = graph.tensors[op.outputs[0]]
    if len(w.shape) != 2 or w.shape[1] == 0:
        return 0
    return (y.num_elements // max(w.shape[0], 1)) * w.shape[0] * w.shape[1]


_write = writer(FullyConnectedOptions, lambda o: {"fused_activation_function": o.activation,
                                                  "keep_num_dims": o.keep_num_dims})


DEFINITIONS = (
    OpDef("FULLY_CONNECTED", "FC", fc_lowering.FULLY_CONNECTED,
          Options("FullyConnectedOptions", _read, _write), cost="fc",
          weights=Weights(axis=0, channel_ranges=True, contiguous_slice=True,
                          depth_slices=True), macs=macs,
          infer_shape=shapes.fully_connected, kernels=(
              Kernel(5, "nnrt_fully_connected_s8",
                     ("struct:nnrt_fc_s8_params_t", *WEIGHTED_ARGS), "fc_s8"),
              Kernel(6, "nnrt_fully_connected_f32",
                     ("struct:nnrt_fc_f32_params_t", *WEIGHTED_ARGS), "fc_f32"))),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "FULLY_CONNECTED": tflm("fully_connected.cc", "float32", "int8", "int16"),
})

"""RESHAPE, SQUEEZE, EXPAND_DIMS (aliases), PAD, PADV2, TRANSPOSE, SLICE, STRIDED_SLICE,
CONCATENATION and BROADCAST_ARGS (no options; folded when both shapes are constants):
options, traits, spatial access. The lowerings are in
:mod:`nnopt.lowering.shape`."""

from __future__ import annotations

from typing import Any

import numpy as np
import tflite

from ..arith import Axis
from ..errors import UnsupportedError
from ..ir import (
    ConcatOptions,
    Graph,
    Op,
    OpOptions,
    SqueezeOptions,
    StridedSliceOptions,
)
from ..lowering import shape as shape_lowering
from ..lowering.shape import contiguous_slice
from . import shapes
from .base import (
    ANY,
    POINT,
    Kernel,
    OpDef,
    Options,
    OutputViews,
    Spatial,
    activation,
    audited,
    table,
    tflm,
    write_fields,
    writer,
)


def _read_squeeze(op: Any) -> OpOptions:
    o = table(tflite.SqueezeOptions, op)
    if o is None or o.SqueezeDimsLength() == 0:
        return SqueezeOptions()
    return SqueezeOptions(tuple(int(d) for d in o.SqueezeDimsAsNumpy()))


def _read_strided_slice(op: Any) -> OpOptions:
    o = table(tflite.StridedSliceOptions, op)
    if o is None:
        return StridedSliceOptions()
    return StridedSliceOptions(o.BeginMask(), o.EndMask(), o.EllipsisMask(), o.NewAxisMask(),
                               o.ShrinkAxisMask(), bool(o.Offset()))


def _read_concat(op: Any) -> OpOptions:
    o = table(tflite.ConcatenationOptions, op)
    return ConcatOptions(o.Axis(), activation(o))


def concat_spatial(graph: Graph, op: Op) -> Spatial | None:
    """A concatenation along channels reads the same pixels it writes."""
    o = op.options
    if not isinstance(o, ConcatOptions):
        return None
    y = graph.tensors[op.outputs[0]]
    _, oh, ow, _ = y.shape
    acts = graph.activations(op)
    axis = o.axis + 4 if o.axis < 0 else o.axis
    if axis != 3 or len(acts) != len(op.inputs):
        return None
    if any(graph.tensors[t].shape[:3] != y.shape[:3] for t in acts):
        return None
    return Spatial(op, POINT, tuple(op.inputs), y.index, Axis(oh, oh, 1, 1, 0),
                   Axis(ow, ow, 1, 1, 0), 0)


def slice_views(graph: Graph, op: Op) -> OutputViews | None:
    """A SLICE / STRIDED_SLICE whose output is one contiguous byte range of its input
    (unit stride, every axis outside the innermost run of extent 1 or taken whole):
    a view at that range. The begin/end/mask resolution is the lowering's."""

    try:
        offset = contiguous_slice(graph, op)
    except UnsupportedError:
        return None
    return None if offset is None else OutputViews(op.inputs[0], ((op.outputs[0], offset),))


def _same_values(x: np.ndarray, *shape: np.ndarray) -> np.ndarray:
    """RESHAPE's fold: the input's values (the caller gives them the output's shape).
    Not EXPAND_DIMS': TFLM's evaluates int8, int16 and float32 only."""
    return x


_write_squeeze = writer(SqueezeOptions, lambda o: {"squeeze_dims": tuple(o.squeeze_dims)})
_write_strided_slice = write_fields(StridedSliceOptions)
_write_concat = writer(ConcatOptions, lambda o: {"axis": o.axis,
                                                 "fused_activation_function": o.activation})


# an alias op's copy where the planner could not alias it: input, output, bytes
COPY_X8 = (Kernel(14, "nnrt_copy_x8", ("tensor", "tensor", "u32"), "copy_x8"),)
PAD_X8 = (Kernel(37, "nnrt_pad_x8", ("struct:nnrt_pad_params_t", "tensor", "tensor", "tensor"),
                 "pad_x8"),)  # input, pad value (one element), output
# TRANSPOSE, SLICE, STRIDED_SLICE: a strided view copied out densely
STRIDED_COPY_X8 = (Kernel(38, "nnrt_strided_copy_x8", ("struct:nnrt_strided_copy_params_t",
                                                        "tensor", "tensor"), "strided_copy_x8"),)

DEFINITIONS = (
    OpDef("RESHAPE", "RESHAPE", shape_lowering.COPY, Options("ReshapeOptions"), alias=True,
          fold=_same_values, infer_shape=shapes.reshape, kernels=COPY_X8),
    OpDef("SQUEEZE", "SQUEEZE", shape_lowering.COPY,
          Options("SqueezeOptions", _read_squeeze, _write_squeeze), alias=True,
          infer_shape=shapes.squeeze, kernels=COPY_X8),
    OpDef("EXPAND_DIMS", "EXPAND", shape_lowering.COPY, Options("ExpandDimsOptions"), alias=True,
          infer_shape=shapes.expand_dims, kernels=COPY_X8),
    OpDef("PAD", "PAD", shape_lowering.PAD, Options("PadOptions"), pad=True,
          infer_shape=shapes.pad, kernels=PAD_X8),
    OpDef("PADV2", "PADV2", shape_lowering.PAD, Options("PadV2Options"), pad=True,
          infer_shape=shapes.pad, kernels=PAD_X8),
    OpDef("TRANSPOSE", "TRANSPOSE", shape_lowering.TRANSPOSE, Options("TransposeOptions"),
          transpose=True, infer_shape=shapes.transpose, kernels=STRIDED_COPY_X8),
    OpDef("SLICE", "SLICE", shape_lowering.SLICE, Options("SliceOptions"),
          output_views=slice_views, kernels=STRIDED_COPY_X8),
    OpDef("STRIDED_SLICE", "SSLICE", shape_lowering.STRIDED_SLICE,
          Options("StridedSliceOptions", _read_strided_slice, _write_strided_slice),
          output_views=slice_views, kernels=STRIDED_COPY_X8),
    OpDef("CONCATENATION", "CONCAT", shape_lowering.CONCAT,
          Options("ConcatenationOptions", _read_concat, _write_concat), concat=True,
          spatial=concat_spatial, infer_shape=shapes.concatenation,
          kernels=(Kernel(36, "nnrt_concat_x8", ("struct:nnrt_concat_params_t", "tensors",
                                                 "tensor"), "concat_x8"),)),  # 1..15 inputs
    OpDef("BROADCAST_ARGS", "BARGS", shape_lowering.BROADCAST_ARGS, blob=False,
          fold=shape_lowering.broadcast_args),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "RESHAPE": tflm("reshape.cc", ANY),
    "SQUEEZE": tflm("squeeze.cc", ANY),
    "EXPAND_DIMS": tflm("expand_dims.cc", "float32", "int8", "int16"),
    "PAD": tflm("pad.cc", "float32", "int8", "int16", "int32"),
    "PADV2": tflm("pad.cc", "float32", "int8", "int16", "int32"),
    "TRANSPOSE": tflm("transpose.cc", "float32", "int8"),
    "SLICE": tflm("slice.cc", "float32", "int8", "int16", "int32", "bool"),
    "STRIDED_SLICE": tflm("strided_slice.cc", "float32", "int8", "int16", "int32", "bool"),
    "CONCATENATION": tflm("concatenation.cc", "float32", "int8", "int16", "int32", "int64", "bool"),
    "BROADCAST_ARGS": tflm("broadcast_args.cc", "int32", "int64"),
})

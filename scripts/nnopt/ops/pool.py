"""MAX_POOL_2D, AVERAGE_POOL_2D, L2_POOL_2D and MEAN: options, traits, spatial access.

The lowerings are in :mod:`nnopt.lowering.pool`."""

from __future__ import annotations

from typing import Any

import tflite

from ..arith import Axis, window_axis
from ..ir import Graph, Op, OpOptions, PoolOptions, ReducerOptions
from ..lowering import pool as pool_lowering
from . import shapes
from .base import (
    PADDING,
    REDUCE,
    WINDOW,
    BandForm,
    Kernel,
    OpDef,
    Options,
    Spatial,
    activation,
    audited,
    table,
    tflm,
    write_reducer,
    writer,
)


def _read_pool(op: Any) -> OpOptions:
    o = table(tflite.Pool2DOptions, op)
    return PoolOptions(PADDING[o.Padding()], o.StrideH(), o.StrideW(),
                       o.FilterHeight(), o.FilterWidth(), activation(o))


def read_reducer(op: Any) -> OpOptions:
    o = table(tflite.ReducerOptions, op)
    return ReducerOptions(bool(o.KeepDims()) if o is not None else False)


def spatial(graph: Graph, op: Op) -> Spatial | None:
    o = op.options
    if not isinstance(o, PoolOptions):
        return None
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    _, h, wd, c = x.shape
    _, oh, ow, oc = y.shape
    e = o.explicit_padding
    ah = window_axis(h, o.filter_h, o.stride_h, 1, o.padding, (e[0], e[1]) if e else None)
    aw = window_axis(wd, o.filter_w, o.stride_w, 1, o.padding, (e[2], e[3]) if e else None)
    if (ah.out, aw.out) != (oh, ow) or c != oc:
        return None
    return Spatial(op, WINDOW, (x.index,), y.index, ah, aw, 0)


def global_pool_band(graph: Graph, op: Op) -> BandForm | None:
    """An average pool whose one output pixel's window holds every input pixel (a
    global pool, e.g. feeding a squeeze-excitation block): a reduction over the input's
    rows, summed band by band (the kernel carries the per-channel partial sums in the
    window's [y][x] order), the mean taken after the last band."""
    o = op.options
    if not isinstance(o, PoolOptions):
        return None
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    _, h, wd, _ = x.shape
    if y.shape[1:3] != (1, 1) or o.filter_h < h or o.filter_w < wd or o.padding != "VALID":
        return None
    return BandForm(REDUCE, (x.index,), (), Axis(h, h, 1, 1, 0))


def mean_band(graph: Graph, op: Op) -> BandForm | None:
    """A MEAN over the rows and columns of a batch-1 NHWC map, its dimensions kept (a
    squeeze-excitation block's global pool): a reduction over bands of input rows, as
    :func:`global_pool_band`."""
    if len(op.inputs) != 2 or op.inputs[1] < 0 or not graph.tensors[op.inputs[1]].is_constant:
        return None
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if len(x.shape) != 4 or y.shape != (1, 1, 1, x.shape[3]):
        return None
    axes = {int(a) % 4 for a in graph.tensors[op.inputs[1]].array().reshape(-1)}
    if axes != {1, 2}:
        return None
    return BandForm(REDUCE, (x.index,), (), Axis(x.shape[1], x.shape[1], 1, 1, 0))


_write_pool = writer(PoolOptions, lambda o: {
    "padding": o.padding, "stride_h": o.stride_h, "stride_w": o.stride_w,
    "filter_height": o.filter_h, "filter_width": o.filter_w,
    "fused_activation_function": o.activation})


_S8 = ("struct:nnrt_pool_s8_params_t", "tensor", "tensor")
_F32 = ("struct:nnrt_pool_f32_params_t", "tensor", "tensor")

DEFINITIONS = (
    OpDef("MAX_POOL_2D", "MAXPOOL", pool_lowering.POOL,
          Options("Pool2DOptions", _read_pool, _write_pool), window="pool",
          pad_consumer="below_floor", cost="window_taps", spatial=spatial, infer_shape=shapes.pool,
          kernels=(Kernel(7, "nnrt_maxpool2d_s8", _S8, "pool_s8"),
                   Kernel(9, "nnrt_maxpool2d_f32", _F32, "pool_f32"),
                   Kernel(50, "nnrt_maxpool2d_s16", _S8, "pool_s16"))),
    OpDef("AVERAGE_POOL_2D", "AVGPOOL", pool_lowering.POOL,
          Options("Pool2DOptions", _read_pool, _write_pool), window="pool", cost="window_taps",
          spatial=spatial, band=global_pool_band, infer_shape=shapes.pool,
          kernels=(Kernel(8, "nnrt_avgpool2d_s8", _S8, "pool_s8"),
                   Kernel(10, "nnrt_avgpool2d_f32", _F32, "pool_f32"),
                   Kernel(51, "nnrt_avgpool2d_s16", _S8, "pool_s16"))),
    # float32 only (TFLM's one kernel); run whole (no window trait: no views, tiles
    # or row-by-row overlap), not carried by the model blob
    OpDef("L2_POOL_2D", "L2POOL", pool_lowering.POOL,
          Options("Pool2DOptions", _read_pool, _write_pool), cost="window_taps", blob=False),
    OpDef("MEAN", "MEAN", pool_lowering.MEAN,
          Options("ReducerOptions", read_reducer, write_reducer), cost="reduce_taps",
          infer_shape=shapes.reduce, band=mean_band,
          kernels=(Kernel(25, "nnrt_mean_s8", ("struct:nnrt_mean_s8_params_t", "tensor",
                                               "tensor"), "mean_s8"),
                   Kernel(26, "nnrt_mean_f32", ("struct:nnrt_mean_geom_t", "tensor", "tensor"),
                          "mean_f32"))),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "MAX_POOL_2D": tflm("pooling.cc", "float32", "int8", "int16"),
    "AVERAGE_POOL_2D": tflm("pooling.cc", "float32", "int8", "int16"),
    "L2_POOL_2D": tflm("l2_pool_2d.cc", "float32"),
    "MEAN": tflm("reduce.cc", "float32", "int8", "int16"),
})

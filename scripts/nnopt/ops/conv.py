"""CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV: options, traits, spatial access, MACs,
weight slicing.

The lowerings are :mod:`nnopt.lowering.conv` and :mod:`nnopt.lowering.transpose_conv`."""

from __future__ import annotations

from typing import Any

import tflite

from ..arith import window_axis
from ..ir import ConvOptions, Graph, Op, OpOptions, TransposeConvOptions
from ..lowering import conv as conv_lowering
from ..lowering import transpose_conv as transpose_conv_lowering
from ..lowering.transpose_conv import transpose_conv_padding
from . import shapes
from .base import (
    PADDING,
    ROWS,
    WEIGHTED_ARGS,
    WINDOW,
    BandForm,
    Kernel,
    OpDef,
    Options,
    ScatterRows,
    Spatial,
    Weights,
    activation,
    audited,
    table,
    tflm,
    writer,
)


def _read_conv(op: Any) -> OpOptions:
    o = table(tflite.Conv2DOptions, op)
    return ConvOptions(PADDING[o.Padding()], o.StrideH(), o.StrideW(),
                       o.DilationHFactor(), o.DilationWFactor(), activation(o))


def _read_depthwise(op: Any) -> OpOptions:
    o = table(tflite.DepthwiseConv2DOptions, op)
    return ConvOptions(PADDING[o.Padding()], o.StrideH(), o.StrideW(),
                       o.DilationHFactor(), o.DilationWFactor(), activation(o),
                       o.DepthMultiplier())


def _read_transpose_conv(op: Any) -> OpOptions:
    o = table(tflite.TransposeConvOptions, op)
    if o is None:
        return TransposeConvOptions("SAME", 1, 1)
    return TransposeConvOptions(PADDING[o.Padding()], o.StrideH(), o.StrideW(), activation(o))


def _reaching_taps(size: int, filt: int, stride: int, pad: int, out: int) -> int:
    """(input index, filter tap) pairs of one axis that land inside the output."""
    return sum(1 for i in range(size) for k in range(filt) if 0 <= i * stride - pad + k < out)


def transpose_conv_macs(graph: Graph, op: Op) -> int:
    """Multiply-accumulates that reach the output (TFLM's scatter drops the rest)."""
    if (len(op.inputs) < 3 or min(op.inputs[1:3]) < 0
            or not isinstance(op.options, TransposeConvOptions)):
        return 0
    w, x = graph.tensors[op.inputs[1]], graph.tensors[op.inputs[2]]
    y = graph.tensors[op.outputs[0]]
    if len(w.shape) != 4 or len(x.shape) != 4 or len(y.shape) != 4:
        return 0
    o = op.options
    top, left = transpose_conv_padding(graph, op)
    rows = _reaching_taps(x.shape[1], w.shape[1], o.stride_h, top, y.shape[1])
    cols = _reaching_taps(x.shape[2], w.shape[2], o.stride_w, left, y.shape[2])
    return x.shape[0] * rows * cols * x.shape[3] * w.shape[0]


def _depth(graph: Graph, op: Op) -> int:
    """Filter values per output value and tap: the filter depth (1 for depthwise)."""
    w = graph.tensors[op.inputs[1]]
    return 1 if op.opcode == "DEPTHWISE_CONV_2D" else w.shape[3]


def spatial(graph: Graph, op: Op) -> Spatial | None:
    """Output rows [a, b) read input rows ``window_axis(...).span(a, b)`` (explicit
    padding from PAD folding included); None with a fused pool."""
    o = op.options
    acts = graph.activations(op)
    if (not isinstance(o, ConvOptions) or o.fused_max_pool is not None or len(acts) != 1
            or op.inputs[0] != acts[0]):
        return None
    x, w, y = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]], graph.tensors[
        op.outputs[0]]
    _, h, wd, _ = x.shape
    _, oh, ow, oc = y.shape
    kh, kw = w.shape[1], w.shape[2]
    e = o.explicit_padding
    ah = window_axis(h, kh, o.stride_h, o.dilation_h, o.padding, (e[0], e[1]) if e else None)
    aw = window_axis(wd, kw, o.stride_w, o.dilation_w, o.padding, (e[2], e[3]) if e else None)
    if (ah.out, aw.out) != (oh, ow):
        return None
    return Spatial(op, WINDOW, (x.index,), y.index, ah, aw, oc * kh * kw * _depth(graph, op))


def transpose_conv_band(graph: Graph, op: Op) -> BandForm | None:
    """Output rows [a, b) of a transposed convolution gather from the input rows whose
    taps reach them (TFLM's scatter, each output summed in input-row order): the
    kernel runs on that input band with the band's leading padding."""
    if (len(op.inputs) < 3 or min(op.inputs[1:3]) < 0
            or not isinstance(op.options, TransposeConvOptions)):
        return None
    w, x = graph.tensors[op.inputs[1]], graph.tensors[op.inputs[2]]
    top, _ = transpose_conv_padding(graph, op)
    return BandForm(ROWS, (x.index,), (), ScatterRows(x.shape[1], w.shape[1],
                                                      op.options.stride_h, top))


def macs(graph: Graph, op: Op, *, declared_padding: bool = False) -> int:
    """Output values (before a fused pool) times filter taps times filter depth;
    ``declared_padding``: the output extent from the op's declared padding over its
    input, ignoring a padding PAD folding made explicit (the swap cost model's
    estimate, which its placements are calibrated with)."""
    x, w, y = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]], graph.tensors[
        op.outputs[0]]
    if len(x.shape) != 4 or len(w.shape) != 4 or len(y.shape) != 4:
        return 0
    pixels = y.num_elements // max(y.shape[-1], 1)
    o = op.options
    if isinstance(o, ConvOptions) and (o.fused_max_pool is not None or declared_padding):
        ah = window_axis(x.shape[1], w.shape[1], o.stride_h, o.dilation_h, o.padding, None)
        aw = window_axis(x.shape[2], w.shape[2], o.stride_w, o.dilation_w, o.padding, None)
        pixels = ah.out * aw.out * y.shape[0]
    return pixels * y.shape[-1] * w.shape[1] * w.shape[2] * _depth(graph, op)


def _conv_fields(o: ConvOptions) -> dict[str, Any]:
    if o.fused_max_pool is not None:
        raise ValueError("fused_max_pool is an nnopt fusion, not a TFLite option; "
                         "build CONV_2D followed by MAX_POOL_2D instead")
    return {"padding": o.padding, "stride_h": o.stride_h, "stride_w": o.stride_w,
            "dilation_h_factor": o.dilation_h, "dilation_w_factor": o.dilation_w,
            "fused_activation_function": o.activation}


_write_conv = writer(ConvOptions, _conv_fields)
_write_depthwise = writer(ConvOptions, lambda o: {**_conv_fields(o),
                                                  "depth_multiplier": o.depth_multiplier})
_write_transpose_conv = writer(TransposeConvOptions, lambda o: {
    "padding": o.padding, "stride_h": o.stride_h, "stride_w": o.stride_w,
    "fused_activation_function": o.activation})


_S8 = "struct:nnrt_conv_s8_params_t"
_F32 = "struct:nnrt_conv_f32_params_t"
# the scratch-free variants (_opt_, _m1_) compute what the reference kernel computes
# with the same arguments (nnrt/kernels/conv.h: nnrt_depthwise_conv2d_s8 runs the same
# fast path itself); the fast int8 convolutions take the op's scratch buffer last
CONV_KERNELS = (
    Kernel(1, "nnrt_conv2d_s8", (_S8, *WEIGHTED_ARGS), "conv_s8", same=("nnrt_conv2d_opt_s8",)),
    Kernel(3, "nnrt_conv2d_f32", (_F32, *WEIGHTED_ARGS), "conv_f32"),
    Kernel(34, "nnrt_conv2d_1x1_s8", (_S8, *WEIGHTED_ARGS, "tensor"), "conv_s8"),
    Kernel(35, "nnrt_conv2d_im2col_s8", (_S8, *WEIGHTED_ARGS, "tensor"), "conv_s8"),
)
DEPTHWISE_KERNELS = (
    Kernel(2, "nnrt_depthwise_conv2d_s8", (_S8, *WEIGHTED_ARGS), "conv_s8",
           same=("nnrt_depthwise_conv2d_m1_s8", "nnrt_depthwise_conv2d_opt_s8")),
    Kernel(4, "nnrt_depthwise_conv2d_f32", (_F32, *WEIGHTED_ARGS), "conv_f32"),
)


DEFINITIONS = (
    OpDef("CONV_2D", "CONV", conv_lowering.CONV, Options("Conv2DOptions", _read_conv, _write_conv),
          window="conv", absorbs_max_pool=True, pad_consumer="zero_point", cost="gemm",
          weights=Weights(axis=0, channel_ranges=True, contiguous_slice=True), spatial=spatial,
          macs=macs, infer_shape=shapes.conv, kernels=CONV_KERNELS),
    OpDef("DEPTHWISE_CONV_2D", "DWCONV", conv_lowering.CONV,
          Options("DepthwiseConv2DOptions", _read_depthwise, _write_depthwise), window="depthwise",
          absorbs_max_pool=True, pad_consumer="zero_point", cost="depthwise",
          weights=Weights(axis=-1, channel_ranges=False, contiguous_slice=False), spatial=spatial,
          macs=macs, infer_shape=shapes.depthwise, kernels=DEPTHWISE_KERNELS),
    # inputs: output shape, filter [OC,KH,KW,IC], input, optional bias. Its weights
    # are input 1 like a conv's, but the kernel computes every output channel of a
    # pixel in one pass, so swap keeps them whole in internal flash (weights=None);
    # the model blob has no entry for it. Cost: per MAC, the dot-product kernels'.
    OpDef("TRANSPOSE_CONV", "TCONV", transpose_conv_lowering.TRANSPOSE_CONV,
          Options("TransposeConvOptions", _read_transpose_conv, _write_transpose_conv), cost="fc",
          blob=False, macs=transpose_conv_macs, band=transpose_conv_band),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "CONV_2D": tflm("conv.cc", "float32", "int8", "int16"),
    "DEPTHWISE_CONV_2D": tflm("depthwise_conv.cc", "float32", "int8", "int16"),
    "TRANSPOSE_CONV": tflm("transpose_conv.cc", "float32", "int8", "int16"),
})

"""TRANSPOSE_CONV -> ``nnrt_transpose_conv_s8`` / ``_s16`` / ``_f32``
(``nnrt/kernels/conv.h``).

Supported (bit-exact with TFLM's reference TransposeConv): inputs [output shape,
filter [OC,KH,KW,IC], input [N,H,W,IC], optional bias [OC]] and one output
[N,OH,OW,OC]; int8 activations with symmetric int8 weights (per channel along axis 0,
or per tensor) and an optional int32 bias; int16 activations with int8 weights (16x8:
zero points 0, an optional int64 bias, at most 511 input channels); or
float32 throughout; SAME/VALID padding, any stride, the fused activation. Like TFLM,
the output extent is the output tensor's (the shape operand is not read) and the
padding is TFLM's: ``ComputePaddingHeightWidth`` over the output extent (dilation 1),
its leading half only. Refused by name: uint8, hybrid float/int8 models, asymmetric
weights, 16x8 with non-zero zero points or an int16 bias.

TFLM's int8 (16x8) kernel needs an int32 (int64) scratch of the whole output. nnrt's
int8 op runs ``nnrt_transpose_conv_gemm_s8``: the output's stride phases as plain
convolutions on the matrix core, their sub-filters laid out here
(:func:`phase_major_filter`, a constant array the call reads instead of the filter
tensor), one column per input anchor shared by the phases with the same tap counts,
with a scratch of two anchors' columns and a sink of one output pixel
(:func:`gemm_scratch_bytes`, the rule of its ``*_get_buffer_size()``); a filter
smaller than the stride, or a plan that wants no scratch at the op, gets the gather
kernel ``nnrt_transpose_conv_s8`` (same results, no scratch). The 16x8 and float32
kernels gather, without scratch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..arith import (
    activation_range_float,
    activation_range_int8,
    activation_range_int16,
    out_size_and_padding,
)
from ..cdefs import DType
from ..ir import Graph, Op, Tensor, TransposeConvOptions
from .base import EmitContext, LoweringBase, RowBand
from .call import Arg, Body, Raw
from .common import c_call, c_params, check_activation, per_tensor_quant, refuse, tensor_desc
from .conv_requant import weight_requant

_SUPPORTED = ("int8 input and output with symmetric int8 weights [OC,KH,KW,IC] (per "
              "channel on axis 0 or per tensor) and an optional int32 bias; int16 input "
              "and output (zero points 0) with int8 weights and an optional int64 bias; "
              " or float32 input, weights, bias and output; [N,H,W,C] tensors")



def transpose_conv_padding(graph: Graph, op: Op) -> tuple[int, int]:
    """TFLM's (pad_top, pad_left) of a TRANSPOSE_CONV: the leading padding of a
    convolution over the OUTPUT extent with its filter and stride (dilation 1)."""
    o = op.options
    assert isinstance(o, TransposeConvOptions)
    w, y = graph.tensors[op.inputs[1]], graph.tensors[op.outputs[0]]
    _, top = out_size_and_padding(o.padding, y.shape[1], w.shape[1], o.stride_h, 1)
    _, left = out_size_and_padding(o.padding, y.shape[2], w.shape[2], o.stride_w, 1)
    return top, left


@dataclass(frozen=True)
class _Parts:
    x: Tensor
    w: Tensor
    bias: Tensor | None
    y: Tensor
    options: TransposeConvOptions
    kind: str  # "s8", "s16" (16x8) or "f32"


def _parts(graph: Graph, op: Op) -> _Parts:
    o = op.options
    if not isinstance(o, TransposeConvOptions):
        raise refuse(op, "missing TransposeConvOptions", _SUPPORTED)
    if len(op.inputs) not in (3, 4) or min(op.inputs[1:3]) < 0 or len(op.outputs) != 1:
        raise refuse(op, "expects inputs (output shape, filter, input, optional bias) and "
                     "1 output", _SUPPORTED)
    w, x = graph.tensors[op.inputs[1]], graph.tensors[op.inputs[2]]
    bias = (graph.tensors[op.inputs[3]] if len(op.inputs) == 4 and op.inputs[3] >= 0
            else None)
    y = graph.tensors[op.outputs[0]]
    for t in (x, w, y):
        if len(t.shape) != 4 or min(t.shape) < 1:
            raise refuse(op, f"{tensor_desc(t)} is not 4-D", _SUPPORTED)
    if x.shape[0] != y.shape[0] or w.shape[3] != x.shape[3] or w.shape[0] != y.shape[3]:
        raise refuse(op, f"input {list(x.shape)}, filter {list(w.shape)} and output "
                     f"{list(y.shape)} do not match (filter [OC,KH,KW,IC])", _SUPPORTED)
    if o.padding not in ("SAME", "VALID") or min(o.stride_h, o.stride_w) < 1:
        raise refuse(op, f"padding {o.padding}, strides {o.stride_h}x{o.stride_w}", _SUPPORTED)
    check_activation(op, o.activation)
    if x.dtype == DType.INT8 and w.dtype == DType.INT8 and y.dtype == DType.INT8:
        kind = "s8"
        if bias is not None and bias.dtype != DType.INT32:
            raise refuse(op, f"bias {tensor_desc(bias)} is not int32", _SUPPORTED)
    elif x.dtype == DType.INT16 and w.dtype == DType.INT8 and y.dtype == DType.INT16:
        kind = "s16"
        if bias is not None and bias.dtype != DType.INT64:
            raise refuse(op, f"bias {tensor_desc(bias)} is not int64", _SUPPORTED)
        for t in (x, y):
            if per_tensor_quant(op, t)[1] != 0:
                raise refuse(op, f"{tensor_desc(t)} has a non-zero zero point", _SUPPORTED)
        if x.shape[3] > 511:
            raise refuse(op, f"{tensor_desc(x)} has more than 511 channels", _SUPPORTED)
    elif x.dtype == w.dtype == y.dtype == DType.FLOAT32:
        kind = "f32"
        if bias is not None and bias.dtype != DType.FLOAT32:
            raise refuse(op, f"bias {tensor_desc(bias)} is not float32", _SUPPORTED)
    else:
        raise refuse(op, f"input {tensor_desc(x)}, filter {tensor_desc(w)}, output "
                     f"{tensor_desc(y)}", _SUPPORTED)
    if bias is not None and bias.num_elements != y.shape[3]:
        raise refuse(op, f"bias {tensor_desc(bias)} does not have {y.shape[3]} elements",
                     _SUPPORTED)
    if kind != "f32":
        _, _, shifts = weight_requant(op, x, w, y, y.shape[3], 0)
        if kind == "s16" and max(shifts) > 7:
            raise refuse(op, f"a requantisation shift of {max(shifts)} (TFLM's 16x8 "
                         "arithmetic takes at most 7)", _SUPPORTED)
    return _Parts(x, w, bias, y, o, kind)


def padding(graph: Graph, op: Op) -> tuple[int, int]:
    """TFLM's (pad_top, pad_left) of the op (its definition's rule), after the checks."""
    _parts(graph, op)
    return transpose_conv_padding(graph, op)


def gemm_scratch_bytes(w: Tensor, o: TransposeConvOptions) -> int:
    """``nnrt_transpose_conv_gemm_s8_get_buffer_size``: 16 * ceil(K / 4) (two anchors'
    columns) plus OC rounded up to 4 (the sink of pixels the padding crops),
    K = ceil(KH / stride_h) * ceil(KW / stride_w) * IC; 0 when the filter is smaller
    than the stride on an axis (the gather kernel runs)."""
    oc, kh, kw, ic = w.shape
    if kh < o.stride_h or kw < o.stride_w:
        return 0
    k = -(-kh // o.stride_h) * -(-kw // o.stride_w) * ic
    return 16 * ((k + 3) // 4) + (oc + 3) // 4 * 4


def phase_major_filter(w: np.ndarray, stride_h: int, stride_w: int) -> np.ndarray:
    """The filter ``[OC,KH,KW,IC]`` as ``nnrt_transpose_conv_gemm_s8`` reads it: for each
    stride phase (ry, rx) in row-major order its sub-filter ``w[:, ry::sh, rx::sw, :]``
    (``[OC,MH,MW,IC]``), concatenated: the same values, as many bytes."""
    return np.concatenate([w[:, ry::stride_h, rx::stride_w, :].reshape(-1)
                           for ry in range(stride_h) for rx in range(stride_w)])


class TransposeConvLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/conv.h",)
    dtypes: Sequence[str] = ("int8", "int16", "float32")  # int16: 16x8, int8 weights

    def check(self, graph: Graph, op: Op) -> None:
        _parts(graph, op)

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        p = _parts(graph, op)
        if p.kind != "s8" or getattr(op.options, "scratch_free", False):
            return 0
        return gemm_scratch_bytes(p.w, p.options)

    def emit(self, ctx: EmitContext) -> Body:
        return self._emit(ctx, None)

    def emit_band(self, ctx: EmitContext, band: RowBand) -> Body:
        """The call on one row band (the row-range form of ``ops.conv``): output rows
        ``band.out_rows`` gathered from input rows ``band.in_rows``, the padding of the
        whole op moved to the band: ``a + pad_top - lo * stride`` (each output value
        still sums its taps in input-row order, TFLM's)."""
        return self._emit(ctx, band)

    def _emit(self, ctx: EmitContext, band: RowBand | None) -> Body:
        p = _parts(ctx.graph, ctx.op)
        x, w, y, o = p.x, p.w, p.y, p.options
        if band is None:
            top, left = padding(ctx.graph, ctx.op)
        else:
            _, top = out_size_and_padding(o.padding, band.out_h, w.shape[1], o.stride_h, 1)
            _, left = out_size_and_padding(o.padding, y.shape[2], w.shape[2], o.stride_w, 1)
            top = band.out_rows[0] + top - band.in_rows[0] * o.stride_h
        geom = {"batches": x.shape[0], "input_h": x.shape[1], "input_w": x.shape[2],
                "input_c": x.shape[3], "output_h": y.shape[1], "output_w": y.shape[2],
                "output_c": y.shape[3], "filter_h": w.shape[1], "filter_w": w.shape[2],
                "stride_h": o.stride_h, "stride_w": o.stride_w, "pad_top": top,
                "pad_left": left}
        bias: Arg | str = ctx.ptr(p.bias.index) if p.bias is not None else "NULL"
        gemm = p.kind == "s8" and self.scratch_bytes(ctx.graph, ctx.op) > 0
        # the matrix core reads the phase-major copy of the filter, never the tensor
        filt: Arg | str = (ctx.const_array("phased", phase_major_filter(
            w.array().astype(np.int8), o.stride_h, o.stride_w)) if gemm
            else ctx.ptr(w.index))
        args: list[Arg | str] = ["&params", ctx.ptr(x.index), filt, bias, ctx.ptr(y.index)]
        if p.kind == "s16":
            s_out, _ = per_tensor_quant(ctx.op, y)
            per_channel, mults, shifts = weight_requant(ctx.op, x, w, y, y.shape[3], 0)
            lo16, hi16 = activation_range_int16(o.activation, s_out, 0)
            return [*c_params("nnrt_transpose_conv_s16_params_t", {
                        "geom": geom, "act_min": lo16, "act_max": hi16,
                        "per_channel": int(per_channel),
                        "multiplier": Raw(ctx.const_array("mult", np.asarray(mults, np.int32))),
                        "shift": Raw(ctx.const_array("shift", np.asarray(shifts, np.int32)))}),
                    *c_call("nnrt_transpose_conv_s16", args)]
        if p.kind == "f32":
            lo, hi = activation_range_float(o.activation)
            return [*c_params("nnrt_transpose_conv_f32_params_t",
                              {"geom": geom, "act_min": lo, "act_max": hi}),
                    *c_call("nnrt_transpose_conv_f32", args)]
        _, z_in = per_tensor_quant(ctx.op, x)
        s_out, z_out = per_tensor_quant(ctx.op, y)
        per_channel, mults, shifts = weight_requant(ctx.op, x, w, y, y.shape[3], 0)
        lo8, hi8 = activation_range_int8(o.activation, s_out, z_out)
        fields = {"geom": geom, "input_offset": -z_in, "output_offset": z_out,
                  "act_min": lo8, "act_max": hi8, "per_channel": int(per_channel),
                  "multiplier": Raw(ctx.const_array("mult", np.asarray(mults, np.int32))),
                  "shift": Raw(ctx.const_array("shift", np.asarray(shifts, np.int32)))}
        if gemm:
            return [*c_params("nnrt_transpose_conv_s8_params_t", fields),
                    *c_call("nnrt_transpose_conv_gemm_s8", [*args, ctx.scratch])]
        return [*c_params("nnrt_transpose_conv_s8_params_t", fields),
                *c_call("nnrt_transpose_conv_s8", args)]


TRANSPOSE_CONV = TransposeConvLowering()

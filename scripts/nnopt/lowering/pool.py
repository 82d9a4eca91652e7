"""Pooling and MEAN -> nnrt/kernels/pool.h.

- MAX_POOL_2D / AVERAGE_POOL_2D, int8, int16 and float32 (TFLM's pooling.cc), SAME/VALID,
  any stride and window, fused activation. Padding and output size as TFLM's
  ``ComputePaddingHeightWidth`` (top/left padding = floor(total / 2)); int8 and int16
  require input and output quantisation to match (TFLM's Prepare refuses otherwise).
- L2_POOL_2D, float32 only (TFLM registers no quantised L2 pool), same geometry rules.
- MEAN, int8, int16 and float32, over any constant set of axes (negative and repeated axes
  resolved as TFLM does), keep_dims or not. The int8 (and int16: nnrt_mean_s16, at most
  32767 elements per output) multiplier is TFLM's
  ``QuantizeMultiplier(s_in / s_out)`` divided by the element count the way
  ``QuantizedMeanOrSum`` does it (so input and output quantisation may differ).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..cdefs import C_TYPE, KERNEL_SUFFIX, MAX_DIMS, DType
from ..ir import Graph, Op, PoolOptions, ReducerOptions, Tensor
from ..multiplier import quantize_multiplier
from .base import EmitContext, LoweringBase
from .call import AddressOf, Body, Call, KernelCall, KernelCheck, Params, TensorArg
from .common import (
    act_range_f32,
    act_range_q,
    c_call,
    c_params,
    cast,
    check_activation,
    io_args,
    merge_dims,
    padded,
    per_tensor_quant,
    refuse,
    tensor_desc,
)

_POOL_DTYPES = ("int8 or int16 (same quantisation in and out) or float32, 4-D [N,H,W,C]")
_POOL_TYPES = (DType.INT8, DType.INT16, DType.FLOAT32)


def _out_size(padding: str, size: int, filt: int, stride: int) -> int:
    if padding == "SAME":
        return (size + stride - 1) // stride
    return (size + stride - filt) // stride


def _pad(size: int, filt: int, stride: int, out: int) -> int:
    return max(0, (out - 1) * stride + filt - size) // 2


def _geom_valid(g: dict[str, int]) -> bool:
    return (g["filter_h"] - g["pad_top"] > 0 and g["filter_w"] - g["pad_left"] > 0
            and (g["output_h"] - 1) * g["stride_h"] - g["pad_top"] < g["input_h"]
            and (g["output_w"] - 1) * g["stride_w"] - g["pad_left"] < g["input_w"])


POOL_S8_CHECK = KernelCheck(("nnrt_maxpool2d_s8", "nnrt_avgpool2d_s8"), "nnrt_pool_s8_check",
                            "nnrt/kernels/pool.h")
POOL_S16_CHECK = KernelCheck(("nnrt_maxpool2d_s16", "nnrt_avgpool2d_s16"),
                             "nnrt_pool_s16_check", "nnrt/kernels/pool.h")
POOL_F32_CHECK = KernelCheck(("nnrt_maxpool2d_f32", "nnrt_avgpool2d_f32", "nnrt_l2pool2d_f32"),
                             "nnrt_pool_f32_check", "nnrt/kernels/pool.h")


class PoolLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/pool.h",)
    checks: Sequence[KernelCheck] = (POOL_S8_CHECK, POOL_S16_CHECK, POOL_F32_CHECK)
    dtypes: Sequence[str] = ("int8", "int16", "float32")
    dtypes_by_opcode: Mapping[str, Sequence[str]] = {"L2_POOL_2D": ("float32",)}

    def _geometry(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, PoolOptions,
                                                       dict[str, int]]:
        if len(op.inputs) != 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
            raise refuse(op, "expects 1 input and 1 output", "2-D pooling")
        x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        o = op.options
        if not isinstance(o, PoolOptions):
            raise refuse(op, "has no pooling options", "Pool2DOptions")
        for t in (x, y):
            if t.dtype not in _POOL_TYPES or t.dtype != x.dtype \
                    or len(t.shape) != 4:
                raise refuse(op, f"{tensor_desc(t)} is not supported", _POOL_DTYPES)
        if min(o.stride_h, o.stride_w, o.filter_h, o.filter_w) < 1 \
                or o.padding not in ("SAME", "VALID"):
            raise refuse(op, f"window {o.filter_h}x{o.filter_w} stride "
                         f"{o.stride_h}x{o.stride_w} padding {o.padding}",
                         "positive window and strides, SAME or VALID padding")
        n, h, w, c = x.shape
        oh = _out_size(o.padding, h, o.filter_h, o.stride_h)
        ow = _out_size(o.padding, w, o.filter_w, o.stride_w)
        if y.shape != (n, oh, ow, c) or min(n, h, w, c) < 1:
            raise refuse(op, f"output shape {list(y.shape)} does not match the input "
                         f"{list(x.shape)} and the options (expected {[n, oh, ow, c]})",
                         "TFLite's pooling output size")
        geom = {"batches": n, "input_h": h, "input_w": w, "channels": c,
                "output_h": oh, "output_w": ow, "filter_h": o.filter_h,
                "filter_w": o.filter_w, "stride_h": o.stride_h, "stride_w": o.stride_w,
                "pad_top": _pad(h, o.filter_h, o.stride_h, oh),
                "pad_left": _pad(w, o.filter_w, o.stride_w, ow)}
        if not _geom_valid(geom):
            raise refuse(op, "a pooling window lies entirely in the padding",
                         "windows that overlap the input")
        return x, y, o, geom

    def check(self, graph: Graph, op: Op) -> None:
        x, y, o, _ = self._geometry(graph, op)
        check_activation(op, o.activation)
        if op.opcode == "L2_POOL_2D" and x.dtype != DType.FLOAT32:
            raise refuse(op, f"{tensor_desc(x)} is not float32",
                         "float32 L2 pooling (TFLM has no quantised L2_POOL_2D)")
        if x.dtype in (DType.INT8, DType.INT16):
            si, zi = per_tensor_quant(op, x)
            so, zo = per_tensor_quant(op, y)
            if abs(float(np.float32(si) - np.float32(so))) > 1e-6 or zi != zo:
                raise refuse(op, f"input quantisation ({si:g}, {zi}) differs from output "
                             f"({so:g}, {zo})", "pooling with equal input and output "
                             "quantisation (as TFLM)")
            act_range_q(op, o.activation, y)

    @staticmethod
    def function(op: Op, dtype: DType) -> str:
        """The kernel of the op (``nnrt_maxpool2d_s8`` ...), whole or on a sub-view."""
        kind = {"MAX_POOL_2D": "maxpool2d", "L2_POOL_2D": "l2pool2d"}.get(op.opcode,
                                                                       "avgpool2d")
        return f"nnrt_{kind}_{KERNEL_SUFFIX[dtype]}"

    def window_call(self, ctx: EmitContext, geom: dict[str, Any]) -> KernelCall:
        """The call on whole tensors with the geometry ``geom`` (padding as given):
        callers running the op on sub-views change its geometry."""
        op = ctx.op
        o = op.options
        assert isinstance(o, PoolOptions)
        x, y = ctx.graph.tensors[op.inputs[0]], ctx.graph.tensors[op.outputs[0]]
        fields = {"geom": geom, **self._range(op, y)}
        return KernelCall(
            Params(self._param_type(x), fields),
            Call(self.function(op, x.dtype), (AddressOf("params"), TensorArg(x.index),
                                              TensorArg(y.index))),
            C_TYPE[x.dtype])

    def reduce_call(self, ctx: EmitContext) -> tuple[Params, str, str]:
        """A global average pool run over row bands (the reduction form of
        ``ops.pool``): the whole op's parameters, the row-band kernel
        (``nnrt_avgpool2d_rows_*``, pool.h) and the C type of its partial sums."""
        op = ctx.op
        x, y, _, geom = self._geometry(ctx.graph, op)
        if op.opcode != "AVERAGE_POOL_2D" or x.dtype not in (DType.INT8, DType.FLOAT32):
            raise refuse(op, f"{tensor_desc(x)} cannot run in row bands",
                         "int8 or float32 global average pooling")
        acc = "float" if x.dtype == DType.FLOAT32 else "int32_t"
        return (Params(self._param_type(x), {"geom": geom, **self._range(op, y)}),
                f"nnrt_avgpool2d_rows_{KERNEL_SUFFIX[x.dtype]}", acc)

    @staticmethod
    def _param_type(x: Tensor) -> str:
        """int16 takes the int8 struct (with an int16 activation range)."""
        return "nnrt_pool_f32_params_t" if x.dtype == DType.FLOAT32 else "nnrt_pool_s8_params_t"

    @staticmethod
    def _range(op: Op, y: Tensor) -> dict[str, Any]:
        o = op.options
        assert isinstance(o, PoolOptions)
        if y.dtype == DType.FLOAT32:
            flo, fhi = act_range_f32(op, o.activation)
            return {"act_min": flo, "act_max": fhi}
        lo, hi = act_range_q(op, o.activation, y)
        return {"act_min": lo, "act_max": hi}

    def emit(self, ctx: EmitContext) -> Body:
        self.check(ctx.graph, ctx.op)
        x, y, _, geom = self._geometry(ctx.graph, ctx.op)
        fields: dict[str, Any] = {"geom": geom, **self._range(ctx.op, y)}
        ctype = C_TYPE[x.dtype]
        fn = self.function(ctx.op, x.dtype)
        return [*c_params(self._param_type(x), fields),
                *c_call(fn, ["&params", cast(ctx, x.index, ctype, True),
                             cast(ctx, y.index, ctype, False)])]


# ----- MEAN -----

def _merge(dims: list[int], strides: list[int]) -> tuple[list[int], list[int]]:
    """:func:`merge_dims`, one dim of extent 1 (stride 0) when nothing is left."""
    md, ms = merge_dims(dims, strides)
    return (md, ms) if md else ([1], [0])


#: The most elements an int16 MEAN / SUM reduces (``nnrt_mean_s16``): its int32 sum,
#: TFLM's accumulator, stays exact.
INT16_MAX_COUNT = 32767


def check_int16_count(op: Op, x: Tensor, count: int) -> None:
    """Refuse an int16 reduction of more elements than ``nnrt_mean_s16`` sums exactly."""
    if x.dtype == DType.INT16 and count > INT16_MAX_COUNT:
        raise refuse(op, f"{tensor_desc(x)} reduces {count} elements per output",
                     f"int16 reductions of at most {INT16_MAX_COUNT} elements (an exact "
                     "int32 sum)")


def mean_or_sum_params_s8(op: Op, x: Tensor, y: Tensor, count: int, *,
                          compute_sum: bool) -> dict[str, int]:
    """The int8 MEAN kernel's parameters as TFLM's QuantizedMeanOrSum computes them:
    the multiplier of s_in / s_out, for MEAN (not ``compute_sum``) with the division
    by the reduced ``count`` folded in."""
    si, zi = per_tensor_quant(op, x)
    so, zo = per_tensor_quant(op, y)
    mult, shift = quantize_multiplier(si / so)
    if compute_sum:
        if not -31 <= shift <= 31:
            raise refuse(op, f"the rescale factor {si / so:g} is out of range",
                         "SUM rescale factors in [2^-32, 2^31)")
    else:
        k = min(count.bit_length() - 1, 32, 31 + shift)
        mult = (mult << k) // count if k >= 0 else mult
        shift -= max(k, 0)
        if not -31 <= shift <= 31:
            raise refuse(op, f"the rescale factor {si / so:g} / {count} is out of range",
                         "MEAN rescale factors above 2^-31")
    check_int16_count(op, x, count)
    return {"input_zero_point": zi, "output_zero_point": zo, "multiplier": mult,
            "shift": shift, "count": count}

class MeanLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/pool.h",)

    accepted: tuple[DType, ...] = (DType.INT8, DType.INT16, DType.FLOAT32)

    @property
    def dtypes(self) -> Sequence[str]:
        return tuple(d.name.lower() for d in self.accepted)

    def _layout(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any], int]:
        """The input, the output, the reduction geometry (``nnrt_mean_geom_t`` fields)
        and the reduced element count; shared by every reduction over constant axes."""
        if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
            raise refuse(op, "expects an input, an axis tensor and 1 output", op.opcode)
        x, axis_t, y = (graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]],
                        graph.tensors[op.outputs[0]])
        if x.dtype not in self.accepted or y.dtype != x.dtype:
            names = " or ".join(self.dtypes)
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}",
                         f"{op.opcode} of {names} (same dtype in and out)")
        if not axis_t.is_constant or axis_t.dtype != DType.INT32:
            raise refuse(op, f"axis {tensor_desc(axis_t)} must be a constant int32 tensor",
                         "constant int32 axes")
        rank = len(x.shape)
        axes: list[int] = []
        for a in (int(v) for v in axis_t.array().reshape(-1)):
            r = a + rank if a < 0 else a
            if not 0 <= r < rank:
                raise refuse(op, f"axis {a} is out of range for rank {rank}",
                             "axes in [-rank, rank)")
            if r not in axes:
                axes.append(r)
        strides = [math.prod(x.shape[d + 1:]) for d in range(rank)]
        kept = [d for d in range(rank) if d not in axes]
        red = sorted(axes)  # increasing address order: TFLM's float summation order
        od, os_ = _merge([x.shape[d] for d in kept], [strides[d] for d in kept])
        rd, rs = _merge([x.shape[d] for d in red], [strides[d] for d in red])
        if len(od) > MAX_DIMS or len(rd) > MAX_DIMS:
            raise refuse(op, f"{tensor_desc(x)} reduced over {red} needs more than "
                         f"{MAX_DIMS} dimensions after merging", f"at most {MAX_DIMS}")
        count = math.prod(x.shape[d] for d in red)
        if y.num_elements != math.prod(x.shape[d] for d in kept) or x.num_elements == 0:
            raise refuse(op, f"output {tensor_desc(y)} does not match {tensor_desc(x)} "
                         f"reduced over axes {red}", f"non-empty {op.opcode}")
        geom = {"outer_rank": len(od), "outer_dims": padded(od),
                "outer_strides": padded(os_), "reduce_rank": len(rd),
                "reduce_dims": padded(rd), "reduce_strides": padded(rs)}
        return x, y, geom, count

    def _params_s8(self, op: Op, x: Tensor, y: Tensor, count: int) -> dict[str, int]:
        return mean_or_sum_params_s8(op, x, y, count, compute_sum=False)

    def check(self, graph: Graph, op: Op) -> None:
        if not isinstance(op.options, ReducerOptions):
            raise refuse(op, "has no reducer options", "ReducerOptions")
        x, y, _, count = self._layout(graph, op)
        if x.dtype in (DType.INT8, DType.INT16):
            self._params_s8(op, x, y, count)

    def reduce_call(self, ctx: EmitContext) -> tuple[Params, str, str]:
        """A MEAN over rows and columns run over row bands (the reduction form of
        ``ops.pool``): the parameters of ``nnrt_mean_rows_*`` (pool.h; the window of a
        pool geometry holding the whole input), the kernel and the C type of its
        partial sums."""
        op = ctx.op
        x, y, _, count = self._layout(ctx.graph, op)
        if len(x.shape) != 4 or x.shape[0] != 1 or x.dtype not in (DType.INT8,
                                                                   DType.FLOAT32):
            raise refuse(op, f"{tensor_desc(x)} cannot run in row bands",
                         "int8 or float32 MEAN over the rows and columns of [1,H,W,C]")
        _, h, w, c = x.shape
        geom = {"batches": 1, "input_h": h, "input_w": w, "channels": c, "output_h": 1,
                "output_w": 1, "filter_h": h, "filter_w": w, "stride_h": h, "stride_w": w,
                "pad_top": 0, "pad_left": 0}
        if x.dtype == DType.FLOAT32:
            lo, hi = act_range_f32(op, "NONE")
            return (Params("nnrt_pool_f32_params_t", {"geom": geom, "act_min": lo,
                                                      "act_max": hi}),
                    "nnrt_mean_rows_f32", "float")
        q = self._params_s8(op, x, y, count)
        del q["count"]
        return (Params("nnrt_mean_rows_s8_params_t", {"geom": geom, "act_min": -128,
                                                      "act_max": 127, **q}),
                "nnrt_mean_rows_s8", "int32_t")

    def emit(self, ctx: EmitContext) -> Body:
        x, y, geom, count = self._layout(ctx.graph, ctx.op)
        if x.dtype in (DType.INT8, DType.INT16):
            sfx, ctype = KERNEL_SUFFIX[x.dtype], C_TYPE[x.dtype]
            fields = {"geom": geom, **self._params_s8(ctx.op, x, y, count)}
            return [*c_params(f"nnrt_mean_{sfx}_params_t", fields),
                    *c_call(f"nnrt_mean_{sfx}", ["&params", *io_args(ctx, x.index, y.index,
                                                                     ctype)])]
        return [*c_params("nnrt_mean_geom_t", geom, "geom"),
                *c_call("nnrt_mean_f32", ["&geom", *io_args(ctx, x.index, y.index, "float")])]


POOL = PoolLowering()
MEAN = MeanLowering()

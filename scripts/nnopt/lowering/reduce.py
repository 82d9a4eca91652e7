"""REDUCE_MAX, REDUCE_MIN and SUM -> ``nnrt/kernels/reduce.h``.

Supported (bit-exact with TFLM's reference ReduceGeneric, ``reduce_common.cc``): any
constant int32 set of axes (negative and repeated axes resolved as TFLM does), keep_dims
or not, on the geometry MEAN uses (:class:`nnopt.lowering.pool.MeanLowering`):

- REDUCE_MAX / REDUCE_MIN: int8 and float32 (the TFLM kernel takes no other type).
  TFLM compares raw values and requires the int8 input and output quantisation to be
  equal (refused otherwise).
- SUM: float32 (the reduced elements added to 0.0f in increasing address order, TFLM's
  order); int8 as TFLM's QuantizedMeanOrSum with compute_sum (the int32 sum minus
  zp * count, rescaled by s_in / s_out; input and output quantisation may differ), on
  the int8 MEAN kernel; int16 the same on ``nnrt_mean_s16`` (at most 32767 elements
  per output: an exact int32 sum).
- ARG_MAX / ARG_MIN (``arg_min_max.cc``): int8 or float32 input, one constant int32
  axis, int32 output (the only one TFLM's micro kernel writes); the first index wins
  ties (plain ``>`` / ``<``, TFLM's GreaterFn / LessFn).
- CUMSUM (``cumsum.cc``): float32 or int8 along one constant axis, exclusive and
  reverse; int8 with TFLM's rescaling (left shift 20, input multiplier 1/2, an
  accumulator that starts at the rescaled input offset, wrapping in 32 bits). int16 and
  int32 are refused: the installed tflite-micro does not allocate them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..cdefs import KERNEL_SUFFIX, DType
from ..ir import CumsumOptions, Graph, Op, ReducerOptions, Tensor
from ..multiplier import quantize_multiplier
from .base import EmitContext, LoweringBase
from .call import Body
from .common import C_TYPE, c_call, c_params, cast, io_args, per_tensor_quant, refuse, tensor_desc
from .pool import MeanLowering, mean_or_sum_params_s8


class ReduceLowering(MeanLowering):
    headers: Sequence[str] = ("nnrt/kernels/reduce.h",)

    def __init__(self, dtypes: tuple[DType, ...]) -> None:
        self.accepted = dtypes

    def _sum_params_s8(self, op: Op, x: Tensor, y: Tensor, count: int) -> dict[str, int]:
        """int8 SUM: TFLM's QuantizedMeanOrSum with compute_sum (the multiplier of
        s_in / s_out, not divided by the count), run by the int8 MEAN kernel."""
        return mean_or_sum_params_s8(op, x, y, count, compute_sum=True)

    def check(self, graph: Graph, op: Op) -> None:
        if not isinstance(op.options, ReducerOptions):
            raise refuse(op, "has no reducer options", "ReducerOptions")
        x, y, _, count = self._layout(graph, op)
        if x.dtype in (DType.INT8, DType.INT16) and op.opcode == "SUM":
            self._sum_params_s8(op, x, y, count)
        elif x.dtype == DType.INT8:
            qx, qy = per_tensor_quant(op, x), per_tensor_quant(op, y)
            if qx != qy:
                raise refuse(op, f"input {tensor_desc(x)} quantisation {qx} differs from "
                             f"output {tensor_desc(y)} quantisation {qy}",
                             "equal input and output quantisation (TFLM's ReduceMax/Min)")

    def emit(self, ctx: EmitContext) -> Body:
        x, y, geom, count = self._layout(ctx.graph, ctx.op)
        ctype = C_TYPE[x.dtype]
        if x.dtype in (DType.INT8, DType.INT16) and ctx.op.opcode == "SUM":
            sfx = KERNEL_SUFFIX[x.dtype]
            fields = {"geom": geom, **self._sum_params_s8(ctx.op, x, y, count)}
            return [*c_params(f"nnrt_mean_{sfx}_params_t", fields),
                    *c_call(f"nnrt_mean_{sfx}", ["&params", cast(ctx, x.index, ctype, True),
                                                 cast(ctx, y.index, ctype, False)])]
        fn = f"nnrt_{ctx.op.opcode.lower()}_{KERNEL_SUFFIX[x.dtype]}"
        return [*c_params("nnrt_mean_geom_t", geom, "geom"),
                *c_call(fn, ["&geom", cast(ctx, x.index, ctype, True),
                             cast(ctx, y.index, ctype, False)])]



def _input_axis_output(graph: Graph, op: Op, supported: str) -> tuple[Tensor, Tensor, Tensor]:
    """An op of an input and an axis operand, and one output: the three tensors."""
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        raise refuse(op, "expects an input, an axis and 1 output", supported)
    x, axis_t = (graph.tensors[t] for t in op.inputs)
    return x, axis_t, graph.tensors[op.outputs[0]]


def _one_axis(op: Op, axis_t: Tensor, rank: int, supported: str) -> int:
    """The axis operand: one constant int32 in [-rank, rank), as an index in [0, rank)."""
    if not axis_t.is_constant or axis_t.dtype != DType.INT32 or axis_t.num_elements != 1:
        raise refuse(op, f"axis {tensor_desc(axis_t)} is not one constant int32", supported)
    a = int(axis_t.array().reshape(-1)[0])
    axis = a + rank if a < 0 else a
    if not 0 <= axis < rank:
        raise refuse(op, f"axis {a} is out of range for rank {rank}", "axes in [-rank, rank)")
    return axis

class ArgLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/reduce.h",)
    dtypes: Sequence[str] = ("int8->int32", "float32->int32")

    def _layout(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, int]]:
        supported = "int8 or float32 input, a constant int32 axis, an int32 output"
        x, axis_t, y = _input_axis_output(graph, op, supported)
        if x.dtype not in (DType.INT8, DType.FLOAT32) or y.dtype != DType.INT32:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", supported)
        axis = _one_axis(op, axis_t, len(x.shape), supported)
        if x.num_elements == 0 or list(y.shape) != [d for i, d in enumerate(x.shape)
                                                     if i != axis]:
            raise refuse(op, f"output {tensor_desc(y)} is not {tensor_desc(x)} without "
                         f"axis {axis}", "non-empty inputs, the axis removed")
        return x, y, {"outer": math.prod(x.shape[:axis]), "axis_size": x.shape[axis],
                      "inner": math.prod(x.shape[axis + 1:])}

    def check(self, graph: Graph, op: Op) -> None:
        self._layout(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y, fields = self._layout(ctx.graph, ctx.op)
        fn = f"nnrt_{ctx.op.opcode.lower()}_{KERNEL_SUFFIX[x.dtype]}"
        return [*c_params("nnrt_arg_params_t", fields),
                *c_call(fn, ["&params", cast(ctx, x.index, C_TYPE[x.dtype], True),
                             cast(ctx, y.index, "int32_t", False)])]


#: TFLM's kCumSumIntegerShift: int8 CUMSUM's ADD-style headroom.
CUMSUM_LEFT_SHIFT = 20


class CumsumLowering(ArgLowering):
    """CUMSUM (``cumsum.cc``): float32 or int8 (TFLM's rescaling), one constant int32
    axis, exclusive and reverse."""

    dtypes: Sequence[str] = ("int8", "float32")

    def _params_s8(self, op: Op, x: Tensor, y: Tensor) -> dict[str, int]:
        """TFLM's CalculateOpData: input multiplier 1/2, output multiplier
        2 s_in / (2^20 s_out), both QuantizeMultiplierSmallerThanOneExp."""
        si, zi = per_tensor_quant(op, x)
        so, zo = per_tensor_quant(op, y)
        mi, shi = quantize_multiplier(si / (2 * si))
        mo, sho = quantize_multiplier(2 * si / ((1 << CUMSUM_LEFT_SHIFT) * so))
        if not -31 <= sho <= 0:
            raise refuse(op, f"the rescale factor {si / so:g} of {tensor_desc(x)} to "
                         f"{tensor_desc(y)} is out of range",
                         "int8 CUMSUM with input scale / output scale below 2^19")
        return {"left_shift": CUMSUM_LEFT_SHIFT, "input_offset": -zi,
                "input_multiplier": mi, "input_shift": shi, "output_offset": zo,
                "output_multiplier": mo, "output_shift": sho, "act_min": -128,
                "act_max": 127}

    def _geometry(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, int]]:
        supported = ("int8 or float32 input and output of one dtype and shape, a constant "
                     "int32 axis")
        x, axis_t, y = _input_axis_output(graph, op, supported)
        if x.dtype not in (DType.INT8, DType.FLOAT32) or y.dtype != x.dtype \
                or tuple(x.shape) != tuple(y.shape) or not x.shape or x.num_elements == 0:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", supported)
        axis = _one_axis(op, axis_t, len(x.shape), supported)
        o = op.options if isinstance(op.options, CumsumOptions) else CumsumOptions()
        return x, y, {"before": math.prod(x.shape[:axis]), "depth": x.shape[axis],
                      "after": math.prod(x.shape[axis + 1:]),
                      "exclusive": int(o.exclusive), "reverse": int(o.reverse)}

    def check(self, graph: Graph, op: Op) -> None:
        x, y, _ = self._geometry(graph, op)
        if x.dtype == DType.INT8:
            self._params_s8(op, x, y)

    def emit(self, ctx: EmitContext) -> Body:
        x, y, fields = self._geometry(ctx.graph, ctx.op)
        if x.dtype == DType.INT8:
            return [*c_params("nnrt_cumsum_s8_params_t",
                              {"geom": fields, **self._params_s8(ctx.op, x, y)}),
                    *c_call("nnrt_cumsum_s8", ["&params", cast(ctx, x.index, "int8_t", True),
                                               cast(ctx, y.index, "int8_t", False)])]
        return [*c_params("nnrt_cumsum_params_t", fields),
                *c_call("nnrt_cumsum_f32",
                        ["&params", *io_args(ctx, x.index, y.index, "float")])]


ARG = ArgLowering()
CUMSUM = CumsumLowering()
REDUCE = ReduceLowering((DType.INT8, DType.FLOAT32))
SUM = ReduceLowering((DType.INT8, DType.INT16, DType.FLOAT32))

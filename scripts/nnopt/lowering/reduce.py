"""REDUCE_MAX, REDUCE_MIN and SUM -> ``nnrt/kernels/reduce.h``.

Supported (bit-exact with TFLM's reference ReduceGeneric, ``reduce_common.cc``): any
constant int32 set of axes (negative and repeated axes resolved as TFLM does), keep_dims
or not, on the geometry MEAN uses (:class:`nnopt.lowering.pool.MeanLowering`):

- REDUCE_MAX / REDUCE_MIN: int8 and float32 (the TFLM kernel takes no other type).
  TFLM compares raw values and requires the int8 input and output quantisation to be
  equal (refused otherwise).
- SUM: float32 (the reduced elements added to 0.0f in increasing address order, TFLM's
  order). Quantised SUM is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cdefs import DType
from ..ir import Graph, Op, ReducerOptions
from . import EmitContext, register
from .elementwise import C_TYPE, c_call, c_params, cast, per_tensor_quant, refuse, tensor_desc
from .pool import MeanLowering

_SUFFIX = {DType.INT8: "s8", DType.FLOAT32: "f32"}


class ReduceLowering(MeanLowering):
    headers: Sequence[str] = ("nnrt/kernels/reduce.h",)

    def __init__(self, dtypes: tuple[DType, ...]) -> None:
        self.accepted = dtypes

    def check(self, graph: Graph, op: Op) -> None:
        if not isinstance(op.options, ReducerOptions):
            raise refuse(op, "has no reducer options", "ReducerOptions")
        x, y, _, _ = self._layout(graph, op)
        if x.dtype == DType.INT8:
            qx, qy = per_tensor_quant(op, x), per_tensor_quant(op, y)
            if qx != qy:
                raise refuse(op, f"input {tensor_desc(x)} quantisation {qx} differs from "
                             f"output {tensor_desc(y)} quantisation {qy}",
                             "equal input and output quantisation (TFLM's ReduceMax/Min)")

    def emit(self, ctx: EmitContext) -> list[str]:
        x, y, geom, _ = self._layout(ctx.graph, ctx.op)
        ctype = C_TYPE[x.dtype]
        fn = f"nnrt_{ctx.op.opcode.lower()}_{_SUFFIX[x.dtype]}"
        return [*c_params("nnrt_mean_geom_t", geom, "geom"),
                *c_call(fn, ["&geom", cast(ctx, x.index, ctype, True),
                             cast(ctx, y.index, ctype, False)])]


register(("REDUCE_MAX", "REDUCE_MIN"),
         ReduceLowering((DType.INT8, DType.FLOAT32)))
register(("SUM",), ReduceLowering((DType.FLOAT32,)))

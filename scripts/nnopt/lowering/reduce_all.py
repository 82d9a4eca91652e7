"""REDUCE_ALL -> ``nnrt_reduce_all_b8`` (``nnrt/kernels/reduce.h``).

As TFLM's ReduceAll (``reduce_common.cc``'s ReduceGeneric on bool with logical AND,
starting at true): a bool input, a bool output, any constant int32 set of axes
(negative and repeated axes resolved as TFLM does), keep_dims or not, on the reduction
geometry MEAN uses (:class:`nnopt.lowering.pool.MeanLowering`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cdefs import DType
from ..ir import Graph, Op, ReducerOptions
from .base import EmitContext
from .call import Body
from .common import c_call, c_params, cast, refuse
from .pool import MeanLowering


class ReduceAllLowering(MeanLowering):
    headers: Sequence[str] = ("nnrt/kernels/reduce.h",)
    accepted: tuple[DType, ...] = (DType.BOOL,)

    def check(self, graph: Graph, op: Op) -> None:
        if not isinstance(op.options, ReducerOptions):
            raise refuse(op, "has no reducer options", "ReducerOptions")
        self._layout(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y, geom, _ = self._layout(ctx.graph, ctx.op)
        return [*c_params("nnrt_mean_geom_t", geom, "geom"),
                *c_call("nnrt_reduce_all_b8", ["&geom", cast(ctx, x.index, "uint8_t", True),
                                               cast(ctx, y.index, "uint8_t", False)])]


REDUCE_ALL = ReduceAllLowering()

"""DYNAMIC_UPDATE_SLICE -> ``nnrt_dynamic_update_slice_x8`` (``nnrt/kernels/update_slice.h``).

As TFLM's ``dynamic_update_slice.cc`` (XLA's DynamicUpdateSlice): the output is the
operand with the update written over the block at the start indices, one int32 per
operand dimension read at run time (constant or computed), each clamped into
``[0, operand_dim - update_dim]``. Elements are moved, never requantised: operand,
update and output share one dtype (int8, int16, int32 or float32) and, as TFLM's kernel
does, the update's bytes are copied as they are. Rank 1 to NNRT_MAX_DIMS (6); int64
start indices are refused by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cdefs import DTYPE_SIZE, MAX_DIMS, DType
from ..ir import Graph, Op, Tensor
from .base import EmitContext, LoweringBase
from .call import Body, Done, KernelCheck
from .common import c_call, c_params, cast, padded, refuse, tensor_desc

_DTYPES = (DType.INT8, DType.INT16, DType.INT32, DType.FLOAT32)
_SUPPORTED = ("an int8, int16, int32 or float32 operand, an update of its dtype and rank "
              "no larger in any dimension, int32 start indices [rank], rank 1 to "
              f"{MAX_DIMS}, output the operand's shape and dtype")


class DynamicUpdateSliceLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/update_slice.h",)
    checks: Sequence[KernelCheck] = (
        KernelCheck(("nnrt_dynamic_update_slice_x8",), "nnrt_update_slice_check",
                    "nnrt/kernels/update_slice.h"),)
    dtypes: Sequence[str] = ("int8", "int16", "int32", "float32")

    def _fields(self, graph: Graph, op: Op) -> tuple[list[Tensor], dict[str, Any]]:
        if len(op.inputs) != 3 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs",
                         "3 inputs (operand, update, start indices) and 1 output")
        x, u, s = (graph.tensors[t] for t in op.inputs)
        y = graph.tensors[op.outputs[0]]
        if s.dtype != DType.INT32:
            raise refuse(op, f"start indices {tensor_desc(s)} are not int32", _SUPPORTED)
        rank = len(x.shape)
        if x.dtype not in _DTYPES or u.dtype != x.dtype or y.dtype != x.dtype \
                or y.shape != x.shape or len(u.shape) != rank \
                or not 1 <= rank <= MAX_DIMS or tuple(s.shape) != (rank,) \
                or any(a > b for a, b in zip(u.shape, x.shape, strict=True)):
            raise refuse(op, f"{tensor_desc(x)} updated by {tensor_desc(u)} at "
                         f"{tensor_desc(s)} -> {tensor_desc(y)}", _SUPPORTED)
        return [x, u, s, y], {"rank": rank, "elem_size": DTYPE_SIZE[x.dtype],
                              "operand_dims": padded(list(x.shape)),
                              "update_dims": padded(list(u.shape))}

    def check(self, graph: Graph, op: Op) -> None:
        self._fields(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        (x, u, s, y), fields = self._fields(ctx.graph, ctx.op)
        if y.num_elements == 0:
            return [Done("empty output")]
        return [*c_params("nnrt_update_slice_params_t", fields),
                *c_call("nnrt_dynamic_update_slice_x8",
                        ["&params", ctx.ptr(x.index), ctx.ptr(u.index),
                         cast(ctx, s.index, "int32_t", True), ctx.ptr(y.index)])]


DYNAMIC_UPDATE_SLICE = DynamicUpdateSliceLowering()

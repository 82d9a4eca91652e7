"""The one lowering of the unary ops that run a float32 kernel, or on int8 look every
element up in a 256-entry table computed here (ELU, RSQRT, ABS: each gives its kernels
and its table; ABS extends it with int16).

The table is indexed by the input byte read as unsigned; the int8 kernel is
``nnrt_table_lookup_s8`` (``nnrt/kernels/activation.h``) unless the op names its own
(RSQRT's ``nnrt_rsqrt_s8`` also takes the input zero point, to refuse inputs below it
at run time, as TFLM does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..cdefs import DType
from ..ir import Graph, Op, Tensor
from .activation import TABLE_LOOKUP_S8_CHECK, UNARY_F32_CHECK, check_io
from .base import EmitContext, LoweringBase
from .call import Body, KernelCheck
from .common import c_call, io_args, per_tensor_quant

#: An int8 table: (op, input, output) -> the 256 outputs, by input byte as unsigned.
TableFn = Callable[[Op, Tensor, Tensor], np.ndarray]


class TableUnaryLowering(LoweringBase):
    """float32: ``f32_kernel(input, output, n)``; int8 (per tensor):
    ``s8_kernel(table[, input zero point], input, output, n)``."""

    checks: Sequence[KernelCheck] = (UNARY_F32_CHECK, TABLE_LOOKUP_S8_CHECK)
    dtypes: Sequence[str] = ("int8", "float32")

    def __init__(self, f32_kernel: str, table: TableFn, headers: Sequence[str],
                 supported: str, s8_kernel: str = "nnrt_table_lookup_s8",
                 s8_zero_point: bool = False) -> None:
        self.f32_kernel = f32_kernel
        self.table = table
        self.headers = headers
        self.supported = supported
        self.s8_kernel = s8_kernel
        self.s8_zero_point = s8_zero_point  # the input zero point after the table

    def _io(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        return check_io(graph, op, ((DType.INT8, DType.INT8), (DType.FLOAT32, DType.FLOAT32)),
                        self.supported)

    def check(self, graph: Graph, op: Op) -> None:
        x, y = self._io(graph, op)
        if x.dtype == DType.INT8:
            self.table(op, x, y)

    def emit(self, ctx: EmitContext) -> Body:
        x, y = self._io(ctx.graph, ctx.op)
        n = str(x.num_elements)
        if x.dtype == DType.FLOAT32:
            return c_call(self.f32_kernel, [*io_args(ctx, x.index, y.index, "float"), n])
        table = ctx.const_array("table", self.table(ctx.op, x, y))
        zero = [str(per_tensor_quant(ctx.op, x)[1])] if self.s8_zero_point else []
        return c_call(self.s8_kernel,
                      [table, *zero, *io_args(ctx, x.index, y.index, "int8_t"), n])

"""RESIZE_NEAREST_NEIGHBOR -> ``nnrt_resize_nearest_x8`` (``nnrt/kernels/shape.h``).

Supported (bit-exact with TFLM's reference ResizeNearestNeighbor): [N, H, W, C] int8,
int16 or float32 tensors (values are copied, never requantised, as TFLM does), a
constant int32 size operand [new_height, new_width], ``align_corners`` and
``half_pixel_centers``. The source row and column of every output row and column are
TFLM's ``GetNearestNeighbor`` evaluated here in float32 (:func:`nearest_indices`); the
kernel copies pixels through those tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..arith import round_half_away
from ..cdefs import DTYPE_SIZE, DType
from ..ir import Graph, Op, ResizeOptions, Tensor
from . import EmitContext, register
from .call import Body
from .elementwise import Raw, c_call, c_params, refuse, tensor_desc

_SUPPORTED = ("[N,H,W,C] int8, int16 or float32 input and output of the same dtype, a "
              "constant int32 size [height, width]")


def nearest_indices(input_size: int, output_size: int, align_corners: bool,
                    half_pixel_centers: bool) -> list[int]:
    """TFLM's GetNearestNeighbor for every output index, in float32 arithmetic."""
    f32 = np.float32
    if align_corners and output_size > 1:
        scale = f32(input_size - 1) / f32(output_size - 1)
    else:
        scale = f32(input_size) / f32(output_size)
    offset = f32(0.5) if half_pixel_centers else f32(0.0)
    out = []
    for i in range(output_size):
        v = float((f32(i) + offset) * scale)
        j = round_half_away(v) if align_corners else math.floor(v)
        j = min(j, input_size - 1)
        if half_pixel_centers:
            j = max(0, j)
        out.append(j)
    return out


class ResizeNearestLowering:
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)

    def _tensors(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, ResizeOptions]:
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, "expects an input, a size operand and 1 output", _SUPPORTED)
        x, size = (graph.tensors[t] for t in op.inputs)
        y = graph.tensors[op.outputs[0]]
        if x.dtype not in (DType.INT8, DType.INT16, DType.FLOAT32) or y.dtype != x.dtype:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", _SUPPORTED)
        if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0] != y.shape[0] \
                or x.shape[3] != y.shape[3] or min(x.shape) < 1 or min(y.shape) < 1:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)} is not a 4-D resize",
                         _SUPPORTED)
        if not size.is_constant or size.dtype != DType.INT32 or size.num_elements != 2:
            raise refuse(op, f"size operand {tensor_desc(size)} is not a constant int32 "
                         "[height, width]", _SUPPORTED)
        if [int(v) for v in size.array().reshape(-1)] != [y.shape[1], y.shape[2]]:
            raise refuse(op, f"size operand {list(size.array().reshape(-1))} differs from "
                         f"the output shape {list(y.shape)}", _SUPPORTED)
        o = op.options if isinstance(op.options, ResizeOptions) else ResizeOptions()
        return x, y, o

    def check(self, graph: Graph, op: Op) -> None:
        self._tensors(graph, op)

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return 0

    def emit(self, ctx: EmitContext) -> Body:
        x, y, o = self._tensors(ctx.graph, ctx.op)
        rows = nearest_indices(x.shape[1], y.shape[1], o.align_corners, o.half_pixel_centers)
        cols = nearest_indices(x.shape[2], y.shape[2], o.align_corners, o.half_pixel_centers)
        fields = {"batches": x.shape[0], "input_h": x.shape[1], "input_w": x.shape[2],
                  "output_h": y.shape[1], "output_w": y.shape[2],
                  "pixel_bytes": x.shape[3] * DTYPE_SIZE[x.dtype],
                  "rows": Raw(ctx.const_array("rows", np.asarray(rows, dtype=np.int32))),
                  "cols": Raw(ctx.const_array("cols", np.asarray(cols, dtype=np.int32)))}
        return [*c_params("nnrt_resize_params_t", fields),
                *c_call("nnrt_resize_nearest_x8",
                        ["&params", ctx.ptr(x.index), ctx.ptr(y.index)])]


register(("RESIZE_NEAREST_NEIGHBOR",), ResizeNearestLowering())

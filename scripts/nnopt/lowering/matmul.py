"""BATCH_MATMUL -> ``nnrt_batch_matmul_{s8,s16,f32}`` (``nnrt/kernels/matmul.h``).

Supported as TFLM's kernel (``batch_matmul.cc``): int8, int16 (zero points 0) and
float32, lhs, rhs and output of one dtype, ranks 2 to 5, broadcasting batch
dimensions, ``adj_x`` and ``adj_y``. The adjoints and the broadcast become element
strides here, so the kernel reads both operands where they are: TFLM transposes the
rhs (unless adj_y) and the lhs (if adj_x) into persistent buffers first (a constant rhs
once), which changes neither the products nor their order of summation.

int8/int16 requantisation: TFLM's ``GetQuantizedConvolutionMultipler``,
``double(s_lhs) * double(s_rhs) / double(s_out)`` (the product in double: the oracle
build's; a float32 product differs in the 16-bit multiplier of int16 on some scales, a
test pins one), then ``QuantizeMultiplier``; the output range is the whole type (no
fused activation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..cdefs import C_TYPE, DType
from ..ir import BatchMatMulOptions, Graph, Op, Tensor
from ..multiplier import quantize_multiplier
from .base import EmitContext, LoweringBase
from .call import Body
from .common import c_call, c_params, cast, per_tensor_quant, refuse, tensor_desc

_SUPPORTED = ("int8, int16 (zero points 0) or float32 lhs, rhs and output of one dtype, "
              "ranks 2-5, broadcastable batch dimensions")
_DTYPES = (DType.INT8, DType.INT16, DType.FLOAT32)


def _ext(shape: Sequence[int], rank: int) -> list[int]:
    return [1] * (rank - len(shape)) + list(shape)


def _batch_strides(ext: Sequence[int]) -> list[int]:
    """Element strides of the three batch dims of a 5-D shape; 0 where it is 1 (TFLM's
    ``extent``: a broadcast dimension does not advance)."""
    return [0 if ext[d] == 1 else math.prod(ext[d + 1:]) for d in range(3)]


def matmul_shape(graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor, dict[str, Any]]:
    """The operands and the nnrt_matmul_shape_t fields; refuse what TFLM refuses."""
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        raise refuse(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs",
                     "2 inputs and 1 output")
    x, w = (graph.tensors[t] for t in op.inputs)
    y = graph.tensors[op.outputs[0]]
    for t in (x, w, y):
        if t.dtype not in _DTYPES or t.dtype != x.dtype:
            raise refuse(op, f"{tensor_desc(t)} in {x.dtype.name} x {w.dtype.name} -> "
                         f"{y.dtype.name}", _SUPPORTED)
    if not (2 <= len(x.shape) <= 5 and 2 <= len(w.shape) <= 5):
        raise refuse(op, f"ranks {len(x.shape)} and {len(w.shape)}", _SUPPORTED)
    o = op.options if isinstance(op.options, BatchMatMulOptions) else BatchMatMulOptions()
    rank = max(len(x.shape), len(w.shape))
    lx, lw = _ext(x.shape, 5), _ext(w.shape, 5)
    batch = []
    for a, b in zip(lx[:3], lw[:3], strict=True):
        if a != b and a != 1 and b != 1:
            raise refuse(op, f"batch dimensions of {list(x.shape)} and {list(w.shape)} "
                         "do not broadcast", _SUPPORTED)
        batch.append(max(a, b))
    rows, depth = (lx[4], lx[3]) if o.adj_x else (lx[3], lx[4])
    depth_w, cols = (lw[4], lw[3]) if o.adj_y else (lw[3], lw[4])
    if depth != depth_w:
        raise refuse(op, f"{tensor_desc(x)} (adj_x={o.adj_x}) and {tensor_desc(w)} "
                     f"(adj_y={o.adj_y}) have depths {depth} and {depth_w}",
                     "equal accumulation depths")
    want = tuple([*batch, rows, cols][5 - rank:])
    if y.shape != want:
        raise refuse(op, f"output {tensor_desc(y)} is not {list(want)}", _SUPPORTED)
    if min(rows, cols, depth, *batch) < 1:
        raise refuse(op, "an empty operand", "non-empty operands")
    fields: dict[str, Any] = {
        "batch": batch, "lhs_batch_stride": _batch_strides(lx),
        "rhs_batch_stride": _batch_strides(lw), "rows": rows, "cols": cols, "depth": depth,
        "lhs_row_stride": 1 if o.adj_x else depth, "lhs_depth_stride": rows if o.adj_x else 1,
        "rhs_depth_stride": 1 if o.adj_y else cols, "rhs_col_stride": depth if o.adj_y else 1,
    }
    return x, w, y, fields


def quant_fields(op: Op, x: Tensor, w: Tensor, y: Tensor) -> dict[str, Any]:
    sx, zx = per_tensor_quant(op, x) if x.dtype == DType.INT8 else _q16(op, x)
    sw, zw = per_tensor_quant(op, w) if w.dtype == DType.INT8 else _q16(op, w)
    so, zo = per_tensor_quant(op, y) if y.dtype == DType.INT8 else _q16(op, y)
    real = sx * sw / so  # the scales are float32 values; the arithmetic is double
    m, sh = quantize_multiplier(real)
    lo, hi = (-128, 127) if y.dtype == DType.INT8 else (-32768, 32767)
    if (y.dtype == DType.INT8 and sh > 30) or (y.dtype == DType.INT16 and sh > 7):
        raise refuse(op, f"the output rescale factor {real:g} is too large", _SUPPORTED)
    return {"lhs_offset": -zx, "rhs_offset": -zw, "output_multiplier": m,
            "output_shift": sh, "output_offset": zo, "act_min": lo, "act_max": hi}


def _q16(op: Op, t: Tensor) -> tuple[float, int]:
    if t.quant is None or len(t.quant.scale) != 1:
        raise refuse(op, f"{tensor_desc(t)} is not quantised per tensor",
                     "int16 tensors quantised per tensor")
    scale, zp = float(t.quant.scale[0]), int(t.quant.zero_point[0])
    if zp != 0 or not scale > 0.0:
        raise refuse(op, f"{tensor_desc(t)} has scale {scale}, zero point {zp}",
                     "int16 with zero point 0 and a positive scale (TFLM)")
    return scale, zp


class BatchMatMulLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/matmul.h",)
    dtypes: Sequence[str] = ("int8", "int16", "float32")

    def check(self, graph: Graph, op: Op) -> None:
        x, w, y, _ = matmul_shape(graph, op)
        if y.dtype != DType.FLOAT32:
            quant_fields(op, x, w, y)

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return 0  # both operands read in place through strides

    def emit(self, ctx: EmitContext) -> Body:
        x, w, y, shape = matmul_shape(ctx.graph, ctx.op)
        ctype = C_TYPE[y.dtype]
        args = [cast(ctx, x.index, ctype, True), cast(ctx, w.index, ctype, True),
                cast(ctx, y.index, ctype, False)]
        if y.dtype == DType.FLOAT32:
            return [*c_params("nnrt_matmul_shape_t", shape, "shape"),
                    *c_call("nnrt_batch_matmul_f32", ["&shape", *args])]
        fn = "nnrt_batch_matmul_s8" if y.dtype == DType.INT8 else "nnrt_batch_matmul_s16"
        fields = {"shape": shape, **quant_fields(ctx.op, x, w, y)}
        return [*c_params("nnrt_batch_matmul_q_params_t", fields),
                *c_call(fn, ["&params", *args])]


BATCH_MAT_MUL = BatchMatMulLowering()

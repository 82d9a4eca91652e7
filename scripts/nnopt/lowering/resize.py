"""RESIZE_NEAREST_NEIGHBOR -> ``nnrt_resize_nearest_x8``; RESIZE_BILINEAR ->
``nnrt_resize_bilinear_s8`` / ``_f32`` (both in ``nnrt/kernels/resize.h``).

Supported (bit-exact with TFLM's reference ResizeNearestNeighbor): [N, H, W, C] int8,
int16 or float32 tensors (values are copied, never requantised, as TFLM does), a
constant int32 size operand [new_height, new_width], ``align_corners`` and
``half_pixel_centers``. The source row and column of every output row and column are
TFLM's ``GetNearestNeighbor`` evaluated here in float32 (:func:`nearest_indices`); the
kernel copies pixels through those tables.

RESIZE_BILINEAR (bit-exact with TFLM's reference ResizeBilinear for float32 and
ResizeBilinearInteger for int8, the two types TFLM's kernel accepts; same operand
layout and options as above, align_corners and half_pixel_centers not both set, as
TFLM's Prepare demands): the two source rows/columns of every output row/column and
their weights are TFLM's ComputeInterpolationValues (float32) or
ComputeInterpolationValuesInteger (1/1024 fixed point) evaluated here
(:func:`bilinear_float`, :func:`bilinear_q10`); the kernels blend pixels through those
tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..arith import round_half_away
from ..cdefs import DTYPE_SIZE, DType
from ..ir import Graph, Op, ResizeOptions, Tensor
from .base import EmitContext, LoweringBase, RowBand
from .call import Body, KernelCheck, Raw
from .common import c_call, c_params, refuse, tensor_desc

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


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncates toward zero), b > 0."""
    return a // b if a >= 0 else -((-a) // b)


def bilinear_q10(input_size: int, output_size: int, align_corners: bool,
                 half_pixel_centers: bool) -> tuple[list[int], list[int]]:
    """TFLM's ComputeInterpolationValuesInteger for every output index: (pairs, fracs),
    pairs = [lower0, upper0, lower1, ...] and frac = scaled value - 1024 * lower."""
    if align_corners and output_size > 1:
        scale = (1024 * (input_size - 1) + (output_size - 1) // 2) // (output_size - 1)
    else:
        scale = (1024 * input_size + output_size // 2) // output_size
    pairs: list[int] = []
    fracs: list[int] = []
    for i in range(output_size):
        v = i * scale + scale // 2 - 512 if half_pixel_centers else i * scale
        lo = max(_c_div(v, 1024), 0)
        hi = min(_c_div(v + 1023, 1024), input_size - 1)
        pairs += [lo, hi]
        fracs.append(v - 1024 * lo)
    return pairs, fracs


def bilinear_float(input_size: int, output_size: int, align_corners: bool,
                   half_pixel_centers: bool) -> tuple[list[int], list[float]]:
    """TFLM's ComputeInterpolationValues for every output index, in float32: (pairs,
    weights), weights = [1 - (v - lower0), v - lower0, ...] as float32 values."""
    f32 = np.float32
    if align_corners and output_size > 1:
        scale = f32(input_size - 1) / f32(output_size - 1)
    else:
        scale = f32(input_size) / f32(output_size)
    pairs: list[int] = []
    weights: list[float] = []
    for i in range(output_size):
        v = (f32(i) + f32(0.5)) * scale - f32(0.5) if half_pixel_centers else f32(i) * scale
        lo = max(math.floor(float(v)), 0)
        hi = min(math.ceil(float(v)), input_size - 1)
        d = f32(v - f32(lo))
        pairs += [lo, hi]
        weights += [float(f32(f32(1.0) - d)), float(d)]
    return pairs, weights


def source_rows(x: Tensor, y: Tensor, o: ResizeOptions) -> list[int]:
    """The lower and upper source rows of every output row of a bilinear resize
    ([lower0, upper0, lower1, ...]), as the kernel's tables hold them for x's dtype."""
    fn = bilinear_q10 if x.dtype == DType.INT8 else bilinear_float
    return fn(x.shape[1], y.shape[1], o.align_corners, o.half_pixel_centers)[0]


def _resize_operands(op: Op, graph: Graph, dtypes: Sequence[DType],
                     supported: str, height: int | None = None
                     ) -> tuple[Tensor, Tensor, ResizeOptions]:
    """The input, output and options of a 4-D resize whose size operand is constant
    (``height``: the whole output's, when y is a row band of it)."""
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        raise refuse(op, "expects an input, a size operand and 1 output", supported)
    x, size = (graph.tensors[t] for t in op.inputs)
    y = graph.tensors[op.outputs[0]]
    if x.dtype not in dtypes or y.dtype != x.dtype:
        raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", supported)
    if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0] != y.shape[0] \
            or x.shape[3] != y.shape[3] or min(x.shape) < 1 or min(y.shape) < 1:
        raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)} is not a 4-D resize",
                     supported)
    if not size.is_constant or size.dtype != DType.INT32 or size.num_elements != 2:
        raise refuse(op, f"size operand {tensor_desc(size)} is not a constant int32 "
                     "[height, width]", supported)
    if [int(v) for v in size.array().reshape(-1)] != [height or y.shape[1], y.shape[2]]:
        raise refuse(op, f"size operand {list(size.array().reshape(-1))} differs from "
                     f"the output shape {list(y.shape)}", supported)
    o = op.options if isinstance(op.options, ResizeOptions) else ResizeOptions()
    return x, y, o


class ResizeNearestLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/resize.h",)
    dtypes: Sequence[str] = ("int8", "int16", "float32")

    def _tensors(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, ResizeOptions]:
        return _resize_operands(op, graph, (DType.INT8, DType.INT16, DType.FLOAT32),
                                _SUPPORTED)

    def check(self, graph: Graph, op: Op) -> None:
        self._tensors(graph, op)

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


_BILINEAR = ("[N,H,W,C] int8 or float32 input and output of the same dtype (TFLM's "
             "kernel takes no other), a constant int32 size [height, width], not both "
             "align_corners and half_pixel_centers")


class ResizeBilinearLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/resize.h",)
    checks: Sequence[KernelCheck] = (KernelCheck(
        ("nnrt_resize_bilinear_s8", "nnrt_resize_bilinear_f32"), "nnrt_resize_bilinear_check",
        "nnrt/kernels/resize.h", member="shape"),)
    dtypes: Sequence[str] = ("int8", "float32")

    def _tensors(self, graph: Graph, op: Op, height: int | None = None
                 ) -> tuple[Tensor, Tensor, ResizeOptions]:
        x, y, o = _resize_operands(op, graph, (DType.INT8, DType.FLOAT32), _BILINEAR, height)
        if o.align_corners and o.half_pixel_centers:
            raise refuse(op, "align_corners and half_pixel_centers are both set", _BILINEAR)
        if x.dtype == DType.INT8:
            xq, yq = x.quant, y.quant
            if xq is None or yq is None or xq.scale != yq.scale \
                    or xq.zero_point != yq.zero_point:
                raise refuse(op, f"{tensor_desc(x)} and {tensor_desc(y)} are quantised "
                             "differently", "int8 RESIZE_BILINEAR with the output's "
                             "quantisation equal to the input's (TFLM does not requantise)")
            # a row band's shapes are not the resize's: the whole op was checked
            for n_in, n_out in (((x.shape[1], y.shape[1]), (x.shape[2], y.shape[2]))
                                if height is None else ()):
                pairs, fracs = bilinear_q10(n_in, n_out, o.align_corners,
                                            o.half_pixel_centers)
                if any(not -1024 <= f <= 1024 for f in fracs) \
                        or any(not 0 <= lo <= hi < n_in
                               for lo, hi in zip(pairs[::2], pairs[1::2], strict=True)):
                    raise refuse(op, f"resizing {n_in} to {n_out} reads outside the input "
                                 "in TFLM's fixed-point arithmetic", _BILINEAR)
        return x, y, o

    def check(self, graph: Graph, op: Op) -> None:
        self._tensors(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y, _ = self._tensors(ctx.graph, ctx.op)
        return self._emit(ctx, RowBand(-1, x.shape[1], y.shape[1], (0, x.shape[1]),
                                       (0, y.shape[1])))

    def emit_band(self, ctx: EmitContext, band: RowBand) -> Body:
        """The call on one row band (the row-range form of ``ops.resize``): output rows
        ``band.out_rows`` from input rows ``band.in_rows``, the tables of the whole
        resize cut to the band's rows and rebased to its first input row."""
        return self._emit(ctx, band)

    def _emit(self, ctx: EmitContext, band: RowBand) -> Body:
        x, y, o = self._tensors(ctx.graph, ctx.op, band.out_h)
        ac, hp = o.align_corners, o.half_pixel_centers
        row_w: np.ndarray
        col_w: np.ndarray
        (a, b), lo = band.out_rows, band.in_rows[0]
        if x.dtype == DType.INT8:
            rows, row_q = bilinear_q10(band.in_h, band.out_h, ac, hp)
            cols, col_q = bilinear_q10(x.shape[2], y.shape[2], ac, hp)
            row_w, col_w = np.asarray(row_q[a:b], np.int32), np.asarray(col_q, np.int32)
            ptype, fn = "nnrt_resize_bilinear_s8_params_t", "nnrt_resize_bilinear_s8"
            names = ("row_frac", "col_frac")
        else:
            rows, row_f = bilinear_float(band.in_h, band.out_h, ac, hp)
            cols, col_f = bilinear_float(x.shape[2], y.shape[2], ac, hp)
            row_w = np.asarray(row_f[2 * a:2 * b], np.float32)
            col_w = np.asarray(col_f, np.float32)
            ptype, fn = "nnrt_resize_bilinear_f32_params_t", "nnrt_resize_bilinear_f32"
            names = ("row_weights", "col_weights")
        tag = "" if band.index < 0 else f"_b{band.index}"
        src = np.asarray(rows[2 * a:2 * b], dtype=np.int32) - lo
        shape = {"batches": x.shape[0], "input_h": x.shape[1], "input_w": x.shape[2],
                 "output_h": y.shape[1], "output_w": y.shape[2], "channels": x.shape[3],
                 "rows": Raw(ctx.const_array("rows" + tag, src)),
                 "cols": Raw(ctx.const_array("cols", np.asarray(cols, dtype=np.int32)))}
        fields = {"shape": shape,
                  names[0]: Raw(ctx.const_array(names[0] + tag, row_w)),
                  names[1]: Raw(ctx.const_array(names[1], col_w))}
        return [*c_params(ptype, fields),
                *c_call(fn, ["&params", ctx.ptr(x.index), ctx.ptr(y.index)])]


RESIZE_NEAREST = ResizeNearestLowering()
RESIZE_BILINEAR = ResizeBilinearLowering()

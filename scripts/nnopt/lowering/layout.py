"""Layout operators -> the type-agnostic kernels of nnrt/kernels/shape.h. Values are
moved, never requantised (as TFLM does); each lowering accepts the element types of
TFLM's kernel and refuses the rest.

- DEPTH_TO_SPACE / SPACE_TO_DEPTH (int8, float32; 4-D; TFLM's DCR layout), REVERSE_V2
  (int8, uint8, bool, int16, int32, int64, float32; constant int32 axes, contiguous
  after sorting as TFLM demands), BROADCAST_TO (the same types, up to 5-D), FILL (int8,
  int32, float32; a scalar value, constant or not) and ZEROS_LIKE (int8, int32, int64,
  float32): one
  strided view (offset and a byte stride per output dimension, 0 for a broadcast) copied
  by ``nnrt_strided_copy_x8``;
- MIRROR_PAD (int8, float32; REFLECT / SYMMETRIC on any axis) and BATCH_TO_SPACE_ND
  (int8, float32; 3-D or 4-D, any crops): a view whose input offset is a sum of one
  table entry per output dimension, ``nnrt_gather_axes_x8``; the tables are TFLM's
  index arithmetic evaluated here;
- SPACE_TO_BATCH_ND (int8, float32; 3-D or 4-D): ``nnrt_space_to_batch_x8``; every
  element taken from the input as TFLM, the padding set to the output zero point (0
  for float32) as TensorFlow defines it: TFLM memsets it with
  ``SpaceToBatchParams.output_offset`` from a persistent buffer its Prepare never
  initialises (``tensorflow/lite/micro/kernels/space_to_batch_nd.cc``), so its padding
  bytes are undefined;
- SHAPE (int32 output, as TFLM): the input's shape as a constant copied out.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..cdefs import DTYPE_SIZE, MAX_DIMS, DType
from ..ir import NUMPY_DTYPE, BlockSizeOptions, Graph, MirrorPadOptions, Op, Tensor
from .base import EmitContext, LoweringBase
from .call import Body, KernelCheck, Raw
from .common import c_call, c_params, padded, refuse, tensor_desc
from .shape import (
    STRIDED_COPY_CHECK,
    _const_ints,
    _inputs,
    _same_dtype,
    _strides,
    _view_call,
    _view_fields,
    _ViewLowering,
)

_I8_F32 = (DType.INT8, DType.FLOAT32)
_ANY = (DType.INT8, DType.INT16, DType.INT32, DType.FLOAT32, DType.UINT8, DType.BOOL,
        DType.INT64)
_FILL = (DType.INT8, DType.INT32, DType.FLOAT32)
_ZEROS = (DType.INT8, DType.INT32, DType.FLOAT32, DType.INT64)


def _names(dtypes: Sequence[DType]) -> tuple[str, ...]:
    """Element type names as lowerings declare them (``dtypes``, for ``nnopt ops``)."""
    return tuple(d.name.lower() for d in dtypes)


def _words(dims: Sequence[int], strides: Sequence[int], offset: int,
           elem: int) -> dict[str, Any] | None:
    """:func:`~nnopt.lowering.shape._view_fields`, 8-byte elements moved as two 4-byte
    words (the kernels move 1-, 2- and 4-byte elements)."""
    if elem != 8:
        return _view_fields(dims, strides, offset, elem)
    return _view_fields([*dims, 2], [2 * s for s in strides] + [1], 2 * offset, 4)


def _block_size(op: Op) -> int:
    o = op.options
    bs = o.block_size if isinstance(o, BlockSizeOptions) else 0
    if bs < 1:
        raise refuse(op, f"block size {bs}", "a block size >= 1")
    return bs


def _nhwc(op: Op, x: Tensor, y: Tensor) -> None:
    if len(x.shape) != 4 or len(y.shape) != 4:
        raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", "4-D NHWC tensors")



def _block_operands(graph: Graph, op: Op) -> tuple[Tensor, Tensor, int, int]:
    """DEPTH_TO_SPACE / SPACE_TO_DEPTH: the input and the output (4-D NHWC, one dtype),
    the element size and the block size."""
    (x,) = _inputs(graph, op, (1,))
    y = graph.tensors[op.outputs[0]]
    elem = _same_dtype(op, x, y, _I8_F32)
    _nhwc(op, x, y)
    return x, y, elem, _block_size(op)

class DepthToSpaceLowering(_ViewLowering):
    dtypes: Sequence[str] = _names(_I8_F32)

    def _view(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        x, y, elem, bs = _block_operands(graph, op)
        n, h, w, c = x.shape
        if c % (bs * bs) or y.shape != (n, h * bs, w * bs, c // (bs * bs)):
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)} with block size {bs}",
                         "output [N, H*bs, W*bs, C/bs^2]")
        co = c // (bs * bs)
        # output (n, h, i, w, j, c') = input (n, h, w, (i*bs + j)*C' + c')
        dims = [n, h, bs, w, bs, co]
        strides = [h * w * c, w * c, bs * co, c, co, 1]
        return x, y, _view_fields(dims, strides, 0, elem)


class SpaceToDepthLowering(_ViewLowering):
    dtypes: Sequence[str] = _names(_I8_F32)

    def _view(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        x, y, elem, bs = _block_operands(graph, op)
        n, h, w, c = x.shape
        if h % bs or w % bs or y.shape != (n, h // bs, w // bs, c * bs * bs):
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)} with block size {bs}",
                         "H and W divisible by bs, output [N, H/bs, W/bs, C*bs^2]")
        # output (n, h', w', i, j, c) = input (n, h'*bs + i, w'*bs + j, c)
        dims = [n, h // bs, w // bs, bs, bs, c]
        strides = [h * w * c, bs * w * c, bs * c, w * c, c, 1]
        return x, y, _view_fields(dims, strides, 0, elem)


class ReverseLowering(_ViewLowering):
    dtypes: Sequence[str] = _names(_ANY)

    def _view(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        x, axis_t = _inputs(graph, op, (2,))
        y = graph.tensors[op.outputs[0]]
        elem = _same_dtype(op, x, y, _ANY)
        rank = len(x.shape)
        if y.shape != x.shape or rank > MAX_DIMS:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}",
                         f"output shape = input shape, up to {MAX_DIMS}-D")
        axes = sorted(a + rank if a < 0 else a for a in _const_ints(op, axis_t, "axis"))
        if any(not 0 <= a < rank for a in axes) or len(axes) > rank \
                or any(b != a + 1 for a, b in itertools.pairwise(axes)):
            raise refuse(op, f"axes {_const_ints(op, axis_t, 'axis')} for rank {rank}",
                         "distinct contiguous axes in [-rank, rank) (TFLM refuses "
                         "non-contiguous ones)")
        st = _strides(x.shape)
        strides = [-s if d in axes else s for d, s in enumerate(st)]
        offset = sum((x.shape[d] - 1) * st[d] for d in axes)
        return x, y, _words(list(x.shape), strides, offset, elem)


class BroadcastToLowering(_ViewLowering):
    dtypes: Sequence[str] = _names(_ANY)

    def _view(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        x, shape_t = _inputs(graph, op, (2,))
        y = graph.tensors[op.outputs[0]]
        elem = _same_dtype(op, x, y, _ANY)
        shape = _const_ints(op, shape_t, "shape", (DType.INT32, DType.INT64))
        rank, xr = len(y.shape), len(x.shape)
        if tuple(shape) != y.shape or rank > 5 or xr > rank:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)} (shape {shape})",
                         "up to 5-D, output shape = the shape operand (TFLM)")
        xs = (1,) * (rank - xr) + tuple(x.shape)
        if any(a not in (1, b) for a, b in zip(xs, y.shape, strict=True)):
            raise refuse(op, f"{tensor_desc(x)} does not broadcast to {list(y.shape)}",
                         "input dims equal to the output's or 1")
        st = _strides(xs)
        strides = [0 if a == 1 else s for a, s in zip(xs, st, strict=True)]
        return x, y, _words(list(y.shape), strides, 0, elem)


class FillLowering(_ViewLowering):
    dtypes: Sequence[str] = _names(_FILL)

    def _view(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        _, value = _inputs(graph, op, (2,))
        y = graph.tensors[op.outputs[0]]
        elem = _same_dtype(op, value, y, _FILL)
        if value.shape != ():
            raise refuse(op, f"value {tensor_desc(value)} is not a scalar",
                         "a scalar (rank 0) value, as TFLM")
        return value, y, _view_fields(list(y.shape), [0] * len(y.shape), 0, elem)


class ZerosLikeLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    checks: Sequence[KernelCheck] = (STRIDED_COPY_CHECK,)
    dtypes: Sequence[str] = _names(_ZEROS)

    def _tensors(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        (x,) = _inputs(graph, op, (1,))
        y = graph.tensors[op.outputs[0]]
        _same_dtype(op, x, y, _ZEROS)
        if x.num_elements != y.num_elements:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", "equal sizes")
        return x, y

    def check(self, graph: Graph, op: Op) -> None:
        self._tensors(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        _, y = self._tensors(ctx.graph, ctx.op)
        fields = _words(list(y.shape), [0] * len(y.shape), 0, DTYPE_SIZE[y.dtype])
        if fields is None:
            return _view_call(ctx, None, y, y)
        zero = ctx.const_array("zero", np.zeros(1, dtype=NUMPY_DTYPE[y.dtype]))
        return [*c_params("nnrt_strided_copy_params_t", fields),
                *c_call("nnrt_strided_copy_x8", ["&params", zero, ctx.ptr(y.index)])]


class ShapeLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    dtypes: Sequence[str] = tuple(f"{d}->int32" for d in _names(tuple(DType)))

    def _tensors(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        (x,) = _inputs(graph, op, (1,))
        y = graph.tensors[op.outputs[0]]
        if y.dtype != DType.INT32 or y.shape != (len(x.shape),):
            raise refuse(op, f"output {tensor_desc(y)} for {tensor_desc(x)}",
                         "an int32 output of one entry per input dimension (TFLM)")
        return x, y

    def check(self, graph: Graph, op: Op) -> None:
        self._tensors(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y = self._tensors(ctx.graph, ctx.op)
        if not x.shape:
            return _view_call(ctx, None, x, y)
        dims = ctx.const_array("dims", np.asarray(x.shape, dtype=np.int32))
        return c_call("nnrt_copy_x8", [dims, ctx.ptr(y.index), f"{4 * len(x.shape)}u"])


# ----- per-axis gathers (MIRROR_PAD, BATCH_TO_SPACE_ND) -----

class _Gather(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)

    def _tables(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, list[list[int]]]:
        """Input, output, and per output dim the input byte offset of each index."""
        raise NotImplementedError

    def check(self, graph: Graph, op: Op) -> None:
        self._tables(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y, tables = self._tables(ctx.graph, ctx.op)
        if y.num_elements == 0:
            return _view_call(ctx, None, x, y)
        flat = np.asarray([v for t in tables for v in t], dtype=np.int32)
        fields = {"rank": len(tables), "elem_size": DTYPE_SIZE[x.dtype],
                  "dims": padded([len(t) for t in tables]),
                  "offsets": Raw(ctx.const_array("offsets", flat))}
        return [*c_params("nnrt_gather_axes_params_t", fields),
                *c_call("nnrt_gather_axes_x8", ["&params", ctx.ptr(x.index),
                                                ctx.ptr(y.index)])]


def mirror_index(i: int, before: int, size: int, offset: int) -> int:
    """TFLM's GetInputDimension: the input index of padded index i (offset 1: REFLECT,
    0: SYMMETRIC)."""
    if i < before:
        first = before + offset - 1
        return first - min(i, first - offset)
    i -= before
    if i >= size:
        i -= size
        last = size - (1 + offset)
        return last - min(i, last)
    return i


class MirrorPadLowering(_Gather):
    dtypes: Sequence[str] = _names(_I8_F32)

    def _tables(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, list[list[int]]]:
        x, pads_t = _inputs(graph, op, (2,))
        y = graph.tensors[op.outputs[0]]
        elem = _same_dtype(op, x, y, _I8_F32)
        o = op.options if isinstance(op.options, MirrorPadOptions) else MirrorPadOptions()
        if o.mode not in ("REFLECT", "SYMMETRIC"):
            raise refuse(op, f"padding {o.mode}", "REFLECT or SYMMETRIC")
        rank = len(x.shape)
        pads = _const_ints(op, pads_t, "paddings", (DType.INT32, DType.INT64))
        if rank > MAX_DIMS or len(pads) != 2 * rank or min(pads, default=0) < 0:
            raise refuse(op, f"paddings {pads} for {tensor_desc(x)}",
                         f"[rank, 2] non-negative paddings, up to {MAX_DIMS}-D")
        offset = 1 if o.mode == "REFLECT" else 0
        out_shape = tuple(pads[2 * d] + x.shape[d] + pads[2 * d + 1] for d in range(rank))
        if out_shape != y.shape:
            raise refuse(op, f"output {tensor_desc(y)} for paddings {pads}",
                         "output shape = padded input shape")
        st = _strides(x.shape)
        tables = []
        for d in range(rank):
            idx = [mirror_index(i, pads[2 * d], x.shape[d], offset) for i in range(y.shape[d])]
            if any(not 0 <= k < x.shape[d] for k in idx):
                limit = "size - 1" if offset else "size"
                raise refuse(op, f"paddings {pads[2 * d:2 * d + 2]} of axis {d} (extent "
                             f"{x.shape[d]}) reach outside the input",
                             f"{o.mode} paddings of at most {limit} per side")
            tables.append([k * st[d] * elem for k in idx])
        return x, y, tables


def _batch_space_operands(graph: Graph, op: Op, what: str
                          ) -> tuple[Tensor, Tensor, list[int], list[int], int]:
    """x, y, block [bh, bw], paddings or crops [t, b, l, r] and the element size of a
    3-D or 4-D SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND (a 3-D tensor is H x 1)."""
    x, block_t, pads_t = _inputs(graph, op, (3,))
    y = graph.tensors[op.outputs[0]]
    elem = _same_dtype(op, x, y, _I8_F32)
    rank = len(x.shape)
    if rank not in (3, 4) or len(y.shape) != rank:
        raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", "3-D or 4-D (TFLM)")
    block = _const_ints(op, block_t, "block shape")
    pads = _const_ints(op, pads_t, what)
    if len(block) != rank - 2 or len(pads) != 2 * (rank - 2) or min(block) < 1 \
            or min(pads) < 0:
        raise refuse(op, f"block shape {block} / {what} {pads} for rank {rank}",
                     f"one block size >= 1 and two {what} >= 0 per spatial dim")
    if rank == 3:
        block, pads = [*block, 1], [*pads, 0, 0]
    return x, y, block, pads, elem


def _nhwc4(t: Tensor) -> tuple[int, int, int, int]:
    s = t.shape
    return (s[0], s[1], s[2], s[3]) if len(s) == 4 else (s[0], s[1], 1, s[2])


class BatchToSpaceLowering(_Gather):
    dtypes: Sequence[str] = _names(_I8_F32)

    def _tables(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, list[list[int]]]:
        x, y, (bh, bw), (ct, cb, cl, cr), elem = _batch_space_operands(graph, op, "crops")
        nin, h, w, c = _nhwc4(x)
        n, oh, ow, oc = _nhwc4(y)
        if nin % (bh * bw) or (n, oh, ow, oc) != (nin // (bh * bw), h * bh - ct - cb,
                                                  w * bw - cl - cr, c):
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)} with block "
                         f"{[bh, bw]} and crops {[ct, cb, cl, cr]}",
                         "output [N/(bh*bw), H*bh - crops, W*bw - crops, C]")
        sn, sh, sw = h * w * c * elem, w * c * elem, c * elem
        # TFLM: input batch (i*bw + j)*N + b, row r, column q lands at output row
        # r*bh + i - crop_top, column q*bw + j - crop_left.
        rows = [((r + ct) // bh) * sh + ((r + ct) % bh) * bw * n * sn for r in range(oh)]
        cols = [((q + cl) // bw) * sw + ((q + cl) % bw) * n * sn for q in range(ow)]
        tables = [[b * sn for b in range(n)], rows, cols, [k * elem for k in range(c)]]
        return x, y, tables


class SpaceToBatchLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    dtypes: Sequence[str] = _names(_I8_F32)

    def _fields(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any]]:
        x, y, (bh, bw), (pt, pb, pl, pr), elem = _batch_space_operands(graph, op,
                                                                       "paddings")
        n, h, w, c = _nhwc4(x)
        on, oh, ow, oc = _nhwc4(y)
        if (h + pt + pb) % bh or (w + pl + pr) % bw \
                or (on, oh, ow, oc) != (n * bh * bw, (h + pt + pb) // bh,
                                        (w + pl + pr) // bw, c):
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)} with block "
                         f"{[bh, bw]} and paddings {[pt, pb, pl, pr]}",
                         "padded extents divisible by the block, output "
                         "[N*bh*bw, (H+pads)/bh, (W+pads)/bw, C]")
        pad = 0
        if y.dtype == DType.INT8 and y.quant is not None and y.quant.zero_point:
            pad = int(y.quant.zero_point[0]) & 0xFF
        return x, y, {"batches": n, "input_h": h, "input_w": w, "output_h": oh,
                      "output_w": ow, "block_h": bh, "block_w": bw, "pad_top": pt,
                      "pad_left": pl, "pixel_bytes": c * elem, "pad_byte": pad}

    def check(self, graph: Graph, op: Op) -> None:
        self._fields(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y, fields = self._fields(ctx.graph, ctx.op)
        if math.prod(y.shape) == 0:
            return _view_call(ctx, None, x, y)
        return [*c_params("nnrt_space_to_batch_params_t", fields),
                *c_call("nnrt_space_to_batch_x8", ["&params", ctx.ptr(x.index),
                                                   ctx.ptr(y.index)])]


DEPTH_TO_SPACE = DepthToSpaceLowering()
SPACE_TO_DEPTH = SpaceToDepthLowering()
REVERSE = ReverseLowering()
BROADCAST_TO = BroadcastToLowering()
FILL = FillLowering()
ZEROS_LIKE = ZerosLikeLowering()
SHAPE = ShapeLowering()
MIRROR_PAD = MirrorPadLowering()
BATCH_TO_SPACE = BatchToSpaceLowering()
SPACE_TO_BATCH = SpaceToBatchLowering()

"""Pooling and reductions: MaxPool, AveragePool, Global*Pool, ReduceMean/Sum/Max/Min."""

from __future__ import annotations

import numpy as np

from ....ir import (
    PoolOptions,
    ReducerOptions,
    StridedSliceOptions,
)
from ..importer import FLT_LOWEST, Importer, onnx_pads, window_padding
from ..prepare import Node
from .common import (
    bind_nhwc,
    nhwc_input,
    norm_axis,
    pad_nhwc,
    perm_of,
    window_attrs,
)
from .registry import handler


@handler("MaxPool", "AveragePool", quant=(0,))
def pool(im: Importer, node: Node) -> None:
    if len(node.outputs) > 1 and node.outputs[1]:
        raise im.refuse("the Indices output is used", "MaxPool without indices")
    xn = node.inputs[0]
    xs = im.shape(xn)
    x, one_d = nhwc_input(im, xn)
    kernel, strides, dil = window_attrs(im, node, [])
    is_max = node.op_type == "MaxPool"
    if any(d != 1 for d in dil) and not is_max:
        raise im.refuse(f"dilations {dil}", "AveragePool without dilation")
    spatial = list(xs[2:])
    pads = onnx_pads(node, spatial, kernel, strides, dil)
    ys = im.shape(node.outputs[0])
    if one_d:
        kernel, strides, spatial, pads, dil = [1, *kernel], [1, *strides], [1, *spatial], \
            [(0, 0), *pads], [1, *dil]
        out_sp = [1, ys[2]]
    else:
        out_sp = [ys[2], ys[3]]
    if any(d != 1 for d in dil):
        x, spatial, strides, pads = _undilate(im, node, x, spatial, kernel, strides, dil,
                                              pads, out_sp)
        dil = [1, 1]
    ceil_extra = False
    for i in range(2):
        b, e = pads[i]
        floor_out = (spatial[i] + b + e - kernel[i]) // strides[i] + 1
        if out_sp[i] > floor_out:  # ceil_mode: one more window over the end
            pads[i] = (b, e + (out_sp[i] - 1) * strides[i] + kernel[i] - spatial[i] - b - e)
            ceil_extra = True
    padding = window_padding(pads, spatial, kernel, strides, dil)
    if not is_max:
        include = bool(node.attrs.get("count_include_pad", 0))
        if ceil_extra:
            raise im.refuse("ceil_mode adds a partial window", "AveragePool with ceil_mode 0")
        if include and padding == "SAME":
            padding = None
        if padding is None:
            if not include:
                raise im.refuse(f"pads {pads} excluded from the average",
                                "pads equal to TFLite's SAME, or count_include_pad=1")
            x = pad_nhwc(im, x, pads, node.name)
            padding = "VALID"
    elif padding is None or (ceil_extra and padding != "VALID"):
        x = pad_nhwc(im, x, pads, node.name, FLT_LOWEST)
        padding = "VALID"
    c = xs[1]
    y = im.out_tensor(node.outputs[0], (xs[0], out_sp[0], out_sp[1], c),
                      im.b.tensors[x].quant if im.qout is not None else None)
    im.b.op("MAX_POOL_2D" if is_max else "AVERAGE_POOL_2D", [x], [y],
            PoolOptions(padding, strides[0], strides[1], kernel[0], kernel[1]))
    bind_nhwc(im, node.outputs[0], y, one_d)


def _undilate(im: Importer, node: Node, x: int, spatial: list[int], kernel: list[int],
              strides: list[int], dil: list[int], pads: list[tuple[int, int]],
              out_sp: list[int]) -> tuple[int, list[int], list[int], list[tuple[int, int]]]:
    """A dilated MaxPool whose stride is a multiple s = m * d of its dilation d reads
    input positions o * s - b + i * d: all in the one phase r = -b mod d of the axis. The
    STRIDED_SLICE of that phase (every d-th element from r) pooled without dilation, with
    stride m and b' = (b + r) / d leading pads, takes the same maxima (exact). Returns
    the slice, its spatial size, the strides and the pads that give ``out_sp``."""
    if any(s % d for s, d in zip(strides, dil, strict=True)):
        raise im.refuse(f"dilations {dil[-len(spatial):]} with strides {strides}",
                        "MaxPool dilations that divide the strides (the taps then read one "
                        "phase of the input), or no dilation")
    xt = im.b.tensors[x]
    begin, end, step = [0, 0, 0, 0], list(xt.shape), [1, 1, 1, 1]
    sizes, new_pads = [], []
    for i in range(2):
        d, (b, _) = dil[i], pads[i]
        r = -b % d
        lead = (b + r) // d
        need = (out_sp[i] - 1) * (strides[i] // d) + kernel[i] - lead  # phase positions read
        take = min(need, -(-(spatial[i] - r) // d) if spatial[i] > r else 0)
        if take < 1:
            raise im.refuse(f"every window of dilation {d} lies in the padding",
                            "MaxPool windows that read the input")
        begin[1 + i], end[1 + i], step[1 + i] = r, r + (take - 1) * d + 1, d
        sizes.append(take)
        new_pads.append((lead, need - take))
    shape = (xt.shape[0], sizes[0], sizes[1], xt.shape[3])
    y = im.b.tensor(f"{node.name}.phase", shape, xt.dtype, xt.quant)
    consts = [im.b.const(f"{node.name}.phase.{k}", np.array(v, np.int32))
              for k, v in (("begin", begin), ("end", end), ("strides", step))]
    im.b.op("STRIDED_SLICE", [x, *consts], [y], StridedSliceOptions())
    return y, sizes, [s // d for s, d in zip(strides, dil, strict=True)], new_pads


@handler("GlobalAveragePool", quant=(0,))
def global_average_pool(im: Importer, node: Node) -> None:
    rank = len(im.shape(node.inputs[0]))
    _reduce(im, node, "MEAN", list(range(2, rank)), keepdims=True)


@handler("GlobalMaxPool", quant=(0,))
def global_max_pool(im: Importer, node: Node) -> None:
    xs = im.shape(node.inputs[0])
    x, one_d = nhwc_input(im, node.inputs[0])
    h, w = (1, xs[2]) if one_d else (xs[2], xs[3])
    y = im.out_tensor(node.outputs[0], (xs[0], 1, 1, xs[1]),
                      im.b.tensors[x].quant if im.qout is not None else None)
    im.b.op("MAX_POOL_2D", [x], [y], PoolOptions("VALID", 1, 1, h, w))
    bind_nhwc(im, node.outputs[0], y, one_d)


def _reduce_axes(im: Importer, node: Node) -> list[int] | None:
    axes_in = im.opt_input(node, 1)
    if axes_in:
        return [int(a) for a in im.const(axes_in).reshape(-1)]
    if "axes" in node.attrs:
        return [int(a) for a in node.attrs["axes"]]
    return None


def _reduce(im: Importer, node: Node, kind: str, axes: list[int] | None,
            keepdims: bool) -> None:
    xn = node.inputs[0]
    xs = im.shape(xn)
    rank = len(xs)
    if axes is None or not axes:
        if axes is not None and node.attrs.get("noop_with_empty_axes", 0):
            im.bind(node.outputs[0], im.act(xn), perm_of(im, xn))
            return
        axes = list(range(rank))
    axes = sorted({norm_axis(a, rank) for a in axes})
    perm = perm_of(im, xn)
    x = im.act(xn, perm)
    ir_axes = sorted(perm.index(a) for a in axes)
    if keepdims:
        out_perm = perm
        ir_shape = tuple(1 if p in axes else xs[p] for p in perm)
    else:
        kept = [p for p in perm if p not in axes]
        out_perm = tuple(sorted(kept).index(p) for p in kept)
        ir_shape = tuple(xs[p] for p in kept)
    at = im.b.const(f"{node.name}.axes", np.array(ir_axes, dtype=np.int32))
    out = node.outputs[0]
    # REDUCE_MAX/MIN compare raw values: a quantised output keeps the input's scale
    keep_q = kind != "MEAN" and im.qout is not None
    y = im.out_tensor(out, ir_shape, im.b.tensors[x].quant if keep_q else None)
    im.b.op(kind, [x, at], [y], ReducerOptions(keepdims))
    im.bind(out, y, out_perm)


@handler("ReduceMean", quant=(0,))
def reduce_mean(im: Importer, node: Node) -> None:
    _reduce(im, node, "MEAN", _reduce_axes(im, node), bool(node.attrs.get("keepdims", 1)))


@handler("ReduceSum")
def reduce_sum(im: Importer, node: Node) -> None:
    _reduce(im, node, "SUM", _reduce_axes(im, node), bool(node.attrs.get("keepdims", 1)))


@handler("ReduceMax", "ReduceMin", quant=(0,))
def reduce_max_min(im: Importer, node: Node) -> None:
    kind = "REDUCE_MAX" if node.op_type == "ReduceMax" else "REDUCE_MIN"
    _reduce(im, node, kind, _reduce_axes(im, node), bool(node.attrs.get("keepdims", 1)))

"""Spatial access patterns: which input rows and columns an output region reads.

The analysis behind everything that goes below the per-operator bound (partial overlap
of an op's input and output, patch-based stages): for a sliding-window op (CONV_2D,
DEPTHWISE_CONV_2D, MAX/AVERAGE_POOL_2D) output rows ``[a, b)`` read input rows
``[max(0, a*s - pad), min(H, (b-1)*s - pad + (k-1)*d + 1))``; a point-wise op
(element-wise, CONCATENATION along channels) reads the same pixels it writes. Padding
follows TFLM (``ComputePaddingHeightWidth``) or an explicit padding left by PAD folding.

Only NHWC 4-D ops with batch 1 are described (:func:`spatial_of` returns None for
anything else, and callers then leave the op alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import ConcatOptions, ConvOptions, Graph, Op, PoolOptions
from ..ops import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a window op: input extent, output extent and the window."""

    size: int  # input extent
    out: int  # output extent
    kernel: int  # effective window extent: (k - 1) * dilation + 1 (1 for point-wise)
    stride: int
    pad: int  # leading implicit padding (>= 0)

    def span(self, a: int, b: int) -> tuple[int, int]:
        """Input range [lo, hi) read by outputs [a, b), clipped to the input (empty if
        every window lies in the padding)."""
        if b <= a:
            return 0, 0
        lo = max(0, a * self.stride - self.pad)
        hi = min(self.size, (b - 1) * self.stride - self.pad + self.kernel)
        return lo, max(lo, hi)

    def pad_local(self, a: int, lo: int) -> int:
        """Leading padding of the window of output a when the input starts at lo."""
        return lo - (a * self.stride - self.pad)


POINT = "point"
WINDOW = "window"


@dataclass(frozen=True)
class Spatial:
    """How one op maps output pixels to input pixels (batch 1, NHWC)."""

    op: Op
    kind: str  # WINDOW (conv, depthwise, pool) or POINT (element-wise, channel concat)
    inputs: tuple[int, ...]  # activation inputs read over the same spatial grid
    output: int
    h: Axis
    w: Axis
    macs_per_pixel: int  # multiply-accumulates per output pixel (0 for non-MAC ops)


def _same_pad(size: int, filt: int, stride: int) -> tuple[int, int]:
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + filt - size, 0)
    return out, total // 2


def window_axis(size: int, filt: int, stride: int, dilation: int, padding: str,
                explicit: tuple[int, int] | None) -> Axis:
    """The axis of a window op as TFLM computes output size and leading padding."""
    eff = (filt - 1) * dilation + 1
    if explicit is not None:
        before, after = explicit
        return Axis(size, (size + before + after - eff) // stride + 1, eff, stride, before)
    if padding == "SAME":
        out, pad = _same_pad(size, eff, stride)
        return Axis(size, out, eff, stride, pad)
    return Axis(size, (size + stride - eff) // stride, eff, stride, 0)


def _is_4d_batch1(graph: Graph, t: int) -> bool:
    shape = graph.tensors[t].shape
    return len(shape) == 4 and shape[0] == 1


def spatial_of(graph: Graph, op: Op) -> Spatial | None:
    """The op's spatial access pattern, or None if it is not a batch-1 NHWC op whose
    output rows depend on a bounded band of input rows."""
    if len(op.outputs) != 1 or not _is_4d_batch1(graph, op.outputs[0]):
        return None
    y = graph.tensors[op.outputs[0]]
    _, oh, ow, oc = y.shape
    acts = graph.activations(op)
    if not acts or not all(_is_4d_batch1(graph, t) for t in acts):
        return None
    o = op.options
    if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D") and isinstance(o, ConvOptions):
        if o.fused_max_pool is not None or len(acts) != 1 or op.inputs[0] != acts[0]:
            return None
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        _, h, wd, c = x.shape
        if op.opcode == "DEPTHWISE_CONV_2D":
            kh, kw = w.shape[1], w.shape[2]
            per_pixel = oc * kh * kw
        else:
            kh, kw, fc = w.shape[1], w.shape[2], w.shape[3]
            per_pixel = oc * kh * kw * fc
        e = o.explicit_padding
        ah = window_axis(h, kh, o.stride_h, o.dilation_h, o.padding,
                         (e[0], e[1]) if e else None)
        aw = window_axis(wd, kw, o.stride_w, o.dilation_w, o.padding,
                         (e[2], e[3]) if e else None)
        if (ah.out, aw.out) != (oh, ow):
            return None
        return Spatial(op, WINDOW, (x.index,), y.index, ah, aw, per_pixel)
    if op.opcode in ("MAX_POOL_2D", "AVERAGE_POOL_2D") and isinstance(o, PoolOptions):
        x = graph.tensors[op.inputs[0]]
        _, h, wd, c = x.shape
        e = o.explicit_padding
        ah = window_axis(h, o.filter_h, o.stride_h, 1, o.padding, (e[0], e[1]) if e else None)
        aw = window_axis(wd, o.filter_w, o.stride_w, 1, o.padding, (e[2], e[3]) if e else None)
        if (ah.out, aw.out) != (oh, ow) or c != oc:
            return None
        return Spatial(op, WINDOW, (x.index,), y.index, ah, aw, 0)
    point_h, point_w = Axis(oh, oh, 1, 1, 0), Axis(ow, ow, 1, 1, 0)
    if op.opcode in ELEMENTWISE_UNARY | ELEMENTWISE_BINARY:
        for t in acts:
            if graph.tensors[t].shape != y.shape:
                return None  # broadcasting between activations: not a point map
        for t in op.inputs:
            if t >= 0 and graph.tensors[t].is_constant:
                cs = graph.tensors[t].shape
                # constants broadcast along channels only (per-channel scale, scalar)
                if any(d != 1 for d in cs[:-1]) or (cs and cs[-1] not in (1, oc)):
                    return None
        return Spatial(op, POINT, acts, y.index, point_h, point_w, 0)
    if op.opcode == "CONCATENATION" and isinstance(o, ConcatOptions):
        axis = o.axis + 4 if o.axis < 0 else o.axis
        if axis != 3 or len(acts) != len(op.inputs):
            return None
        if any(graph.tensors[t].shape[:3] != y.shape[:3] for t in acts):
            return None
        return Spatial(op, POINT, tuple(op.inputs), y.index, point_h, point_w, 0)
    return None


def op_macs(graph: Graph, op: Op) -> int:
    """Multiply-accumulates of one op (convolutions and fully connected layers)."""
    if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        y = graph.tensors[op.outputs[0]]
        w = graph.tensors[op.inputs[1]]
        pixels = y.num_elements // max(y.shape[-1], 1)
        o = op.options
        if isinstance(o, ConvOptions) and o.fused_max_pool is not None:
            sp = graph.tensors[op.inputs[0]].shape
            ah = window_axis(sp[1], w.shape[1], o.stride_h, o.dilation_h, o.padding, None)
            aw = window_axis(sp[2], w.shape[2], o.stride_w, o.dilation_w, o.padding, None)
            pixels = ah.out * aw.out * y.shape[0]
        if op.opcode == "DEPTHWISE_CONV_2D":
            return pixels * y.shape[-1] * w.shape[1] * w.shape[2]
        return pixels * y.shape[-1] * w.shape[1] * w.shape[2] * w.shape[3]
    if op.opcode == "FULLY_CONNECTED":
        w = graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        return (y.num_elements // max(w.shape[0], 1)) * w.shape[0] * w.shape[1]
    return 0


def model_macs(graph: Graph) -> int:
    return sum(op_macs(graph, op) for op in graph.ops)

"""A convolution's geometry, checked (:func:`_geometry`: shapes, strides, dilation,
padding, groups, a folded max pool), its bias (:func:`_bias`) and the kernel kind of
its input type (:func:`_kind`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..arith import (
    out_size_and_padding,
)
from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import ConvOptions, Graph, Op, PoolOptions, Tensor
from .common import check_activation

# ----- the conv geometry -----

@dataclass(frozen=True)
class _PoolGeom:
    output_h: int
    output_w: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    pad_top: int
    pad_left: int
    activation: str


@dataclass(frozen=True)
class _ConvGeom:
    depthwise: bool
    batches: int
    input_h: int
    input_w: int
    input_c: int
    output_h: int
    output_w: int
    output_c: int
    filter_h: int
    filter_w: int
    filter_c: int  # conv: filter input depth; depthwise: depth multiplier
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_top: int
    pad_left: int
    pool: _PoolGeom | None


def _geometry(graph: Graph, op: Op) -> _ConvGeom:
    """Validate shapes and options; the kernel geometry of the op."""
    where = f"op {op.index} ({op.opcode})"
    o = op.options
    if not isinstance(o, ConvOptions):
        raise UnsupportedError(f"{where}: missing convolution options")
    if len(op.inputs) < 2 or len(op.outputs) != 1 or op.inputs[0] < 0 or op.inputs[1] < 0:
        raise UnsupportedError(f"{where}: expected input, filter, optional bias and one "
                               "output")
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    y = graph.tensors[op.outputs[0]]
    for t, role in ((x, "input"), (w, "filter"), (y, "output")):
        if len(t.shape) != 4:
            raise UnsupportedError(f"{where}: {role} tensor {t.index} ({t.name}) has shape "
                                   f"{list(t.shape)}; expected 4-D",
                                   hint="convolutions take [N,H,W,C] tensors")
    if o.padding not in ("SAME", "VALID") or min(o.stride_h, o.stride_w, o.dilation_h,
                                                   o.dilation_w) < 1:
        raise UnsupportedError(f"{where}: invalid padding/stride/dilation {o}")
    check_activation(op, o.activation)
    n, h, wd, c = x.shape
    depthwise = _is_depthwise(op)
    if depthwise:
        one, kh, kw, oc = w.shape
        if one != 1 or oc % c != 0:
            raise UnsupportedError(f"{where}: filter {w.index} shape {list(w.shape)} does not "
                                   f"fit a depthwise conv of {c} input channels")
        fc = oc // c
        if o.depth_multiplier != fc:
            raise UnsupportedError(
                f"{where}: depth_multiplier option is {o.depth_multiplier} but the filter "
                f"shape {list(w.shape)} implies {fc}",
                hint="re-convert the model; TFLM would compute garbage for this op")
    else:
        oc, kh, kw, fc = w.shape
        if fc < 1 or c % fc != 0 or oc % (c // fc) != 0:
            raise UnsupportedError(f"{where}: filter {w.index} shape {list(w.shape)} does not "
                                   f"fit an input of {c} channels")
    oh, pad_t = out_size_and_padding(o.padding, h, kh, o.stride_h, o.dilation_h)
    ow, pad_l = out_size_and_padding(o.padding, wd, kw, o.stride_w, o.dilation_w)
    if oh < 1 or ow < 1:
        raise UnsupportedError(f"{where}: the filter does not fit the input "
                               f"({h}x{wd} with {kh}x{kw}, {o.padding})")
    pool = None
    final = (n, oh, ow, oc)
    if o.fused_max_pool is not None:
        p: PoolOptions = o.fused_max_pool
        if p.padding not in ("SAME", "VALID") or min(p.stride_h, p.stride_w, p.filter_h,
                                                       p.filter_w) < 1:
            raise UnsupportedError(f"{where}: invalid fused max-pool options {p}")
        check_activation(op, p.activation)
        ph, ppad_t = out_size_and_padding(p.padding, oh, p.filter_h, p.stride_h, 1)
        pw, ppad_l = out_size_and_padding(p.padding, ow, p.filter_w, p.stride_w, 1)
        if ph < 1 or pw < 1:
            raise UnsupportedError(f"{where}: fused max pool {p.filter_h}x{p.filter_w} does "
                                   f"not fit the {oh}x{ow} conv output")
        pool = _PoolGeom(ph, pw, p.filter_h, p.filter_w, p.stride_h, p.stride_w,
                         ppad_t, ppad_l, p.activation)
        final = (n, ph, pw, oc)
    if tuple(y.shape) != final:
        raise UnsupportedError(
            f"{where}: output tensor {y.index} ({y.name}) has shape {list(y.shape)}, "
            f"expected {list(final)} from the input, filter and options")
    return _ConvGeom(depthwise, n, h, wd, c, oh, ow, oc, kh, kw, fc, o.stride_h, o.stride_w,
                     o.dilation_h, o.dilation_w, pad_t, pad_l, pool)


def _bias(graph: Graph, op: Op, channels: int) -> Tensor | None:
    if len(op.inputs) < 3 or op.inputs[2] < 0:
        return None
    b = graph.tensors[op.inputs[2]]
    if b.num_elements != channels:
        raise UnsupportedError(f"op {op.index} ({op.opcode}): bias tensor {b.index} "
                               f"({b.name}) has {b.num_elements} elements, expected {channels}")
    return b


def _kind(graph: Graph, op: Op) -> str:
    """The kernel kind of a checked op, from its input dtype: "s8", "s16" or "f32"."""
    dt = graph.tensors[op.inputs[0]].dtype
    return "s8" if dt == DType.INT8 else ("s16" if dt == DType.INT16 else "f32")


def _is_depthwise(op: Op) -> bool:
    """Whether the op is the depthwise form (the one place this lowering names it)."""
    return op.opcode == "DEPTHWISE_CONV_2D"

"""CONV_2D and DEPTHWISE_CONV_2D -> ``nnrt_conv2d_*`` / ``nnrt_depthwise_conv2d_*``.

Supported (bit-exact with TFLM's reference kernels, see ``nnrt/kernels/conv.h``):

- int8 activations, int8 symmetric weights quantised per channel (conv: axis 0,
  depthwise: axis 3) or per tensor, optional int32 bias;
- float32 activations, weights and optional bias;
- any stride and dilation, SAME/VALID padding, fused NONE/RELU/RELU6/RELU_N1_TO_1,
  grouped convolution (filter depth dividing the input depth), depth multiplier >= 1;
- a max pool folded into the output by ``passes.fuse`` (``ConvOptions.fused_max_pool``):
  the op's output tensor is then the pooled tensor.

- int16 activations with int8 weights (16x8 quantisation, ``nnrt_conv2d_s16`` /
  ``nnrt_depthwise_conv2d_s16``): input and output zero points 0, symmetric weights per
  channel or per tensor, an int64 bias (optional for CONV_2D; TFLM's 16x8 depthwise
  kernel reads one unconditionally, so a depthwise op must have it), requantisation
  shifts <= 7 (TFLM's 64-bit arithmetic), no fused max pool; any stride, dilation,
  padding, group count and depth multiplier. The installed tflite-micro runs a CONV_2D
  with an int32 bias in 16x8 with a 32-bit accumulator whose rounding nnrt does not
  reproduce: refused by name, as an int32 bias on a 16x8 depthwise conv (TFLM reads it
  as int64).

Everything else is refused by :meth:`ConvLowering.check` with an :class:`UnsupportedError` that
names the op, the tensor and what is supported: uint8, hybrid float-activation/int8-weight
models, int4 weights, asymmetric weights, TANH or SIGN_BIT fused activations.

Variant selection (:func:`choose_variant`, build time): one-group int8 convolutions
run ``nnrt_conv2d_im2col_s8`` (scratch from :meth:`ConvLowering.scratch_bytes`, the
rule of its ``*_get_buffer_size()``: 16 bytes per 4 values of a pixel's input column,
plus an int8 copy of one patch except for a 1x1 filter without padding, whose input
pixels are read in place; ``nnrt_conv2d_1x1_s8`` computes the same with the same
scratch and stays in the API, but is not emitted, so that a firmware links one entry),
3x3 depthwise ones without a fused pool ``nnrt_depthwise_conv2d_opt_s8``; other
depthwise filters, grouped ones and fused pools the generic entries. A firmware links
only the kernels its ops name. Where the planner wants no scratch (``scratch_free``,
memory first) a one-group conv runs ``nnrt_conv2d_opt_s8``, which keeps its columns in
its own not-yet-written output.

The activation-range and padding arithmetic is TFLM's (:mod:`nnopt.arith`); the
weight requantisation here (:func:`weight_requant`) is shared with ``lowering.fc``, the
per-tensor check is :func:`.common.per_tensor_quant`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..arith import (
    FLT_MAX,
    INT8_MAX,
    INT8_MIN,
    activation_range_float,
    activation_range_int8,
    activation_range_int16,
    out_size_and_padding,
)
from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import ConvOptions, Graph, Op, PoolOptions, Tensor
from ..multiplier import quantize_multiplier
from . import specialize
from .base import EmitContext, LoweringBase
from .call import (
    NULL,
    AddressOf,
    Arg,
    Body,
    Call,
    Dec,
    Grouped,
    KernelCall,
    KernelCheck,
    Params,
    Raw,
    ScratchArg,
    TensorArg,
    lit,
)
from .common import check_activation, per_tensor_quant
from .specialize import SPECIALIZABLE

_SUPPORTED_HINT = ("supported: int8 activations with symmetric int8 weights (per-tensor or "
                   "per-channel) and int32 bias; int16 activations (zero point 0) with int8 "
                   "weights and an int64 bias (16x8); or float32 activations, weights and "
                   "bias")
_SUPPORTED_HINT_16X8 = ("16x8 quantisation: int16 input and output with zero point 0, "
                        "int8 weights, an optional int64 bias (required by a depthwise "
                        "conv), requantisation shifts <= 7")


# ----- checks and requantisation (shared with lowering.fc) -----

def refuse_dtypes(op: Op, graph: Graph, x: Tensor, w: Tensor, y: Tensor,
                  bias: Tensor | None) -> str:
    """Raise for an unsupported dtype combination; the kind: "s8" (int8), "s16" (int16
    activations with int8 weights, 16x8) or "f32"."""
    where = f"op {op.index} ({op.opcode})"
    if x.dtype == DType.INT16:
        _check_16x8(op, x, w, y, bias)
        return "s16"
    if x.dtype == DType.UINT8 or w.dtype == DType.UINT8:
        raise UnsupportedError(
            f"{where}: tensor {x.index if x.dtype == DType.UINT8 else w.index} is uint8 "
            "(legacy asymmetric quantisation)",
            hint=_SUPPORTED_HINT + "; re-convert the model with int8 quantisation")
    if x.dtype == DType.FLOAT32 and w.dtype != DType.FLOAT32:
        raise UnsupportedError(
            f"{where}: hybrid op: float32 input {x.index} ({x.name}) with "
            f"{w.dtype.name.lower()} weights {w.index} ({w.name})",
            hint=_SUPPORTED_HINT + "; use full-integer quantisation or a float model")
    if x.dtype not in (DType.INT8, DType.FLOAT32) or w.dtype != x.dtype:
        raise UnsupportedError(
            f"{where}: input {x.index} is {x.dtype.name.lower()} with weights {w.index} "
            f"{w.dtype.name.lower()}", hint=_SUPPORTED_HINT)
    if y.dtype != x.dtype:
        raise UnsupportedError(
            f"{where}: output tensor {y.index} ({y.name}) is {y.dtype.name.lower()} but the "
            f"input is {x.dtype.name.lower()}", hint=_SUPPORTED_HINT)
    int8 = x.dtype == DType.INT8
    if bias is not None:
        want = DType.INT32 if int8 else DType.FLOAT32
        if bias.dtype != want:
            raise UnsupportedError(
                f"{where}: bias tensor {bias.index} ({bias.name}) is "
                f"{bias.dtype.name.lower()}, expected {want.name.lower()}",
                hint=_SUPPORTED_HINT)
    return "s8" if int8 else "f32"


def _check_16x8(op: Op, x: Tensor, w: Tensor, y: Tensor, bias: Tensor | None) -> None:
    """The 16x8 quantisation nnrt's kernels take (TFLM's int64-bias arithmetic): int16
    input and output with zero points 0, int8 weights, an int64 bias (a depthwise conv
    must have one: TFLM's 16x8 depthwise kernel reads it unconditionally)."""
    where = f"op {op.index} ({op.opcode})"
    if w.dtype != DType.INT8 or y.dtype != DType.INT16:
        raise UnsupportedError(
            f"{where}: int16 input {x.index} ({x.name}) with {w.dtype.name.lower()} weights "
            f"{w.index} and a {y.dtype.name.lower()} output {y.index}",
            hint=_SUPPORTED_HINT_16X8)
    for t, role in ((x, "input"), (y, "output")):
        if per_tensor_quant(op, t)[1] != 0:
            raise UnsupportedError(
                f"{where}: int16 {role} tensor {t.index} ({t.name}) has a non-zero zero "
                "point", hint=_SUPPORTED_HINT_16X8)
    if bias is not None and bias.dtype != DType.INT64:
        raise UnsupportedError(
            f"{where}: 16x8 bias tensor {bias.index} ({bias.name}) is "
            f"{bias.dtype.name.lower()}; nnrt takes int64 (TFLM's int32-bias 16x8 path is "
            "not implemented)", hint=_SUPPORTED_HINT_16X8)
    if bias is None and op.opcode == "DEPTHWISE_CONV_2D":
        raise UnsupportedError(
            f"{where}: a 16x8 depthwise convolution without bias (TFLM's kernel requires "
            "one)", hint=_SUPPORTED_HINT_16X8)


def weight_requant(op: Op, x: Tensor, w: Tensor, y: Tensor, channels: int, axis: int,
                   *, fc_per_tensor_rule: bool = False) -> tuple[bool, list[int], list[int]]:
    """Per-channel flag and (multiplier, shift) lists of an int8 conv/FC.

    Conv/depthwise/per-channel FC: ``double(s_in) * double(s_w) / double(s_out)``;
    per-tensor FC (``fc_per_tensor_rule``): TFLM first multiplies the two scales in
    float32 (``GetQuantizedConvolutionMultipler``).
    """
    where = f"op {op.index} ({op.opcode})"
    s_in, _ = per_tensor_quant(op, x)
    s_out, _ = per_tensor_quant(op, y)
    q = w.quant
    if q is None or not q.scale:
        raise UnsupportedError(
            f"{where}: weights tensor {w.index} ({w.name}) has no quantisation parameters",
            hint=_SUPPORTED_HINT)
    per_channel = q.per_channel
    if per_channel and (len(q.scale) != channels or q.axis != axis):
        raise UnsupportedError(
            f"{where}: weights tensor {w.index} ({w.name}) has {len(q.scale)} scales on "
            f"axis {q.axis}; expected 1 or {channels} on axis {axis}",
            hint="per-channel weights are quantised along the output channels")
    if any(z != 0 for z in q.zero_point) and (per_channel or not fc_per_tensor_rule):
        raise UnsupportedError(
            f"{where}: weights tensor {w.index} ({w.name}) is asymmetric "
            f"(zero point {max(q.zero_point, key=abs)})",
            hint="int8 weights must be symmetric (zero point 0), as the TFLite "
                 "quantisation spec requires")
    mults: list[int] = []
    shifts: list[int] = []
    for s_w in q.scale:
        if fc_per_tensor_rule and not per_channel:
            real = float(np.float32(s_in) * np.float32(s_w)) / float(s_out)
        else:
            real = float(s_in) * float(s_w) / float(s_out)
        m, s = quantize_multiplier(real)
        if m == 0:
            # A channel whose real multiplier is below 2^-32 (TFLM encodes it as (0, 0);
            # vww_96_int8 has such dead channels) requantises to 0 at any shift, in
            # TFLM's arithmetic and in every nnrt form; shift -31 keeps it inside the fast
            # form (internal/requant.h: shifts -31..-2), so one such channel no longer
            # sends the whole layer down the per-channel reference path.
            s = -31
        mults.append(m)
        shifts.append(s)
    return per_channel, mults, shifts


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
    depthwise = op.opcode == "DEPTHWISE_CONV_2D"
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


#: ``NNRT_DW_MAX_TAPS``: the largest KH * KW of ``nnrt_depthwise_conv2d_opt_s8``.
DW_MAX_TAPS = 25

#: ``NNRT_DW_PLANE_MIN_OUTPUTS``: outputs per channel from which the generic depthwise
#: entry runs a filter other than 3x3 (of at most ``DW_MAX_TAPS`` taps) through its
#: plane path; below, the fast entry is as fast and links less.
DW_PLANE_MIN_OUTPUTS = 16


def cols_bytes(depth: int) -> int:
    """``NNRT_GEMM_COLS_BYTES``: int16 columns of two pixels of ``depth`` values (the
    scratch of ``nnrt_conv2d_1x1_s8`` / ``nnrt_conv2d_im2col_s8``)."""
    return 16 * ((depth + 3) // 4)


def im2col_bytes(filter_h: int, filter_w: int, channels: int) -> int:
    """``nnrt_conv2d_im2col_s8_get_buffer_size``: the columns plus an int8 staging copy
    of one patch."""
    depth = filter_h * filter_w * channels
    return cols_bytes(depth) + (depth + 3) // 4 * 4


@dataclass(frozen=True)
class Variant:
    """The nnrt kernel an op runs (chosen at build time) and its scratch bytes."""

    function: str
    scratch: int


def choose_variant(g: _ConvGeom, kind: str) -> Variant:
    """The fastest kernel of ``nnrt/kernels/conv.h`` that takes this geometry and
    ``kind`` (``refuse_dtypes``); a firmware links only the variants its ops name."""
    if kind != "s8":  # float32 and 16x8: one generic kernel each, no scratch
        return Variant(f"nnrt_{'depthwise_conv2d' if g.depthwise else 'conv2d'}_{kind}", 0)
    if g.pool is not None:
        return Variant("nnrt_depthwise_conv2d_s8" if g.depthwise else "nnrt_conv2d_s8", 0)
    if g.depthwise:
        # 3x3 filters: the fast entry (the plane path in assembly on DSP cores); others
        # the generic one where its plane path in C takes them (every filter over
        # DW_MAX_TAPS taps): a firmware whose depthwise ops are all 3x3 links neither
        taps = g.filter_h * g.filter_w
        fast = (g.filter_h == 3 and g.filter_w == 3) or (
            taps <= DW_MAX_TAPS and g.output_h * g.output_w < DW_PLANE_MIN_OUTPUTS)
        return Variant("nnrt_depthwise_conv2d_opt_s8" if fast else "nnrt_depthwise_conv2d_s8", 0)
    if g.filter_c != g.input_c:  # grouped
        return Variant("nnrt_conv2d_s8", 0)
    if g.filter_h == 1 and g.filter_w == 1 and g.pad_top == 0 and g.pad_left == 0:
        # the im2col entry reads a pointwise conv's input pixels in place (no staging,
        # scratch = the columns only): one entry serves both, the 1x1 one is not linked
        return Variant("nnrt_conv2d_im2col_s8", cols_bytes(g.input_c))
    return Variant("nnrt_conv2d_im2col_s8", im2col_bytes(g.filter_h, g.filter_w, g.input_c))


def specialized_ops(graph: Graph, mode: str) -> frozenset[int]:
    """The convolutions of ``graph`` that code generation specialises under ``mode``
    (``--specialize``): int8 ones that run the matrix core with constant weights, as
    :func:`nnopt.lowering.specialize.choose` rules."""
    candidates: list[specialize.Candidate] = []
    if specialize.check_mode(mode) == "off":
        return frozenset()
    for op in graph.ops:
        if op.opcode != "CONV_2D" or len(op.inputs) < 2:
            continue
        try:
            g = _geometry(graph, op)
            bias = _bias(graph, op, g.output_c)
        except UnsupportedError:
            continue  # run on views (folded padding ...): not emitted by this lowering
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        if (x.dtype != DType.INT8 or not w.is_constant
                or (bias is not None and not bias.is_constant)):
            continue
        if _op_variant(g, op, "s8").function in specialize.SPECIALIZABLE:
            candidates.append(specialize.Candidate(
                op.index, g.batches * g.output_h * g.output_w * g.output_c))
    return specialize.choose(mode, candidates)


def _op_variant(g: _ConvGeom, op: Op, kind: str) -> Variant:
    """choose_variant, unless the planner asked for no scratch at this op (memory
    first): then ``nnrt_conv2d_opt_s8``: the same matrix core with its columns in the
    op's own output (only the last pixels slower). Called directly, not through
    ``nnrt_conv2d_s8``, so that the generic entry (grouped convs, fused pools) is linked
    only by models that have such ops."""
    v = choose_variant(g, kind)
    if v.scratch and getattr(op.options, "scratch_free", False):
        return Variant("nnrt_conv2d_opt_s8", 0)
    return v


@dataclass(frozen=True)
class _Requant:
    """An int8 conv's offsets, activation range and per-channel requantisation: its
    multiplier and shift arrays emitted as constants, or ("NULL" both) the channel
    records of its specialised matrix core (``records``: their array)."""

    z_in: int
    z_out: int
    lo: int
    hi: int
    per_channel: bool
    shifts: list[int]
    mult: str
    shift: str
    records: str | None = None


def _records(graph: Graph, op: Op) -> list[int] | None:
    """The channel records of the int8 conv op's specialised matrix core, or None (a
    channel outside the folded form): :func:`.specialize.records_for`."""
    assert isinstance(op.options, ConvOptions)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    y = graph.tensors[op.outputs[0]]
    _, z_in = per_tensor_quant(op, x)
    s_out, z_out = per_tensor_quant(op, y)
    channels = y.shape[3]
    per_channel, mults, shifts = weight_requant(op, x, w, y, channels, 0)
    lo, hi = activation_range_int8(op.options.activation, s_out, z_out)
    if not per_channel:
        mults, shifts = mults * channels, shifts * channels
    bias = _bias(graph, op, channels)
    biases = [int(v) for v in bias.array()] if bias is not None else [0] * channels
    return specialize.records_for(w.array().reshape(channels, -1), biases, mults, shifts,
                                  z_in, z_out, lo, hi)


def _requant(ctx: EmitContext, x: Tensor, w: Tensor, y: Tensor, depthwise: bool,
             records: bool = False) -> _Requant:
    """records: the op's specialised matrix core takes channel records
    (:meth:`ConvLowering.records`)."""
    op = ctx.op
    assert isinstance(op.options, ConvOptions)
    _, z_in = per_tensor_quant(op, x)
    s_out, z_out = per_tensor_quant(op, y)
    per_channel, mults, shifts = weight_requant(op, x, w, y, y.shape[3],
                                                3 if depthwise else 0)
    lo, hi = activation_range_int8(op.options.activation, s_out, z_out)
    rec = _records(ctx.graph, op) if records else None
    if rec is not None:
        return _Requant(z_in, z_out, lo, hi, per_channel, shifts, "NULL", "NULL",
                        ctx.const_array("rq", np.array(rec, dtype=np.int32)))
    mult = ctx.const_array("mult", np.array(mults, dtype=np.int32))
    shift = ctx.const_array("shift", np.array(shifts, dtype=np.int32))
    return _Requant(z_in, z_out, lo, hi, per_channel, shifts, mult, shift)


def _requant16(ctx: EmitContext, x: Tensor, w: Tensor, y: Tensor,
               depthwise: bool) -> dict[str, Any]:
    """The fields of ``nnrt_conv_s16_params_t`` after the geometry: the int16 activation
    range and the per-channel requantisation (constant arrays)."""
    op = ctx.op
    assert isinstance(op.options, ConvOptions)
    s_out, _ = per_tensor_quant(op, y)
    per_channel, mults, shifts = weight_requant(op, x, w, y, y.shape[3],
                                                3 if depthwise else 0)
    lo, hi = activation_range_int16(op.options.activation, s_out, 0)
    return {"act_min": lo, "act_max": hi, "per_channel": 1 if per_channel else 0,
            "multiplier": Raw(ctx.const_array("mult", np.array(mults, dtype=np.int32))),
            "shift": Raw(ctx.const_array("shift", np.array(shifts, dtype=np.int32)))}


class ConvLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/conv.h",)
    checks: Sequence[KernelCheck] = (
        KernelCheck(("nnrt_conv2d_s8", "nnrt_conv2d_opt_s8", "nnrt_conv2d_1x1_s8",
                     "nnrt_conv2d_im2col_s8"), "nnrt_conv_s8_check", "nnrt/kernels/conv.h",
                    extra=(lit(0),)),
        KernelCheck(("nnrt_depthwise_conv2d_s8", "nnrt_depthwise_conv2d_opt_s8"),
                    "nnrt_conv_s8_check", "nnrt/kernels/conv.h", extra=(lit(1),)),
        KernelCheck(("nnrt_conv2d_s16",), "nnrt_conv_s16_check", "nnrt/kernels/conv.h",
                    extra=(lit(0),)),
        KernelCheck(("nnrt_depthwise_conv2d_s16",), "nnrt_conv_s16_check",
                    "nnrt/kernels/conv.h", extra=(lit(1),)))
    dtypes: Sequence[str] = ("int8", "int16", "float32")  # int16: 16x8, int8 weights

    def check(self, graph: Graph, op: Op) -> None:
        g = _geometry(graph, op)
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        bias = _bias(graph, op, g.output_c)
        kind = refuse_dtypes(op, graph, x, w, y, bias)
        if kind == "s16" and g.pool is not None:
            raise UnsupportedError(
                f"op {op.index} ({op.opcode}): a max pool folded into a 16x8 convolution",
                hint=_SUPPORTED_HINT_16X8)
        if kind != "f32":
            _, _, shifts = weight_requant(op, x, w, y, g.output_c, 3 if g.depthwise else 0)
            if kind == "s16" and max(shifts) > 7:
                raise UnsupportedError(
                    f"op {op.index} ({op.opcode}): a requantisation shift of {max(shifts)} "
                    "(TFLM's 16x8 arithmetic takes at most 7)", hint=_SUPPORTED_HINT_16X8)

    def variant(self, graph: Graph, op: Op) -> Variant:
        g = _geometry(graph, op)
        return _op_variant(g, op, _kind(graph, op))

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return self.variant(graph, op).scratch

    def window_call(self, ctx: EmitContext, geom: dict[str, Any],
                    variant: Variant | None, records: bool = False) -> KernelCall:
        """The call on whole tensors with the geometry ``geom`` (padding as given) and
        the kernel ``variant`` (None: the generic entry): callers running the op on
        sub-views change its geometry. The parameters are the ones :meth:`emit`
        writes; records: the caller runs the op's specialised core where it has one
        (``codegen.views.spec_core``), so an op whose core takes channel records
        (:meth:`records`) gets parameters without multipliers and shifts, and no bias
        argument."""
        graph, op = ctx.graph, ctx.op
        o = op.options
        assert isinstance(o, ConvOptions)
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        bias = graph.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
        dw = op.opcode == "DEPTHWISE_CONV_2D"
        kind = _kind(graph, op)
        fn = f"nnrt_{'depthwise_conv2d' if dw else 'conv2d'}_{kind}"
        scratch: tuple[Arg, ...] = ()
        if variant is not None:
            fn = variant.function
            if variant.scratch:
                scratch = (ScratchArg(),)
        # channel records: the sub-views run the specialised core (codegen.views), which
        # reads neither the bias nor these params' multipliers and shifts
        rec = (records and kind == "s8" and variant is not None
               and variant.function in SPECIALIZABLE and self.records(ctx))
        w_arg = ctx.ptr(w.index)
        b_arg: Arg = ctx.ptr(bias.index) if bias is not None and not rec else NULL
        args = (AddressOf("params"), TensorArg(x.index), w_arg, b_arg, TensorArg(y.index),
                *scratch)
        fields: dict[str, Any] = {"geom": geom}
        elem = {"s8": "int8_t", "s16": "int16_t", "f32": "float"}[kind]
        if kind == "s16":
            fields.update(_requant16(ctx, x, w, y, dw))
            return KernelCall(Params("nnrt_conv_s16_params_t", fields), Call(fn, args), elem)
        if kind == "s8":
            q = _requant(ctx, x, w, y, dw, rec)
            fields.update({"input_offset": -q.z_in, "output_offset": q.z_out,
                           "act_min": q.lo, "act_max": q.hi,
                           "per_channel": 1 if q.per_channel else 0,
                           "multiplier": Raw(q.mult), "shift": Raw(q.shift),
                           "pool": Raw("NULL")})
            return KernelCall(Params("nnrt_conv_s8_params_t", fields), Call(fn, args), elem)
        flo, fhi = activation_range_float(o.activation)
        fields.update({"act_min": Dec(flo), "act_max": Dec(fhi), "pool": Raw("NULL")})
        return KernelCall(Params("nnrt_conv_f32_params_t", fields), Call(fn, args), elem)

    def spec_core(self, ctx: EmitContext) -> specialize.SpecNames | None:
        """Declare the op's specialised matrix core (``ctx.decl``) where
        ``--specialize`` gives the op one, for callers that run it on sub-views (bands,
        patches, folded padding); its symbols, or None. Raises UnsupportedError for a
        geometry this lowering does not take whole."""
        declared: list[list[str]] = []
        self.emit(replace(ctx, decl=declared.append))
        if not declared or ctx.decl is None:
            return None
        for block in declared:
            ctx.decl(block)
        return specialize.SpecNames(specialize.core_symbol(ctx.op.index),
                                    specialize.pair_symbol(ctx.model, ctx.op.index),
                                    specialize.spec_symbol(ctx.model, ctx.op.index))

    def records(self, ctx: EmitContext) -> bool:
        """Whether the int8 conv ctx.op gets a specialised matrix core that takes
        channel records (where its channels have them: :func:`_requant`): the mode
        specialises it, its weights are an array of the model source, ``ctx.decl``
        takes declarations. One rule for the op's own body and its sub-views."""
        graph, op = ctx.graph, ctx.op
        return (ctx.decl is not None and op.index in specialized_ops(graph, ctx.specialize)
                and ctx.weight_array(op.inputs[1]) is not None
                and _records(graph, op) is not None)

    def _declare_spec(self, ctx: EmitContext, g: _ConvGeom, params: Params, bias: Tensor | None,
                      q: _Requant) -> bool:
        """Declare the specialised function of an int8 conv (True) where the mode, the
        constant weights and ``ctx.decl`` allow it."""
        graph, op = ctx.graph, ctx.op
        w = graph.tensors[op.inputs[1]]
        w_ident = ctx.weight_array(w.index)
        b_ident = (ctx.weight_array(bias.index) if bias is not None and q.records is None
                   else None)
        if (ctx.decl is None or w_ident is None
                or (bias is not None and b_ident is None and q.records is None)
                or op.index not in specialized_ops(graph, ctx.specialize)):
            return False
        ctx.decl(specialize.conv_gemm_lines(specialize.ConvGemmSpec(
            op_index=op.index, model=ctx.model, params=params,
            params_name=f"op{op.index}_params",
            depth=g.filter_h * g.filter_w * g.input_c, channels=g.output_c,
            filter_ident=w_ident, bias_ident=b_ident, mult_ident=q.mult,
            shift_ident=q.shift, per_channel=q.per_channel, output_offset=q.z_out,
            act_min=q.lo, act_max=q.hi, shifts=q.shifts, records_ident=q.records)))
        return True

    def emit(self, ctx: EmitContext) -> Body:
        graph, op = ctx.graph, ctx.op
        g = _geometry(graph, op)
        assert isinstance(op.options, ConvOptions)
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        bias = _bias(graph, op, g.output_c)
        kind = refuse_dtypes(op, graph, x, w, y, bias)
        int8 = kind == "s8"
        rows = (("batches", "input_h", "input_w", "input_c"),
                ("output_h", "output_w", "output_c"), ("filter_h", "filter_w", "filter_c"),
                ("stride_h", "stride_w", "dilation_h", "dilation_w"), ("pad_top", "pad_left"))
        geom = Grouped({k: getattr(g, k) for row in rows for k in row}, rows)
        body: Body = []
        pool: Any = Raw("NULL")
        if g.pool is not None:
            p = g.pool
            if int8:
                s_out, z_out = per_tensor_quant(op, y)
                plo, phi = activation_range_int8(p.activation, s_out, z_out)
                flo, fhi = -FLT_MAX, FLT_MAX
            else:
                plo, phi = INT8_MIN, INT8_MAX
                flo, fhi = activation_range_float(p.activation)
            body.append(Params("nnrt_conv_pool_t", {
                "output_h": p.output_h, "output_w": p.output_w, "filter_h": p.filter_h,
                "filter_w": p.filter_w, "stride_h": p.stride_h, "stride_w": p.stride_w,
                "pad_top": p.pad_top, "pad_left": p.pad_left, "act_min": plo,
                "act_max": phi, "act_min_f": Dec(flo), "act_max_f": Dec(fhi)}, "pool"))
            pool = AddressOf("pool")
        variant = _op_variant(g, op, kind)
        rec = int8 and self.records(ctx)
        b_arg: Arg = ctx.ptr(bias.index) if bias is not None and not rec else NULL
        scratch: tuple[Arg, ...] = (ScratchArg(),) if variant.scratch else ()
        args = (ctx.ptr(x.index), ctx.ptr(w.index), b_arg, ctx.ptr(y.index), *scratch)
        if kind == "s16":
            self.check(graph, op)  # no fused pool, shifts within TFLM's 16x8 range
            params = Params("nnrt_conv_s16_params_t",
                            {"geom": geom, **_requant16(ctx, x, w, y, g.depthwise)})
        elif int8:
            q = _requant(ctx, x, w, y, g.depthwise, rec)
            params = Params("nnrt_conv_s8_params_t", {
                "geom": geom, "input_offset": -q.z_in, "output_offset": q.z_out,
                "act_min": q.lo, "act_max": q.hi, "per_channel": 1 if q.per_channel else 0,
                "multiplier": Raw(q.mult), "shift": Raw(q.shift), "pool": pool})
            if self._declare_spec(ctx, g, params, bias, q):
                return [Call(specialize.spec_symbol(ctx.model, op.index),
                             (TensorArg(x.index), TensorArg(y.index),
                              ScratchArg() if variant.scratch else NULL), wrap=False)]
        else:
            lo_f, hi_f = activation_range_float(op.options.activation)
            params = Params("nnrt_conv_f32_params_t", {
                "geom": geom, "act_min": Dec(lo_f), "act_max": Dec(hi_f), "pool": pool})
        return [*body, params, Call(variant.function, (AddressOf("params"), *args), wrap=False)]


CONV = ConvLowering()

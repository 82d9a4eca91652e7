"""A convolution's requantisation: the per-channel (multiplier, shift) of int8 weights
(:func:`weight_requant`, shared with ``lowering.fc`` and ``lowering.transpose_conv``),
and the constants an int8 or 16x8 conv's parameters point at (:func:`_requant`,
:func:`_requant16`; channel records of a specialised core: :func:`_records`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arith import (
    activation_range_int8,
    activation_range_int16,
)
from ..errors import UnsupportedError
from ..ir import ConvOptions, Graph, Op, Tensor
from ..multiplier import quantize_multiplier
from . import gemm_pairs, specialize
from .base import EmitContext
from .call import (
    Raw,
)
from .common import per_tensor_quant
from .conv_checks import _SUPPORTED_HINT
from .conv_geometry import _bias


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
    # with records, where the target core takes it (OFFSET_BIAS): each channel's bias
    # plus the input offset times its weight sum, for Helium's matrix core
    bias_off: tuple[int, ...] | None = None


#: The constant form of :attr:`_Requant.bias_off` (a name of
#: :attr:`nnopt.firmware.cores.Core.weight_layouts`).
OFFSET_BIAS = "offset-bias"


def offset_biases(graph: Graph, op: Op) -> np.ndarray:
    """Per output channel of the int8 conv op: bias + input_offset * sum of the channel's
    weights, wrapped to int32 as the kernels' sums (internal/gemm.h, ``bias_off``)."""
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    _, z_in = per_tensor_quant(op, x)
    channels = graph.tensors[op.outputs[0]].shape[3]
    bias = _bias(graph, op, channels)
    b = (np.asarray(bias.array(), dtype=np.int64) if bias is not None
         else np.zeros(channels, dtype=np.int64))
    sums = w.array().reshape(channels, -1).astype(np.int64).sum(axis=1)
    v = (b - z_in * sums) & 0xFFFFFFFF
    out: np.ndarray = np.where(v >= 2**31, v - 2**32, v).astype(np.int32)
    return out


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
             records: bool = False, layout: str | None = None) -> _Requant:
    """records: the op's specialised matrix core takes channel records
    (:meth:`nnopt.lowering.conv.ConvLowering.records`); layout: its weights' layout of
    :mod:`.gemm_pairs`, if any (the pair rows: the records' mixed start values; int16:
    the records in its blocks)."""
    op = ctx.op
    assert isinstance(op.options, ConvOptions)
    _, z_in = per_tensor_quant(op, x)
    s_out, z_out = per_tensor_quant(op, y)
    per_channel, mults, shifts = weight_requant(op, x, w, y, y.shape[3],
                                                3 if depthwise else 0)
    lo, hi = activation_range_int8(op.options.activation, s_out, z_out)
    rec = _records(ctx.graph, op) if records else None
    if rec is not None and layout == gemm_pairs.GEMM_PAIRS_LAYOUT:
        rec = gemm_pairs.mixed_records(rec, y.shape[3])
    elif rec is not None and layout == gemm_pairs.INT16_LAYOUT:
        rec = gemm_pairs.block_records(rec, y.shape[3])
    if rec is not None:
        # only where the target's core asks for it (an unknown core: not)
        bias_off = (tuple(int(v) for v in offset_biases(ctx.graph, op))
                    if ctx.weight_layouts is not None and OFFSET_BIAS in ctx.weight_layouts
                    else None)
        return _Requant(z_in, z_out, lo, hi, per_channel, shifts, "NULL", "NULL",
                        ctx.const_array("rq", np.array(rec, dtype=np.int32)), bias_off)
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

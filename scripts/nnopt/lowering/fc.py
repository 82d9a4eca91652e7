"""FULLY_CONNECTED -> ``nnrt_fully_connected_s8`` / ``nnrt_fully_connected_f32``.

Supported (bit-exact with TFLM's reference kernels, see ``nnrt/kernels/fc.h``):

- int8 activations with int8 weights quantised per tensor (TFLM then applies a weights
  zero point, so an asymmetric per-tensor weight is accepted) or per channel along the
  units (axis 0, symmetric), optional int32 bias;
- float32 activations, weights and optional bias;
- any input rank: the input is flattened to ``[batches, depth]`` with ``depth`` the
  weights' inner dimension, ``batches`` from the output shape (``keep_num_dims`` only
  changes the output shape, not the bytes);
- fused NONE/RELU/RELU6/RELU_N1_TO_1.

- int16 activations with int8 weights (16x8, ``nnrt_fully_connected_s16``): input and
  output zero points 0, weights per tensor (TFLM applies their zero point) or per
  channel (symmetric), an optional int64 bias, requantisation shifts <= 7;

The int8 ops code generation specialises (:func:`specialized_fc_ops`) have their
weights written in the row-pair layout of nnrt's ``internal/fc_pairs.h``
(:func:`pair_layout`) when the op alone reads them and its depth is at most
:data:`PAIRS_MAX_DEPTH`: the array in the model source holds that layout instead of the
tensor's own order (``EmitContext.laid_out_weight``, one copy), and the specialised
function runs ``nnrt_fc_pairs_body()``. Where the target's core asks for it by name
(``fc-int16``: the M4 and M7) and the board's flash holds twice those weights
(:func:`fit_flash`), they are widened to int16 instead (:func:`int16_layout`,
``nnrt_fc_int16_body()``); on the M33 without DSP packed two units to a word
(:func:`pack23_layout`), under the same flash rule. Every other reader (the generic
kernel, streamed weights, the model blob, weights several ops share) keeps the row-major
order.

Refused with an :class:`UnsupportedError` naming op and tensor: a 16x8 op with an int32
bias (the installed TFLM runs it with a 32-bit accumulator whose rounding nnrt does not
reproduce), uint8, hybrid (float32 activations with int8 weights), int4 weights, asymmetric
per-channel weights, TANH/SIGN_BIT fused activations, inconsistent shapes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..arith import activation_range_float, activation_range_int8, activation_range_int16
from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import FullyConnectedOptions, Graph, Op, Tensor
from . import gemm_pairs, specialize
from .base import EmitContext, LoweringBase
from .call import (
    NULL,
    AddressOf,
    Arg,
    Body,
    Call,
    Dec,
    FcSpec,
    KernelCheck,
    Params,
    Raw,
    TensorArg,
)
from .common import check_activation, per_tensor_quant
from .conv_checks import refuse_dtypes
from .conv_requant import weight_requant


def _shapes(graph: Graph, op: Op) -> tuple[int, int, int, Tensor | None]:
    """(batches, accum_depth, output_depth, bias) after validating the op."""
    where = f"op {op.index} ({op.opcode})"
    if not isinstance(op.options, FullyConnectedOptions):
        raise UnsupportedError(f"{where}: missing fully-connected options")
    if len(op.inputs) < 2 or len(op.outputs) != 1 or op.inputs[0] < 0 or op.inputs[1] < 0:
        raise UnsupportedError(f"{where}: expected input, weights, optional bias and one "
                               "output")
    check_activation(op, op.options.activation)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    y = graph.tensors[op.outputs[0]]
    if len(w.shape) != 2:
        raise UnsupportedError(f"{where}: weights tensor {w.index} ({w.name}) has shape "
                               f"{list(w.shape)}; expected [units, depth]")
    if not y.shape:
        raise UnsupportedError(f"{where}: output tensor {y.index} ({y.name}) is a scalar")
    units, depth = w.shape
    out_depth = y.shape[-1]
    batches = math.prod(y.shape[:-1])
    if out_depth != units or batches < 1 or depth < 1:
        raise UnsupportedError(
            f"{where}: output tensor {y.index} ({y.name}) shape {list(y.shape)} does not "
            f"match weights {w.index} shape {list(w.shape)}")
    if x.num_elements != batches * depth:
        raise UnsupportedError(
            f"{where}: input tensor {x.index} ({x.name}) has {x.num_elements} elements, "
            f"expected {batches} rows of {depth} (output shape {list(y.shape)})")
    bias = None
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        bias = graph.tensors[op.inputs[2]]
        if bias.num_elements != units:
            raise UnsupportedError(f"{where}: bias tensor {bias.index} ({bias.name}) has "
                                   f"{bias.num_elements} elements, expected {units}")
    return batches, depth, units, bias


#: Name of the row-pair weight layout (the comment on the array in the model source).
PAIRS_LAYOUT = "row-pair"
#: The deepest input row the row-pair kernel takes: its int16 copy of the row is on the
#: stack of the specialised function (2 bytes per input, 2 KB at most).
PAIRS_MAX_DEPTH = 1024


def pair_layout(w: np.ndarray) -> np.ndarray | None:
    """int8 weights ``[units, depth]`` in the row-pair layout of nnrt's
    ``internal/fc_pairs.h`` (whose comment describes it; this is its one definition in
    Python): per whole group of 4 units, per chunk of 4 inputs, 4 words of two units x
    two inputs, each halfword the int16 ``256 * w_b + w_a``; then the group's
    ``depth % 4`` last inputs row-major; the ``units % 4`` last units row-major. Same
    size and dtype. None when the layout does not apply: fewer than 4 units or inputs,
    or a pair whose halfword is not an int16 (``w_b = -128`` with ``w_a < 0``)."""
    units, depth = w.shape
    if units < 4 or depth < 4 or w.dtype != np.int8:
        return None
    groups, d4, tail = units // 4, depth & ~3, depth % 4
    rows = w[:4 * groups].astype(np.int16).reshape(groups, 2, 2, depth)  # [g][pair][a|b]
    low, high = rows[:, :, 0, :], rows[:, :, 1, :]
    h = high - (low < 0)  # the high byte of each halfword 256 * w_b + w_a
    if (h < -128).any():
        return None
    chunks = d4 // 4
    # input d = 4 c + 2 m + q: chunk c, word parity q (inputs d, d + 2 / d + 1, d + 3),
    # m the first or second halfword of the word
    def by_word(v: np.ndarray) -> np.ndarray:  # [g][p][d4] -> [g][c][q][p][m]
        return v[:, :, :d4].reshape(groups, 2, chunks, 2, 2).transpose(0, 2, 4, 1, 3)
    words = np.stack([by_word(low), by_word(h)], axis=-1)  # bytes [w_a, h_b] per halfword
    blocks = np.concatenate([words.reshape(groups, 16 * chunks),
                             w[:4 * groups].reshape(groups, 4, depth)[:, :, d4:]
                             .reshape(groups, 4 * tail)], axis=1)
    out = np.concatenate([blocks.reshape(-1), w[4 * groups:].reshape(-1)])
    return out.astype(np.int8)


#: Name of the packed layout of cores without SMLAD (``internal/fc_pack23.h``: two units'
#: weights in one int32, one SMLAL for both; twice the tensor's bytes).
PACK23_LAYOUT = "fc-pack23"
#: The deepest input row it takes (its int16 copy of the row on the function's stack).
PACK23_MAX_DEPTH = 1024


def pack23_layout(w: np.ndarray) -> np.ndarray:
    """int8 weights ``[units, depth]`` in the packed layout of nnrt's
    ``internal/fc_pack23.h`` (whose comment describes it; this is its one definition in
    Python): per unit pair (2p, 2p + 1) and input d the int32 ``w[2p][d] + w[2p + 1][d] *
    2^23`` (an odd last unit paired with zeros), the pairs in groups of 4, per group
    input-major ([d][pair of the group])."""
    units, depth = w.shape
    pairs = (units + 1) // 2
    v = np.zeros((2 * pairs, depth), dtype=np.int64)
    v[:units] = w
    words = v[0::2] + v[1::2] * (1 << 23)  # [pair][d]
    out = [words[g:g + 4].T.reshape(-1) for g in range(0, pairs, 4)]
    return np.concatenate(out).astype(np.int32)


#: Name of the widened layout of the DSP cores (``internal/fc_int16.h``: the weights as
#: int16, 4 units' words for the same inputs in a row, one SMLAD per 2 MACs; twice the
#: tensor's bytes).
INT16_LAYOUT = "fc-int16"


def int16_layout(w: np.ndarray) -> np.ndarray | None:
    """int8 weights ``[units, depth]`` widened to int16 in the layout of nnrt's
    ``internal/fc_int16.h`` (whose comment describes it; this is its one definition in
    Python): per whole group of 4 units, per chunk of 4 inputs d, 8 words: unit r's
    (d, d + 2) for r < 4, then unit r's (d + 1, d + 3); then the group's ``depth % 4``
    last inputs row-major; the ``units % 4`` last units after the groups in the same
    order (as a group of that many units). The same number of values, int16. None for
    fewer than 4 units or inputs (the row pairs' rule)."""
    units, depth = w.shape
    if units < 4 or depth < 4 or w.dtype != np.int8:
        return None
    d4 = depth & ~3

    def group(g: np.ndarray) -> np.ndarray:  # [n][depth] -> the group's values
        n = g.shape[0]
        # input d = 4 c + 2 m + q: chunk c, word parity q, m the word's first or second
        # half: [c][q][unit][m]
        chunks = g[:, :d4].reshape(n, d4 // 4, 2, 2).transpose(1, 3, 0, 2)
        return np.concatenate([chunks.reshape(-1), g[:, d4:].reshape(-1)])

    v = w.astype(np.int16)
    parts = [group(v[o:o + 4]) for o in range(0, units, 4)]
    return np.concatenate(parts).astype(np.int16)


#: The layouts that take twice the int8 tensor's bytes: taken only where the board's
#: flash holds them (:func:`fit_flash`).
DOUBLED_LAYOUTS = frozenset({PACK23_LAYOUT, INT16_LAYOUT, gemm_pairs.INT16_LAYOUT})


def _wide_candidate(graph: Graph, op: Op) -> int:
    """The int8 weight bytes of ``op`` when it is a fully connected op a doubled layout
    may be written for (int8, constant weights that it alone reads, depth within the
    layouts' bound), else 0."""
    if op.opcode != "FULLY_CONNECTED" or len(op.inputs) < 2:
        return 0
    try:
        _, depth, units, _ = _shapes(graph, op)
    except UnsupportedError:
        return 0
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    if (x.dtype != DType.INT8 or not w.is_constant or depth > PAIRS_MAX_DEPTH
            or graph.consumers.get(w.index) != (op.index,)):
        return 0
    return units * depth + 4 * depth  # pack23 pads an odd unit with a zero one


def fit_flash(graph: Graph, layouts: frozenset[str] | None,
              spare_bytes: int | None) -> frozenset[str] | None:
    """``layouts`` (:attr:`EmitContext.weight_layouts`) without the doubled ones
    (:data:`DOUBLED_LAYOUTS`) when the bytes they would add to ``graph``'s flash, the
    int8 weights of every fully connected op that may take one (an upper bound), exceed
    ``spare_bytes`` (the board's flash left beside the weights and the code reserve;
    None: no board, nothing to weigh); the convolutions' int16 layout
    (:data:`.gemm_pairs.INT16_LAYOUT`) only where the FCs' and the convolutions'
    (:func:`.gemm_pairs.wide_bytes`) fit together. The int8 layouts stay: a part whose
    flash cannot take the wider weights runs the row pairs (the pair rows)."""
    if layouts is None or spare_bytes is None or not layouts & DOUBLED_LAYOUTS:
        return layouts
    fc_extra = sum(_wide_candidate(graph, op) for op in graph.ops)
    if gemm_pairs.INT16_LAYOUT in layouts:
        # the convolutions' int16 layout (lowering.gemm_pairs) only where the FCs' and
        # theirs fit together; the FCs' first, as before it existed
        conv_extra = sum(gemm_pairs.wide_bytes(graph, op) for op in graph.ops)
        if fc_extra + conv_extra <= spare_bytes:
            return layouts
        layouts = layouts - {gemm_pairs.INT16_LAYOUT}
    return layouts if fc_extra <= spare_bytes else layouts - DOUBLED_LAYOUTS


def _widens(layouts: frozenset[str] | None, units: int, depth: int) -> bool:
    """Whether a specialised FC of these shapes takes the int16 layout: only where the
    target's core asks for it by name and its flash holds it (:func:`fit_flash`)."""
    return (layouts is not None and INT16_LAYOUT in layouts and 4 <= depth <= PAIRS_MAX_DEPTH
            and units >= 4)


#: Specialising the int8 fully connected op (``--specialize``, measured on Cortex-M7:
#: :mod:`.specialize`).
FC_SPEC = specialize.SpecCost("nnrt_fully_connected_s8", gain_per_output=20, spec_bytes=620,
                              generic_bytes=770)


def fc_gain_per_output(depth: int, row_pairs: bool) -> int:
    """Instructions a specialised int8 fully connected op saves per output value, lower
    bound: the kernel's 20, and with its weights in the row-pair layout half an
    instruction per MAC more (measured 0.73-1.3 per MAC over the generic kernel with
    `bench_firmware.py --profile`, ``--specialize off`` against ``auto``: ad01_int8's
    depths 8, 128 and 640, lenet5_int8's 84 and 120, kws_ref_model's 64)."""
    return FC_SPEC.gain_per_output + (depth // 2 if row_pairs else 0)


def _packs(layouts: frozenset[str] | None, depth: int) -> bool:
    """Whether a specialised FC of this depth takes the packed layout: only where the
    target's core asks for it by name (twice the weights' bytes: an unknown core does
    not get it)."""
    return layouts is not None and PACK23_LAYOUT in layouts and depth <= PACK23_MAX_DEPTH


def specialized_fc_ops(graph: Graph, mode: str,
                       layouts: frozenset[str] | None = None) -> frozenset[int]:
    """The int8 fully connected ops of ``graph`` with constant weights that code
    generation specialises under ``mode`` (``--specialize``,
    :func:`nnopt.lowering.specialize.choose`); ``layouts`` as
    :attr:`EmitContext.weight_layouts`."""
    if specialize.check_mode(mode) == "off":
        return frozenset()
    candidates: list[specialize.Candidate] = []
    for op in graph.ops:
        if op.opcode != "FULLY_CONNECTED" or len(op.inputs) < 2:
            continue
        try:
            batches, depth, units, bias = _shapes(graph, op)
        except UnsupportedError:
            continue
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        if (x.dtype == DType.INT8 and w.is_constant
                and (bias is None or bias.is_constant)):
            pairs = (depth <= PAIRS_MAX_DEPTH and (layouts is None or PAIRS_LAYOUT in layouts)
                     and graph.consumers.get(w.index) == (op.index,)
                     and pair_layout(w.array()) is not None) or _packs(layouts, depth)
            pairs = pairs or (_widens(layouts, units, depth)
                              and graph.consumers.get(w.index) == (op.index,))
            candidates.append(specialize.Candidate(
                op.index, batches * units, FC_SPEC, fc_gain_per_output(depth, pairs)))
    return specialize.choose(mode, candidates)


class FullyConnectedLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/fc.h",)
    checks: Sequence[KernelCheck] = (
        KernelCheck(("nnrt_fully_connected_s8",), "nnrt_fc_s8_check", "nnrt/kernels/fc.h"),
        KernelCheck(("nnrt_fully_connected_s16",), "nnrt_fc_s16_check", "nnrt/kernels/fc.h"),
        KernelCheck(("nnrt_fully_connected_f32",), "nnrt_fc_f32_check", "nnrt/kernels/fc.h"))
    dtypes: Sequence[str] = ("int8", "int16", "float32")  # int16: 16x8, int8 weights

    def check(self, graph: Graph, op: Op) -> None:
        _, _, units, bias = _shapes(graph, op)
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        kind = refuse_dtypes(op, graph, x, w, y, bias)
        if kind != "f32":
            _, _, shifts = weight_requant(op, x, w, y, units, 0, fc_per_tensor_rule=True)
            if kind == "s16" and max(shifts) > 7:
                raise UnsupportedError(
                    f"op {op.index} ({op.opcode}): a requantisation shift of {max(shifts)} "
                    "(TFLM's 16x8 arithmetic takes at most 7)",
                    hint="16x8 needs output scale >= input scale * weight scale / 128")

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return 0  # fc.h: no scratch

    def emit(self, ctx: EmitContext) -> Body:
        graph, op = ctx.graph, ctx.op
        assert isinstance(op.options, FullyConnectedOptions)
        batches, depth, units, bias = _shapes(graph, op)
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        kind = refuse_dtypes(op, graph, x, w, y, bias)
        if kind == "s16":
            self.check(graph, op)
            s_out, _ = per_tensor_quant(op, y)
            per_channel, mults, shifts = weight_requant(op, x, w, y, units, 0,
                                                        fc_per_tensor_rule=True)
            assert w.quant is not None
            lo, hi = activation_range_int16(op.options.activation, s_out, 0)
            params = Params("nnrt_fc_s16_params_t", {
                "batches": batches, "accum_depth": depth, "output_depth": units,
                "weights_offset": 0 if per_channel else -w.quant.zero_point[0],
                "act_min": lo, "act_max": hi, "per_channel": 1 if per_channel else 0,
                "multiplier": Raw(ctx.const_array("mult", np.array(mults, dtype=np.int32))),
                "shift": Raw(ctx.const_array("shift", np.array(shifts, dtype=np.int32)))})
            fn = "nnrt_fully_connected_s16"
        elif kind == "s8":
            _, z_in = per_tensor_quant(op, x)
            s_out, z_out = per_tensor_quant(op, y)
            per_channel, mults, shifts = weight_requant(op, x, w, y, units, 0,
                                                        fc_per_tensor_rule=True)
            assert w.quant is not None
            w_off = 0 if per_channel else -w.quant.zero_point[0]
            lo, hi = activation_range_int8(op.options.activation, s_out, z_out)
            mult = ctx.const_array("mult", np.array(mults, dtype=np.int32))
            shift = ctx.const_array("shift", np.array(shifts, dtype=np.int32))
            params = Params("nnrt_fc_s8_params_t", {
                "batches": batches, "accum_depth": depth, "output_depth": units,
                "input_offset": -z_in, "weights_offset": w_off, "output_offset": z_out,
                "act_min": lo, "act_max": hi, "per_channel": 1 if per_channel else 0,
                "multiplier": Raw(mult), "shift": Raw(shift)})
            fn = "nnrt_fully_connected_s8"
            if (ctx.decl is not None and op.index in specialized_fc_ops(graph, ctx.specialize,
                                                                       ctx.weight_layouts)
                    and (bias is None or bias.is_constant)):
                spec = self.specialized(ctx, w, bias, depth, params, shifts)
                if spec is not None:
                    return spec
        else:
            lo_f, hi_f = activation_range_float(op.options.activation)
            params = Params("nnrt_fc_f32_params_t", {
                "batches": batches, "accum_depth": depth, "output_depth": units,
                "act_min": Dec(lo_f), "act_max": Dec(hi_f)})
            fn = "nnrt_fully_connected_f32"
        b_arg: Arg = ctx.ptr(bias.index) if bias is not None else NULL
        args = (ctx.ptr(x.index), ctx.ptr(w.index), b_arg, ctx.ptr(y.index))
        return [params, Call(fn, (AddressOf("params"), *args), wrap=False)]

    @staticmethod
    def specialized(ctx: EmitContext, w: Tensor, bias: Tensor | None, depth: int,
                    params: Params, shifts: Sequence[int]) -> Body | None:
        """The call of the op's specialised function (declared through ``ctx.decl``),
        its weights packed (:func:`pack23_layout`) or widened to int16
        (:func:`int16_layout`) where the target's core asks for that by name and its
        flash holds them (:func:`fit_flash`), else in the row-pair layout when that
        applies, pays on the target core (:meth:`EmitContext.layout_pays`: not on Helium
        cores, whose rows read the tensor's own order) and the model source can hold
        them so (the op alone reads them, ``depth`` <= :data:`PAIRS_MAX_DEPTH`); None
        when the weights or the bias are no plain array there."""
        op = ctx.op
        if _packs(ctx.weight_layouts, depth) and (
                bias is None or ctx.weight_array(bias.index) is not None):
            # the packed words are the weights' only array (the tensor's is not named)
            b_ident = ctx.weight_array(bias.index) if bias is not None else None
            units = int(np.prod(w.shape)) // depth
            packed = ctx.const_array("wpk", pack23_layout(w.array().reshape(units, depth)))
            assert ctx.decl is not None
            ctx.decl(FcSpec(op.index, ctx.model, params, f"op{op.index}_params", packed,
                            b_ident, shifts, pack23_depth=depth))
            return [Call(specialize.spec_symbol(ctx.model, op.index),
                         (TensorArg(op.inputs[0]), TensorArg(op.outputs[0])), wrap=False)]
        w_ident = None
        units = int(np.prod(w.shape)) // depth
        if _widens(ctx.weight_layouts, units, depth) and (
                bias is None or ctx.weight_array(bias.index) is not None):
            b_ident = ctx.weight_array(bias.index) if bias is not None else None
            wide = int16_layout(w.array().reshape(units, depth))
            assert wide is not None
            w_ident = ctx.laid_out_weight(w.index, INT16_LAYOUT, wide)
            if w_ident is not None:
                assert ctx.decl is not None
                ctx.decl(FcSpec(op.index, ctx.model, params, f"op{op.index}_params",
                                w_ident, b_ident, shifts, int16_depth=depth))
                return [Call(specialize.spec_symbol(ctx.model, op.index),
                             (TensorArg(op.inputs[0]), TensorArg(op.outputs[0])),
                             wrap=False)]
        if depth <= PAIRS_MAX_DEPTH and ctx.layout_pays(PAIRS_LAYOUT):
            arranged = pair_layout(w.array())
            if arranged is not None:
                w_ident = ctx.laid_out_weight(w.index, PAIRS_LAYOUT, arranged)
        pairs = w_ident is not None
        w_ident = w_ident or ctx.weight_array(w.index)
        b_ident = ctx.weight_array(bias.index) if bias is not None else None
        if w_ident is None or (bias is not None and b_ident is None):
            return None
        assert ctx.decl is not None
        ctx.decl(FcSpec(op.index, ctx.model, params, f"op{op.index}_params",
                                   w_ident, b_ident, shifts,
                                   pairs_depth=depth if pairs else None))
        x, y = op.inputs[0], op.outputs[0]
        return [Call(specialize.spec_symbol(ctx.model, op.index),
                     (TensorArg(x), TensorArg(y)), wrap=False)]


FULLY_CONNECTED = FullyConnectedLowering()

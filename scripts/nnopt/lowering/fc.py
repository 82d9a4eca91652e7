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
from . import specialize
from .base import EmitContext, LoweringBase
from .call import NULL, AddressOf, Arg, Body, Call, Dec, KernelCheck, Params, Raw, TensorArg
from .common import per_tensor_quant
from .conv import (
    check_activation,
    refuse_dtypes,
    weight_requant,
)


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


def specialized_fc_ops(graph: Graph, mode: str) -> frozenset[int]:
    """The int8 fully connected ops of ``graph`` with constant weights that code
    generation specialises under ``mode`` (``--specialize``,
    :func:`nnopt.lowering.specialize.choose`)."""
    if specialize.check_mode(mode) == "off":
        return frozenset()
    candidates: list[specialize.Candidate] = []
    for op in graph.ops:
        if op.opcode != "FULLY_CONNECTED" or len(op.inputs) < 2:
            continue
        try:
            batches, _, units, bias = _shapes(graph, op)
        except UnsupportedError:
            continue
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        if (x.dtype == DType.INT8 and w.is_constant
                and (bias is None or bias.is_constant)):
            candidates.append(specialize.Candidate(op.index, batches * units, "fc"))
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
        b_arg: Arg = ctx.ptr(bias.index) if bias is not None else NULL
        args = (ctx.ptr(x.index), ctx.ptr(w.index), b_arg, ctx.ptr(y.index))
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
            w_ident = ctx.weight_array(w.index)
            b_ident = ctx.weight_array(bias.index) if bias is not None else None
            if (ctx.decl is not None and w_ident is not None
                    and (bias is None or b_ident is not None)
                    and op.index in specialized_fc_ops(graph, ctx.specialize)):
                ctx.decl(specialize.fc_lines(op.index, ctx.model, params,
                                             f"op{op.index}_params", w_ident, b_ident,
                                             shifts))
                return [Call(specialize.spec_symbol(ctx.model, op.index),
                             (TensorArg(x.index), TensorArg(y.index)), wrap=False)]
        else:
            lo_f, hi_f = activation_range_float(op.options.activation)
            params = Params("nnrt_fc_f32_params_t", {
                "batches": batches, "accum_depth": depth, "output_depth": units,
                "act_min": Dec(lo_f), "act_max": Dec(hi_f)})
            fn = "nnrt_fully_connected_f32"
        return [params, Call(fn, (AddressOf("params"), *args), wrap=False)]


FULLY_CONNECTED = FullyConnectedLowering()

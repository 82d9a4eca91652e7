"""Element-wise binary operators: ADD, SUB, MUL, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE ->
nnrt/kernels/elementwise.h.

All parameters are computed here at build time, bit-for-bit as TFLite Micro's reference
kernels compute them in Prepare:

- int8 ADD (``add_common.cc``): left_shift 20, ``twice_max = 2 * max(s1, s2)`` and the
  three real multipliers in double precision;
- int8 SUB (``sub_common.cc``): the same scheme and the same double-precision
  multipliers. (Some TFLM revisions divide in float32 first, which changes the last bits
  of the Q31 multipliers; the ``tflite-micro`` build used as the oracle divides in
  double, and a test pins a case where the two differ.)
- int8 MUL (``mul_common.cc``): one multiplier ``s1 * s2 / s_out`` in double;
- MAXIMUM/MINIMUM: no parameters (TFLM compares the raw values), int8, int16, int32,
  int64 and float32;
- int8 SQUARED_DIFFERENCE (``squared_difference.cc``): ADD's scheme with left_shift 7,
  the output multiplier ``(2 max)^2 / ((1 << 14) * s_out)`` (any size); float32: the
  plain ``(a - b)^2`` without activation; int16 (zero points 0) with left_shift 0 and
  int32 (wrapping square) as TFLM's kernel also takes them;
- int32 ADD and MUL (``add.cc``, ``mul_common.cc``): the wrapping sum / product, MUL's
  clamped to ``CalculateActivationRange<int32_t>`` (ADD's int32 Eval ignores the fused
  activation: the whole int32 range);
- int16 ADD and SUB: int8's scheme with left_shift 15; int16 MUL: int8's with zero
  points 0 (``mul_common.cc``); int64 MAXIMUM/MINIMUM raw as int16/int32. The kernels
  beyond int8/float32 are one table (``BinaryLowering.wide``) and one emitter;
- fused activation ranges as TFLM's ``CalculateActivationRange(Quantized)``.

Broadcasting becomes a strided walk (:func:`broadcast_descriptor`) with size-1 dims
dropped and adjacent dims merged, so any shape pair TFLite accepts fits NNRT_MAX_DIMS.

The lowerings' shared helpers (errors, quantisation and activation checks, call
builders) are in :mod:`.common`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arith import activation_range_int32
from ..cdefs import KERNEL_SUFFIX, MAX_DIMS, DType
from ..ir import ActivationOptions, Graph, Op, Tensor
from ..multiplier import quantize_multiplier
from .base import EmitContext, LoweringBase
from .call import (
    Body,
    Done,
    KernelCheck,
)
from .call import Raw as Raw  # re-exported: the lowerings' helpers live here
from .call import c_value as c_value
from .common import (
    C_TYPE,
    act_range_f32,
    act_range_q,
    c_call,
    c_params,
    cast,
    check_activation,
    padded,
    per_tensor_quant,
    refuse,
    tensor_desc,
)


@dataclass(frozen=True)
class Broadcast:
    dims: tuple[int, ...]
    stride1: tuple[int, ...]
    stride2: tuple[int, ...]

    def c(self) -> dict[str, Any]:
        return {"rank": len(self.dims), "dims": padded(self.dims),
                "stride1": padded(self.stride1), "stride2": padded(self.stride2)}


def _strides(shape: Sequence[int]) -> list[int]:
    out = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        out[d] = out[d + 1] * shape[d + 1]
    return out


def broadcast_descriptor(shape1: Sequence[int], shape2: Sequence[int],
                         out_shape: Sequence[int]) -> Broadcast | None:
    """The strided walk of out_shape with each input's element strides (0 where it is
    broadcast), size-1 dims dropped and mergeable neighbours merged. None if the shapes
    do not broadcast to out_shape."""
    rank = max(len(shape1), len(shape2), len(out_shape))
    s1 = [1] * (rank - len(shape1)) + list(shape1)
    s2 = [1] * (rank - len(shape2)) + list(shape2)
    so = [1] * (rank - len(out_shape)) + list(out_shape)
    for a, b, o in zip(s1, s2, so, strict=True):
        if max(a, b) != o or a not in (1, o) or b not in (1, o):
            return None
    st1, st2 = _strides(s1), _strides(s2)
    dims: list[int] = []
    str1: list[int] = []
    str2: list[int] = []
    for d in range(rank):
        if so[d] == 1:
            continue
        a = 0 if s1[d] == 1 else st1[d]
        b = 0 if s2[d] == 1 else st2[d]
        if dims and str1[-1] == a * so[d] and str2[-1] == b * so[d]:
            # Outer neighbour steps exactly over this dim in both inputs: merge.
            dims[-1] *= so[d]
            str1[-1], str2[-1] = a, b
            continue
        dims.append(so[d])
        str1.append(a)
        str2.append(b)
    if not dims:
        dims, str1, str2 = [1], [0], [0]
    return Broadcast(tuple(dims), tuple(str1), tuple(str2))


# ----- the lowering -----

_DTYPES = "int8 (per-tensor quantised) or float32, the same for both inputs and the output"


def _operands(graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor]:
    if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
        raise refuse(op, f"expects 2 inputs and 1 output, has {len(op.inputs)} and "
                     f"{len(op.outputs)}", "binary element-wise ops")
    a, b = (graph.tensors[t] for t in op.inputs)
    return a, b, graph.tensors[op.outputs[0]]


def _activation(op: Op) -> str:
    return op.options.activation if isinstance(op.options, ActivationOptions) else "NONE"


_HEADER = "nnrt/kernels/elementwise.h"


#: How a kernel beyond int8 and float32 takes its parameters (:attr:`BinaryLowering.wide`):
#: the broadcast walk alone (raw MAXIMUM/MINIMUM, the int32 square), the broadcast and
#: TFLM's int32 activation range (unquantised, wrapping int32 arithmetic), or the int8
#: requantisation scheme widened to int16 (:meth:`BinaryLowering.params_q`).
BCAST, RANGE, QUANT = "bcast", "range", "quant"


class BinaryLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/elementwise.h",)
    checks: Sequence[KernelCheck] = (
        KernelCheck(("nnrt_add_s8", "nnrt_sub_s8"), "nnrt_add_s8_check", _HEADER),
        KernelCheck(("nnrt_mul_s8",), "nnrt_mul_s8_check", _HEADER),
        KernelCheck(("nnrt_add_s16", "nnrt_sub_s16"), "nnrt_add_s16_check", _HEADER),
        KernelCheck(("nnrt_mul_s16",), "nnrt_mul_s16_check", _HEADER),
        KernelCheck(("nnrt_add_f32", "nnrt_sub_f32", "nnrt_mul_f32"), "nnrt_binary_f32_check",
                    _HEADER),
        KernelCheck(("nnrt_maximum_s8", "nnrt_minimum_s8", "nnrt_maximum_f32",
                     "nnrt_minimum_f32", "nnrt_maximum_s16", "nnrt_minimum_s16",
                     "nnrt_maximum_s32", "nnrt_minimum_s32", "nnrt_maximum_s64",
                     "nnrt_minimum_s64"), "nnrt_broadcast_check", _HEADER),
        KernelCheck(("nnrt_add_s32", "nnrt_mul_s32", "nnrt_div_s32"), "nnrt_binary_s32_check",
                    _HEADER))
    #: the kernels beyond int8 and float32, per opcode and output type, as TFLM's Eval
    #: takes them (add.cc, sub.cc, mul.cc, maximum_minimum.cc): int16 ADD/SUB/MUL
    #: requantised, int32 ADD and MUL wrapping (not SUB), raw int16/int32/int64
    #: MAXIMUM and MINIMUM; the kind of parameters each takes (BCAST, RANGE, QUANT)
    wide: Mapping[str, Mapping[DType, str]] = {
        "ADD": {DType.INT16: QUANT, DType.INT32: RANGE},
        "SUB": {DType.INT16: QUANT},
        "MUL": {DType.INT16: QUANT, DType.INT32: RANGE},
        "MAXIMUM": {DType.INT16: BCAST, DType.INT32: BCAST, DType.INT64: BCAST},
        "MINIMUM": {DType.INT16: BCAST, DType.INT32: BCAST, DType.INT64: BCAST}}

    @property
    def dtypes_by_opcode(self) -> Mapping[str, Sequence[str]]:
        """int8, the wide types, float32 (as ``nnopt ops`` lists them)."""
        return {code: ("int8", *(t.name.lower() for t in sorted(kinds, key=int)), "float32")
                for code, kinds in self.wide.items()}

    def _wide(self, graph: Graph, op: Op) -> tuple[str, Tensor, Tensor, Tensor] | None:
        """(parameter kind, operands) of an op whose output has one of the :attr:`wide`
        types (checked), else None."""
        a, b, out = _operands(graph, op)
        kind = self.wide.get(op.opcode, {}).get(out.dtype)
        if kind is None:
            return None
        name = out.dtype.name.lower()
        for t in (a, b):
            if t.dtype != out.dtype:
                raise refuse(op, f"{tensor_desc(t)}: unsupported dtype combination",
                             f"{name} inputs for an {name} output")
        bc = broadcast_descriptor(a.shape, b.shape, out.shape)
        if bc is None:
            raise refuse(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast "
                         f"to the output shape {list(out.shape)}", "numpy broadcasting")
        if len(bc.dims) > MAX_DIMS:
            raise refuse(op, f"broadcast needs {len(bc.dims)} dimensions after merging",
                         f"at most {MAX_DIMS}")
        check_activation(op, _activation(op))
        if kind == QUANT:
            self.params_q(op, a, b, out)
        return kind, a, b, out

    def kernel(self, op: Op, a: Tensor, b: Tensor, out: Tensor
               ) -> tuple[str, str | None, dict[str, Any]]:
        """The op's kernel for its operands' types (checked): (function, parameter
        struct or None when it takes the broadcast walk alone, the struct's fields
        besides the broadcast). Whole ops and tiled stages alike call it."""
        kind = self.wide.get(op.opcode, {}).get(out.dtype)
        if kind is None:
            int8 = out.dtype == DType.INT8
            ptype = self.param_type(op, int8)
            return (self.function(op, int8), ptype,
                    self.params(op, a, b, out) if ptype is not None else {})
        fn = f"nnrt_{op.opcode.lower()}_{KERNEL_SUFFIX[out.dtype]}"
        if kind == BCAST:
            return fn, None, {}
        if kind == RANGE:
            # TFLM's int32 ADD clamps to the whole int32 range whatever the fused activation
            lo, hi = activation_range_int32("NONE" if op.opcode == "ADD" else _activation(op))
            return fn, "nnrt_binary_s32_params_t", {"act_min": lo, "act_max": hi}
        ptype = self.param_type(op, True)
        assert ptype is not None
        return fn, ptype, self.params_q(op, a, b, out)

    def check(self, graph: Graph, op: Op) -> None:
        if self._wide(graph, op) is not None:
            return
        a, b, out = _operands(graph, op)
        for t in (a, b, out):
            if t.dtype not in (DType.INT8, DType.FLOAT32) or t.dtype != out.dtype:
                raise refuse(op, f"{tensor_desc(t)}: unsupported dtype combination", _DTYPES)
        bc = broadcast_descriptor(a.shape, b.shape, out.shape)
        if bc is None:
            raise refuse(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast "
                         f"to the output shape {list(out.shape)}", "numpy broadcasting")
        if len(bc.dims) > MAX_DIMS:
            raise refuse(op, f"broadcast needs {len(bc.dims)} dimensions after merging",
                         f"at most {MAX_DIMS}")
        act = _activation(op)
        check_activation(op, act)
        if out.dtype == DType.INT8:
            self.params_s8(op, a, b, out)

    @staticmethod
    def function(op: Op, int8: bool) -> str:
        """The kernel of the op (``nnrt_add_s8`` ...), whole or on a sub-view."""
        return f"nnrt_{op.opcode.lower()}_{'s8' if int8 else 'f32'}"

    @staticmethod
    def param_type(op: Op, int8: bool) -> str | None:
        """The kernel's parameter struct; None: it takes the broadcast walk alone."""
        if op.opcode in ("MAXIMUM", "MINIMUM"):
            return None
        if op.opcode == "SQUARED_DIFFERENCE":
            return "nnrt_add_s8_params_t" if int8 else None
        if not int8:
            return "nnrt_binary_f32_params_t"
        return "nnrt_mul_s8_params_t" if op.opcode == "MUL" else "nnrt_add_s8_params_t"

    def params(self, op: Op, a: Tensor, b: Tensor, out: Tensor) -> dict[str, Any]:
        """The parameter fields besides the broadcast walk (int8 requantisation or the
        float activation range)."""
        if out.dtype == DType.INT8:
            return self.params_s8(op, a, b, out)
        lo, hi = act_range_f32(op, _activation(op))
        return {"act_min": lo, "act_max": hi}

    def params_s8(self, op: Op, a: Tensor, b: Tensor, out: Tensor) -> dict[str, Any]:
        """The int8 requantisation (TFLM's Prepare)."""
        return self.params_q(op, a, b, out)

    def params_q(self, op: Op, a: Tensor, b: Tensor, out: Tensor) -> dict[str, Any]:
        """The requantisation of an int8 or int16 op (TFLM's Prepare): ADD/SUB with
        left_shift 20 (int8) or 15 (int16), MUL with one multiplier (int16: zero points
        0, as mul_common.cc requires)."""
        code = op.opcode
        if code in ("MAXIMUM", "MINIMUM"):
            return {}  # TFLM compares raw values whatever the quantisation
        s1, z1 = per_tensor_quant(op, a)
        s2, z2 = per_tensor_quant(op, b)
        so, zo = per_tensor_quant(op, out)
        lo, hi = act_range_q(op, _activation(op), out)
        if code == "SQUARED_DIFFERENCE":
            return _squared_difference_s8(s1, z1, s2, z2, so, zo)
        if code == "MUL":
            if out.dtype == DType.INT16 and (z1, z2, zo) != (0, 0, 0):
                raise refuse(op, f"zero points {z1}, {z2} -> {zo}",
                             "int16 MUL with zero points 0 (TFLM's mul_common.cc)")
            m, sh = quantize_multiplier(s1 * s2 / so)
            return {"input1_offset": -z1, "input2_offset": -z2, "output_multiplier": m,
                    "output_shift": sh, "output_offset": zo, "act_min": lo, "act_max": hi}
        left_shift = 15 if out.dtype == DType.INT16 else 20
        twice_max = 2.0 * max(s1, s2)
        reals = (s1 / twice_max, s2 / twice_max, twice_max / ((1 << left_shift) * so))
        q = []
        for name, real in zip(("input1", "input2", "output"), reals, strict=True):
            if not 0.0 < real < 1.0:
                raise refuse(op, f"the {name} rescale factor {real:g} is not in (0, 1) "
                             f"(output scale {so:g} too small for input scales {s1:g}, "
                             f"{s2:g})", "TFLM's ADD/SUB quantisation (factors below 1)")
            q.append(quantize_multiplier(real))
        return {"input1_offset": -z1, "input2_offset": -z2, "left_shift": left_shift,
                "input1_multiplier": q[0][0], "input1_shift": q[0][1],
                "input2_multiplier": q[1][0], "input2_shift": q[1][1],
                "output_multiplier": q[2][0], "output_shift": q[2][1],
                "output_offset": zo, "act_min": lo, "act_max": hi}

    def emit(self, ctx: EmitContext) -> Body:
        g, op = ctx.graph, ctx.op
        a, b, out = _operands(g, op)
        bc = broadcast_descriptor(a.shape, b.shape, out.shape)
        assert bc is not None
        if out.num_elements == 0:
            return [Done()]
        ctype = C_TYPE[out.dtype]
        args = [cast(ctx, a.index, ctype, True), cast(ctx, b.index, ctype, True),
                cast(ctx, out.index, ctype, False)]
        fn, ptype, fields = self.kernel(op, a, b, out)
        if ptype is None:
            return [*c_params("nnrt_broadcast_t", bc.c(), "bcast"),
                    *c_call(fn, ["&bcast", *args])]
        return [*c_params(ptype, {"bcast": bc.c(), **fields}),
                *c_call(fn, ["&params", *args])]


def _squared_difference_s8(s1: float, z1: int, s2: float, z2: int, so: float,
                           zo: int, left_shift: int = 7) -> dict[str, Any]:
    """TFLM's PrepareQuantized of SQUARED_DIFFERENCE (int8: left_shift 7, int16: 0):
    the scales are float32 in TFLM, ``(1 << 2 * left_shift) * s_out`` a float32
    product."""
    twice_max = 2.0 * float(max(np.float32(s1), np.float32(s2)))
    m1, sh1 = quantize_multiplier(s1 / twice_max)
    m2, sh2 = quantize_multiplier(s2 / twice_max)
    denom = float(np.float32(1 << (2 * left_shift)) * np.float32(so))
    mo, sho = quantize_multiplier(twice_max * twice_max / denom)
    return {"input1_offset": -z1, "input2_offset": -z2, "left_shift": left_shift,
            "input1_multiplier": m1, "input1_shift": sh1,
            "input2_multiplier": m2, "input2_shift": sh2,
            "output_multiplier": mo, "output_shift": sho,
            "output_offset": zo, "act_min": -128 if left_shift else -32768,
            "act_max": 127 if left_shift else 32767}


class SquaredDifferenceLowering(BinaryLowering):
    """SQUARED_DIFFERENCE: int8 and float32 as the other binary ops; int16 (zero points
    0) and int32 (the plain square, wrapping) as TFLM's kernel also takes them."""

    dtypes: Sequence[str] = ("int8", "int16", "int32", "float32")
    wide: Mapping[str, Mapping[DType, str]] = {
        "SQUARED_DIFFERENCE": {DType.INT16: QUANT, DType.INT32: BCAST}}

    def params_q(self, op: Op, a: Tensor, b: Tensor, out: Tensor) -> dict[str, Any]:
        if out.dtype != DType.INT16:
            return super().params_q(op, a, b, out)
        q = []
        for t in (a, b, out):
            if t.quant is None or len(t.quant.scale) != 1 or t.quant.zero_point[0] != 0 \
                    or not t.quant.scale[0] > 0:
                raise refuse(op, f"{tensor_desc(t)} is not quantised per tensor with zero "
                             "point 0", "int16 SQUARED_DIFFERENCE with zero points 0 (TFLM)")
            q.append(float(t.quant.scale[0]))
        return _squared_difference_s8(q[0], 0, q[1], 0, q[2], 0, left_shift=0)


BINARY = BinaryLowering()
SQUARED_DIFFERENCE = SquaredDifferenceLowering()

"""Element-wise activations: RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH.

Kernels in ``modules/nnrt/include/nnrt/kernels/activation.h``. Every parameter is
computed here with TensorFlow Lite Micro's Prepare-time formulas, in the same precision
(float32 where TFLM divides float scales, double where it does); the C side gets a
const params struct. Semantics follow TFLM's *reference* kernels where they differ from
TFLite:

- int8 RELU6 clamps in the input's quantisation and ignores the output's (TFLM's
  Relu6Quantized); int8 RELU requantises. int16 RELU6 and LEAKY_RELU are int8's with
  the int16 range (activations.cc, leaky_relu.cc); TFLM's RELU takes no int16.
- int8 LOGISTIC writes scale 1/256 / zero point -128 values and int8 TANH scale 1/128 /
  zero point 0 whatever the output tensor says (TFLM reads neither); the converter
  always emits those, and a model that differs gets TFLM's numbers.

int8 LOGISTIC, TANH and HARD_SWISH are lowered to a 256-entry lookup table computed
here by a numpy emulation of the same fixed-point arithmetic (:func:`int8_table`), which
the tests prove equal to TFLM and to the direct C kernels on all 256 inputs: one load
per element instead of tens of multiplies, for 256 bytes of flash (the direct kernels,
``nnrt_sigmoid_s8`` and the like, stay in nnrt for the tables' tests and for C callers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..cdefs import C_TYPE, KERNEL_SUFFIX, DType
from ..ir import Graph, LeakyReluOptions, Op, Tensor
from ..multiplier import quantize_multiplier
from .base import EmitContext, LoweringBase
from .call import AddressOf, Body, Call, Dec, KernelCheck, Params, Raw, TensorArg, lit, lit_f32
from .common import per_tensor_quant, refuse

_I32_MIN = -(2**31)
_I32_MAX = 2**31 - 1

# ----------------------------------------------------------------------------------
# TFLM's parameter arithmetic (shared with softmax.py and quantize.py)
# ----------------------------------------------------------------------------------


def round_half_away(x: float) -> int:
    """``TfLiteRound``/``std::round``: nearest integer, ties away from zero."""
    r = math.floor(abs(x) + 0.5)
    # floor(|x| + 0.5) is exact for the magnitudes used here (|x| >= 2^-1 or integer
    # results); guard the one double where |x| + 0.5 rounds up: 0.49999999999999994.
    if r - abs(x) > 0.5:
        r -= 1
    return int(math.copysign(r, x)) if r else 0


def f32(x: float) -> np.float32:
    return np.float32(x)


def scale_of(t: Tensor) -> float:
    assert t.quant is not None
    return t.quant.scale[0]


def zero_point_of(t: Tensor) -> int:
    assert t.quant is not None
    return t.quant.zero_point[0]


def tensor_desc(t: Tensor) -> str:
    return f"tensor {t.index} ({t.name or 'unnamed'})"


_RANGE = {DType.INT8: (-128, 127), DType.UINT8: (0, 255), DType.INT16: (-32768, 32767)}


def check_io(graph: Graph, op: Op, combos: Sequence[tuple[DType, DType]],
             supported: str) -> tuple[Tensor, Tensor]:
    """One input, one output, of the same element count and one of the dtype pairs;
    quantised tensors per-tensor."""
    if len(op.inputs) < 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
        raise refuse(op, f"expects 1 input and 1 output, has {len(op.inputs)} "
                          f"and {len(op.outputs)}", supported)
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if (x.dtype, y.dtype) not in combos:
        raise refuse(op, f"input {tensor_desc(x)} is {x.dtype.name.lower()}, output "
                          f"{tensor_desc(y)} is {y.dtype.name.lower()}", supported)
    if x.num_elements != y.num_elements:
        raise refuse(op, f"input {tensor_desc(x)} has {x.num_elements} elements, "
                          f"output {tensor_desc(y)} {y.num_elements}", supported)
    for t in (x, y):
        if t.dtype in (DType.INT8, DType.UINT8, DType.INT16):
            if t.quant is None:
                raise refuse(op, f"{tensor_desc(t)} is {t.dtype.name.lower()} without "
                                  "quantisation parameters", supported)
            if t.quant.per_channel:
                raise refuse(op, f"{tensor_desc(t)} is quantised per channel",
                                  "per-tensor quantisation")
            if not (t.quant.scale[0] > 0 and math.isfinite(t.quant.scale[0])):
                raise refuse(op, f"{tensor_desc(t)} has scale {t.quant.scale[0]}",
                                  "a positive, finite scale")
            lo, hi = _RANGE[t.dtype]
            if not lo <= t.quant.zero_point[0] <= hi:
                raise refuse(op, f"{tensor_desc(t)} has zero point "
                                  f"{t.quant.zero_point[0]} outside its type's range",
                                  f"zero points in [{lo}, {hi}]")
    return x, y


def c_struct(ctype: str, fields: dict[str, int | float]) -> Params:
    """A ``static const`` params struct on one line (floats as decimal literals)."""
    return Params(ctype, {k: Dec(v) if isinstance(v, float) else int(v)
                          for k, v in fields.items()}, inline=True)


# ----------------------------------------------------------------------------------
# numpy emulation of the kernels' fixed-point arithmetic (int64 arrays, int32 values)
# ----------------------------------------------------------------------------------

_Arr = np.ndarray


def _wrap32(x: _Arr) -> _Arr:
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def _trunc_div_pot(x: _Arr, e: int) -> _Arr:
    return np.where(x >= 0, x >> e, -((-x) >> e))


def _srdhm(a: _Arr, b: _Arr | int) -> _Arr:
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    r = _trunc_div_pot(ab + nudge, 31)
    return np.where((a == b) & (a == _I32_MIN), _I32_MAX, r)


def _rdbp(x: _Arr, e: int) -> _Arr:
    mask = (1 << e) - 1
    return (x >> e) + ((x & mask) > ((mask >> 1) + (x < 0))).astype(np.int64)


def _sat_mul_pot(x: _Arr, e: int) -> _Arr:
    if e > 0:
        thr = (1 << (31 - e)) - 1
        return np.where(x > thr, _I32_MAX, np.where(x < -thr, _I32_MIN, x << e))
    if e < 0:
        return _rdbp(x, -e)
    return x


def _mbqm(x: _Arr, m: int, shift: int) -> _Arr:
    left, right = max(shift, 0), max(-shift, 0)
    return _rdbp(_srdhm(_wrap32(x << left), m), right)


def multiply_by_quantized_multiplier(x: _Arr, m: int, shift: int) -> _Arr:
    """TFLM's MultiplyByQuantizedMultiplier (double rounding) on int64 arrays of int32
    values: the numpy twin of nnrt_multiply_by_quantized_multiplier."""
    return _mbqm(x, m, shift)


def _exp_interval(a: _Arr) -> _Arr:
    c = 1895147668
    x = _wrap32(a + (1 << 28))
    x2 = _srdhm(x, x)
    x3 = _srdhm(x2, x)
    x4 = _srdhm(x2, x2)
    poly = _sat_mul_pot(_wrap32(_srdhm(_wrap32(_sat_mul_pot(x4, -2) + x3), 715827883) + x2),
                        -1)
    return _wrap32(c + _srdhm(np.full_like(a, c), _wrap32(x + poly)))


_EXP_CONSTANTS = (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)


def exp_on_negative_values(a: _Arr, int_bits: int) -> _Arr:
    """gemmlowp ``exp_on_negative_values`` (see fixedpoint.h)."""
    frac = 31 - int_bits
    quarter = 1 << (frac - 2)
    a_mod = _wrap32((a & (quarter - 1)) - quarter)
    result = _exp_interval(_sat_mul_pot(a_mod, int_bits))
    remainder = _wrap32(a_mod - a)
    for k, c in enumerate(_EXP_CONSTANTS):
        exponent = k - 2
        if int_bits > exponent:
            bit = (remainder >> (frac + exponent)) & 1
            result = np.where(bit == 1, _srdhm(result, c), result)
    if int_bits > 5:
        result = np.where(a < -(1 << (36 - int_bits)), 0, result)
    return np.where(a == 0, _I32_MAX, result)


def _newton_q2(half_den: _Arr) -> _Arr:
    x = _wrap32(1515870810 + _srdhm(half_den, -1010580540))
    for _ in range(3):
        one_minus = _wrap32((1 << 29) - _srdhm(half_den, x))
        x = _wrap32(x + _sat_mul_pot(_srdhm(x, one_minus), 2))
    return x


def _half_sum_with_one(a: _Arr) -> _Arr:
    s = a + _I32_MAX
    return _trunc_div_pot(s + np.where(s >= 0, 1, -1), 1)


def one_over_one_plus_x(a: _Arr) -> _Arr:
    return _sat_mul_pot(_newton_q2(_half_sum_with_one(a)), 1)


def _one_minus_x_over_one_plus_x(a: _Arr) -> _Arr:
    return _sat_mul_pot(_wrap32(_newton_q2(_half_sum_with_one(a)) - (1 << 29)), 2)


def fp_tanh(a: _Arr, int_bits: int) -> _Arr:
    neg_abs = np.where(a < 0, a, -a)
    t = _one_minus_x_over_one_plus_x(exp_on_negative_values(neg_abs, int_bits + 1))
    return np.where(a == 0, 0, np.where(a < 0, -t, t))


def fp_logistic(a: _Arr, int_bits: int) -> _Arr:
    r_pos = one_over_one_plus_x(exp_on_negative_values(-np.abs(a), int_bits))
    return np.where(a == 0, 1 << 30, np.where(a > 0, r_pos, _I32_MAX - r_pos))


def _sigmoid_table(p: dict[str, int], func: str) -> np.ndarray:
    q = np.arange(-128, 128, dtype=np.int64)
    x = q - p["input_zero_point"]
    radius = p["input_range_radius"]
    inner = (x > -radius) & (x < radius)
    xs = np.where(inner, x, 0)
    x_q4 = _mbqm(xs, p["input_multiplier"], p["input_shift"])
    y = (_rdbp(fp_logistic(x_q4, 4), 23) - 128 if func == "LOGISTIC"
         else _rdbp(fp_tanh(x_q4, 4), 24))
    return np.asarray(np.where(inner, np.clip(y, -128, 127),
                               np.where(x <= -radius, -128, 127)))


def _wrap16(x: _Arr) -> _Arr:
    return ((x + 2**15) & 0xFFFF) - 2**15


def _srdhm16(a: _Arr, b: int) -> _Arr:
    ab = a * b
    r = _trunc_div_pot(ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14)), 15)
    return _wrap16(np.where((a == -(2**15)) & (b == -(2**15)), 2**15 - 1, r))


def _rdbp16(x: _Arr, e: int) -> _Arr:
    mask = (((1 << e) - 1 + 2**15) & 0xFFFF) - 2**15  # int16(2^e - 1), wraps for e >= 16
    rem = _wrap16(x & mask)
    thr = _wrap16((mask >> 1) + (x < 0).astype(np.int64))
    return _wrap16((x >> e) + (rem > thr).astype(np.int64))


def _sat_lshift16(x: _Arr, amount: int) -> _Arr:
    return np.asarray(np.clip(x * (1 << min(amount, 40)), -(2**15), 2**15 - 1))


def _hard_swish_table(p: dict[str, int]) -> np.ndarray:
    q = np.arange(-128, 128, dtype=np.int64)
    x = _wrap16(q - p["input_zero_point"])
    hires = _wrap16(x * 128)
    pre_out = _srdhm16(hires, p["output_multiplier"])
    r = hires
    rexp = p["reluish_exponent"]
    if rexp > 0:
        r = _sat_lshift16(r, rexp - 1)
    r = _srdhm16(r, p["reluish_multiplier"])
    if rexp > 0:
        r = _sat_lshift16(r, 1)
    elif rexp < 0:
        r = _rdbp16(r, -rexp)
    r = _wrap16((r + (1 << 15)) >> 1)
    preshift = _wrap16(_trunc_div_pot(r * pre_out, 15))
    y = _wrap16(_rdbp16(preshift, -p["output_exponent"]) + p["output_zero_point"])
    return np.asarray(np.clip(y, -128, 127))


def int8_table(opcode: str, params: dict[str, int]) -> np.ndarray:
    """The int8 kernel's output for inputs -128..127, as the C table (indexed by the
    input byte read as unsigned: 0..127, then -128..-1)."""
    y = _hard_swish_table(params) if opcode == "HARD_SWISH" else _sigmoid_table(params, opcode)
    by_value = y.astype(np.int8)
    return np.concatenate([by_value[128:], by_value[:128]])


# ----------------------------------------------------------------------------------
# parameters (TFLM Prepare)
# ----------------------------------------------------------------------------------


def sigmoid_params(op: Op, x: Tensor) -> dict[str, int]:
    """LOGISTIC/TANH int8: TFLM's CalculateArithmeticOpData (4 integer bits)."""
    real = float(scale_of(x)) * float(1 << 27)
    q, shift = math.frexp(real)
    if not 0 <= shift <= 62:
        raise refuse(op, f"input {tensor_desc(x)} scale {scale_of(x)!r} is outside "
                          "the range TFLM handles", "input scales in [2^-28, 2^35)")
    mult = round_half_away(q * 2.0**31)
    radius = math.floor(1.0 * 15 * (1 << 27) / (1 << shift))
    return {"input_zero_point": zero_point_of(x), "input_range_radius": radius,
            "input_multiplier": mult, "input_shift": shift}


def checked_log2(scale: float) -> tuple[bool, int]:
    """TFLM's CheckedLog2 (float32): (is a power of two within 1e-3, rounded log2)."""
    x_log2 = np.log(f32(scale)) * (f32(1.0) / np.log(f32(2.0)))
    rounded = f32(round_half_away(float(x_log2)))
    return bool(abs(float(f32(x_log2 - rounded))) < 1e-3), int(rounded)


_S16_SUPPORTED = "int16 zero points 0, output scale 2^-15, input scale below 2.67"


def sigmoid_s16_params(op: Op, x: Tensor, y: Tensor) -> dict[str, int]:
    """LOGISTIC/TANH int16: TFLM's int16 Prepare (3 integer bits). A power-of-two input
    scale that maps the input to Q3.12 exactly (TANH: or Q4.11) takes the power-of-two
    path, multiplier 3 << shift applied with shift 0 (as the kernel does); any other
    scale the general one, a 15-bit multiplier of scale * 3 * 4096 with a shift."""
    for t in (x, y):
        if zero_point_of(t) != 0:
            raise refuse(op, f"{tensor_desc(t)} has zero point {zero_point_of(t)}",
                              _S16_SUPPORTED)
    out_pot, out_log2 = checked_log2(scale_of(y))
    if not out_pot or out_log2 != -15:
        raise refuse(op, f"output {tensor_desc(y)} scale {scale_of(y)!r} is not "
                          "2^-15 (TFLM requires it)", _S16_SUPPORTED)
    pot, log2 = checked_log2(scale_of(x))
    shift = 12 + log2
    if pot and (shift == 0 or (op.opcode == "TANH" and shift == 1)):
        return {"input_multiplier": 3 << shift, "input_left_shift": 0}
    m = float(f32(scale_of(x))) * 4096.0 * 3.0
    shift = 0
    while m <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        m *= 2.0
    if int(m) > 32767:
        raise refuse(op, f"input {tensor_desc(x)} scale {scale_of(x)!r} is too large "
                          "(TFLM's multiplier exceeds 15 bits)", _S16_SUPPORTED)
    return {"input_multiplier": int(m), "input_left_shift": shift}


def _downscale_to_q15(m: int) -> int:
    if m >= _I32_MAX - (1 << 15):
        return 2**15 - 1
    return (m + (1 << 15)) >> 16


def hard_swish_params(op: Op, x: Tensor, y: Tensor) -> dict[str, int]:
    """HARD_SWISH int8: TFLM's HardSwishPrepare (float32 ratios, Q15 multipliers)."""
    hires = f32(1.0 / 128.0) * f32(scale_of(x))
    reluish_scale = f32(3.0) / f32(32768.0)
    out_m, out_e = quantize_multiplier(float(hires / f32(scale_of(y))))
    rel_m, rel_e = quantize_multiplier(float(hires / reluish_scale))
    if out_e > 0 or out_e < -31:
        raise refuse(op, f"output {tensor_desc(y)} scale {scale_of(y)!r} is too small "
                          f"for input scale {scale_of(x)!r} (TFLM requires "
                          "input_scale / (128 * output_scale) <= 1)",
                          "output scale >= input scale / 128")
    if not -31 <= rel_e <= 31:
        raise refuse(op, f"input {tensor_desc(x)} scale {scale_of(x)!r} out of range",
                          "input scales in [2^-40, 2^20]")
    return {"input_zero_point": zero_point_of(x), "output_zero_point": zero_point_of(y),
            "reluish_multiplier": _downscale_to_q15(rel_m), "reluish_exponent": rel_e,
            "output_multiplier": _downscale_to_q15(out_m), "output_exponent": out_e}


def _check_shift(op: Op, what: str, shift: int) -> None:
    if not -31 <= shift <= 30:
        raise refuse(op, f"{what} is outside the kernel's range (2^-31 .. 2^30)",
                          "scale ratios between 2^-32 and 2^30")


def relu_params(op: Op, x: Tensor, y: Tensor) -> dict[str, int]:
    """RELU int8: TFLM's CalculateReluOpData."""
    m, s = quantize_multiplier(float(f32(scale_of(x)) / f32(scale_of(y))))
    _check_shift(op, "input/output scale ratio", s)
    out_zp = zero_point_of(y)
    return {"input_zero_point": zero_point_of(x), "output_zero_point": out_zp,
            "multiplier": m, "shift": s, "act_min": max(-128, out_zp), "act_max": 127}


def relu6_bounds(x: Tensor) -> tuple[int, int]:
    """RELU6 int8 / int16: TFLM's Relu6Prepare (zero and quantised 6.0 on the input
    scale, clamped to the type's range)."""
    zp = zero_point_of(x)
    six = round_half_away(float(f32(6.0) / f32(scale_of(x)))) + zp
    lo, hi = (-32768, 32767) if x.dtype == DType.INT16 else (-128, 127)
    return zp, int(np.clip(six, lo, hi))


def leaky_relu_params(op: Op, x: Tensor, y: Tensor, alpha: float) -> dict[str, int]:
    """LEAKY_RELU: TFLM's CalculateOpDataLeakyRelu; int8 with float32 ratios, int16 with
    double ones (the tflite-micro build used as the oracle divides in double: an int16
    test pins a case where the two differ)."""
    sx, sy = f32(scale_of(x)), f32(scale_of(y))
    if x.dtype == DType.INT16:
        am, ash = quantize_multiplier(float(sx) * float(f32(alpha)) / float(sy))
        im, ish = quantize_multiplier(float(sx) / float(sy))
    else:
        am, ash = quantize_multiplier(float(sx * f32(alpha) / sy))
        im, ish = quantize_multiplier(float(sx / sy))
    _check_shift(op, f"alpha {alpha!r} times the scale ratio", ash)
    _check_shift(op, "input/output scale ratio", ish)
    return {"input_zero_point": zero_point_of(x), "output_zero_point": zero_point_of(y),
            "identity_multiplier": im, "identity_shift": ish,
            "alpha_multiplier": abs(am), "alpha_shift": ash, "alpha_negative": int(am < 0)}


# ----------------------------------------------------------------------------------
# the lowering
# ----------------------------------------------------------------------------------

_I8, _I16, _F32 = DType.INT8, DType.INT16, DType.FLOAT32
_SUPPORTED = ("int8 -> int8 or float32 -> float32 (LOGISTIC, TANH, RELU6, LEAKY_RELU: also "
              "int16 -> int16; TFLM's RELU takes no int16)")
#: the activations whose int16 kernel TFLM's Eval has (activations.cc: RELU6 but not
#: RELU; leaky_relu.cc; logistic.cc; tanh.cc)
_WITH_INT16 = ("LOGISTIC", "TANH", "RELU6", "LEAKY_RELU")
_SIGMOID_S16 = ("LOGISTIC", "TANH")


# the activation kernels' argument checks (nnrt/kernels/activation.h): on the scalars
UNARY_F32_CHECK = KernelCheck(
    tuple(f"nnrt_{k}_f32" for k in ("relu", "relu6", "logistic", "tanh", "hard_swish", "elu",
                                    "exp", "log", "sqrt", "rsqrt", "abs", "neg", "floor",
                                    "ceil", "round", "sin", "cos", "square")),
    "nnrt_unary_f32_check", "nnrt/kernels/activation.h", picks=(2,))  # (x, y, size)
CLAMP_S8_CHECK = KernelCheck(("nnrt_clamp_s8",), "nnrt_clamp_s8_check",
                             "nnrt/kernels/activation.h", picks=(0, 1, 4))  # (lo, hi, x, y, size)
CLAMP_S16_CHECK = KernelCheck(("nnrt_clamp_s16",), "nnrt_clamp_s16_check",
                              "nnrt/kernels/activation.h", picks=(0, 1, 4))
TABLE_LOOKUP_S8_CHECK = KernelCheck(("nnrt_table_lookup_s8",), "nnrt_table_lookup_s8_check",
                                    "nnrt/kernels/activation.h", picks=(3,))  # (table, x, y, size)


class ActivationLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/activation.h",)
    checks: Sequence[KernelCheck] = (UNARY_F32_CHECK, CLAMP_S8_CHECK, CLAMP_S16_CHECK,
                                      TABLE_LOOKUP_S8_CHECK)
    dtypes: Sequence[str] = ("int8", "float32")
    dtypes_by_opcode: Mapping[str, Sequence[str]] = {
        c: ("int8", "int16", "float32") for c in _WITH_INT16}

    def check(self, graph: Graph, op: Op) -> None:
        combos = ((_I8, _I8), (_F32, _F32)) + (((_I16, _I16),) if op.opcode in _WITH_INT16
                                               else ())
        x, y = check_io(graph, op, combos, _SUPPORTED)
        if x.dtype == DType.INT16 and op.opcode in _SIGMOID_S16:
            sigmoid_s16_params(op, x, y)
            return
        if x.dtype not in (DType.INT8, DType.INT16):
            return
        if op.opcode == "RELU6" and x.dtype == DType.INT16:
            per_tensor_quant(op, x)
        if op.opcode == "RELU":
            relu_params(op, x, y)
        elif op.opcode in ("LOGISTIC", "TANH"):
            sigmoid_params(op, x)
        elif op.opcode == "HARD_SWISH":
            hard_swish_params(op, x, y)
        elif op.opcode == "LEAKY_RELU":
            leaky_relu_params(op, x, y, self._alpha(op))

    @staticmethod
    def _alpha(op: Op) -> float:
        return op.options.alpha if isinstance(op.options, LeakyReluOptions) else 0.2

    def emit(self, ctx: EmitContext) -> Body:
        g, op = ctx.graph, ctx.op
        x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
        n = lit(x.num_elements)
        name = op.opcode.lower()
        if x.dtype == DType.FLOAT32:
            src, dst = TensorArg(x.index, "float", True), TensorArg(y.index, "float")
            if op.opcode == "LEAKY_RELU":
                alpha = lit_f32(self._alpha(op))
                return [Call("nnrt_leaky_relu_f32", (alpha, src, dst, n), wrap=False)]
            return [Call(f"nnrt_{name}_f32", (src, dst, n), wrap=False)]

        if x.dtype == DType.INT16 and op.opcode in _SIGMOID_S16:
            p16 = sigmoid_s16_params(op, x, y)
            return [c_struct("nnrt_sigmoid_s16_params_t", dict(p16)),
                    Call(f"nnrt_{name}_s16", (AddressOf("params"), TensorArg(
                        x.index, "int16_t", True), TensorArg(y.index, "int16_t"), n),
                        wrap=False)]
        ctype, sfx = C_TYPE[x.dtype], KERNEL_SUFFIX[x.dtype]
        src, dst = TensorArg(x.index, ctype, True), TensorArg(y.index, ctype)
        if op.opcode == "RELU6" or (op.opcode == "RELU" and x.quant == y.quant):
            lo, hi = relu6_bounds(x) if op.opcode == "RELU6" else (max(-128, zero_point_of(x)),
                                                                   127)
            return [Call(f"nnrt_clamp_{sfx}", (lit(lo), lit(hi), src, dst, n), wrap=False)]
        params = AddressOf("params")
        if op.opcode == "RELU":
            return [c_struct("nnrt_relu_s8_params_t", dict(relu_params(op, x, y))),
                    Call("nnrt_relu_s8", (params, src, dst, n), wrap=False)]
        if op.opcode == "LEAKY_RELU":
            p = leaky_relu_params(op, x, y, self._alpha(op))
            return [c_struct("nnrt_leaky_relu_s8_params_t", dict(p)),
                    Call(f"nnrt_leaky_relu_{sfx}", (params, src, dst, n), wrap=False)]
        if op.opcode == "HARD_SWISH":
            p, ctype = hard_swish_params(op, x, y), "nnrt_hard_swish_s8_params_t"
        else:
            p, ctype = sigmoid_params(op, x), "nnrt_sigmoid_s8_params_t"
        table = ctx.const_array("table", int8_table(op.opcode, p))
        fields = ", ".join(f"{k} {v}" for k, v in p.items())
        return [Call("nnrt_table_lookup_s8", (Raw(table), src, dst, n), wrap=False,
                     note=f"{op.opcode} int8 as a 256-entry table, from {ctype}: {fields}")]


ACTIVATION = ActivationLowering()

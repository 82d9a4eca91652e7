"""The dtype checks of a convolution (and of ``lowering.fc``, which shares them): which
combinations of activation, weight and bias types the conv kernels take, refused
otherwise by name (:func:`refuse_dtypes`)."""

from __future__ import annotations

from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import Graph, Op, Tensor
from .common import per_tensor_quant
from .conv_geometry import _is_depthwise

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
    if bias is None and _is_depthwise(op):
        raise UnsupportedError(
            f"{where}: a 16x8 depthwise convolution without bias (TFLM's kernel requires "
            "one)", hint=_SUPPORTED_HINT_16X8)

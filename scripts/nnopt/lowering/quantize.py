"""QUANTIZE and DEQUANTIZE, per-tensor.

Kernels in ``modules/nnrt/include/nnrt/kernels/quantize.h``, semantics of TFLM's
reference QUANTIZE/DEQUANTIZE:

- QUANTIZE float32 -> int8/int16: round(x / scale) + zero point (float32 division,
  ties away from zero), saturated;
- QUANTIZE between integer types (the pairs TFLM supports: int8 -> int8/uint8/int16/
  int32, uint8 -> int8, int16 -> int8/int16/int32, int32 -> int8/int16): requantised
  with the double-precision ratio of the scales;
- DEQUANTIZE int8/int16/uint8 -> float32: scale * (q - zero point).

Per-channel quantisation is refused (TFLM's reference kernels do not do it either).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..cdefs import C_TYPE, KERNEL_SUFFIX, DType
from ..ir import Graph, Op, Tensor
from ..multiplier import quantize_multiplier
from .activation import c_struct, check_io, scale_of, zero_point_of
from .base import EmitContext, LoweringBase
from .call import AddressOf, Body, Call, Raw, TensorArg, lit
from .common import refuse

_F32, _I8, _U8, _I16, _I32 = DType.FLOAT32, DType.INT8, DType.UINT8, DType.INT16, DType.INT32

QUANTIZE_PAIRS: tuple[tuple[DType, DType], ...] = (
    (_F32, _I8), (_F32, _I16),
    (_I8, _I8), (_I8, _U8), (_I8, _I16), (_I8, _I32),
    (_U8, _I8),
    (_I16, _I8), (_I16, _I16), (_I16, _I32),
    (_I32, _I8), (_I32, _I16),
)
DEQUANTIZE_PAIRS: tuple[tuple[DType, DType], ...] = ((_I8, _F32), (_I16, _F32), (_U8, _F32))


def _pairs_text(pairs: Sequence[tuple[DType, DType]]) -> str:
    return ", ".join(f"{a.name.lower()} -> {b.name.lower()}" for a, b in pairs)


def _zero_point(t: Tensor) -> int:
    return zero_point_of(t) if t.quant is not None else 0


def requantize_params(op: Op, x: Tensor, y: Tensor) -> dict[str, int]:
    """TFLM's PrepareQuantizeReference for integer -> integer (double ratio)."""
    m, s = quantize_multiplier(float(scale_of(x)) / float(scale_of(y)))
    if not -31 <= s <= 30:
        raise refuse(op, f"input/output scale ratio {scale_of(x) / scale_of(y)!r} is "
                          "outside the kernel's range", "scale ratios in [2^-32, 2^30)")
    return {"input_zero_point": _zero_point(x), "output_zero_point": zero_point_of(y),
            "multiplier": m, "shift": s}


class QuantizeLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/quantize.h",)
    dtypes_by_opcode: Mapping[str, Sequence[str]] = {
        "QUANTIZE": tuple(f"{a.name.lower()}->{b.name.lower()}" for a, b in QUANTIZE_PAIRS),
        "DEQUANTIZE": tuple(f"{a.name.lower()}->{b.name.lower()}" for a, b in DEQUANTIZE_PAIRS),
    }

    def check(self, graph: Graph, op: Op) -> None:
        if op.opcode == "DEQUANTIZE":
            check_io(graph, op, DEQUANTIZE_PAIRS, _pairs_text(DEQUANTIZE_PAIRS))
            return
        x, y = check_io(graph, op, QUANTIZE_PAIRS, _pairs_text(QUANTIZE_PAIRS))
        for t in (x, y):
            if t.dtype == _I32 and t.quant is not None and t.quant.per_channel:
                raise refuse(op, f"tensor {t.index} is quantised per channel",
                                  "per-tensor quantisation")
        if y.quant is None:
            raise refuse(op, f"output tensor {y.index} has no quantisation parameters",
                              "a quantised output")
        if x.dtype != _F32:
            if x.quant is None:
                raise refuse(op, f"input tensor {x.index} has no quantisation "
                                  "parameters", "a quantised input")
            requantize_params(op, x, y)

    def emit(self, ctx: EmitContext) -> Body:
        g, op = ctx.graph, ctx.op
        x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
        n = lit(x.num_elements)
        src = TensorArg(x.index, C_TYPE[x.dtype], True)
        dst = TensorArg(y.index, C_TYPE[y.dtype])
        params = AddressOf("params")
        if op.opcode == "DEQUANTIZE" or x.dtype == _F32:
            q = x if op.opcode == "DEQUANTIZE" else y
            func = ("dequantize" if op.opcode == "DEQUANTIZE" else "quantize")
            p = {"scale": float(scale_of(q)), "zero_point": zero_point_of(q)}
            return [c_struct("nnrt_affine_params_t", p),
                    Call(f"nnrt_{func}_{KERNEL_SUFFIX[x.dtype]}_{KERNEL_SUFFIX[y.dtype]}",
                         (params, src, dst, n), wrap=False)]
        p2 = requantize_params(op, x, y)
        if x.dtype == _I8 and y.dtype == _I8:
            return [c_struct("nnrt_requantize_params_t", dict(p2)),
                    Call("nnrt_requantize_s8", (params, src, dst, n), wrap=False)]
        return [c_struct("nnrt_requantize_params_t", dict(p2)),
                Call("nnrt_requantize", (params, TensorArg(x.index), Raw(f"NNRT_{x.dtype.name}"),
                                         TensorArg(y.index), Raw(f"NNRT_{y.dtype.name}"), n),
                     wrap=False)]


QUANTIZE = QuantizeLowering()

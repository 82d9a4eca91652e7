"""The lowering toolkit: what every family module of :mod:`nnopt.lowering` builds with.

- errors: :func:`refuse` (the one error of a ``check()``: op, what is wrong, what is
  supported, in the message itself since :func:`nnopt.ops.check_graph` keeps only
  messages) and :func:`tensor_desc`;
- quantisation and activation checks: :func:`per_tensor_quant` (per-tensor, positive
  finite scale, int8 zero point), :func:`check_activation`, :func:`act_range_s8` /
  :func:`act_range_q` (int8 or int16) / :func:`act_range_f32` (TFLM's
  ``CalculateActivationRange(Quantized)``);
- call builders: :func:`c_params`, :func:`c_call` (arguments in the spellings lowerings
  pass: ``"&params"``, ``"NULL"``, identifiers, ``"12u"``, ints), :func:`cast`,
  :func:`io_args`, :func:`padded`, :func:`merge_dims`;
- :data:`C_TYPE` (:mod:`nnopt.cdefs`'s), the C element type of a dtype, and
  :data:`KERNEL_SUFFIX`, its suffix in a kernel's name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..arith import (
    FUSED_ACTIVATIONS,
    activation_range_float,
    activation_range_int8,
    activation_range_int16,
)
from ..cdefs import C_TYPE as C_TYPE
from ..cdefs import KERNEL_SUFFIX as KERNEL_SUFFIX
from ..cdefs import MAX_DIMS, DType
from ..errors import UnsupportedError
from ..ir import Op, Tensor
from .base import EmitContext
from .call import AddressOf, Arg, Body, Call, Expr, Literal, Params, Raw, ScratchArg, TensorArg


def refuse(op: Op, what: str, supported: str) -> UnsupportedError:
    """The error for an op variant without a kernel: names op, opcode and what works
    (in the message itself: check_graph keeps only messages)."""
    return UnsupportedError(f"op {op.index} ({op.opcode}): {what}; supported: {supported}",
                            hint=f"supported: {supported}")


def tensor_desc(t: Tensor) -> str:
    return f"tensor {t.index} ({t.name or 'unnamed'}, {t.dtype.name}, shape {list(t.shape)})"


def per_tensor_quant(op: Op, t: Tensor) -> tuple[float, int]:
    """(scale, zero_point) of an int8 (or int16) tensor quantised per tensor, with a
    positive finite scale and a zero point of its type; refuse otherwise. The one such
    check of every lowering (conv, fc and the element-wise ops alike)."""
    kind = "int16" if t.dtype == DType.INT16 else "int8"
    if t.quant is None or not t.quant.scale:
        raise refuse(op, f"{tensor_desc(t)} has no quantisation parameters",
                     f"{kind} tensors quantised per tensor")
    if t.quant.per_channel:
        raise refuse(op, f"{tensor_desc(t)} is quantised per channel",
                     f"{kind} tensors quantised per tensor")
    scale, zp = float(t.quant.scale[0]), int(t.quant.zero_point[0])
    if not scale > 0.0 or not math.isfinite(scale):
        raise refuse(op, f"{tensor_desc(t)} has scale {scale}", "positive finite scales")
    lo, hi = (-32768, 32767) if kind == "int16" else (-128, 127)
    if not lo <= zp <= hi:
        raise refuse(op, f"{tensor_desc(t)} has zero point {zp}",
                     f"{kind} zero points in [{lo}, {hi}]")
    return scale, zp


def check_activation(op: Op, activation: str) -> None:
    """Refuse a fused activation no kernel applies (the one such check of every
    lowering with a fused activation: conv, transpose conv, fc, pool, element-wise)."""
    if activation not in FUSED_ACTIVATIONS:
        raise refuse(op, f"fused activation {activation} is not supported",
                     "fused activation " + ", ".join(FUSED_ACTIVATIONS))


def act_range_s8(op: Op, activation: str, out: Tensor) -> tuple[int, int]:
    """TFLM's CalculateActivationRangeQuantized for an int8 output."""
    check_activation(op, activation)
    scale, zp = per_tensor_quant(op, out)
    return activation_range_int8(activation, scale, zp)


def act_range_q(op: Op, activation: str, out: Tensor) -> tuple[int, int]:
    """TFLM's CalculateActivationRangeQuantized for an int8 or int16 output."""
    if out.dtype != DType.INT16:
        return act_range_s8(op, activation, out)
    check_activation(op, activation)
    scale, zp = per_tensor_quant(op, out)
    return activation_range_int16(activation, scale, zp)


def act_range_f32(op: Op, activation: str) -> tuple[float, float]:
    """TFLM's CalculateActivationRange<float>."""
    check_activation(op, activation)
    return activation_range_float(activation)


_IDENT = re.compile(r"[A-Za-z_]\w*")
_INT = re.compile(r"-?\d+[uU]?")


def _arg(a: Arg | str | int) -> Arg:
    """A call argument from the spellings lowerings pass: ``"&name"`` (a struct of the
    body), ``"NULL"``, an identifier (constant array, pointer list), ``"12u"`` or an int."""
    if isinstance(a, (TensorArg, ScratchArg, AddressOf, Raw, Literal, Expr)):
        return a
    if isinstance(a, int):
        return Literal(a, str(a))
    if a.startswith("&") and _IDENT.fullmatch(a[1:]):
        return AddressOf(a[1:])
    if _IDENT.fullmatch(a):
        return Raw(a)
    if _INT.fullmatch(a):
        return Literal(int(a.rstrip("uU")), a)
    return Expr(a)


def c_params(ctype: str, fields: Mapping[str, Any], name: str = "params") -> Body:
    """The parameter struct ``static const <ctype> <name> = {...};`` (one field per line,
    nested structs indented)."""
    return [Params(ctype, dict(fields), name)]


def c_call(fn: str, args: Sequence[Arg | str | int]) -> Body:
    """The kernel call ``return fn(args);`` (one argument per line when it would be
    long): tensors as ``ctx.ptr(t)`` or :func:`cast`, ``ctx.scratch``, ``"&params"``,
    ``"NULL"``, constant arrays by name, literals."""
    return [Call(fn, tuple(_arg(a) for a in args))]


def cast(ctx: EmitContext, t: int, ctype: str, const: bool) -> TensorArg:
    """Tensor t's pointer cast to ``(const) ctype *``."""
    return TensorArg(ctx.ptr(t).index, ctype, const)



def io_args(ctx: EmitContext, x: int, y: int, ctype: str) -> list[TensorArg]:
    """An op's input and output pointers, as ``const ctype *`` and ``ctype *``."""
    return [cast(ctx, x, ctype, True), cast(ctx, y, ctype, False)]

def padded(values: Sequence[int], fill: int = 0) -> list[int]:
    """A per-dimension array filled up to NNRT_MAX_DIMS entries."""
    return list(values) + [fill] * (MAX_DIMS - len(values))



def merge_dims(dims: Sequence[int], strides: Sequence[int]) -> tuple[list[int], list[int]]:
    """Extent-1 dims dropped, neighbours merged where the outer one steps over the inner
    (empty when every dim has extent 1)."""
    md: list[int] = []
    ms: list[int] = []
    for d, s in zip(dims, strides, strict=True):
        if d == 1:
            continue
        if md and ms[-1] == s * d:
            md[-1] *= d
            ms[-1] = s
            continue
        md.append(d)
        ms.append(s)
    return md, ms

# ----- broadcasting -----


"""QuantizeLinear and DequantizeLinear (QDQ graphs)."""

from __future__ import annotations

import numpy as np

from ....cdefs import DType
from ....ir import (
    Quant,
)
from ..importer import Importer
from ..prepare import Node
from ..values import Value
from .common import (
    norm_axis,
)
from .registry import handler


@handler("QuantizeLinear")
def quantize_linear(im: Importer, node: Node) -> None:
    xn, out = node.inputs[0], node.outputs[0]
    if im.is_const(xn):  # weights quantised in the graph (PT2E): per tensor or channel
        x = im.const(xn).astype(np.float64)
        scale = im.const(node.inputs[1]).astype(np.float64)
        zpn = im.opt_input(node, 2)
        zp = im.const(zpn) if zpn else np.zeros(1, np.uint8)
        if zp.dtype not in (np.int8, np.int32):
            raise im.refuse(f"constant quantised to {zp.dtype}", "int8 (or int32 bias)")
        shape = [1] * x.ndim
        if scale.size > 1:
            shape[norm_axis(int(node.attrs.get("axis", 1)), x.ndim)] = -1
        info = np.iinfo(zp.dtype)
        data = np.clip(np.round(x / scale.reshape(shape)) + zp.astype(np.int64).reshape(
            shape if zp.size > 1 else [1] * x.ndim), info.min, info.max).astype(zp.dtype)
        im.p.consts[out] = data
        im.p.shapes[out] = tuple(data.shape)
        return
    q = im._quant_params(node)
    v = im.value(xn)
    src = v.tensor
    if v.kind == "f" or im.b.tensors[src].quant != q:
        y = im.b.tensor(out, im.b.tensors[src].shape, DType.INT8, q)
        im.b.op("QUANTIZE", [src], [y])
    else:
        y = src
    im.values[out] = Value(y, v.perm, "q", v.colperm, v.flat_of)


@handler("DequantizeLinear")
def dequantize_linear(im: Importer, node: Node) -> None:
    xn, out = node.inputs[0], node.outputs[0]
    scale = im.const(node.inputs[1]).astype(np.float64)
    zpn = im.opt_input(node, 2)
    if im.is_const(xn):
        qd = im.const(xn)
        zp = im.const(zpn).astype(np.int64) if zpn else np.zeros(1, np.int64)
        axis = norm_axis(int(node.attrs.get("axis", 1)), max(qd.ndim, 1))
        if scale.size > 1:
            shape = [1] * qd.ndim
            shape[axis] = -1
            real = (qd.astype(np.float64) - zp.reshape(shape)) * scale.reshape(shape)
        else:
            real = (qd.astype(np.float64) - zp.reshape(-1)[0]) * scale.reshape(-1)[0]
        im.p.consts[out] = real.astype(np.float32)
        im.p.shapes[out] = tuple(qd.shape)
        im.qconst[out] = (qd, scale.reshape(-1), zp.reshape(-1), axis if scale.size > 1 else 0)
        return
    v = im.value(xn)
    if v.kind != "q":
        raise im.refuse(f"input {xn!r} is not an int8 tensor", "QDQ pairs around ops")
    t = v.tensor
    zp0 = int(im.const(zpn).reshape(-1)[0]) if zpn else 0
    dq = Quant((float(np.float32(scale.reshape(-1)[0])),), (zp0,))
    if im.b.tensors[t].quant != dq:
        y = im.b.tensor(f"{out}.requant", im.b.tensors[t].shape, DType.INT8, dq)
        im.b.op("QUANTIZE", [t], [y])
        t = y
    im.values[out] = Value(t, v.perm, "dq", v.colperm, v.flat_of)

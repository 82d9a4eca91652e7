"""Helpers the op handlers share: axes, layouts, padding, small op emitters."""

from __future__ import annotations

import numpy as np

from ....cdefs import DType
from ....ir import (
    ActivationOptions,
    ConcatOptions,
    Quant,
)
from ..importer import Importer
from ..prepare import Node
from ..values import NHWC, NLC, identity


def norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def perm_of(im: Importer, name: str) -> tuple[int, ...]:
    """The layout a value is held in (ONNX order for constants and flattened values)."""
    if im.is_const(name):
        return identity(len(im.shape(name)))
    v = im.value(name)
    return identity(len(im.shape(name))) if v.colperm is not None else v.perm


def quant_of(im: Importer, t: int) -> Quant:
    q = im.b.tensors[t].quant
    assert q is not None
    return q


def pad_nhwc(im: Importer, x: int, pads: list[tuple[int, int]], name: str,
              value: float = 0.0) -> int:
    """An explicit PAD (or PADV2 with ``value``) of the spatial axes of an NHWC tensor."""
    t = im.b.tensors[x]
    n, h, w, c = t.shape
    (pt, pb), (pl, pr) = pads
    shape = (n, h + pt + pb, w + pl + pr, c)
    out = im.b.tensor(f"{name}.pad", shape, t.dtype, t.quant)
    paddings = im.b.const(f"{name}.paddings",
                          np.array([[0, 0], [pt, pb], [pl, pr], [0, 0]], dtype=np.int32))
    if value == 0.0:
        im.b.op("PAD", [x, paddings], [out])
        return out
    if t.dtype == DType.INT8:
        q = quant_of(im, x)
        qv = int(np.clip(np.round(value / q.scale[0]) + q.zero_point[0], -128, 127))
        v = im.b.const(f"{name}.padvalue", np.array([qv], dtype=np.int8), q)
    else:
        v = im.b.const(f"{name}.padvalue", np.array([value], dtype=np.float32))
    im.b.op("PADV2", [x, paddings, v], [out])
    return out


def window_attrs(im: Importer, node: Node, kernel_default: list[int]) -> tuple[
        list[int], list[int], list[int]]:
    kernel = [int(k) for k in node.attrs.get("kernel_shape", kernel_default)]
    n = len(kernel)
    strides = [int(s) for s in node.attrs.get("strides", [1] * n)]
    dil = [int(d) for d in node.attrs.get("dilations", [1] * n)]
    return kernel, strides, dil


def nhwc_input(im: Importer, name: str) -> tuple[int, bool]:
    """A 1-D (NCL) or 2-D (NCHW) input as an NHWC IR tensor; True for 1-D."""
    xs = im.shape(name)
    if len(xs) == 3:
        t = im.act(name, NLC)
        return im._reshape(t, (xs[0], 1, xs[2], xs[1]), f"{name}.as2d"), True
    if len(xs) == 4:
        return im.act(name, NHWC), False
    raise im.refuse(f"input {name!r} has rank {len(xs)} ({len(xs) - 2}-D)",
                    "1-D and 2-D convolution and pooling (NCL or NCHW inputs)")


def bind_nhwc(im: Importer, name: str, y: int, one_d: bool) -> None:
    if one_d:
        t = im.b.tensors[y]
        y = im._reshape(y, (t.shape[0], t.shape[2], t.shape[3]), f"{name}.as1d")
        im.bind(name, y, NLC)
    else:
        im.bind(name, y, NHWC)


def emit_unary(im: Importer, x: int, opcode: str, name: str) -> int:
    y = im.b.tensor(name, im.b.tensors[x].shape, DType.FLOAT32)
    im.b.op(opcode, [x], [y])
    return y


def is_int(im: Importer, names: list[str]) -> bool:
    """The live operands ``names`` are held as int32 (an int32 or int64 ONNX value): the
    op computes on integers."""
    return any(im.b.tensors[im.value(n).tensor].dtype == DType.INT32 for n in names)


def emit_binary(im: Importer, a: int, b: int, opcode: str, name: str) -> int:
    sa, sb = im.b.tensors[a].shape, im.b.tensors[b].shape
    dtype = DType.INT32 if im.b.tensors[a].dtype == DType.INT32 else DType.FLOAT32
    y = im.b.tensor(name, tuple(np.broadcast_shapes(sa, sb)), dtype)
    im.b.op(opcode, [a, b], [y], ActivationOptions())
    return y


def scalar_const(im: Importer, value: float, rank: int, name: str) -> int:
    return im.b.const(name, np.full((1,) * rank, value, np.float32))


def slice_tensor(im: Importer, x: int, begin: list[int], size: list[int], name: str) -> int:
    t = im.b.tensors[x]
    if list(t.shape) == size:
        return x
    y = im.b.tensor(name, tuple(size), t.dtype, t.quant)
    b = im.b.const(f"{name}.begin", np.array(begin, np.int32))
    s = im.b.const(f"{name}.size", np.array(size, np.int32))
    im.b.op("SLICE", [x, b, s], [y])
    return y


def concat_copies(im: Importer, parts: list[int], ax: int, name: str) -> int:
    if len(parts) == 1:
        return parts[0]
    t = im.b.tensors[parts[0]]
    shape = list(t.shape)
    shape[ax] = sum(im.b.tensors[p].shape[ax] for p in parts)
    y = im.b.tensor(name, tuple(shape), t.dtype, t.quant)
    im.b.op("CONCATENATION", parts, [y], ConcatOptions(ax))
    return y

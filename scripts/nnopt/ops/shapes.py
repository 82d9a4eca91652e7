"""Output shapes of an op from its input shapes (TFLite's Prepare of each kernel), for
the frontend's shape propagation (:mod:`nnopt.frontend.shapes`: a .tflite model stored
at one input shape and run at another, ``--input-shape``).

A definition names its function (``OpDef.infer_shape``); the element-wise ones need
none (:func:`output_shapes` derives theirs from the ``elementwise`` trait: the input's
shape, or the broadcast of the two). Each function gets a :class:`ShapeQuery` (the
op, its inputs' shapes and, for constant inputs, their values: a RESHAPE's shape
operand, a MEAN's axes) and returns one shape per output; an input it cannot take
raises ShapeError (the frontend names the op).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..ir import (
    BatchMatMulOptions,
    ConcatOptions,
    ConvOptions,
    FullyConnectedOptions,
    Op,
    PoolOptions,
    ReducerOptions,
    SqueezeOptions,
)

Shape = tuple[int, ...]


class ShapeError(ValueError):
    """The inputs' shapes or operands give no output shape (why, for the frontend)."""


@dataclass(frozen=True)
class ShapeQuery:
    op: Op
    shapes: tuple[Shape | None, ...]  # per input; None: an absent optional input
    values: tuple[np.ndarray | None, ...]  # per input: its value when constant

    def shape(self, i: int) -> Shape:
        s = self.shapes[i] if i < len(self.shapes) else None
        if s is None:
            raise ShapeError(f"input {i} is absent")
        return s

    def value(self, i: int) -> np.ndarray:
        v = self.values[i] if i < len(self.values) else None
        if v is None:
            raise ShapeError(f"input {i} is not a constant (its value sets the shape)")
        return v


ShapeFn = Callable[[ShapeQuery], tuple[Shape, ...]]


def broadcast(a: Shape, b: Shape) -> Shape:
    try:
        return tuple(int(d) for d in np.broadcast_shapes(a, b))
    except ValueError:
        raise ShapeError(f"shapes {list(a)} and {list(b)} do not broadcast") from None


def output_shapes(infer: ShapeFn | None, elementwise: str | None,
                  q: ShapeQuery) -> tuple[Shape, ...] | None:
    """The op's output shapes: its definition's function, else the element-wise rule;
    None when it has neither."""
    if infer is not None:
        return infer(q)
    if elementwise == "unary":
        return (q.shape(0),)
    if elementwise == "binary":
        out = q.shape(0)
        for s in q.shapes[1:]:
            if s is not None:
                out = broadcast(out, s)
        return (out,)
    return None


def _axis(axis: int, rank: int) -> int:
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return a


def same(q: ShapeQuery) -> tuple[Shape, ...]:
    """Output 0 has input 0's shape (SOFTMAX, ...)."""
    return (q.shape(0),)


def reshape(q: ShapeQuery) -> tuple[Shape, ...]:
    """The shape operand (one -1 takes what is left), as TFLite's RESHAPE."""
    n = math.prod(q.shape(0))
    if len(q.shapes) < 2 or q.shapes[1] is None:
        raise ShapeError("has no shape operand (its new_shape option is not read)")
    want = [int(d) for d in q.value(1).reshape(-1)]
    if want.count(-1) > 1:
        raise ShapeError(f"new shape {want} has more than one -1")
    known = math.prod(d for d in want if d != -1)
    if -1 in want:
        if known == 0 or n % known:
            raise ShapeError(f"{n} elements do not fill new shape {want}")
        want[want.index(-1)] = n // known
    if math.prod(want) != n:
        raise ShapeError(f"{n} elements do not fill new shape {want}")
    return (tuple(want),)


def expand_dims(q: ShapeQuery) -> tuple[Shape, ...]:
    s = list(q.shape(0))
    axis = int(q.value(1).reshape(-1)[0])
    s.insert(_axis(axis, len(s) + 1), 1)
    return (tuple(s),)


def squeeze(q: ShapeQuery) -> tuple[Shape, ...]:
    s = q.shape(0)
    o = q.op.options
    dims = o.squeeze_dims if isinstance(o, SqueezeOptions) else ()
    drop = {_axis(d, len(s)) for d in dims} if dims else {i for i, d in enumerate(s) if d == 1}
    return (tuple(d for i, d in enumerate(s) if i not in drop),)


def pad(q: ShapeQuery) -> tuple[Shape, ...]:
    s = q.shape(0)
    p = q.value(1).reshape(len(s), 2)
    return (tuple(int(d + a + b) for d, (a, b) in zip(s, p, strict=True)),)


def transpose(q: ShapeQuery) -> tuple[Shape, ...]:
    s = q.shape(0)
    perm = [int(p) for p in q.value(1).reshape(-1)]
    return (tuple(s[_axis(p, len(s))] for p in perm),)


def concatenation(q: ShapeQuery) -> tuple[Shape, ...]:
    o = q.op.options
    shapes = [q.shape(i) for i in range(len(q.shapes))]
    a = _axis(o.axis if isinstance(o, ConcatOptions) else 0, len(shapes[0]))
    out = list(shapes[0])
    for s in shapes[1:]:
        if len(s) != len(out) or any(x != y for i, (x, y) in enumerate(zip(s, out, strict=True))
                                     if i != a):
            raise ShapeError(f"inputs {list(shapes[0])} and {list(s)} do not concatenate "
                             f"on axis {a}")
        out[a] += s[a]
    return (tuple(out),)


def _window(size: int, f: int, stride: int, dilation: int, padding: str) -> int:
    eff = (f - 1) * dilation + 1
    if padding == "SAME":
        return (size + stride - 1) // stride
    if size < eff:
        raise ShapeError(f"extent {size} is smaller than the window {eff}")
    return (size - eff + stride) // stride


def _conv(q: ShapeQuery, channels_axis: int) -> tuple[Shape, ...]:
    x, w = q.shape(0), q.shape(1)
    o = q.op.options
    if not isinstance(o, ConvOptions) or len(x) != 4 or len(w) != 4:
        raise ShapeError("expects 4-D input and weights")
    return ((x[0], _window(x[1], w[1], o.stride_h, o.dilation_h, o.padding),
             _window(x[2], w[2], o.stride_w, o.dilation_w, o.padding), w[channels_axis]),)


def conv(q: ShapeQuery) -> tuple[Shape, ...]:
    """CONV_2D: weights [OC,KH,KW,IC]."""
    return _conv(q, 0)


def depthwise(q: ShapeQuery) -> tuple[Shape, ...]:
    """DEPTHWISE_CONV_2D: weights [1,KH,KW,OC]."""
    return _conv(q, 3)


def pool(q: ShapeQuery) -> tuple[Shape, ...]:
    x = q.shape(0)
    o = q.op.options
    if not isinstance(o, PoolOptions) or len(x) != 4:
        raise ShapeError("expects a 4-D input")
    return ((x[0], _window(x[1], o.filter_h, o.stride_h, 1, o.padding),
             _window(x[2], o.filter_w, o.stride_w, 1, o.padding), x[3]),)


def fully_connected(q: ShapeQuery) -> tuple[Shape, ...]:
    """TFLite's: [batch, units] with batch = elements / input features, or the input's
    leading dimensions with ``keep_num_dims``."""
    x, w = q.shape(0), q.shape(1)
    o = q.op.options
    units, features = w[0], w[-1]
    if isinstance(o, FullyConnectedOptions) and o.keep_num_dims:
        return ((*x[:-1], units),)
    n = math.prod(x)
    if features == 0 or n % features:
        raise ShapeError(f"input {list(x)} is not a whole number of rows of {features}")
    return ((n // features, units),)


def reduce(q: ShapeQuery) -> tuple[Shape, ...]:
    """MEAN, SUM, REDUCE_MAX, ...: the axes operand, ``keep_dims``."""
    s = q.shape(0)
    axes = {_axis(int(a), len(s)) for a in q.value(1).reshape(-1)}
    o = q.op.options
    keep = isinstance(o, ReducerOptions) and o.keep_dims
    return (tuple(1 if i in axes else d for i, d in enumerate(s) if keep or i not in axes),)


def batch_matmul(q: ShapeQuery) -> tuple[Shape, ...]:
    a, b = q.shape(0), q.shape(1)
    o = q.op.options
    adj_x = isinstance(o, BatchMatMulOptions) and o.adj_x
    adj_y = isinstance(o, BatchMatMulOptions) and o.adj_y
    if len(a) < 2 or len(b) < 2:
        raise ShapeError("expects inputs of rank 2 or more")
    m, k = (a[-1], a[-2]) if adj_x else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if adj_y else (b[-2], b[-1])
    if k != k2:
        raise ShapeError(f"inner dimensions {k} and {k2} differ")
    return ((*broadcast(a[:-2], b[:-2]), m, n),)


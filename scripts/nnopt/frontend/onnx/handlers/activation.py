"""Activations, Softmax/LogSoftmax, Clip, PRelu, unfused BatchNormalization."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ....cdefs import DType
from ....ir import (
    ActivationOptions,
    ConvOptions,
    FullyConnectedOptions,
    LeakyReluOptions,
    Quant,
    SoftmaxOptions,
)
from ..importer import Importer
from ..prepare import Node
from ..values import Value, identity, permuted
from .common import (
    emit_unary,
    norm_axis,
    perm_of,
    quant_of,
)
from .registry import handler


@handler("Softmax", quant=(0,))
def softmax(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    rank = len(im.shape(xn))
    axis = norm_axis(int(node.attrs.get("axis", -1)), rank)
    perm = perm_of(im, xn)
    target = (*[p for p in perm if p != axis], axis)
    x = im.act(xn, target)
    y = im.out_tensor(node.outputs[0], permuted(im.shape(xn), target),
                      Quant((1.0 / 256,), (-128,)) if im.qout is not None else None)
    im.b.op("SOFTMAX", [x], [y], SoftmaxOptions(1.0))
    im.bind(node.outputs[0], y, target)


@handler("LogSoftmax")
def log_softmax(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    rank = len(im.shape(xn))
    axis = norm_axis(int(node.attrs.get("axis", -1)), rank)
    perm = perm_of(im, xn)
    target = (*[p for p in perm if p != axis], axis)
    x = im.act(xn, target)
    im.bind(node.outputs[0], emit_unary(im, x, "LOG_SOFTMAX", node.outputs[0]), target)


_FUSABLE = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL")


def _try_fuse(im: Importer, node: Node, activation: str) -> bool:
    """Fold RELU/RELU6 into the float op producing the input (one reader, not an output)."""
    xn = node.inputs[0]
    if im.qout is not None or im.is_const(xn) or xn in im.p.outputs:
        return False
    v = im.value(xn)
    if v.kind != "f" or len(im.p.consumers.get(xn, [])) != 1:
        return False
    op = im.b.producing_op(v.tensor)
    if op is None or op.opcode not in _FUSABLE or any(
            v.tensor in o.inputs for o in im.b.ops):
        return False
    o = op.options
    if isinstance(o, ConvOptions | FullyConnectedOptions | ActivationOptions) \
            and o.activation == "NONE":
        im.b.set_options(op, replace(o, activation=activation))
        im.values[node.outputs[0]] = Value(v.tensor, v.perm, "f", v.colperm, v.flat_of)
        return True
    return False


def _unary(im: Importer, node: Node, opcode: str, options: object = None,
           out_quant: Quant | None = None, same_quant: bool = False) -> None:
    xn = node.inputs[0]
    v = im.value(xn)
    keep = v.colperm is not None
    if keep:
        x = v.tensor if (im.qout is not None or v.kind == "f") else im._cached(
            ("deq", xn), lambda: im._dequantize(v.tensor, xn))
        perm = v.perm
    else:
        perm = perm_of(im, xn)
        x = im.act(xn, perm)
    xt = im.b.tensors[x]
    q = (xt.quant if same_quant else out_quant) if im.qout is not None else None
    y = im.out_tensor(node.outputs[0], xt.shape, q)
    im.b.op(opcode, [x], [y], options)  # type: ignore[arg-type]
    if keep:
        im.bind(node.outputs[0], y, perm, colperm=v.colperm, flat_of=v.flat_of)
    else:
        im.bind(node.outputs[0], y, perm)


@handler("Relu", quant=(0,))
def relu(im: Importer, node: Node) -> None:
    if not _try_fuse(im, node, "RELU"):
        _unary(im, node, "RELU", same_quant=True)


@handler("Sigmoid", quant=(0,))
def sigmoid(im: Importer, node: Node) -> None:
    _unary(im, node, "LOGISTIC", out_quant=Quant((1.0 / 256,), (-128,)))


@handler("Tanh", quant=(0,))
def tanh(im: Importer, node: Node) -> None:
    _unary(im, node, "TANH", out_quant=Quant((1.0 / 128,), (0,)))


@handler("HardSwish", quant=(0,))
def hard_swish(im: Importer, node: Node) -> None:
    _unary(im, node, "HARD_SWISH")


@handler("LeakyRelu", quant=(0,))
def leaky_relu(im: Importer, node: Node) -> None:
    _unary(im, node, "LEAKY_RELU", LeakyReluOptions(float(node.attrs.get("alpha", 0.01))))


def _clip_bounds(im: Importer, node: Node) -> tuple[float | None, float | None]:
    """Constant bounds (None: absent); a bound computed at run time is read by
    :func:`_live_bound` instead and is None here."""
    lo = im.opt_input(node, 1)
    hi = im.opt_input(node, 2)
    lo = lo if im.is_const(lo) else ""
    hi = hi if im.is_const(hi) else ""
    vlo = float(im.const(lo).reshape(-1)[0]) if lo else node.attrs.get("min")
    vhi = float(im.const(hi).reshape(-1)[0]) if hi else node.attrs.get("max")
    # an infinite bound clips nothing: absent (no MAXIMUM/MINIMUM with an inf constant)
    flo = None if vlo is None or float(vlo) == -math.inf else float(vlo)
    fhi = None if vhi is None or float(vhi) == math.inf else float(vhi)
    return flo, fhi


def _live_bound(im: Importer, node: Node, k: int, rank: int) -> int | None:
    """Clip bound ``k`` (1: min, 2: max) computed from activations (e.g. max(x) - 80):
    its IR tensor as [1]*rank for MAXIMUM/MINIMUM to broadcast; None when constant."""
    name = im.opt_input(node, k)
    if not name or im.is_const(name):
        return None
    if im.qout is not None:
        raise im.refuse(f"bound {name!r} is computed at run time in an int8 Clip",
                        "constant bounds in int8 Clip")
    if math.prod(im.shape(name)) != 1:
        raise im.refuse(f"bound {name!r} has shape {list(im.shape(name))}",
                        "scalar Clip bounds")
    t = im.act(name, identity(len(im.shape(name))))
    return im._reshape(t, (1,) * rank, f"{name}.bcast")


@handler("Clip", quant=(0,))
def clip(im: Importer, node: Node) -> None:
    lo, hi = _clip_bounds(im, node)
    rank = len(im.shape(node.inputs[0]))
    live = {"MAXIMUM": _live_bound(im, node, 1, rank), "MINIMUM": _live_bound(im, node, 2, rank)}
    if any(t is not None for t in live.values()):
        _clip_live(im, node, lo, hi, live)
        return
    if lo == 0.0 and hi == 6.0:
        if not _try_fuse(im, node, "RELU6"):
            _unary(im, node, "RELU6", same_quant=True)
        return
    if lo == 0.0 and (hi is None or hi >= float(np.finfo(np.float32).max)):
        relu(im, node)
        return
    xn = node.inputs[0]
    perm = perm_of(im, xn)
    cur = im.act(xn, perm)
    xt = im.b.tensors[cur]
    for opcode, bound in (("MAXIMUM", lo), ("MINIMUM", hi)):
        if bound is None:
            continue
        if im.qout is not None:
            q = quant_of(im, cur)
            qb = int(np.clip(np.round(bound / q.scale[0]) + q.zero_point[0], -128, 127))
            c = im.b.const(f"{node.name}.{opcode}", np.full((1,) * len(xt.shape), qb,
                                                           np.int8), q)
        else:
            c = im.b.const(f"{node.name}.{opcode}",
                           np.full((1,) * len(xt.shape), bound, np.float32))
        y = im.out_tensor(f"{node.outputs[0]}.{opcode}", xt.shape, xt.quant)
        im.b.op(opcode, [cur, c], [y], ActivationOptions())
        cur = y
    if cur == im.act(xn, perm):
        cur = im._copy(cur, node.outputs[0])
    im.bind(node.outputs[0], cur, perm)


def _clip_live(im: Importer, node: Node, lo: float | None, hi: float | None,
               live: dict[str, int | None]) -> None:
    """float32 Clip with a bound computed at run time: MAXIMUM then MINIMUM."""
    xn = node.inputs[0]
    perm = perm_of(im, xn)
    cur = im.act(xn, perm)
    shape = im.b.tensors[cur].shape
    for opcode, bound in (("MAXIMUM", lo), ("MINIMUM", hi)):
        t = live[opcode]
        if t is None and bound is None:
            continue
        if t is None:
            t = im.b.const(f"{node.name}.{opcode}", np.full((1,) * len(shape), bound,
                                                           np.float32))
        y = im.b.tensor(f"{node.outputs[0]}.{opcode}", shape, DType.FLOAT32)
        im.b.op(opcode, [cur, t], [y], ActivationOptions())
        cur = y
    im.bind(node.outputs[0], cur, perm)


@handler("PRelu")
def prelu(im: Importer, node: Node) -> None:
    """PRELU with a constant slope broadcast against the input."""
    xn, sn = node.inputs
    xs = im.shape(xn)
    perm = perm_of(im, xn)
    x = im.act(xn, perm)
    ir = permuted(xs, perm)
    slope = im.const(sn)
    if im.p.opset < 7 and slope.ndim == 1 and len(xs) > 2 and slope.size == xs[1]:
        # opset < 7 PRelu: a 1-D slope is per channel (legacy broadcast)
        im.p.consts[f"{sn}.per_channel"] = slope.reshape((xs[1],) + (1,) * (len(xs) - 2))
        im.p.shapes[f"{sn}.per_channel"] = im.p.consts[f"{sn}.per_channel"].shape
        sn = f"{sn}.per_channel"
        slope = im.const(sn)
    if slope.ndim > len(xs):
        raise im.refuse("slope of higher rank than the input", "broadcastable slopes")
    st = im.const_tensor(sn, perm, len(xs))
    y = im.b.tensor(node.outputs[0], ir, DType.FLOAT32)
    im.b.op("PRELU", [x, st], [y])
    im.bind(node.outputs[0], y, perm)


@handler("BatchNormalization")
def batch_norm(im: Importer, node: Node) -> None:
    """Not after a conv (else folded there): x * scale + shift per channel."""
    xn = node.inputs[0]
    if len([o for o in node.outputs if o]) != 1:
        raise im.refuse("training-mode outputs", "inference BatchNormalization")
    gamma, beta, mean, var = (im.const(n).astype(np.float64) for n in node.inputs[1:5])
    eps = float(node.attrs.get("epsilon", 1e-5))
    scale = gamma / np.sqrt(var + eps)
    shift = beta - mean * scale
    xs = im.shape(xn)
    perm = perm_of(im, xn)
    x = im.act(xn, perm)
    bshape = (1, xs[1]) + (1,) * (len(xs) - 2)
    ir = permuted(xs, perm)
    s = im.b.const(f"{node.name}.scale", scale.astype(np.float32).reshape(bshape).transpose(perm))
    t = im.b.const(f"{node.name}.shift", shift.astype(np.float32).reshape(bshape).transpose(perm))
    m = im.b.tensor(f"{node.name}.mul", ir, DType.FLOAT32)
    im.b.op("MUL", [x, s], [m], ActivationOptions())
    y = im.b.tensor(node.outputs[0], ir, DType.FLOAT32)
    im.b.op("ADD", [m, t], [y], ActivationOptions())
    im.bind(node.outputs[0], y, perm)

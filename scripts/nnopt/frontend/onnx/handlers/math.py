"""float32 math on nnrt/kernels/math.h: Exp/Log/Sqrt/..., Elu/Selu/Softplus/Softsign,
Pow, InstanceNormalization."""

from __future__ import annotations

import numpy as np

from ....cdefs import DType
from ....ir import (
    ReducerOptions,
)
from ..importer import Importer
from ..prepare import Node
from ..values import identity
from .common import (
    emit_binary,
    emit_unary,
    perm_of,
    scalar_const,
)
from .registry import handler


def _same_layout_unary(im: Importer, xn: str, opcode: str, name: str) -> tuple[int, tuple[
        int, ...]]:
    perm = perm_of(im, xn)
    x = im.act(xn, perm)
    y = im.b.tensor(name, im.b.tensors[x].shape, DType.FLOAT32)
    im.b.op(opcode, [x], [y])
    return y, perm


@handler("Neg", "Abs", "Exp", "Log", "Sqrt", "Floor", "Ceil", "Round", "Sin", "Cos")
def math_unary(im: Importer, node: Node) -> None:
    # ONNX Round is half to even, as TFLite's ROUND
    y, perm = _same_layout_unary(im, node.inputs[0], node.op_type.upper(), node.outputs[0])
    im.bind(node.outputs[0], y, perm)


@handler("Reciprocal")
def reciprocal(im: Importer, node: Node) -> None:
    perm = perm_of(im, node.inputs[0])
    x = im.act(node.inputs[0], perm)
    one = scalar_const(im, 1.0, len(perm), f"{node.name}.one")
    im.bind(node.outputs[0], emit_binary(im, one, x, "DIV", node.outputs[0]), perm)


def _exp_neg_part(im: Importer, x: int, alpha: float, name: str) -> tuple[int, int]:
    """(max(x, 0), alpha * (exp(min(x, 0)) - 1)): the two halves of ELU/SELU."""
    r = len(im.b.tensors[x].shape)
    zero = scalar_const(im, 0.0, r, f"{name}.zero")
    pos = emit_binary(im, x, zero, "MAXIMUM", f"{name}.pos")
    neg = emit_binary(im, x, zero, "MINIMUM", f"{name}.neg")
    e = emit_unary(im, neg, "EXP", f"{name}.exp")
    em1 = emit_binary(im, e, scalar_const(im, 1.0, r, f"{name}.one"), "SUB", f"{name}.em1")
    return pos, emit_binary(im, em1, scalar_const(im, alpha, r, f"{name}.alpha"), "MUL",
                             f"{name}.scaled")


@handler("Elu", "Selu")
def elu(im: Importer, node: Node) -> None:
    selu = node.op_type == "Selu"
    alpha = float(node.attrs.get("alpha", 1.6732632423543772 if selu else 1.0))
    perm = perm_of(im, node.inputs[0])
    x = im.act(node.inputs[0], perm)
    if not selu and alpha == 1.0:
        y = emit_unary(im, x, "ELU", node.outputs[0])
        im.bind(node.outputs[0], y, perm)
        return
    pos, neg = _exp_neg_part(im, x, alpha, node.name)
    if selu:
        gamma = float(node.attrs.get("gamma", 1.0507009873554805))
        s = emit_binary(im, pos, neg, "ADD", f"{node.name}.sum")
        y = emit_binary(im, s, scalar_const(im, gamma, len(perm), f"{node.name}.gamma"), "MUL",
                         node.outputs[0])
    else:
        y = emit_binary(im, pos, neg, "ADD", node.outputs[0])
    im.bind(node.outputs[0], y, perm)


@handler("Softplus")
def softplus(im: Importer, node: Node) -> None:
    perm = perm_of(im, node.inputs[0])
    x = im.act(node.inputs[0], perm)
    e = emit_unary(im, x, "EXP", f"{node.name}.exp")
    s = emit_binary(im, e, scalar_const(im, 1.0, len(perm), f"{node.name}.one"), "ADD",
                     f"{node.name}.sum")
    im.bind(node.outputs[0], emit_unary(im, s, "LOG", node.outputs[0]), perm)


@handler("Softsign")
def softsign(im: Importer, node: Node) -> None:
    perm = perm_of(im, node.inputs[0])
    x = im.act(node.inputs[0], perm)
    a = emit_unary(im, x, "ABS", f"{node.name}.abs")
    d = emit_binary(im, a, scalar_const(im, 1.0, len(perm), f"{node.name}.one"), "ADD",
                     f"{node.name}.den")
    im.bind(node.outputs[0], emit_binary(im, x, d, "DIV", node.outputs[0]), perm)


@handler("Pow")
def power(im: Importer, node: Node) -> None:
    xn, en = node.inputs
    if im.is_const(en) and im.const(en).size == 1:
        e = float(im.const(en).reshape(-1)[0])
        perm = perm_of(im, xn)
        x = im.act(xn, perm)
        if e == 2.0:
            im.bind(node.outputs[0], emit_binary(im, x, x, "MUL", node.outputs[0]), perm)
            return
        if e == 0.5:
            im.bind(node.outputs[0], emit_unary(im, x, "SQRT", node.outputs[0]), perm)
            return
    # x ** y = exp(y * log(x)) (positive bases)
    out = node.outputs[0]
    r = len(im.shape(out))
    live = [n for n in (xn, en) if not im.is_const(n)]
    perms = {perm_of(im, n) for n in live}
    perm = perms.pop() if len(perms) == 1 and all(len(im.shape(n)) == r for n in live) \
        else identity(r)
    x = im.act(xn, perm) if not im.is_const(xn) else im.const_tensor(xn, perm, r)
    y = im.act(en, perm) if not im.is_const(en) else im.const_tensor(en, perm, r)
    lg = emit_unary(im, x, "LOG", f"{node.name}.log")
    m = emit_binary(im, y, lg, "MUL", f"{node.name}.mul")
    im.bind(out, emit_unary(im, m, "EXP", out), perm)


@handler("InstanceNormalization")
def instance_norm(im: Importer, node: Node) -> None:
    """(x - mean) / sqrt(var + eps) * scale + bias over the spatial axes of each channel."""
    xn, sn, bn = node.inputs
    xs = im.shape(xn)
    rank = len(xs)
    eps = float(node.attrs.get("epsilon", 1e-5))
    perm = perm_of(im, xn)
    x = im.act(xn, perm)
    ir = im.b.tensors[x].shape
    spatial = sorted(perm.index(a) for a in range(2, rank))
    axes = im.b.const(f"{node.name}.axes", np.array(spatial, np.int32))
    red = tuple(1 if i in spatial else d for i, d in enumerate(ir))

    def mean(t: int, name: str) -> int:
        y = im.b.tensor(name, red, DType.FLOAT32)
        im.b.op("MEAN", [t, axes], [y], ReducerOptions(True))
        return y

    mu = mean(x, f"{node.name}.mean")
    d = emit_binary(im, x, mu, "SUB", f"{node.name}.centred")
    var = mean(emit_binary(im, d, d, "MUL", f"{node.name}.sq"), f"{node.name}.var")
    inv = emit_unary(im, emit_binary(im, var, scalar_const(im, eps, rank, f"{node.name}.eps"),
                                       "ADD", f"{node.name}.vareps"), "RSQRT",
                      f"{node.name}.rstd")
    nrm = emit_binary(im, d, inv, "MUL", f"{node.name}.norm")
    cshape = (1, xs[1]) + (1,) * (rank - 2)
    sc = im.b.const(f"{sn}.c", im.const(sn).astype(np.float32).reshape(cshape).transpose(perm))
    bc = im.b.const(f"{bn}.c", im.const(bn).astype(np.float32).reshape(cshape).transpose(perm))
    y = emit_binary(im, emit_binary(im, nrm, sc, "MUL", f"{node.name}.scaled"), bc, "ADD",
                     node.outputs[0])
    im.bind(node.outputs[0], y, perm)

"""Add/Sub/Mul/Div with broadcasting, Max/Min/Sum."""

from __future__ import annotations

import numpy as np

from ....cdefs import DType
from ....ir import (
    ActivationOptions,
)
from ..importer import Importer
from ..prepare import Node
from ..values import identity, permuted
from .common import (
    emit_binary,
    is_int,
    perm_of,
)
from .registry import handler


@handler("Add", "Sub", "Mul", quant=(0, 1))
def binary(im: Importer, node: Node) -> None:
    _binary(im, node, node.op_type.upper())


@handler("Div")
def div(im: Importer, node: Node) -> None:
    if not im.is_const(node.inputs[1]):
        _binary(im, node, "DIV")
        return
    _binary(im, node, "MUL", reciprocal=True)


def _binary(im: Importer, node: Node, opcode: str, reciprocal: bool = False) -> None:
    a, b = node.inputs
    out = node.outputs[0]
    ys = im.shape(out)
    r = len(ys)
    live = [n for n in (a, b) if not im.is_const(n)]
    perms = {perm_of(im, n) for n in live}
    if len(perms) == 1 and all(len(im.shape(n)) == r for n in live):
        perm = perms.pop()
    else:
        perm = identity(r)
    ints = is_int(im, live)
    ts = []
    for n in (a, b):
        if im.is_const(n) and ints:
            ts.append(im.int_const(n, perm, r))
        elif im.is_const(n):
            if reciprocal and n == b:
                c = 1.0 / im.const(n).astype(np.float64)
                data = c.astype(np.float32).reshape((1,) * (r - c.ndim) + c.shape)
                ts.append(im.b.const(f"{n}.reciprocal", data.transpose(perm)))
            else:
                ts.append(im.const_tensor(n, perm, r))
        else:
            ts.append(im.act(n, perm if len(im.shape(n)) == r else None))
    y = im.out_tensor(out, permuted(ys, perm), dtype=DType.INT32 if ints else DType.FLOAT32)
    im.b.op(opcode, ts, [y], ActivationOptions(im.qact))
    im.bind(out, y, perm)


@handler("Max", "Min", "Sum")
def variadic(im: Importer, node: Node) -> None:
    opcode = {"Max": "MAXIMUM", "Min": "MINIMUM", "Sum": "ADD"}[node.op_type]
    names = [n for n in node.inputs if n]
    out = node.outputs[0]
    r = len(im.shape(out))
    live = [n for n in names if not im.is_const(n)]
    perms = {perm_of(im, n) for n in live}
    perm = perms.pop() if len(perms) == 1 and all(len(im.shape(n)) == r for n in live) \
        else identity(r)

    ints = is_int(im, live)

    def get(n: str) -> int:
        if im.is_const(n):
            return im.int_const(n, perm, r) if ints else im.const_tensor(n, perm, r)
        return im.act(n, perm if len(im.shape(n)) == r else None)

    cur = get(names[0])
    if len(names) == 1:
        cur = im._copy(cur, out)
    for k, n in enumerate(names[1:], 1):
        cur = emit_binary(im, cur, get(n), opcode, out if k == len(names) - 1 else
                           f"{out}.{k}")
    im.bind(out, cur, perm)

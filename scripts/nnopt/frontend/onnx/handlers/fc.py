"""Gemm and MatMul: FULLY_CONNECTED (constant or runtime weights)."""

from __future__ import annotations

import numpy as np

from ....cdefs import DType
from ....ir import (
    ActivationOptions,
    BatchMatMulOptions,
    FullyConnectedOptions,
    Quant,
)
from ..importer import Importer
from ..prepare import Node
from ..values import identity, permuted
from .common import (
    emit_binary,
    quant_of,
    scalar_const,
)
from .registry import handler


def _fc(im: Importer, node: Node, a: str, W: np.ndarray, wname: str, bias: str,
        trans_w: bool, alpha: float, beta: float, trans_a: bool = False) -> None:
    """y = alpha * A @ W^T + beta * bias, W [units, depth] (``trans_w``: the constant is
    stored [depth, units])."""
    units = W.shape[0]
    out = node.outputs[0]
    ys = im.shape(out)
    colperm = None
    if trans_a:
        x = im.act(a, (1, 0))
        perm: tuple[int, ...] = (0, 1)
    else:
        v = im.value(a) if not im.is_const(a) else None
        if v is not None and v.colperm is not None:
            x = v.tensor if im.qout is not None or v.kind == "f" else im._cached(
                ("deq", a), lambda: im._dequantize(v.tensor, a))
            colperm = v.colperm
        else:
            x = im.act(a, identity(len(im.shape(a))))
        perm = identity(len(ys))
    if im.qout is None:
        wf = (W.astype(np.float64) * alpha).astype(np.float32)
        if colperm is not None:
            wf = wf[:, colperm]
        wt = im.b.const(wname, np.ascontiguousarray(wf))
        bt = -1
        extra = None
        if bias and not im.is_const(bias):
            extra = None
        elif bias:
            c = im.const(bias).astype(np.float64) * beta
            if c.size == 1 or c.shape in ((units,), (1, units)):
                bt = im.b.const(bias, np.broadcast_to(c.reshape(-1), (units,)).astype(
                    np.float32).copy())
            else:
                extra = c.astype(np.float32)
    else:
        if alpha != 1.0 or beta != 1.0:
            raise im.refuse(f"alpha {alpha}, beta {beta} in an int8 Gemm", "alpha = beta = 1")
        q, scale, zp, axis = im.qconst_of(wname)
        if q.dtype != np.int8 or np.any(zp != 0):
            raise im.refuse(f"weights {wname!r} are not symmetric int8", "symmetric int8")
        qw = q.T if trans_w else q
        waxis = 1 - axis if trans_w else axis
        if colperm is not None:
            qw = qw[:, colperm]
        if scale.size > 1 and waxis != 0:
            raise im.refuse(f"weights {wname!r} are quantised along the inputs",
                            "per-channel weights along the output units")
        wq = Quant(tuple(float(s) for s in scale), (0,) * scale.size, 0)
        wt = im.b.const(wname, np.ascontiguousarray(qw), wq)
        bt, extra = -1, None
        if bias:
            s_in = quant_of(im, x).scale[0]
            bscale = np.broadcast_to(np.asarray(wq.scale) * s_in, (units,))
            if bias in im.qconst and im.qconst[bias][0].dtype == np.int32 \
                    and im.qconst[bias][0].size == units:
                bq = im.qconst[bias][0].reshape(-1)
            else:
                c = im.const(bias)
                if c.size not in (1, units):
                    raise im.refuse("a 2-D bias in an int8 Gemm", "bias of the units")
                bq = np.round(np.broadcast_to(c.reshape(-1), (units,)) / bscale)
            bt = im.b.const(bias, bq.astype(np.int32),
                            Quant(tuple(float(s) for s in bscale), (0,) * units))
    live_c = bool(bias) and not im.is_const(bias) and im.qout is None
    if live_c:
        y = im.b.tensor(f"{out}.mm", ys, DType.FLOAT32)
    elif extra is None:
        y = im.out_tensor(out, permuted(ys, perm))
    else:
        y = im.b.tensor(f"{out}.mm", ys, DType.FLOAT32)
    im.b.op("FULLY_CONNECTED", [x, wt, bt], [y],
            FullyConnectedOptions(im.qact, keep_num_dims=len(ys) > 2))
    if live_c:
        ct = im.act(bias, identity(len(im.shape(bias))))
        if beta != 1.0:
            ct = emit_binary(im, ct, scalar_const(im, beta, len(im.shape(bias)), f"{bias}.beta"),
                              "MUL", f"{bias}.scaled")
        y = emit_binary(im, y, ct, "ADD", out)
    if extra is not None:
        ct = im.b.const(f"{bias}.c", extra.reshape((1,) * (len(ys) - extra.ndim) + extra.shape))
        z = im.b.tensor(out, ys, DType.FLOAT32)
        im.b.op("ADD", [y, ct], [z], ActivationOptions())
        y = z
    im.bind(out, y, perm)


def _runtime_fc(im: Importer, node: Node, a: str, bname: str, trans_b: bool, c: str,
                alpha: float, beta: float, trans_a: bool) -> None:
    """A @ B with B an activation (float32): FULLY_CONNECTED reading B^T as its weights."""
    if im.qout is not None:
        raise AssertionError("Gemm with runtime B is not imported as int8")
    x = im.act(a, (1, 0) if trans_a else (0, 1))
    w = im.act(bname, (0, 1) if trans_b else (1, 0))
    out = node.outputs[0]
    ys = im.shape(out)
    y = im.b.tensor(out if not (c or alpha != 1.0) else f"{out}.mm", ys, DType.FLOAT32)
    im.b.op("FULLY_CONNECTED", [x, w, -1], [y], FullyConnectedOptions())
    if alpha != 1.0:
        y = emit_binary(im, y, scalar_const(im, alpha, 2, f"{node.name}.alpha"), "MUL",
                         out if not c else f"{out}.alpha")
    if c:
        ct = im.const_tensor(c, identity(len(im.shape(c)))) if im.is_const(c) \
            else im.act(c, identity(len(im.shape(c))))
        if beta != 1.0:
            ct = emit_binary(im, ct, scalar_const(im, beta, len(im.shape(c)), f"{node.name}.beta"),
                              "MUL", f"{out}.c")
        y = emit_binary(im, y, ct, "ADD", out)
    im.bind(out, y, (0, 1))


@handler("Gemm", quant=(0, 1, 2))
def gemm(im: Importer, node: Node) -> None:
    a, bname = node.inputs[0], node.inputs[1]
    trans_b = bool(node.attrs.get("transB", 0))
    if not im.is_const(bname):
        _runtime_fc(im, node, a, bname, trans_b, im.opt_input(node, 2),
                    float(node.attrs.get("alpha", 1.0)), float(node.attrs.get("beta", 1.0)),
                    bool(node.attrs.get("transA", 0)))
        return
    B = im.const(bname)
    W = B if trans_b else B.T
    _fc(im, node, a, W, bname, im.opt_input(node, 2), not trans_b,
        float(node.attrs.get("alpha", 1.0)), float(node.attrs.get("beta", 1.0)),
        bool(node.attrs.get("transA", 0)))


@handler("MatMul", quant=(0, 1))
def matmul(im: Importer, node: Node) -> None:
    a, bname = node.inputs
    if not im.is_const(bname) or im.const(bname).ndim != 2:
        _batch_matmul(im, node)
        return
    if len(im.shape(a)) < 2:
        raise im.refuse("A is 1-D", "MatMul of an activation (rank >= 2) by a constant "
                        "2-D matrix, or of two operands of rank >= 2")
    _fc(im, node, a, im.const(bname).T, bname, "", True, 1.0, 1.0)


def _batch_matmul(im: Importer, node: Node) -> None:
    """MatMul with B an activation (or a constant of rank > 2), float32: BATCH_MATMUL
    (batch dimensions broadcast as numpy.matmul's)."""
    a, bname = node.inputs
    if im.qout is not None:
        raise AssertionError("MatMul of activations is not imported as int8")
    x, w = (im.const_tensor(n, identity(len(im.shape(n)))) if im.is_const(n)
            else im.act(n, identity(len(im.shape(n)))) for n in (a, bname))
    xs, ws = im.b.tensors[x].shape, im.b.tensors[w].shape
    if len(xs) == 1:  # numpy.matmul: a 1-D A is a row, a 1-D B a column, then dropped
        x = im._reshape(x, (1, xs[0]), f"{a}.row")
    if len(ws) == 1:
        w = im._reshape(w, (ws[0], 1), f"{bname}.col")
    out = node.outputs[0]
    ys = im.shape(out)
    sx, sw = im.b.tensors[x].shape, im.b.tensors[w].shape
    mm = (*np.broadcast_shapes(sx[:-2], sw[:-2]), sx[-2], sw[-1])
    if len(mm) > 5:
        raise im.refuse(f"MatMul of rank {len(mm)}", "BATCH_MATMUL up to 5-D")
    y = im.b.tensor(out if mm == ys else f"{out}.mm", mm, DType.FLOAT32)
    im.b.op("BATCH_MATMUL", [x, w], [y], BatchMatMulOptions())
    if mm != ys:
        y = im._reshape(y, ys, out)
    im.bind(out, y, identity(len(ys)))

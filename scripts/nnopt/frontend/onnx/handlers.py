"""One handler per ONNX op type: the IR ops it becomes.

Handlers read their inputs with :meth:`Importer.act` (an IR tensor in a chosen axis
order) and :meth:`Importer.const`, create outputs with :meth:`Importer.out_tensor` and
name them with :meth:`Importer.bind`. Those handling int8 ops in QDQ graphs are listed
in :data:`QUANT_INPUTS` with the positions of their data inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ...cdefs import DType
from ...ir import (
    ActivationOptions,
    ConcatOptions,
    ConvOptions,
    FullyConnectedOptions,
    LeakyReluOptions,
    PoolOptions,
    Quant,
    ReducerOptions,
    SoftmaxOptions,
)
from .importer import FLT_LOWEST, Importer, onnx_pads, prod, window_padding
from .prepare import Node
from .values import NHWC, NLC, Value, identity, permuted, relative

Handler = Callable[[Importer, Node], None]
HANDLERS: dict[str, Handler] = {}
QUANT_INPUTS: dict[str, tuple[int, ...]] = {}  # (-1,): every input


def handler(*names: str, quant: tuple[int, ...] | None = None) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
            if quant is not None:
                QUANT_INPUTS[n] = quant
        return fn
    return deco


def _norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _perm_of(im: Importer, name: str) -> tuple[int, ...]:
    """The layout a value is held in (ONNX order for constants and flattened values)."""
    if im.is_const(name):
        return identity(len(im.shape(name)))
    v = im.value(name)
    return identity(len(im.shape(name))) if v.colperm is not None else v.perm


def _quant_of(im: Importer, t: int) -> Quant:
    q = im.b.tensors[t].quant
    assert q is not None
    return q


def _pad_nhwc(im: Importer, x: int, pads: list[tuple[int, int]], name: str,
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
        q = _quant_of(im, x)
        qv = int(np.clip(np.round(value / q.scale[0]) + q.zero_point[0], -128, 127))
        v = im.b.const(f"{name}.padvalue", np.array([qv], dtype=np.int8), q)
    else:
        v = im.b.const(f"{name}.padvalue", np.array([value], dtype=np.float32))
    im.b.op("PADV2", [x, paddings, v], [out])
    return out


def _window_attrs(im: Importer, node: Node, kernel_default: list[int]) -> tuple[
        list[int], list[int], list[int]]:
    kernel = [int(k) for k in node.attrs.get("kernel_shape", kernel_default)]
    n = len(kernel)
    strides = [int(s) for s in node.attrs.get("strides", [1] * n)]
    dil = [int(d) for d in node.attrs.get("dilations", [1] * n)]
    return kernel, strides, dil


def _nhwc_input(im: Importer, name: str) -> tuple[int, bool]:
    """A 1-D (NCL) or 2-D (NCHW) input as an NHWC IR tensor; True for 1-D."""
    xs = im.shape(name)
    if len(xs) == 3:
        t = im.act(name, NLC)
        return im._reshape(t, (xs[0], 1, xs[2], xs[1]), f"{name}.as2d"), True
    if len(xs) == 4:
        return im.act(name, NHWC), False
    raise im.refuse(f"input {name!r} has rank {len(xs)} ({len(xs) - 2}-D)",
                    "1-D and 2-D convolution and pooling (NCL or NCHW inputs)")


def _bind_nhwc(im: Importer, name: str, y: int, one_d: bool) -> None:
    if one_d:
        t = im.b.tensors[y]
        y = im._reshape(y, (t.shape[0], t.shape[2], t.shape[3]), f"{name}.as1d")
        im.bind(name, y, NLC)
    else:
        im.bind(name, y, NHWC)


# ----- convolution -----

@handler("Conv", quant=(0, 1, 2))
def conv(im: Importer, node: Node) -> None:
    xn, wn = node.inputs[0], node.inputs[1]
    bn = im.opt_input(node, 2)
    xs = im.shape(xn)
    if not im.is_const(wn):
        raise im.refuse("the weights are not constant", "Conv with constant weights")
    w = im.const(wn)
    x, one_d = _nhwc_input(im, xn)
    kernel, strides, dil = _window_attrs(im, node, list(w.shape[2:]))
    spatial = list(xs[2:])
    pads = onnx_pads(node, spatial, kernel, strides, dil)
    if one_d:
        kernel, strides, dil, spatial = [1, *kernel], [1, *strides], [1, *dil], [1, *spatial]
        pads = [(0, 0), *pads]
        w = w[:, :, None, :]
    group = int(node.attrs.get("group", 1))
    cin, cout = xs[1], w.shape[0]
    if group < 1 or cin % group or cout % group or w.shape[1] * group != cin:
        raise im.refuse(f"group {group} with {cin} input and {cout} output channels",
                        "groups dividing the input and output channels")
    padding = window_padding(pads, spatial, kernel, strides, dil)
    if padding is None:
        x = _pad_nhwc(im, x, pads, node.name)
        padding = "VALID"
    depthwise = group == cin and group > 1
    if depthwise:
        wperm: tuple[int, ...] = (1, 2, 3, 0)
        opcode, axis_map = "DEPTHWISE_CONV_2D", {0: 3}
    else:
        wperm, opcode, axis_map = (0, 2, 3, 1), "CONV_2D", {0: 0}
    wt, bt = _weights_and_bias(im, node, wn, bn, w, wperm, axis_map, x, cout,
                               expand=1 if one_d else None)
    ys = im.shape(node.outputs[0])
    oh, ow = (1, ys[2]) if one_d else (ys[2], ys[3])
    y = im.out_tensor(node.outputs[0], (xs[0], oh, ow, cout))
    opts = ConvOptions(padding, strides[0], strides[1], dil[0], dil[1], im.qact,
                       depth_multiplier=cout // cin if depthwise else 1)
    im.b.op(opcode, [x, wt, bt], [y], opts)
    _bind_nhwc(im, node.outputs[0], y, one_d)


def _weights_and_bias(im: Importer, node: Node, wn: str, bn: str, w: np.ndarray,
                      wperm: tuple[int, ...], axis_map: dict[int, int], x: int, cout: int,
                      expand: int | None = None, tile: int = 1,
                      flat: tuple[int, int] | None = None) -> tuple[int, int]:
    """The IR weights (``w`` transposed by ``wperm``; float32, or int8 with its per-channel
    axis moved by ``axis_map``) and bias (float32 or int32) of a conv-like op."""
    if im.qout is None:
        wf = w.astype(np.float32).transpose(wperm)
        wt = im.b.const(wn, np.ascontiguousarray(wf.reshape(flat) if flat else wf))
        if not bn:
            return wt, -1
        b = im.const(bn).astype(np.float32).reshape(-1)
        return wt, im.b.const(bn, np.tile(b, tile))
    q, scale, zp, axis = im.qconst_of(wn)
    if np.any(zp != 0):
        raise im.refuse(f"weights {wn!r} are asymmetric", "symmetric int8 weights (zero "
                        "point 0, quantize_static's default for weights)")
    if q.dtype != np.int8:
        raise im.refuse(f"weights {wn!r} are {q.dtype}", "int8 weights")
    if expand is not None:
        q = np.expand_dims(q, 2)
    qw = q.transpose(wperm)
    qw = np.ascontiguousarray(qw.reshape(flat) if flat else qw)
    if scale.size > 1:
        if axis not in axis_map:
            raise im.refuse(f"weights {wn!r} are quantised along axis {axis}",
                            "per-channel weights along the output channels")
        wq = Quant(tuple(float(s) for s in np.tile(scale, tile)),
                   (0,) * (scale.size * tile), axis_map[axis])
    else:
        wq = Quant((float(scale[0]),), (0,))
    wt = im.b.const(wn, qw, wq)
    s_in = _quant_of(im, x).scale[0]
    bscale = np.asarray(wq.scale, dtype=np.float64) * s_in
    if not bn:
        return wt, -1
    if bn in im.qconst and im.qconst[bn][0].dtype == np.int32:
        bq = np.tile(im.qconst[bn][0].reshape(-1), tile)
    else:
        bq = np.round(np.tile(im.const(bn).reshape(-1), tile) / np.broadcast_to(
            bscale, (cout * tile,))).astype(np.int32)
    bquant = Quant(tuple(float(s) for s in np.broadcast_to(bscale, (bq.size,))),
                   (0,) * bq.size)
    return wt, im.b.const(bn, bq.astype(np.int32), bquant)


@handler("ConvTranspose", quant=(0, 1, 2))
def conv_transpose(im: Importer, node: Node) -> None:
    """Kernel == stride, no padding: each input pixel writes its own output block, so the
    op is a FULLY_CONNECTED to stride*stride*C_out values per pixel, then a reshuffle
    (depth to space)."""
    xn, wn = node.inputs[0], node.inputs[1]
    bn = im.opt_input(node, 2)
    xs = im.shape(xn)
    if not im.is_const(wn) or len(xs) != 4:
        raise im.refuse("non-constant weights or not 2-D", "2-D ConvTranspose, constant weights")
    w = im.const(wn)  # [C_in, C_out/g, kh, kw]
    kernel, strides, dil = _window_attrs(im, node, list(w.shape[2:]))
    pads = list(node.attrs.get("pads", [0, 0, 0, 0]))
    outpad = list(node.attrs.get("output_padding", [0, 0]))
    group = int(node.attrs.get("group", 1))
    if group != 1 or "output_shape" in node.attrs or node.attrs.get("auto_pad", b"NOTSET") \
            not in (b"NOTSET", "NOTSET"):
        raise im.refuse(f"group {group} or output_shape/auto_pad",
                        "ConvTranspose with group 1 and explicit pads")
    if kernel != strides or any(pads) or any(outpad) or any(d != 1 for d in dil):
        _conv_transpose_general(im, node, w, kernel, strides, dil, pads, outpad)
        return
    n, cin, h, wd = xs
    cout, (sh, sw) = w.shape[1], strides
    x = im.act(xn, NHWC)
    x2 = im._reshape(x, (n * h * wd, cin), f"{node.name}.rows")
    # FC weights [(a, b, co), ci]
    wperm = (2, 3, 1, 0)
    units = sh * sw * cout
    wt, bt = _weights_and_bias(im, node, wn, bn, w, wperm, {1: 0}, x, cout, tile=sh * sw,
                               flat=(units, cin))
    fc = im.out_tensor(f"{node.name}.fc", (n * h * wd, units))
    im.b.op("FULLY_CONNECTED", [x2, wt, bt], [fc], FullyConnectedOptions())
    blocks = im._reshape(fc, (n * h, wd, sh, sw * cout), f"{node.name}.blocks")
    moved = im._transpose(blocks, (0, 2, 1, 3), f"{node.name}.d2s")
    y = im._reshape(moved, (n, h * sh, wd * sw, cout), node.outputs[0])
    im.bind(node.outputs[0], y, NHWC)


def _zero_insert(im: Importer, x: int, ax: int, s: int, name: str) -> int:
    """s - 1 zeros between neighbours along axis ``ax`` (1: H, 2: W) of an NHWC tensor."""
    if s == 1:
        return x
    t = im.b.tensors[x]
    shape = t.shape
    outer, n, inner = prod(shape[:ax]), shape[ax], prod(shape[ax + 1:])
    v = im._reshape(x, (outer, n, 1, inner), f"{name}.v{ax}")
    if t.dtype == DType.INT8:
        q = _quant_of(im, x)
        zeros = im.b.const(f"{name}.zeros{ax}", np.full((outer, n, s - 1, inner),
                                                         q.zero_point[0], np.int8), q)
    else:
        zeros = im.b.const(f"{name}.zeros{ax}", np.zeros((outer, n, s - 1, inner), np.float32))
    spread = _concat_copies(im, [v, zeros], 2, f"{name}.spread{ax}")
    flat = im._reshape(spread, (outer, n * s, inner), f"{name}.flat{ax}")
    cut = _slice(im, flat, [0, 0, 0], [outer, (n - 1) * s + 1, inner], f"{name}.cut{ax}")
    out = list(shape)
    out[ax] = (n - 1) * s + 1
    return im._reshape(cut, tuple(out), f"{name}.up{ax}")


def _conv_transpose_general(im: Importer, node: Node, w: np.ndarray, kernel: list[int],
                            strides: list[int], dil: list[int], pads: list[int],
                            outpad: list[int]) -> None:
    """ConvTranspose = zeros inserted between the input pixels (stride), padding of
    dilation * (k - 1) - pad around, then a stride-1 convolution with the kernel flipped
    and its channel axes swapped."""
    xn, wn = node.inputs[0], node.inputs[1]
    bn = im.opt_input(node, 2)
    xs = im.shape(xn)
    ys = im.shape(node.outputs[0])
    x = im.act(xn, NHWC)
    for ax, s in ((1, strides[0]), (2, strides[1])):
        x = _zero_insert(im, x, ax, s, node.name)
    pp = []
    for i in range(2):
        b = dil[i] * (kernel[i] - 1) - int(pads[i])
        e = dil[i] * (kernel[i] - 1) - int(pads[i + 2]) + (int(outpad[i]) if outpad else 0)
        if b < 0 or e < 0:
            raise im.refuse(f"pads {pads} larger than dilation * (kernel - 1)",
                            "ConvTranspose pads <= dilation * (kernel - 1)")
        pp.append((b, e))
    if any(pp[0]) or any(pp[1]):
        x = _pad_nhwc(im, x, pp, node.name)
    cout = w.shape[1]
    flipped = np.ascontiguousarray(w[:, :, ::-1, ::-1])
    if im.qout is not None and wn in im.qconst:
        q, scale, zp, axis = im.qconst[wn]
        im.qconst[f"{wn}.flipped"] = (np.ascontiguousarray(q[:, :, ::-1, ::-1]), scale, zp,
                                      axis)
    im.p.consts[f"{wn}.flipped"] = flipped
    wt, bt = _weights_and_bias(im, node, f"{wn}.flipped", bn, flipped, (1, 2, 3, 0),
                               {1: 0}, x, cout)
    y = im.out_tensor(node.outputs[0], (xs[0], ys[2], ys[3], cout))
    im.b.op("CONV_2D", [x, wt, bt], [y], ConvOptions("VALID", 1, 1, dil[0], dil[1]))
    im.bind(node.outputs[0], y, NHWC)


# ----- fully connected -----

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
            s_in = _quant_of(im, x).scale[0]
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
            ct = _emit_binary(im, ct, _scalar(im, beta, len(im.shape(bias)), f"{bias}.beta"),
                              "MUL", f"{bias}.scaled")
        y = _emit_binary(im, y, ct, "ADD", out)
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
        y = _emit_binary(im, y, _scalar(im, alpha, 2, f"{node.name}.alpha"), "MUL",
                         out if not c else f"{out}.alpha")
    if c:
        ct = im.const_tensor(c, identity(len(im.shape(c)))) if im.is_const(c) \
            else im.act(c, identity(len(im.shape(c))))
        if beta != 1.0:
            ct = _emit_binary(im, ct, _scalar(im, beta, len(im.shape(c)), f"{node.name}.beta"),
                              "MUL", f"{out}.c")
        y = _emit_binary(im, y, ct, "ADD", out)
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
    if not im.is_const(bname) and len(im.shape(bname)) == 2 and len(im.shape(a)) == 2:
        _runtime_fc(im, node, a, bname, False, "", 1.0, 1.0, False)
        return
    if not im.is_const(bname) or im.const(bname).ndim != 2 or len(im.shape(a)) < 2:
        raise im.refuse("B is not a constant matrix (or A is 1-D)",
                        "MatMul of an activation (rank >= 2) by a constant 2-D matrix")
    _fc(im, node, a, im.const(bname).T, bname, "", True, 1.0, 1.0)


# ----- pooling -----

@handler("MaxPool", "AveragePool", quant=(0,))
def pool(im: Importer, node: Node) -> None:
    if len(node.outputs) > 1 and node.outputs[1]:
        raise im.refuse("the Indices output is used", "MaxPool without indices")
    xn = node.inputs[0]
    xs = im.shape(xn)
    x, one_d = _nhwc_input(im, xn)
    kernel, strides, dil = _window_attrs(im, node, [])
    if any(d != 1 for d in dil):
        raise im.refuse(f"dilations {dil}", "pooling without dilation")
    spatial = list(xs[2:])
    pads = onnx_pads(node, spatial, kernel, strides, dil)
    ys = im.shape(node.outputs[0])
    if one_d:
        kernel, strides, spatial, pads = [1, *kernel], [1, *strides], [1, *spatial], \
            [(0, 0), *pads]
        out_sp = [1, ys[2]]
    else:
        out_sp = [ys[2], ys[3]]
    is_max = node.op_type == "MaxPool"
    ceil_extra = False
    for i in range(2):
        b, e = pads[i]
        floor_out = (spatial[i] + b + e - kernel[i]) // strides[i] + 1
        if out_sp[i] > floor_out:  # ceil_mode: one more window over the end
            pads[i] = (b, e + (out_sp[i] - 1) * strides[i] + kernel[i] - spatial[i] - b - e)
            ceil_extra = True
    padding = window_padding(pads, spatial, kernel, strides, dil)
    if not is_max:
        include = bool(node.attrs.get("count_include_pad", 0))
        if ceil_extra:
            raise im.refuse("ceil_mode adds a partial window", "AveragePool with ceil_mode 0")
        if include and padding == "SAME":
            padding = None
        if padding is None:
            if not include:
                raise im.refuse(f"pads {pads} excluded from the average",
                                "pads equal to TFLite's SAME, or count_include_pad=1")
            x = _pad_nhwc(im, x, pads, node.name)
            padding = "VALID"
    elif padding is None or (ceil_extra and padding != "VALID"):
        x = _pad_nhwc(im, x, pads, node.name, FLT_LOWEST)
        padding = "VALID"
    c = xs[1]
    y = im.out_tensor(node.outputs[0], (xs[0], out_sp[0], out_sp[1], c),
                      im.b.tensors[x].quant if im.qout is not None else None)
    im.b.op("MAX_POOL_2D" if is_max else "AVERAGE_POOL_2D", [x], [y],
            PoolOptions(padding, strides[0], strides[1], kernel[0], kernel[1]))
    _bind_nhwc(im, node.outputs[0], y, one_d)


@handler("GlobalAveragePool", quant=(0,))
def global_average_pool(im: Importer, node: Node) -> None:
    rank = len(im.shape(node.inputs[0]))
    _reduce(im, node, "MEAN", list(range(2, rank)), keepdims=True)


@handler("GlobalMaxPool", quant=(0,))
def global_max_pool(im: Importer, node: Node) -> None:
    xs = im.shape(node.inputs[0])
    x, one_d = _nhwc_input(im, node.inputs[0])
    h, w = (1, xs[2]) if one_d else (xs[2], xs[3])
    y = im.out_tensor(node.outputs[0], (xs[0], 1, 1, xs[1]),
                      im.b.tensors[x].quant if im.qout is not None else None)
    im.b.op("MAX_POOL_2D", [x], [y], PoolOptions("VALID", 1, 1, h, w))
    _bind_nhwc(im, node.outputs[0], y, one_d)


# ----- reductions -----

def _reduce_axes(im: Importer, node: Node) -> list[int] | None:
    axes_in = im.opt_input(node, 1)
    if axes_in:
        return [int(a) for a in im.const(axes_in).reshape(-1)]
    if "axes" in node.attrs:
        return [int(a) for a in node.attrs["axes"]]
    return None


def _reduce(im: Importer, node: Node, kind: str, axes: list[int] | None,
            keepdims: bool) -> None:
    xn = node.inputs[0]
    xs = im.shape(xn)
    rank = len(xs)
    if axes is None or not axes:
        if axes is not None and node.attrs.get("noop_with_empty_axes", 0):
            im.bind(node.outputs[0], im.act(xn), _perm_of(im, xn))
            return
        axes = list(range(rank))
    axes = sorted({_norm_axis(a, rank) for a in axes})
    perm = _perm_of(im, xn)
    x = im.act(xn, perm)
    ir_axes = sorted(perm.index(a) for a in axes)
    if keepdims:
        out_perm = perm
        ir_shape = tuple(1 if p in axes else xs[p] for p in perm)
    else:
        kept = [p for p in perm if p not in axes]
        out_perm = tuple(sorted(kept).index(p) for p in kept)
        ir_shape = tuple(xs[p] for p in kept)
    at = im.b.const(f"{node.name}.axes", np.array(ir_axes, dtype=np.int32))
    out = node.outputs[0]
    if kind == "SUM":
        y = im.b.tensor(f"{out}.mean", ir_shape, DType.FLOAT32)
        im.b.op("MEAN", [x, at], [y], ReducerOptions(keepdims))
        count = prod([xs[a] for a in axes])
        z = im.b.tensor(out, ir_shape, DType.FLOAT32)
        c = im.b.const(f"{node.name}.count", np.full((1,) * len(ir_shape), count, np.float32))
        im.b.op("MUL", [y, c], [z], ActivationOptions())
        im.bind(out, z, out_perm)
        return
    y = im.out_tensor(out, ir_shape)
    im.b.op("MEAN", [x, at], [y], ReducerOptions(keepdims))
    im.bind(out, y, out_perm)


@handler("ReduceMean", quant=(0,))
def reduce_mean(im: Importer, node: Node) -> None:
    _reduce(im, node, "MEAN", _reduce_axes(im, node), bool(node.attrs.get("keepdims", 1)))


@handler("ReduceSum")
def reduce_sum(im: Importer, node: Node) -> None:
    _reduce(im, node, "SUM", _reduce_axes(im, node), bool(node.attrs.get("keepdims", 1)))


# ----- softmax -----

@handler("Softmax", quant=(0,))
def softmax(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    rank = len(im.shape(xn))
    axis = _norm_axis(int(node.attrs.get("axis", -1)), rank)
    perm = _perm_of(im, xn)
    target = (*[p for p in perm if p != axis], axis)
    x = im.act(xn, target)
    y = im.out_tensor(node.outputs[0], permuted(im.shape(xn), target),
                      Quant((1.0 / 256,), (-128,)) if im.qout is not None else None)
    im.b.op("SOFTMAX", [x], [y], SoftmaxOptions(1.0))
    im.bind(node.outputs[0], y, target)


# ----- element-wise unary -----

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
        perm = _perm_of(im, xn)
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
    lo = im.opt_input(node, 1)
    hi = im.opt_input(node, 2)
    vlo = float(im.const(lo).reshape(-1)[0]) if lo else node.attrs.get("min")
    vhi = float(im.const(hi).reshape(-1)[0]) if hi else node.attrs.get("max")
    return (None if vlo is None else float(vlo)), (None if vhi is None else float(vhi))


@handler("Clip", quant=(0,))
def clip(im: Importer, node: Node) -> None:
    lo, hi = _clip_bounds(im, node)
    if lo == 0.0 and hi == 6.0:
        if not _try_fuse(im, node, "RELU6"):
            _unary(im, node, "RELU6", same_quant=True)
        return
    if lo == 0.0 and (hi is None or hi >= float(np.finfo(np.float32).max)):
        relu(im, node)
        return
    xn = node.inputs[0]
    perm = _perm_of(im, xn)
    cur = im.act(xn, perm)
    xt = im.b.tensors[cur]
    for opcode, bound in (("MAXIMUM", lo), ("MINIMUM", hi)):
        if bound is None:
            continue
        if im.qout is not None:
            q = _quant_of(im, cur)
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


@handler("PRelu")
def prelu(im: Importer, node: Node) -> None:
    """max(x, 0) + slope * min(x, 0), slope constant."""
    xn, sn = node.inputs
    xs = im.shape(xn)
    perm = _perm_of(im, xn)
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
    zero = im.b.const(f"{node.name}.zero", np.zeros((1,) * len(xs), np.float32))
    pos = im.b.tensor(f"{node.name}.pos", ir, DType.FLOAT32)
    neg = im.b.tensor(f"{node.name}.neg", ir, DType.FLOAT32)
    im.b.op("MAXIMUM", [x, zero], [pos], ActivationOptions())
    im.b.op("MINIMUM", [x, zero], [neg], ActivationOptions())
    st = im.const_tensor(sn, perm, len(xs))
    scaled = im.b.tensor(f"{node.name}.scaled", ir, DType.FLOAT32)
    im.b.op("MUL", [neg, st], [scaled], ActivationOptions())
    y = im.b.tensor(node.outputs[0], ir, DType.FLOAT32)
    im.b.op("ADD", [pos, scaled], [y], ActivationOptions())
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
    perm = _perm_of(im, xn)
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


# ----- element-wise binary -----

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
    perms = {_perm_of(im, n) for n in live}
    if len(perms) == 1 and all(len(im.shape(n)) == r for n in live):
        perm = perms.pop()
    else:
        perm = identity(r)
    ts = []
    for n in (a, b):
        if im.is_const(n):
            if reciprocal and n == b:
                c = 1.0 / im.const(n).astype(np.float64)
                data = c.astype(np.float32).reshape((1,) * (r - c.ndim) + c.shape)
                ts.append(im.b.const(f"{n}.reciprocal", data.transpose(perm)))
            else:
                ts.append(im.const_tensor(n, perm, r))
        else:
            ts.append(im.act(n, perm if len(im.shape(n)) == r else None))
    y = im.out_tensor(out, permuted(ys, perm))
    im.b.op(opcode, ts, [y], ActivationOptions(im.qact))
    im.bind(out, y, perm)


# ----- data movement -----

@handler("Concat", quant=(-1,))
def concat(im: Importer, node: Node) -> None:
    names = [n for n in node.inputs if n]
    rank = len(im.shape(names[0]))
    axis = _norm_axis(int(node.attrs.get("axis", 0)), rank)
    live = [n for n in names if not im.is_const(n)]
    perms = {_perm_of(im, n) for n in live}
    perm = perms.pop() if len(perms) == 1 else identity(rank)
    ts = []
    for n in names:
        t = im.act(n, perm)
        if im.qout is not None and im.b.tensors[t].quant != im.qout:
            rq = im.b.tensor(f"{n}.requant", im.b.tensors[t].shape, DType.INT8, im.qout)
            im.b.op("QUANTIZE", [t], [rq])
            t = rq
        ts.append(t)
    y = im.out_tensor(node.outputs[0], permuted(im.shape(node.outputs[0]), perm))
    im.b.op("CONCATENATION", ts, [y], ConcatOptions(perm.index(axis)))
    im.bind(node.outputs[0], y, perm)


def _reads_as_matrix(im: Importer, name: str) -> bool:
    """Every reader of ``name`` (through Q/DQ pairs) is a Gemm/MatMul by a constant."""
    cons = im.p.consumers.get(name, [])
    if not cons or name in im.p.outputs:
        return False
    for k in cons:
        n = im.p.nodes[k]
        if n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            if not _reads_as_matrix(im, n.outputs[0]):
                return False
        elif n.op_type == "Gemm":
            if n.inputs[0] != name or n.attrs.get("transA", 0) or not im.is_const(n.inputs[1]):
                return False
        elif n.op_type == "MatMul":
            if n.inputs[0] != name or not im.is_const(n.inputs[1]):
                return False
        else:
            return False
    return True


@handler("Reshape", "Flatten", "Squeeze", "Unsqueeze", quant=(0,))
def reshape(im: Importer, node: Node) -> None:
    xn, out = node.inputs[0], node.outputs[0]
    xs, ys = im.shape(xn), im.shape(out)
    v = im.value(xn)
    if len(xs) == 4 and v.colperm is None and v.perm == NHWC and len(ys) == 2 \
            and ys[0] == xs[0] and _reads_as_matrix(im, out):
        n, c, h, w = xs
        colperm = np.arange(c * h * w).reshape(c, h, w).transpose(1, 2, 0).reshape(-1)
        t = im._reshape(im.act(xn, NHWC), (n, h * w * c), out)
        if np.array_equal(colperm, np.arange(colperm.size)):
            im.bind(out, t, (0, 1))
        else:
            im.bind(out, t, (0, 1), colperm=colperm, flat_of=xn)
        return
    t = im.act(xn, identity(len(xs)))
    y = im._reshape(t, ys, out)
    if im.qout is not None and y == t:
        y = im._copy(t, out)
    im.bind(out, y, identity(len(ys)))


@handler("Transpose", "Identity", "Dropout")
def transpose(im: Importer, node: Node) -> None:
    """A relabelling of the axis order: no data moves here (a later reader that needs
    another order gets a TRANSPOSE)."""
    xn, out = node.inputs[0], node.outputs[0]
    rank = len(im.shape(xn))
    if node.op_type == "Transpose":
        q = [int(a) for a in node.attrs.get("perm", list(range(rank))[::-1])]
    else:
        q = list(range(rank))
    if im.is_const(xn):
        raise AssertionError("constant transposes are folded")
    v = im.value(xn)
    if v.colperm is not None:
        v = Value(im.act(xn, identity(rank)), identity(rank), "f")
    s = tuple(q.index(p) for p in v.perm)
    im.values[out] = Value(v.tensor, s, v.kind)


@handler("Cast")
def cast(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    if im.p.dtypes.get(xn) != np.float32 or int(node.attrs.get("to", 1)) != 1:
        raise im.refuse("a cast between types", "Cast float32 -> float32")
    transpose(im, node)


@handler("Pad", quant=(0,))
def pad(im: Importer, node: Node) -> None:
    mode = node.attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("constant", "reflect", "edge"):
        raise im.refuse(f"mode {mode!r}", "Pad modes 'constant', 'reflect', 'edge'")
    xn = node.inputs[0]
    xs = im.shape(xn)
    rank = len(xs)
    pads = [int(p) for p in im.const(node.inputs[1]).reshape(-1)] if im.opt_input(node, 1) \
        else [int(p) for p in node.attrs.get("pads", [])]
    axes_in = im.opt_input(node, 3)
    axes = [_norm_axis(int(a), rank) for a in im.const(axes_in).reshape(-1)] if axes_in \
        else list(range(rank))
    per = {a: (pads[i], pads[i + len(axes)]) for i, a in enumerate(axes)}
    if any(p < 0 for pr in per.values() for p in pr):
        raise im.refuse(f"negative pads {pads}", "non-negative pads")
    if mode != "constant":
        perm = _perm_of(im, xn)
        cur = im.act(xn, perm)
        for i, p in enumerate(perm):
            b, e = per.get(p, (0, 0))
            if mode == "reflect" and max(b, e) >= xs[p]:
                raise im.refuse(f"reflect pads {b}, {e} of an axis of {xs[p]}",
                                "reflect pads smaller than the axis")
            if b or e:
                cur = _edge_pad(im, cur, i, b, e, mode == "reflect", node.outputs[0])
        im.bind(node.outputs[0], cur, perm)
        return
    value_in = im.opt_input(node, 2)
    value = float(im.const(value_in).reshape(-1)[0]) if value_in else 0.0
    perm = _perm_of(im, xn)
    x = im.act(xn, perm)
    xt = im.b.tensors[x]
    paddings = np.array([per.get(p, (0, 0)) for p in perm], dtype=np.int32)
    ir = tuple(xt.shape[i] + int(paddings[i].sum()) for i in range(rank))
    y = im.out_tensor(node.outputs[0], ir, xt.quant if im.qout is not None else None)
    pt = im.b.const(f"{node.name}.paddings", paddings)
    if value == 0.0:
        im.b.op("PAD", [x, pt], [y])
    else:
        if im.qout is not None:
            q = _quant_of(im, x)
            vq = int(np.clip(np.round(value / q.scale[0]) + q.zero_point[0], -128, 127))
            vt = im.b.const(f"{node.name}.value", np.array([vq], np.int8), q)
        else:
            vt = im.b.const(f"{node.name}.value", np.array([value], np.float32))
        im.b.op("PADV2", [x, pt, vt], [y])
    im.bind(node.outputs[0], y, perm)


# ----- QDQ -----

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
            shape[_norm_axis(int(node.attrs.get("axis", 1)), x.ndim)] = -1
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
        axis = _norm_axis(int(node.attrs.get("axis", 1)), max(qd.ndim, 1))
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


# ----- float32 math (nnrt/kernels/math.h) and what PyTorch builds from it -----

def _same_layout_unary(im: Importer, xn: str, opcode: str, name: str) -> tuple[int, tuple[
        int, ...]]:
    perm = _perm_of(im, xn)
    x = im.act(xn, perm)
    y = im.b.tensor(name, im.b.tensors[x].shape, DType.FLOAT32)
    im.b.op(opcode, [x], [y])
    return y, perm


def _emit_unary(im: Importer, x: int, opcode: str, name: str) -> int:
    y = im.b.tensor(name, im.b.tensors[x].shape, DType.FLOAT32)
    im.b.op(opcode, [x], [y])
    return y


def _emit_binary(im: Importer, a: int, b: int, opcode: str, name: str) -> int:
    sa, sb = im.b.tensors[a].shape, im.b.tensors[b].shape
    y = im.b.tensor(name, tuple(np.broadcast_shapes(sa, sb)), DType.FLOAT32)
    im.b.op(opcode, [a, b], [y], ActivationOptions())
    return y


def _scalar(im: Importer, value: float, rank: int, name: str) -> int:
    return im.b.const(name, np.full((1,) * rank, value, np.float32))


@handler("Neg", "Abs", "Exp", "Log", "Sqrt")
def math_unary(im: Importer, node: Node) -> None:
    y, perm = _same_layout_unary(im, node.inputs[0], node.op_type.upper(), node.outputs[0])
    im.bind(node.outputs[0], y, perm)


@handler("Reciprocal")
def reciprocal(im: Importer, node: Node) -> None:
    perm = _perm_of(im, node.inputs[0])
    x = im.act(node.inputs[0], perm)
    one = _scalar(im, 1.0, len(perm), f"{node.name}.one")
    im.bind(node.outputs[0], _emit_binary(im, one, x, "DIV", node.outputs[0]), perm)


def _exp_neg_part(im: Importer, x: int, alpha: float, name: str) -> tuple[int, int]:
    """(max(x, 0), alpha * (exp(min(x, 0)) - 1)): the two halves of ELU/SELU."""
    r = len(im.b.tensors[x].shape)
    zero = _scalar(im, 0.0, r, f"{name}.zero")
    pos = _emit_binary(im, x, zero, "MAXIMUM", f"{name}.pos")
    neg = _emit_binary(im, x, zero, "MINIMUM", f"{name}.neg")
    e = _emit_unary(im, neg, "EXP", f"{name}.exp")
    em1 = _emit_binary(im, e, _scalar(im, 1.0, r, f"{name}.one"), "SUB", f"{name}.em1")
    return pos, _emit_binary(im, em1, _scalar(im, alpha, r, f"{name}.alpha"), "MUL",
                             f"{name}.scaled")


@handler("Elu", "Selu")
def elu(im: Importer, node: Node) -> None:
    selu = node.op_type == "Selu"
    alpha = float(node.attrs.get("alpha", 1.6732632423543772 if selu else 1.0))
    perm = _perm_of(im, node.inputs[0])
    x = im.act(node.inputs[0], perm)
    pos, neg = _exp_neg_part(im, x, alpha, node.name)
    if selu:
        gamma = float(node.attrs.get("gamma", 1.0507009873554805))
        s = _emit_binary(im, pos, neg, "ADD", f"{node.name}.sum")
        y = _emit_binary(im, s, _scalar(im, gamma, len(perm), f"{node.name}.gamma"), "MUL",
                         node.outputs[0])
    else:
        y = _emit_binary(im, pos, neg, "ADD", node.outputs[0])
    im.bind(node.outputs[0], y, perm)


@handler("Softplus")
def softplus(im: Importer, node: Node) -> None:
    perm = _perm_of(im, node.inputs[0])
    x = im.act(node.inputs[0], perm)
    e = _emit_unary(im, x, "EXP", f"{node.name}.exp")
    s = _emit_binary(im, e, _scalar(im, 1.0, len(perm), f"{node.name}.one"), "ADD",
                     f"{node.name}.sum")
    im.bind(node.outputs[0], _emit_unary(im, s, "LOG", node.outputs[0]), perm)


@handler("Softsign")
def softsign(im: Importer, node: Node) -> None:
    perm = _perm_of(im, node.inputs[0])
    x = im.act(node.inputs[0], perm)
    a = _emit_unary(im, x, "ABS", f"{node.name}.abs")
    d = _emit_binary(im, a, _scalar(im, 1.0, len(perm), f"{node.name}.one"), "ADD",
                     f"{node.name}.den")
    im.bind(node.outputs[0], _emit_binary(im, x, d, "DIV", node.outputs[0]), perm)


@handler("LogSoftmax")
def log_softmax(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    rank = len(im.shape(xn))
    axis = _norm_axis(int(node.attrs.get("axis", -1)), rank)
    perm = _perm_of(im, xn)
    target = (*[p for p in perm if p != axis], axis)
    x = im.act(xn, target)
    sm = im.b.tensor(f"{node.name}.softmax", im.b.tensors[x].shape, DType.FLOAT32)
    im.b.op("SOFTMAX", [x], [sm], SoftmaxOptions(1.0))
    im.bind(node.outputs[0], _emit_unary(im, sm, "LOG", node.outputs[0]), target)


@handler("Pow")
def power(im: Importer, node: Node) -> None:
    xn, en = node.inputs
    if im.is_const(en) and im.const(en).size == 1:
        e = float(im.const(en).reshape(-1)[0])
        perm = _perm_of(im, xn)
        x = im.act(xn, perm)
        if e == 2.0:
            im.bind(node.outputs[0], _emit_binary(im, x, x, "MUL", node.outputs[0]), perm)
            return
        if e == 0.5:
            im.bind(node.outputs[0], _emit_unary(im, x, "SQRT", node.outputs[0]), perm)
            return
    # x ** y = exp(y * log(x)) (positive bases)
    out = node.outputs[0]
    r = len(im.shape(out))
    live = [n for n in (xn, en) if not im.is_const(n)]
    perms = {_perm_of(im, n) for n in live}
    perm = perms.pop() if len(perms) == 1 and all(len(im.shape(n)) == r for n in live) \
        else identity(r)
    x = im.act(xn, perm) if not im.is_const(xn) else im.const_tensor(xn, perm, r)
    y = im.act(en, perm) if not im.is_const(en) else im.const_tensor(en, perm, r)
    lg = _emit_unary(im, x, "LOG", f"{node.name}.log")
    m = _emit_binary(im, y, lg, "MUL", f"{node.name}.mul")
    im.bind(out, _emit_unary(im, m, "EXP", out), perm)


@handler("Max", "Min", "Sum")
def variadic(im: Importer, node: Node) -> None:
    opcode = {"Max": "MAXIMUM", "Min": "MINIMUM", "Sum": "ADD"}[node.op_type]
    names = [n for n in node.inputs if n]
    out = node.outputs[0]
    r = len(im.shape(out))
    live = [n for n in names if not im.is_const(n)]
    perms = {_perm_of(im, n) for n in live}
    perm = perms.pop() if len(perms) == 1 and all(len(im.shape(n)) == r for n in live) \
        else identity(r)

    def get(n: str) -> int:
        if im.is_const(n):
            return im.const_tensor(n, perm, r)
        return im.act(n, perm if len(im.shape(n)) == r else None)

    cur = get(names[0])
    if len(names) == 1:
        cur = im._copy(cur, out)
    for k, n in enumerate(names[1:], 1):
        cur = _emit_binary(im, cur, get(n), opcode, out if k == len(names) - 1 else
                           f"{out}.{k}")
    im.bind(out, cur, perm)


def _slice(im: Importer, x: int, begin: list[int], size: list[int], name: str) -> int:
    t = im.b.tensors[x]
    if list(t.shape) == size:
        return x
    y = im.b.tensor(name, tuple(size), t.dtype, t.quant)
    b = im.b.const(f"{name}.begin", np.array(begin, np.int32))
    s = im.b.const(f"{name}.size", np.array(size, np.int32))
    im.b.op("SLICE", [x, b, s], [y])
    return y


@handler("Split")
def split(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    xs = im.shape(xn)
    axis = _norm_axis(int(node.attrs.get("axis", 0)), len(xs))
    outs = [o for o in node.outputs]
    sizes = [im.shape(o)[axis] for o in outs]
    perm = _perm_of(im, xn)
    x = im.act(xn, perm)
    ax = perm.index(axis)
    shape = list(im.b.tensors[x].shape)
    start = 0
    for o, n in zip(outs, sizes, strict=True):
        begin = [0] * len(shape)
        size = list(shape)
        begin[ax], size[ax] = start, n
        y = _slice(im, x, begin, size, o)
        if y == x:
            y = im._copy(x, o)
        if o:
            im.bind(o, y, perm)
        start += n


@handler("Slice")
def slice_(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    xs = im.shape(xn)
    rank = len(xs)

    def ints(k: int, attr: str) -> list[int] | None:
        n = im.opt_input(node, k)
        if n:
            return [int(v) for v in im.const(n).reshape(-1)]
        return [int(v) for v in node.attrs[attr]] if attr in node.attrs else None

    starts, ends = ints(1, "starts"), ints(2, "ends")
    axes = ints(3, "axes") or list(range(len(starts or [])))
    steps = ints(4, "steps") or [1] * len(axes)
    if starts is None or ends is None or any(s != 1 for s in steps):
        raise im.refuse(f"steps {steps}", "Slice with constant starts/ends and step 1")
    begin = [0] * rank
    size = list(xs)
    for a, s, e in zip(axes, starts, ends, strict=True):
        a = _norm_axis(a, rank)
        n = xs[a]
        s = max(0, min(n, s + n if s < 0 else s))
        e = max(0, min(n, e + n if e < 0 else e))
        begin[a], size[a] = s, max(0, e - s)
    if min(size) < 1:
        raise im.refuse("an empty slice", "non-empty slices")
    perm = _perm_of(im, xn)
    x = im.act(xn, perm)
    y = _slice(im, x, [begin[p] for p in perm], [size[p] for p in perm], node.outputs[0])
    if y == x:
        y = im._copy(x, node.outputs[0])
    im.bind(node.outputs[0], y, perm)


def _concat_copies(im: Importer, parts: list[int], ax: int, name: str) -> int:
    if len(parts) == 1:
        return parts[0]
    t = im.b.tensors[parts[0]]
    shape = list(t.shape)
    shape[ax] = sum(im.b.tensors[p].shape[ax] for p in parts)
    y = im.b.tensor(name, tuple(shape), t.dtype, t.quant)
    im.b.op("CONCATENATION", parts, [y], ConcatOptions(ax))
    return y


@handler("Tile")
def tile(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    reps = [int(r) for r in im.const(node.inputs[1]).reshape(-1)]
    perm = _perm_of(im, xn)
    cur = im.act(xn, perm)
    for i, p in enumerate(perm):
        if reps[p] > 1:
            cur = _concat_copies(im, [cur] * reps[p], i, f"{node.outputs[0]}.tile{i}")
    if cur == im.act(xn, perm):
        cur = im._copy(cur, node.outputs[0])
    im.bind(node.outputs[0], cur, perm)


def _edge_pad(im: Importer, x: int, ax: int, before: int, after: int, reflect: bool,
              name: str) -> int:
    """Reflect/edge padding of one axis: slices of width 1 concatenated around x."""
    shape = list(im.b.tensors[x].shape)
    n = shape[ax]
    if reflect and max(before, after) >= n:
        raise AssertionError("checked by the caller")

    def col(i: int) -> int:
        begin = [0] * len(shape)
        size = list(shape)
        begin[ax], size[ax] = i, 1
        return _slice(im, x, begin, size, f"{name}.col{i}")

    left = [col(before - k if reflect else 0) for k in range(before)]
    right = [col(n - 2 - k if reflect else n - 1) for k in range(after)]
    return _concat_copies(im, [*left, x, *right], ax, f"{name}.ax{ax}")


@handler("InstanceNormalization")
def instance_norm(im: Importer, node: Node) -> None:
    """(x - mean) / sqrt(var + eps) * scale + bias over the spatial axes of each channel."""
    xn, sn, bn = node.inputs
    xs = im.shape(xn)
    rank = len(xs)
    eps = float(node.attrs.get("epsilon", 1e-5))
    perm = _perm_of(im, xn)
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
    d = _emit_binary(im, x, mu, "SUB", f"{node.name}.centred")
    var = mean(_emit_binary(im, d, d, "MUL", f"{node.name}.sq"), f"{node.name}.var")
    inv = _emit_unary(im, _emit_binary(im, var, _scalar(im, eps, rank, f"{node.name}.eps"),
                                       "ADD", f"{node.name}.vareps"), "RSQRT",
                      f"{node.name}.rstd")
    nrm = _emit_binary(im, d, inv, "MUL", f"{node.name}.norm")
    cshape = (1, xs[1]) + (1,) * (rank - 2)
    sc = im.b.const(f"{sn}.c", im.const(sn).astype(np.float32).reshape(cshape).transpose(perm))
    bc = im.b.const(f"{bn}.c", im.const(bn).astype(np.float32).reshape(cshape).transpose(perm))
    y = _emit_binary(im, _emit_binary(im, nrm, sc, "MUL", f"{node.name}.scaled"), bc, "ADD",
                     node.outputs[0])
    im.bind(node.outputs[0], y, perm)


@handler("Resize", "Upsample", quant=(0,))
def resize(im: Importer, node: Node) -> None:
    """Nearest-neighbour upsampling by integer factors (PyTorch's nn.Upsample(mode=
    'nearest')): each pixel repeated, as concatenations of copies."""
    xn = node.inputs[0]
    xs, ys = im.shape(xn), im.shape(node.outputs[0])
    mode = node.attrs.get("mode", b"nearest")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    ctm = node.attrs.get("coordinate_transformation_mode", b"half_pixel")
    ctm = ctm.decode() if isinstance(ctm, bytes) else str(ctm)
    factors = [o // i if i and o % i == 0 else 0 for i, o in zip(xs, ys, strict=True)]
    if mode != "nearest" or ctm not in ("half_pixel", "asymmetric", "pytorch_half_pixel") \
            or len(xs) != 4 or factors[:2] != [1, 1] or 0 in factors:
        raise im.refuse(f"mode {mode!r}, coordinates {ctm!r}, {list(xs)} -> {list(ys)}",
                        "nearest upsampling of NCHW by integer factors")
    x = im.act(xn, NHWC)
    n, h, w, c = im.b.tensors[x].shape
    fh, fw = factors[2], factors[3]
    cur = x
    if fw > 1:
        v = im._reshape(cur, (n * h, w, 1, c), f"{node.name}.vw")
        cur = im._reshape(_concat_copies(im, [v] * fw, 2, f"{node.name}.rw"),
                          (n, h, w * fw, c), f"{node.name}.w")
    if fh > 1:
        v = im._reshape(cur, (n, h, 1, w * fw * c), f"{node.name}.vh")
        cur = im._reshape(_concat_copies(im, [v] * fh, 2, f"{node.name}.rh"),
                          (n, h * fh, w * fw, c), f"{node.name}.h")
    if cur == x:
        cur = im._copy(x, node.outputs[0])
    im.bind(node.outputs[0], cur, NHWC)


@handler("Gather")
def gather(im: Importer, node: Node) -> None:
    """Gather with constant indices: slices of the data (concatenated for an index
    vector; a scalar index drops the axis)."""
    xn, idn = node.inputs
    if not im.is_const(idn):
        raise im.refuse("the indices are not constant", "Gather with constant indices")
    xs = im.shape(xn)
    rank = len(xs)
    axis = _norm_axis(int(node.attrs.get("axis", 0)), rank)
    idx = im.const(idn).astype(np.int64)
    if idx.ndim > 1:
        raise im.refuse(f"indices of rank {idx.ndim}", "scalar or 1-D indices")
    flat = [int(i) + xs[axis] if i < 0 else int(i) for i in idx.reshape(-1)]
    if any(not 0 <= i < xs[axis] for i in flat):
        raise im.refuse(f"indices {flat} out of range for axis {axis} of {xs[axis]}",
                        "indices within the axis")
    perm = _perm_of(im, xn)
    x = im.act(xn, perm)
    ax = perm.index(axis)
    shape = list(im.b.tensors[x].shape)
    parts = []
    for k, i in enumerate(flat):
        begin = [0] * rank
        size = list(shape)
        begin[ax], size[ax] = i, 1
        parts.append(_slice(im, x, begin, size, f"{node.outputs[0]}.g{k}"))
    cur = _concat_copies(im, parts, ax, f"{node.outputs[0]}.cat")
    if cur == x:
        cur = im._copy(x, node.outputs[0])
    if idx.ndim == 0:  # the axis goes: the output is in ONNX order of the rest
        t = im._transpose(cur, relative(perm, identity(rank)), f"{node.outputs[0]}.onnx")
        out_shape = im.shape(node.outputs[0])
        y = im._reshape(t, out_shape, node.outputs[0])
        if y == t:
            y = im._copy(t, node.outputs[0])
        im.bind(node.outputs[0], y, identity(len(out_shape)))
        return
    im.bind(node.outputs[0], cur, perm)

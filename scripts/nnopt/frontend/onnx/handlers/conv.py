"""Conv (groups, depthwise, dilation, 1-D) and ConvTranspose."""

from __future__ import annotations

import numpy as np

from ....cdefs import DType
from ....ir import (
    ConvOptions,
    FullyConnectedOptions,
    Quant,
)
from ..importer import Importer, onnx_pads, prod, window_padding
from ..prepare import Node
from ..values import NHWC
from .common import (
    bind_nhwc,
    concat_copies,
    nhwc_input,
    pad_nhwc,
    quant_of,
    slice_tensor,
    window_attrs,
)
from .registry import handler


@handler("Conv", quant=(0, 1, 2))
def conv(im: Importer, node: Node) -> None:
    xn, wn = node.inputs[0], node.inputs[1]
    bn = im.opt_input(node, 2)
    xs = im.shape(xn)
    if not im.is_const(wn):
        raise im.refuse("the weights are not constant", "Conv with constant weights")
    w = im.const(wn)
    x, one_d = nhwc_input(im, xn)
    kernel, strides, dil = window_attrs(im, node, list(w.shape[2:]))
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
        x = pad_nhwc(im, x, pads, node.name)
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
    bind_nhwc(im, node.outputs[0], y, one_d)


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
    s_in = quant_of(im, x).scale[0]
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
    kernel, strides, dil = window_attrs(im, node, list(w.shape[2:]))
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
        q = quant_of(im, x)
        zeros = im.b.const(f"{name}.zeros{ax}", np.full((outer, n, s - 1, inner),
                                                         q.zero_point[0], np.int8), q)
    else:
        zeros = im.b.const(f"{name}.zeros{ax}", np.zeros((outer, n, s - 1, inner), np.float32))
    spread = concat_copies(im, [v, zeros], 2, f"{name}.spread{ax}")
    flat = im._reshape(spread, (outer, n * s, inner), f"{name}.flat{ax}")
    cut = slice_tensor(im, flat, [0, 0, 0], [outer, (n - 1) * s + 1, inner], f"{name}.cut{ax}")
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
        x = pad_nhwc(im, x, pp, node.name)
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
